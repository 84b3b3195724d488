/*
 * artifact_bench.c -- throughput of the C artifact as candidates call it: sm3hash,
 * pseudohash-512 and pseudoXOF-256 at the guide's sizes S1..S8, plus get_random_number.
 * Ticks come from rdtsc on x86-64 (TSC ticks = reference cycles at the nominal rate, not core
 * cycles) and from CLOCK_MONOTONIC elsewhere (printed as ns). Reported: median and minimum of
 * 15 batches, per byte. Message m[i] = (131 i + n) mod 256 as in the timing driver.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pqperf_iccs.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static uint64_t ticks(void) { return __rdtsc(); }
static const char *UNIT = "rdtsc ticks";
#else
static uint64_t ticks(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
static const char *UNIT = "ns";
#endif

#define BATCHES 15
static unsigned char M[65536], OUT[1024];

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void run(const char *name, int which, size_t n)
{
    unsigned long long bits = 8ULL * n;
    for (size_t i = 0; i < n; i++)
        M[i] = (unsigned char)((131 * i + n) % 256);
    /* batch size: about 2e6 bytes of input per batch, at least 2 calls */
    size_t iters = 2000000 / (n + 64) + 2;
    double per[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = ticks();
        for (size_t k = 0; k < iters; k++) {
            if (which == 0)
                sm3hash(256, M, bits, OUT);
            else if (which == 1)
                pseudohash(512, M, bits, OUT);
            else if (which == 2)
                pseudoXOF(256, M, bits, OUT);
            else
                get_random_number(&drng_algorithm, OUT, bits);
        }
        per[b] = (double)(ticks() - t0) / (double)iters / (double)n;
    }
    qsort(per, BATCHES, sizeof per[0], cmp);
    printf("%-16s %8zu %14.2f %14.2f\n", name, n, per[BATCHES / 2], per[0]);
}

int main(void)
{
    static const size_t S[] = {32, 128, 512, 1024, 4096, 8192, 16384, 65536};
    unsigned char seed[48];
    for (int i = 0; i < 48; i++)
        seed[i] = (unsigned char)i;
    init_random_number(&drng_algorithm, seed, 48);
    printf("C artifact (libpqperf_iccs.a) throughput, %s per byte, median and min of %d batches\n",
           UNIT, BATCHES);
    printf("%-16s %8s %14s %14s\n", "helper", "bytes", "median/byte", "min/byte");
    static const char *NAMES[] = {"sm3hash-256", "pseudohash-512", "pseudoXOF-256"};
    for (int w = 0; w < 3; w++)
        for (int i = 0; i < 8; i++)
            run(NAMES[w], w, S[i]);
    static const size_t D[] = {32, 64, 1024};
    for (int i = 0; i < 3; i++)
        run("drng", 3, D[i]);
    return 0;
}
