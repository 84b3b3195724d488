/* sig.c -- MEM-SIG: sig_sign uses a touched 100 000-byte stack array and a 1 048 576-byte
 * malloc (unless -DMEM_SIG_NONE); keygen and verify use neither. sn = checksum of sk and m. */
#include <stdlib.h>
#include <string.h>
#include "SIG_AlgorithmInstance.h"

#define STACK_BYTES 100000
#define HEAP_BYTES 1048576

unsigned long long sig_get_pk_len_bytes(void) { return 32; }
unsigned long long sig_get_sk_len_bytes(void) { return 32; }
unsigned long long sig_get_sn_len_bytes(void) { return 32; }

static void checksum(const unsigned char *k, const unsigned char *m, unsigned long long mlen,
                     unsigned char *out) {
    for (int i = 0; i < 32; i++) out[i] = k[i];
    for (unsigned long long i = 0; i < mlen; i++) out[i % 32] = (unsigned char)(out[i % 32] * 31 + m[i]);
}

int sig_keygen(unsigned char *pk, unsigned long long *pk_len_bytes,
               unsigned char *sk, unsigned long long *sk_len_bytes) {
    for (int i = 0; i < 32; i++) sk[i] = pk[i] = (unsigned char)(i * 7 + 1);
    *pk_len_bytes = 32;
    *sk_len_bytes = 32;
    return 0;
}

#ifndef MEM_SIG_NONE
/* Kept out of line so the array lives in its own frame below sig_sign's. */
__attribute__((noinline)) static unsigned char use_memory(const unsigned char *m,
                                                         unsigned long long mlen) {
    volatile unsigned char stack[STACK_BYTES];
    for (size_t i = 0; i < STACK_BYTES; i++) stack[i] = (unsigned char)(i + (mlen ? m[i % mlen] : 0));
    unsigned char *heap = malloc(HEAP_BYTES);
    if (!heap) return 0;
    memset(heap, 0x3c, HEAP_BYTES);
    unsigned char r = (unsigned char)(heap[HEAP_BYTES - 1] ^ stack[0] ^ stack[STACK_BYTES - 1]);
    free(heap);
    return r;
}
#endif

int sig_sign(unsigned char *sk, unsigned long long sk_len_bytes,
             unsigned char *m, unsigned long long m_len_bytes,
             unsigned char *sn, unsigned long long *sn_len_bytes) {
    if (sk_len_bytes != 32) return -1;
    checksum(sk, m, m_len_bytes, sn);
#ifndef MEM_SIG_NONE
    sn[0] ^= (unsigned char)(use_memory(m, m_len_bytes) & 0);
#endif
    *sn_len_bytes = 32;
    return 0;
}

int sig_verify(unsigned char *pk, unsigned long long pk_len_bytes,
               unsigned char *sn, unsigned long long sn_len_bytes,
               unsigned char *m, unsigned long long m_len_bytes) {
    unsigned char want[32];
    if (pk_len_bytes != 32 || sn_len_bytes != 32) return -1;
    checksum(pk, m, m_len_bytes, want);
    return memcmp(want, sn, 32) == 0 ? 0 : -1;
}
