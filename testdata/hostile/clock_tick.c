/* Hostile addition to a test candidate (issue 36, "root powers"): linked into the library, it
 * runs when the library is loaded. It asks for the host clock's tick to be one microsecond
 * longer (ADJ_TICK: the clock would run 0.01 % slow for every process measured after it) and
 * sets the real-time clock to the time it reads. Marker on stderr:
 * `HOSTILE clock adjtimex=<r> errno=<e> settime=<r> errno=<e>`. pqperf must refuse both
 * (no CAP_SYS_TIME, seccomp) and the host's tick must be what it was. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/timex.h>
#include <time.h>

__attribute__((constructor)) static void clock_tick(void) {
    struct timex tx = {0};
    adjtimex(&tx); /* read-only query */
    struct timex set = {0};
    set.modes = ADJ_TICK;
    set.tick = tx.tick + 1;
    errno = 0;
    int a = adjtimex(&set);
    int e1 = a == -1 ? errno : 0;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    errno = 0;
    int s = clock_settime(CLOCK_REALTIME, &now);
    int e2 = s == -1 ? errno : 0;
    fprintf(stderr, "HOSTILE clock adjtimex=%d errno=%d settime=%d errno=%d\n", a, e1, s, e2);
    fflush(stderr);
}
