/* Hostile addition to a test candidate (issue 36, "outputs of timed calls are checked"): dec
 * returns a garbage shared secret at once, without the work, when its executable is
 * pqperf-driver, except on the first call of a process (which a preparation's own check of one
 * decapsulation would see); everywhere else (the KAT child, a replay) it decapsulates, so the
 * KAT passes. The parent compares every timed shared secret with the one the encapsulation
 * gave (pqperf_measure::relay). Marker: `garbage-dec: fast=N` on stderr at exit. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned long garbage_dec_calls, garbage_dec_fast;

static int garbage_dec_measured(void) {
    static int known = -1;
    if (known < 0) {
        char buf[4096];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = 0;
        size_t l = strlen(buf), w = strlen("pqperf-driver");
        known = l >= w && strcmp(buf + l - w, "pqperf-driver") == 0;
    }
    return known;
}

/* 1 when ss was filled with garbage instead of decapsulating. */
static int garbage_dec_now(unsigned char *ss, unsigned long long n, unsigned long long *ssl) {
    if (garbage_dec_calls++ == 0 || !garbage_dec_measured()) return 0;
    memset(ss, 0x42, n);
    *ssl = n;
    garbage_dec_fast++;
    return 1;
}

__attribute__((destructor)) static void garbage_dec_report(void) {
    if (garbage_dec_fast) fprintf(stderr, "garbage-dec: fast=%lu\n", garbage_dec_fast);
}
