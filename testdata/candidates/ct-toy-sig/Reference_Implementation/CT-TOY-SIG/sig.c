/* sig.c -- CT-TOY-SIG: a secret-dependent branch and table index (not a signature). */
#include <string.h>

#include "SIG_AlgorithmInstance.h"
#include "auxfunc.h"
#include "drng.h"

extern DRNG_ctx drng_algorithm;

static const unsigned char table[256] = {
    99, 124, 119, 123, 242, 107, 111, 197, 48, 1, 103, 43, 254, 215, 171, 118,
};

unsigned long long sig_get_pk_len_bytes(void) { return 32; }
unsigned long long sig_get_sk_len_bytes(void) { return 64; }
unsigned long long sig_get_sn_len_bytes(void) { return 32; }

int sig_keygen(unsigned char *pk, unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len) {
    get_random_number(&drng_algorithm, sk, 256);
    pseudoXOF(256, sk, 256, pk);
    memcpy(sk + 32, pk, 32);
    *pk_len = 32;
    *sk_len = 64;
    return 0;
}

int sig_sign(unsigned char *sk, unsigned long long sk_len, unsigned char *m, unsigned long long m_len,
             unsigned char *sn, unsigned long long *sn_len) {
    unsigned char buf[97], extra[32];
    if (sk_len != 64 || m_len > 1000000) return -1;
    memset(extra, 0, sizeof extra);
#ifndef CT_TOY_FIXED
    if (sk[0] & 1)
        pseudoXOF(256, sk, 256, extra);
    buf[96] = table[sk[1]];
#else
    {
        unsigned char t[32], mask = (unsigned char)(0u - (sk[0] & 1u)), v = 0;
        unsigned i;
        pseudoXOF(256, sk, 256, t);
        for (i = 0; i < 32; i++) extra[i] = t[i] & mask;
        for (i = 0; i < 256; i++) v |= table[i] & (unsigned char)((((unsigned)(i ^ sk[1])) - 1u) >> 8);
        buf[96] = v;
    }
#endif
    memcpy(buf, sk, 32);
    memcpy(buf + 32, extra, 32);
    pseudoXOF(256, m, 8 * m_len, buf + 64);
    pseudoXOF(256, buf, 8 * sizeof buf, sn);
    *sn_len = 32;
    return 0;
}

int sig_verify(unsigned char *pk, unsigned long long pk_len, unsigned char *sn, unsigned long long sn_len,
               unsigned char *m, unsigned long long m_len) {
    (void)pk; (void)pk_len; (void)sn; (void)sn_len; (void)m; (void)m_len;
    return -1;
}
