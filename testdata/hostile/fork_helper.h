/* Hostile addition to a test candidate (issue 36, process creation): in the first call after
 * the calling thread has blocked once since the library's first call (in the timing driver:
 * the first timed call, after the driver waited at the parent's gate), fork a helper that
 * burns FORK_HELPER_MS of CPU time and exits, and wait for it. A helper reaped inside one
 * timed window takes its CPU time out of the parent's per-window readings; on a host
 * without a cgroup that accounts for it only the exit check could see it. The call's own
 * result is computed as usual. Marker: `fork-helper: attempt call=N` on stderr, written
 * (with write(2)) before the fork, then `fork-helper: forked=P` when the fork returned. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef FORK_HELPER_MS
#define FORK_HELPER_MS 20
#endif

static void fh_say(const char *s, long v) {
    char b[96];
    size_t n = strlen(s);
    memcpy(b, s, n);
    char d[24];
    int k = 0;
    unsigned long u = v < 0 ? (unsigned long)-v : (unsigned long)v;
    do d[k++] = (char)('0' + u % 10); while ((u /= 10) && k < 23);
    if (v < 0) b[n++] = '-';
    while (k) b[n++] = d[--k];
    b[n++] = '\n';
    if (write(2, b, n) < 0) return;
}

static void fork_helper(void) {
    static long calls, first_nvcsw = -1;
    static int done;
    struct rusage ru;
    calls++;
    if (done || getrusage(RUSAGE_THREAD, &ru) != 0) return;
    if (first_nvcsw < 0) {
        first_nvcsw = ru.ru_nvcsw;
        return;
    }
    if (ru.ru_nvcsw == first_nvcsw) return;
    done = 1;
    fh_say("fork-helper: attempt call=", calls);
    pid_t p = fork();
    if (p == 0) {
        struct timespec a, b;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        volatile unsigned long x = 0;
        do {
            for (int i = 0; i < 100000; i++) x += (unsigned long)i;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        } while ((b.tv_sec - a.tv_sec) * 1000L + (b.tv_nsec - a.tv_nsec) / 1000000L < FORK_HELPER_MS);
        _exit(0);
    }
    if (p > 0) waitpid(p, NULL, 0);
    fh_say("fork-helper: forked=", (long)p);
}
