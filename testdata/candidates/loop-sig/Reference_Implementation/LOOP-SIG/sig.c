/* sig.c -- LOOP-SIG: sig_keygen never returns. */
#include "SIG_AlgorithmInstance.h"

unsigned long long sig_get_pk_len_bytes(void) { return 32; }
unsigned long long sig_get_sk_len_bytes(void) { return 32; }
unsigned long long sig_get_sn_len_bytes(void) { return 32; }

int sig_keygen(unsigned char *pk, unsigned long long *pk_len_bytes,
               unsigned char *sk, unsigned long long *sk_len_bytes) {
    volatile unsigned long spin = 0;
    (void)pk; (void)sk; (void)pk_len_bytes; (void)sk_len_bytes;
    for (;;) {
        spin++;
    }
}

int sig_sign(unsigned char *sk, unsigned long long sk_len_bytes,
             unsigned char *m, unsigned long long m_len_bytes,
             unsigned char *sn, unsigned long long *sn_len_bytes) {
    (void)sk; (void)sk_len_bytes; (void)m; (void)m_len_bytes; (void)sn;
    *sn_len_bytes = 32;
    return -1;
}

int sig_verify(unsigned char *pk, unsigned long long pk_len_bytes,
               unsigned char *sn, unsigned long long sn_len_bytes,
               unsigned char *m, unsigned long long m_len_bytes) {
    (void)pk; (void)pk_len_bytes; (void)sn; (void)sn_len_bytes; (void)m; (void)m_len_bytes;
    return -1;
}
