/*
 * SIG_AlgorithmInstance.c -- ICCS signature API of WOTS-PXOF-128.
 * Randomness: the secret seed and the public seed (keygen) and the per-signature randomizer
 * (sign) are drawn from the ICCS DRNG context drng_algorithm, which the KAT driver / harness
 * defines and seeds.
 */
#include <string.h>

#include "SIG_AlgorithmInstance.h"
#include "drng.h"
#include "wots.h"

extern DRNG_ctx drng_algorithm;

unsigned long long sig_get_pk_len_bytes(void) { return WOTS_PK_BYTES; }
unsigned long long sig_get_sk_len_bytes(void) { return WOTS_SK_BYTES; }
unsigned long long sig_get_sn_len_bytes(void) { return WOTS_SN_BYTES; }

int sig_keygen(unsigned char *pk, unsigned long long *pk_len_bytes,
               unsigned char *sk, unsigned long long *sk_len_bytes) {
    static unsigned char ends[WOTS_LEN * WOTS_N];
    unsigned char x[WOTS_N];
    int i;
    if (get_random_number(&drng_algorithm, sk, 8 * WOTS_N) != 0) return -2;
    if (get_random_number(&drng_algorithm, sk + WOTS_N, 8 * WOTS_N) != 0) return -2;
    for (i = 0; i < WOTS_LEN; i++) {
        wots_secret(x, sk, i);
        wots_chain(ends + i * WOTS_N, x, 0, WOTS_W - 1, sk + WOTS_N, i);
    }
    memcpy(pk, sk + WOTS_N, WOTS_N);
    wots_root(pk + WOTS_N, ends, pk);
    memcpy(sk + 2 * WOTS_N, pk + WOTS_N, WOTS_N);
    *pk_len_bytes = WOTS_PK_BYTES;
    *sk_len_bytes = WOTS_SK_BYTES;
    return 0;
}

int sig_sign(unsigned char *sk, unsigned long long sk_len_bytes,
             unsigned char *m, unsigned long long m_len_bytes,
             unsigned char *sn, unsigned long long *sn_len_bytes) {
    unsigned char digest[WOTS_N], x[WOTS_N];
    int digits[WOTS_LEN];
    int i;
    if (sk_len_bytes != WOTS_SK_BYTES) return -3;
    if (get_random_number(&drng_algorithm, sn, 8 * WOTS_N) != 0) return -2;
    wots_digest(digest, sn, sk + WOTS_N, m, m_len_bytes);
    wots_digits(digits, digest);
    for (i = 0; i < WOTS_LEN; i++) {
        wots_secret(x, sk, i);
        wots_chain(sn + WOTS_N + i * WOTS_N, x, 0, digits[i], sk + WOTS_N, i);
    }
    *sn_len_bytes = WOTS_SN_BYTES;
    return 0;
}

int sig_verify(unsigned char *pk, unsigned long long pk_len_bytes,
               unsigned char *sn, unsigned long long sn_len_bytes,
               unsigned char *m, unsigned long long m_len_bytes) {
    static unsigned char ends[WOTS_LEN * WOTS_N];
    unsigned char digest[WOTS_N], root[WOTS_N];
    int digits[WOTS_LEN];
    int i;
    if (pk_len_bytes != WOTS_PK_BYTES || sn_len_bytes != WOTS_SN_BYTES) return -1;
    wots_digest(digest, sn, pk, m, m_len_bytes);
    wots_digits(digits, digest);
    for (i = 0; i < WOTS_LEN; i++) {
        wots_chain(ends + i * WOTS_N, sn + WOTS_N + i * WOTS_N, digits[i],
                   WOTS_W - 1 - digits[i], pk, i);
    }
    wots_root(root, ends, pk);
    return memcmp(root, pk + WOTS_N, WOTS_N) == 0 ? 0 : -1;
}
