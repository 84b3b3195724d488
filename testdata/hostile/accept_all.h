/* Hostile addition to a test candidate (issue 36, "outputs of timed calls are checked"): verify
 * accepts every signature at once, without the work, when its executable is pqperf-driver
 * (the timing processes); everywhere else (the KAT child, a replay) it verifies, so the KAT
 * passes. Timing alone cannot see it; the parent relays one altered message per timed window
 * and requires its rejection (pqperf_measure::relay). Marker: `accept-all: calls=N` on stderr
 * at exit (calls accepted without verifying). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned long accept_all_calls;

static int accept_all_measured(void) {
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

/* 1 when the call is accepted without verifying. */
static int accept_all_now(void) {
    if (!accept_all_measured()) return 0;
    accept_all_calls++;
    return 1;
}

__attribute__((destructor)) static void accept_all_report(void) {
    if (accept_all_calls) fprintf(stderr, "accept-all: calls=%lu\n", accept_all_calls);
}
