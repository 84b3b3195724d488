/*
 * wots.c -- WOTS-PXOF-128 internals. Every hash is pseudoXOF(256, domain || ...), with a
 * one-byte domain tag: 0x00 secret derivation, 0x01 chain step, 0x02 root, 0x03 message digest.
 */
#include <string.h>

#include "auxfunc.h"
#include "wots.h"

static void put32(unsigned char *p, unsigned long v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

void wots_secret(unsigned char *out, const unsigned char *sk_seed, int chain) {
    unsigned char buf[1 + WOTS_N + 4];
    buf[0] = 0x00;
    memcpy(buf + 1, sk_seed, WOTS_N);
    put32(buf + 1 + WOTS_N, (unsigned long)chain);
    pseudoXOF(8 * WOTS_N, buf, 8ULL * sizeof buf, out);
}

void wots_chain(unsigned char *out, const unsigned char *in, int start, int steps,
                const unsigned char *pub_seed, int chain) {
    unsigned char buf[1 + WOTS_N + 4 + 4 + WOTS_N];
    int j;
    memcpy(out, in, WOTS_N);
    for (j = start; j < start + steps && j < WOTS_W - 1; j++) {
        buf[0] = 0x01;
        memcpy(buf + 1, pub_seed, WOTS_N);
        put32(buf + 1 + WOTS_N, (unsigned long)chain);
        put32(buf + 5 + WOTS_N, (unsigned long)j);
        memcpy(buf + 9 + WOTS_N, out, WOTS_N);
        pseudoXOF(8 * WOTS_N, buf, 8ULL * sizeof buf, out);
    }
}

void wots_root(unsigned char *root, const unsigned char *ends, const unsigned char *pub_seed) {
    static unsigned char buf[1 + WOTS_N + WOTS_LEN * WOTS_N];
    buf[0] = 0x02;
    memcpy(buf + 1, pub_seed, WOTS_N);
    memcpy(buf + 1 + WOTS_N, ends, WOTS_LEN * WOTS_N);
    pseudoXOF(8 * WOTS_N, buf, 8ULL * sizeof buf, root);
}

void wots_digest(unsigned char *digest, const unsigned char *r, const unsigned char *pub_seed,
                 const unsigned char *m, unsigned long long m_len) {
    unsigned char head[1 + 2 * WOTS_N];
    unsigned char *buf;
    unsigned long long total = sizeof head + m_len;
    static unsigned char small[1 + 2 * WOTS_N + 4096];
    head[0] = 0x03;
    memcpy(head + 1, r, WOTS_N);
    memcpy(head + 1 + WOTS_N, pub_seed, WOTS_N);
    if (total > sizeof small) {
        /* messages above 4 KiB are hashed in two stages */
        unsigned char inner[WOTS_N];
        pseudoXOF(8 * WOTS_N, m, 8 * m_len, inner);
        memcpy(small, head, sizeof head);
        memcpy(small + sizeof head, inner, WOTS_N);
        pseudoXOF(8 * WOTS_N, small, 8ULL * (sizeof head + WOTS_N), digest);
        return;
    }
    buf = small;
    memcpy(buf, head, sizeof head);
    if (m_len) {
        memcpy(buf + sizeof head, m, (size_t)m_len);
    }
    pseudoXOF(8 * WOTS_N, buf, 8 * total, digest);
}

void wots_digits(int *digits, const unsigned char *digest) {
    int i, csum = 0;
    for (i = 0; i < WOTS_LEN1; i++) {
        int byte = digest[i / 2];
        digits[i] = (i % 2 == 0) ? (byte >> 4) : (byte & 0x0f);
        csum += WOTS_W - 1 - digits[i];
    }
    for (i = WOTS_LEN - 1; i >= WOTS_LEN1; i--) {
        digits[i] = csum & (WOTS_W - 1);
        csum >>= WOTS_LOGW;
    }
}
