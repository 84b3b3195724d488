/*
 * msig.c -- MSIG: Winternitz one-time signature (w = 16, n = MSIG_N bytes). Every hash is
 * pseudoXOF(8n, tag || ...), tags 0x10 secret, 0x11 chain step, 0x12 root, 0x13 digest.
 * Randomness: secret and public seeds (keygen) and the randomizer (sign) come from the ICCS
 * DRNG context drng_algorithm, which the KAT driver / harness defines and seeds.
 */
#include <string.h>

#include "SIG_AlgorithmInstance.h"
#include "auxfunc.h"
#include "drng.h"

extern DRNG_ctx drng_algorithm;

#define N MSIG_N

static void put32(unsigned char *p, unsigned long v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static void secret(unsigned char *out, const unsigned char *sk_seed, int chain) {
    unsigned char buf[1 + N + 4];
    buf[0] = 0x10;
    memcpy(buf + 1, sk_seed, N);
    put32(buf + 1 + N, (unsigned long)chain);
    pseudoXOF(8 * N, buf, 8ULL * sizeof buf, out);
}

static void chain_steps(unsigned char *out, const unsigned char *in, int start, int steps,
                        const unsigned char *pub_seed, int chain) {
    unsigned char buf[1 + N + 8 + N];
    int j;
    memcpy(out, in, N);
    for (j = start; j < start + steps && j < MSIG_W - 1; j++) {
        buf[0] = 0x11;
        memcpy(buf + 1, pub_seed, N);
        put32(buf + 1 + N, (unsigned long)chain);
        put32(buf + 5 + N, (unsigned long)j);
        memcpy(buf + 9 + N, out, N);
        pseudoXOF(8 * N, buf, 8ULL * sizeof buf, out);
    }
}

static void root_of(unsigned char *root, const unsigned char *ends, const unsigned char *pub_seed) {
    static unsigned char buf[1 + N + MSIG_LEN * N];
    buf[0] = 0x12;
    memcpy(buf + 1, pub_seed, N);
    memcpy(buf + 1 + N, ends, MSIG_LEN * N);
    pseudoXOF(8 * N, buf, 8ULL * sizeof buf, root);
}

/* digest = pseudoXOF(0x13 || r || pub_seed || pseudoXOF(m)) */
static void digits_of(int *digits, const unsigned char *r, const unsigned char *pub_seed,
                      const unsigned char *m, unsigned long long m_len) {
    unsigned char buf[1 + 3 * N], d[N];
    int i, csum = 0;
    buf[0] = 0x13;
    memcpy(buf + 1, r, N);
    memcpy(buf + 1 + N, pub_seed, N);
    pseudoXOF(8 * N, m, 8 * m_len, buf + 1 + 2 * N);
    pseudoXOF(8 * N, buf, 8ULL * sizeof buf, d);
    for (i = 0; i < MSIG_LEN1; i++) {
        digits[i] = (i % 2 == 0) ? (d[i / 2] >> 4) : (d[i / 2] & 0x0f);
        csum += MSIG_W - 1 - digits[i];
    }
    for (i = MSIG_LEN - 1; i >= MSIG_LEN1; i--) {
        digits[i] = csum & (MSIG_W - 1);
        csum >>= MSIG_LOGW;
    }
}

unsigned long long sig_get_pk_len_bytes(void) { return CRYPTO_PUBLICKEYBYTES; }
unsigned long long sig_get_sk_len_bytes(void) { return CRYPTO_SECRETKEYBYTES; }
unsigned long long sig_get_sn_len_bytes(void) { return CRYPTO_BYTES; }

int sig_keygen(unsigned char *pk, unsigned long long *pk_len_bytes,
               unsigned char *sk, unsigned long long *sk_len_bytes) {
    static unsigned char ends[MSIG_LEN * N];
    unsigned char x[N];
    int i;
    if (get_random_number(&drng_algorithm, sk, 8 * N) != 0) return -2;
    if (get_random_number(&drng_algorithm, sk + N, 8 * N) != 0) return -2;
    for (i = 0; i < MSIG_LEN; i++) {
        secret(x, sk, i);
        chain_steps(ends + i * N, x, 0, MSIG_W - 1, sk + N, i);
    }
    memcpy(pk, sk + N, N);
    root_of(pk + N, ends, pk);
    memcpy(sk + 2 * N, pk + N, N);
    *pk_len_bytes = CRYPTO_PUBLICKEYBYTES;
    *sk_len_bytes = CRYPTO_SECRETKEYBYTES;
    return 0;
}

int sig_sign(unsigned char *sk, unsigned long long sk_len_bytes,
             unsigned char *m, unsigned long long m_len_bytes,
             unsigned char *sn, unsigned long long *sn_len_bytes) {
    unsigned char x[N];
    int digits[MSIG_LEN];
    int i;
    if (sk_len_bytes != CRYPTO_SECRETKEYBYTES) return -3;
    if (get_random_number(&drng_algorithm, sn, 8 * N) != 0) return -2;
    digits_of(digits, sn, sk + N, m, m_len_bytes);
    for (i = 0; i < MSIG_LEN; i++) {
        secret(x, sk, i);
        chain_steps(sn + N + i * N, x, 0, digits[i], sk + N, i);
    }
    *sn_len_bytes = CRYPTO_BYTES;
    return 0;
}

int sig_verify(unsigned char *pk, unsigned long long pk_len_bytes,
               unsigned char *sn, unsigned long long sn_len_bytes,
               unsigned char *m, unsigned long long m_len_bytes) {
    static unsigned char ends[MSIG_LEN * N];
    unsigned char root[N];
    int digits[MSIG_LEN];
    int i;
    if (pk_len_bytes != CRYPTO_PUBLICKEYBYTES || sn_len_bytes != CRYPTO_BYTES) return -1;
    digits_of(digits, sn, pk, m, m_len_bytes);
    for (i = 0; i < MSIG_LEN; i++) {
        chain_steps(ends + i * N, sn + N + i * N, digits[i], MSIG_W - 1 - digits[i], pk, i);
    }
    root_of(root, ends, pk);
    return memcmp(root, pk + N, N) == 0 ? 0 : -1;
}
