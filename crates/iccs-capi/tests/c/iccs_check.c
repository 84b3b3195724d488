/*
 * iccs_check.c -- exercises libpqperf_iccs.a through its C headers and prints one line per
 * result; tests/c_abi.rs computes the same lines with the Rust API and compares.
 *
 * Line formats (hex lowercase):
 *   sm3hash <msg_bits> <digest>
 *   pseudohash <width> <msg_bits> <digest>
 *   pseudoxof <out_bits> <msg_bits> <output> <canary-byte-after-output>
 *   drng <seed_len> <draw_bits> <output>           (one context, successive draws)
 *   nist <draw_bytes> <output>                     (PQCLEAN_randombytes after nist_kat_init)
 *   hqc <draw_bytes> <output>                      (PQCLEAN_randombytes after hqc_kat_init)
 *   rc <name> <return code>                        (error paths)
 */
#include <stdio.h>
#include <string.h>

#include "pqperf_iccs.h"

static unsigned char M[2048];

static void hex(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
}

static const unsigned long long MSG_BITS[] = {0, 1, 7, 8, 9, 20, 24, 255, 256, 257, 440, 447,
                                              448, 449, 511, 512, 513, 1000, 1024, 4095, 8192};
#define NMSG (sizeof MSG_BITS / sizeof MSG_BITS[0])

int main(void)
{
    unsigned char out[600];
    for (int i = 0; i < (int)sizeof M; i++)
        M[i] = (unsigned char)((7 * i + 1) % 256);

    for (size_t k = 0; k < NMSG; k++) {
        unsigned long long L = MSG_BITS[k];
        int rc = sm3hash(256, M, L, out);
        printf("sm3hash %llu ", L);
        hex(out, 32);
        printf(" %d\n", rc);
        static const int W[] = {512, 768, 1024};
        for (int w = 0; w < 3; w++) {
            rc = pseudohash(W[w], M, L, out);
            printf("pseudohash %d %llu ", W[w], L);
            hex(out, (size_t)W[w] / 8);
            printf(" %d\n", rc);
        }
        static const unsigned long long N[] = {1, 8, 100, 255, 256, 257, 768, 2048, 4100};
        for (int n = 0; n < 9; n++) {
            size_t nb = (size_t)((N[n] + 7) / 8);
            memset(out, 0xA5, sizeof out);
            rc = pseudoXOF(N[n], M, L, out);
            printf("pseudoxof %llu %llu ", N[n], L);
            hex(out, nb);
            printf(" %02x %d\n", out[nb], rc);
        }
    }

    /* DRNG: several seeds, a draw sequence including 0-bit and odd-bit draws */
    static const unsigned long long SEEDS[] = {0, 1, 48, 55, 64, 200};
    static const unsigned long long DRAWS[] = {512, 0, 13, 256, 1, 257, 4096, 8};
    for (int s = 0; s < 6; s++) {
        DRNG_ctx ctx;
        memset(&ctx, 0xEE, sizeof ctx);
        init_random_number(&ctx, M, SEEDS[s]);
        for (int d = 0; d < 8; d++) {
            size_t nb = (size_t)((DRAWS[d] + 7) / 8);
            memset(out, 0xA5, sizeof out);
            int rc = get_random_number(&ctx, out, DRAWS[d]);
            printf("drng %llu %llu ", SEEDS[s], DRAWS[d]);
            hex(out, nb);
            printf(" %02x %d\n", out[nb], rc);
        }
    }
    /* the global context */
    {
        unsigned char seed[64];
        for (int i = 0; i < 16; i++)
            memcpy(seed + 4 * i, "seed", 4);
        init_random_number(&drng_algorithm, seed, 64);
        get_random_number(&drng_algorithm, out, 512);
        printf("drng_algorithm ");
        hex(out, 64);
        printf("\n");
    }

    /* NIST CTR DRBG and HQC generator through PQCLEAN_randombytes */
    unsigned char entropy[48];
    for (int i = 0; i < 48; i++)
        entropy[i] = (unsigned char)i;
    static const size_t BYTES[] = {48, 33, 0, 1, 16, 17, 300};
    nist_kat_init(entropy, NULL, 256);
    for (int d = 0; d < 7; d++) {
        PQCLEAN_randombytes(out, BYTES[d]);
        printf("nist %zu ", BYTES[d]);
        hex(out, BYTES[d]);
        printf("\n");
    }
    hqc_kat_init(entropy, NULL, 256);
    for (int d = 0; d < 7; d++) {
        PQCLEAN_randombytes(out, BYTES[d]);
        printf("hqc %zu ", BYTES[d]);
        hex(out, BYTES[d]);
        printf("\n");
    }
    hqc_kat_release();
    /* NIST rng.h names, with a personalization string */
    randombytes_init(entropy, M, 256);
    randombytes(out, 48);
    printf("nist-pers 48 ");
    hex(out, 48);
    printf("\n");

    /* outputs overlapping the message: results as for the message at entry */
    {
        unsigned char buf[200], ref[200];
        memcpy(buf, M, 200);
        pseudoXOF(1024, M, 256, ref);
        printf("rc alias-xof %d\n", pseudoXOF(1024, buf, 256, buf));
        printf("alias-xof-same %d\n", memcmp(buf, ref, 128) == 0);
        memcpy(buf, M, 200);
        pseudoXOF(520, M + 1, 1000, ref);
        pseudoXOF(520, buf + 1, 1000, buf);
        printf("alias-xof-shifted-same %d\n", memcmp(buf, ref, 65) == 0);
        memcpy(buf, M, 200);
        pseudohash(1024, M, 1600, ref);
        pseudohash(1024, buf, 1600, buf + 3);
        printf("alias-ph-same %d\n", memcmp(buf + 3, ref, 128) == 0);
        memcpy(buf, M, 200);
        sm3hash(256, M + 5, 800, ref);
        sm3hash(256, buf + 5, 800, buf);
        printf("alias-sm3-same %d\n", memcmp(buf, ref, 32) == 0);
    }

    /* error paths: unsupported widths and null pointers never crash */
    DRNG_ctx ctx;
    init_random_number(&ctx, M, 8);
    printf("rc sm3hash-255 %d\n", sm3hash(255, M, 8, out));
    printf("rc sm3hash-512 %d\n", sm3hash(512, M, 8, out));
    printf("rc pseudohash-0 %d\n", pseudohash(0, M, 8, out));
    printf("rc pseudohash-256 %d\n", pseudohash(256, M, 8, out));
    printf("rc pseudohash-2048 %d\n", pseudohash(2048, M, 8, out));
    printf("rc pseudohash-null-everything-bad-width %d\n", pseudohash(1, NULL, 8, NULL));
    printf("rc sm3hash-nullmsg %d\n", sm3hash(256, NULL, 8, out));
    printf("rc sm3hash-nullmsg-0 %d\n", sm3hash(256, NULL, 0, out));
    printf("rc sm3hash-nullout %d\n", sm3hash(256, M, 8, NULL));
    printf("rc pseudohash-nullmsg %d\n", pseudohash(512, NULL, 1, out));
    printf("rc pseudohash-nullmsg-0 %d\n", pseudohash(768, NULL, 0, out));
    printf("rc pseudohash-nullout %d\n", pseudohash(1024, M, 8, NULL));
    printf("rc pseudoxof-nullmsg %d\n", pseudoXOF(8, NULL, 8, out));
    printf("rc pseudoxof-nullout %d\n", pseudoXOF(8, M, 8, NULL));
    printf("rc pseudoxof-0-nulls %d\n", pseudoXOF(0, NULL, 99, NULL));
    printf("rc init-nullctx %d\n", init_random_number(NULL, M, 8));
    printf("rc init-nullseed %d\n", init_random_number(&ctx, NULL, 8));
    printf("rc init-nullseed-0 %d\n", init_random_number(&ctx, NULL, 0));
    printf("rc get-nullctx %d\n", get_random_number(NULL, out, 8));
    printf("rc get-nullout %d\n", get_random_number(&ctx, NULL, 1));
    printf("rc get-nullout-0 %d\n", get_random_number(&ctx, NULL, 0));
    get_random_number(&ctx, out, 256);
    printf("drng-after-null-0 ");
    hex(out, 32);
    printf("\n");
    printf("rc randombytes-null %d\n", randombytes(NULL, 5));
    printf("rc randombytes-null-0 %d\n", randombytes(NULL, 0));
    randombytes_init(NULL, NULL, 256);
    printf("rc pqclean-null-0 %d\n", PQCLEAN_randombytes(NULL, 0));
    hqc_kat_init(NULL, NULL, 256);
    printf("rc hqc-null %d\n", pqperf_hqc_randombytes(NULL, 3));
    return 0;
}
