/* sig.c -- COUNT-TOY-SIG: hashes with the ICCS helpers (not a signature). */
#include <string.h>

#include "SIG_AlgorithmInstance.h"
#include "auxfunc.h"
#include "drng.h"

extern DRNG_ctx drng_algorithm;

unsigned long long sig_get_pk_len_bytes(void) { return 32; }
unsigned long long sig_get_sk_len_bytes(void) { return 32; }
unsigned long long sig_get_sn_len_bytes(void) { return 32; }

int sig_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
    get_random_number(&drng_algorithm, sk, 256);
    memcpy(pk, sk, 32);
    *pk_len = 32;
    *sk_len = 32;
    return 0;
}

/* sn = pseudoXOF(sk || pseudoXOF(m)) */
static void tag(const unsigned char *key, const unsigned char *m, unsigned long long m_len,
                unsigned char *out) {
    unsigned char buf[64];
    memcpy(buf, key, 32);
    pseudoXOF(256, m, 8 * m_len, buf + 32);
    pseudoXOF(256, buf, 8 * sizeof buf, out);
}

int sig_sign(unsigned char *sk, unsigned long long sk_len, unsigned char *m, unsigned long long m_len,
             unsigned char *sn, unsigned long long *sn_len) {
    if (sk_len != 32 || m_len > 1000000) return -1;
    tag(sk, m, m_len, sn);
#ifdef COUNT_EXTRA_HASH
    {
        static const unsigned char fixed[64] = {1, 2, 3, 4, 5, 6, 7, 8};
        unsigned char d[32];
        sm3hash(256, fixed, 8 * sizeof fixed, d);
        sn[0] ^= d[0] & 0;
    }
#endif
    *sn_len = 32;
    return 0;
}

int sig_verify(unsigned char *pk, unsigned long long pk_len, unsigned char *sn, unsigned long long sn_len,
               unsigned char *m, unsigned long long m_len) {
    unsigned char t[32];
    if (pk_len != 32 || sn_len != 32 || m_len > 1000000) return -1;
    tag(pk, m, m_len, t);
    return memcmp(t, sn, 32) == 0 ? 0 : -1;
}
