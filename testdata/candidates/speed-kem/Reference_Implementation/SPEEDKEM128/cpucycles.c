/*
 * cpucycles.c -- timing helpers of the SPEED_KEM.c benchmark of the pqperf test candidate
 * speed-kem: a cycle counter (clock_gettime nanoseconds here) and print_results. Used only
 * by the benchmark.
 */
#include <stdio.h>
#include <time.h>

unsigned long long cpucycles(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

void print_results(const char *what, const unsigned long long *t, int n)
{
    unsigned long long sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    printf("%s: average %llu ticks over %d runs\n", what, n > 0 ? sum / (unsigned long long)n : 0ULL, n);
}
