/* sig.c -- OVF-SIG: a correct-looking signature API that overflows the signature buffer. */
#include <string.h>

#include "SIG_AlgorithmInstance.h"
#include "auxfunc.h"
#include "drng.h"

extern DRNG_ctx drng_algorithm;

#define N 32

unsigned long long sig_get_pk_len_bytes(void) { return N; }
unsigned long long sig_get_sk_len_bytes(void) { return N; }
unsigned long long sig_get_sn_len_bytes(void) { return N; }

int sig_keygen(unsigned char *pk, unsigned long long *pk_len_bytes,
               unsigned char *sk, unsigned long long *sk_len_bytes) {
    get_random_number(&drng_algorithm, sk, 8 * N);
    pseudoXOF(8 * N, sk, 8 * N, pk);
    *pk_len_bytes = N;
    *sk_len_bytes = N;
    return 0;
}

int sig_sign(unsigned char *sk, unsigned long long sk_len_bytes,
             unsigned char *m, unsigned long long m_len_bytes,
             unsigned char *sn, unsigned long long *sn_len_bytes) {
    unsigned char buf[N + 4096];
    unsigned char wide[N + 16];
    (void)sk_len_bytes;
    if (m_len_bytes > 4096) return -2;
    pseudoXOF(8 * N, sk, 8 * N, buf);           /* = pk */
    memcpy(buf + N, m, (size_t)m_len_bytes);
    pseudoXOF(8 * (N + 16), buf, 8 * (N + m_len_bytes), wide);
    memcpy(sn, wide, N + 16);                   /* BUG: 16 bytes past the declared maximum */
    *sn_len_bytes = N;
    return 0;
}

int sig_verify(unsigned char *pk, unsigned long long pk_len_bytes,
               unsigned char *sn, unsigned long long sn_len_bytes,
               unsigned char *m, unsigned long long m_len_bytes) {
    unsigned char buf[N + 4096];
    unsigned char expect[N];
    if (pk_len_bytes != N || sn_len_bytes != N || m_len_bytes > 4096) return -1;
    memcpy(buf, pk, N);
    memcpy(buf + N, m, (size_t)m_len_bytes);
    pseudoXOF(8 * N, buf, 8 * (N + m_len_bytes), expect);
    return memcmp(expect, sn, N) == 0 ? 0 : -1;
}
