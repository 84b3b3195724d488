/* Hostile addition to a test candidate (issue 36, "processes the candidate cannot tell
 * apart"): the parent used to measure the setup cost of a unit in a process of its own,
 * started with TRIALS = 0 on the driver's argv (`pqperf-driver LIB OP BYTES TRIALS 1 ITERS
 * WARMUPS …`), and allowed that much unclaimed CPU time in every timing process. A
 * constructor reads its own argv and, in such a setup-only process, burns SETUP_BURN_MS of
 * CPU, widening the allowance for a forgery (combine with rewrite.h). Marker on stderr at
 * exit: `setup-burn: trials=<argv TRIALS> burned_ms=<n>`. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifndef SETUP_BURN_MS
#define SETUP_BURN_MS 3000
#endif

static char sb_trials[32] = "?";
static long sb_burned;

__attribute__((constructor)) static void sb_start(void) {
    char buf[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f) return;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* argv[0] program, [1] LIB, [2] OP, [3] BYTES, [4] TRIALS */
    size_t at = 0;
    for (int i = 0; i < 4 && at < n; i++) at += strlen(buf + at) + 1;
    if (at >= n) return;
    snprintf(sb_trials, sizeof sb_trials, "%s", buf + at);
    if (strcmp(sb_trials, "0") != 0) return;
    struct timespec t0, t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    volatile unsigned long x = 1;
    do {
        for (int i = 0; i < 100000; i++) x = x * 6364136223846793005ul + 1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        sb_burned = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
    } while (sb_burned < SETUP_BURN_MS);
}

__attribute__((destructor)) static void sb_end(void) {
    fprintf(stderr, "setup-burn: trials=%s burned_ms=%ld\n", sb_trials, sb_burned);
}
