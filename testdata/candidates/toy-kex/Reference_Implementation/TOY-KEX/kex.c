/* kex.c -- TOY-KEX: exercises the ICCS key-exchange API (not a secure key exchange). */
#include <string.h>

#include "KEX_AlgorithmInstance.h"
#include "auxfunc.h"
#include "drng.h"

extern DRNG_ctx drng_algorithm;

ull kex_get_passes_num(void) { return 2; }
ull kex_get_pk_len_bytes(void) { return 32; }
ull kex_get_sk_len_bytes(void) { return 32; }
ull kex_get_sta_len_bytes(void) { return 64; }
ull kex_get_stb_len_bytes(void) { return 96; }
ull kex_get_ss_len_bytes(void) { return 32; }
ull kex_get_total_msg_len_bytes(void) { return 64; }

static int init(uc *pk, ull *pk_len, uc *sk, ull *sk_len, uc *st, ull *st_len) {
    get_random_number(&drng_algorithm, sk, 256);
    pseudoXOF(256, sk, 256, pk);
    memcpy(st, sk, 32);
    *pk_len = 32;
    *sk_len = 32;
    *st_len = 32;
    return 0;
}

int kex_init_a(uc *pka, ull *pka_len, uc *ska, ull *ska_len, uc *sta, ull *sta_len) {
    return init(pka, pka_len, ska, ska_len, sta, sta_len);
}

int kex_init_b(uc *pkb, ull *pkb_len, uc *skb, ull *skb_len, uc *stb, ull *stb_len) {
    return init(pkb, pkb_len, skb, skb_len, stb, stb_len);
}

int kex_generate_pass1_msg_a(uc *ska, ull ska_len, uc *pkb, ull pkb_len, uc *sta, ull *sta_len,
                             uc *m1, ull *m1_len) {
    (void)ska; (void)ska_len; (void)pkb; (void)pkb_len;
    if (*sta_len != 32) return -2;
    get_random_number(&drng_algorithm, m1, 256);
    memcpy(sta + 32, m1, 32);
    *sta_len = 64;
    *m1_len = 32;
    return 0;
}

int kex_generate_pass2_msg_b(uc *skb, ull skb_len, uc *pka, ull pka_len, uc *m1, ull m1_len,
                             uc *stb, ull *stb_len, uc *m2, ull *m2_len) {
    (void)skb; (void)skb_len; (void)pka; (void)pka_len;
    if (m1_len != 32 || *stb_len != 32) return -2;
    get_random_number(&drng_algorithm, m2, 256);
    memcpy(stb + 32, m1, 32);
    memcpy(stb + 64, m2, 32);
    *stb_len = 96;
    *m2_len = 32;
    return 1;
}

static void secret(uc *ss, const uc *na, const uc *nb) {
    uc buf[64];
    memcpy(buf, na, 32);
    memcpy(buf + 32, nb, 32);
    pseudoXOF(256, buf, 512, ss);
}

int kex_derive_ss_a(uc *ska, ull ska_len, uc *pkb, ull pkb_len, uc *mb, ull mb_len, uc *sta,
                    ull sta_len, uc *ssa, ull *ssa_len) {
    (void)ska; (void)ska_len; (void)pkb; (void)pkb_len;
    if (mb == 0 || mb_len != 32 || sta_len != 64) return -2;
    secret(ssa, sta + 32, mb);
    *ssa_len = 32;
    return 0;
}

int kex_derive_ss_b(uc *skb, ull skb_len, uc *pka, ull pka_len, uc *ma, ull ma_len, uc *stb,
                    ull stb_len, uc *ssb, ull *ssb_len) {
    (void)skb; (void)skb_len; (void)pka; (void)pka_len;
    if (ma == 0 || ma_len != 32 || stb_len != 96) return -2;
    secret(ssb, ma, stb + 64);
    *ssb_len = 32;
    return 0;
}
