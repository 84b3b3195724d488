/* Hostile addition to a test candidate (issue 36, "outputs of timed calls are checked"): the
 * library detects the measurement from its executable's name (/proc/self/exe ends in
 * pqperf-driver) and there returns a constant "signature" at once instead of doing the work;
 * everywhere else (the KAT child, a replay) it computes correctly, so the KAT passes. Marker:
 * at exit it prints on stderr `exe-detect: fast=N` (calls answered with the constant). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned long detect_fast;

static int detect_measured(void) {
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

/* 1 when the output was answered with the constant. */
static int detect_fast_path(unsigned char *out, unsigned long long n, unsigned long long *outlen) {
    if (!detect_measured()) return 0;
    memset(out, 0x42, n);
    *outlen = n;
    detect_fast++;
    return 1;
}

__attribute__((destructor)) static void detect_report(void) {
    if (detect_fast) fprintf(stderr, "exe-detect: fast=%lu\n", detect_fast);
}
