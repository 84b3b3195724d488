/*
 * iccs_provider_check.c -- pqperf's vector check of an ICCS provider (auxfunc.c, drng.c).
 *
 * Reads one call per line on stdin and prints one result line per call on stdout:
 *   H <digest_bits> <msg_bits> <msg hex|->   sm3hash     -> "<rc> <digest hex>"
 *   P <digest_bits> <msg_bits> <msg hex|->   pseudohash  -> "<rc> <digest hex>"
 *   X <out_bits> <msg_bits> <msg hex|->      pseudoXOF   -> "<rc> <output hex|->"
 *   I <seed hex|->                           init_random_number(&ctx, seed, bytes) -> "<rc>"
 *   G <bits>                                 get_random_number(&ctx, out, bits) -> "<rc> <hex|->"
 * Output buffers are pre-filled with 0xA5 and printed up to the length the API defines, so a
 * provider that writes too little or leaves stray bits differs from pqperf's values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "auxfunc.h"
#include "drng.h"

#define LINE_MAX_BYTES (1 << 20)

static int unhex(const char *h, unsigned char *out, size_t cap, size_t *n)
{
    size_t i = 0;
    if (strcmp(h, "-") == 0) {
        *n = 0;
        return 0;
    }
    while (h[0] && h[1]) {
        unsigned v;
        if (i >= cap || sscanf(h, "%2x", &v) != 1)
            return -1;
        out[i++] = (unsigned char)v;
        h += 2;
    }
    *n = i;
    return 0;
}

static void put(int rc, const unsigned char *b, size_t n)
{
    printf("%d ", rc);
    if (n == 0)
        putchar('-');
    for (size_t i = 0; i < n; i++)
        printf("%02x", b[i]);
    putchar('\n');
}

int main(void)
{
    char *line = malloc(LINE_MAX_BYTES);
    char *hex = malloc(LINE_MAX_BYTES);
    unsigned char *msg = malloc(LINE_MAX_BYTES);
    unsigned char *out = malloc(LINE_MAX_BYTES);
    DRNG_ctx ctx;
    if (!line || !hex || !msg || !out)
        return 2;
    memset(&ctx, 0, sizeof(ctx));
    while (fgets(line, LINE_MAX_BYTES, stdin)) {
        char op = line[0];
        unsigned long long a = 0, bits = 0;
        size_t n = 0;
        int rc;
        memset(out, 0xA5, 4096);
        if (op == 'H' || op == 'P' || op == 'X') {
            if (sscanf(line + 1, "%llu %llu %s", &a, &bits, hex) != 3 ||
                unhex(hex, msg, LINE_MAX_BYTES, &n) != 0 || a > 8 * 4000ULL)
                return 3;
            if (op == 'H') {
                rc = sm3hash((int)a, msg, bits, out);
                put(rc, out, 32);
            } else if (op == 'P') {
                rc = pseudohash((int)a, msg, bits, out);
                put(rc, out, (size_t)(a == 512 || a == 768 || a == 1024 ? a / 8 : 0));
            } else {
                rc = pseudoXOF(a, msg, bits, out);
                put(rc, out, (size_t)((a + 7) / 8));
            }
        } else if (op == 'I') {
            if (sscanf(line + 1, "%s", hex) != 1 || unhex(hex, msg, LINE_MAX_BYTES, &n) != 0)
                return 3;
            rc = init_random_number(&ctx, msg, n);
            printf("%d\n", rc);
        } else if (op == 'G') {
            if (sscanf(line + 1, "%llu", &bits) != 1 || bits > 8 * 4000ULL)
                return 3;
            rc = get_random_number(&ctx, out, bits);
            put(rc, out, (size_t)((bits + 7) / 8));
        } else {
            return 3;
        }
        fflush(stdout);
    }
    return 0;
}
