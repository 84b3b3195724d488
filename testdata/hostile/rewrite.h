/* Hostile addition to a test candidate (issue 36, "the parent measures"): inside the timing
 * driver (/proc/self/exe ends in pqperf-driver) a constructor takes over the result channel
 * (the only write-only pipe among descriptors 3..255: dup3 of a new pipe onto its number) and a thread
 * copies the driver's lines to the real channel, scaling numbers by REWRITE_PCT percent:
 *   REWRITE_SAMPLES  only the per-call SAMPLES ticks (the robust figure's input);
 *   REWRITE_PEAK     only the META peak_rss_bytes line, replaced by 2 MiB, while the
 *                    library touches REWRITE_PEAK MiB of memory in its first call;
 *   otherwise        also TRIAL seconds and ticks and the trial_sched/sample_sched
 *                    ns/count/run_ns figures (a consistent forgery of the whole timing);
 *   REWRITE_CPU      (with the last) the factor of each interval is chosen so that its
 *                    claimed time is REWRITE_PCT percent of the CPU time the library's
 *                    thread spent since the driver's last gate (`PQPERF wait`), read
 *                    with its thread CPU clock: a forgery of the operation's CPU time,
 *                    whatever the run-queue wait of a busy host added to the wall time.
 * A destructor closes the taken descriptor and waits for the thread, so every line arrives.
 * Marker: `rewrite: lines=N scaled=S` on stderr at the end (with REWRITE_CPU also
 * `rewrite-cpu: intervals=N hidden_us=H`, the wall time the claims left out). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef REWRITE_PCT
#define REWRITE_PCT 50
#endif

static int rw_fd = -1, rw_orig = -1;
static pthread_t rw_thread;
static unsigned long rw_lines, rw_scaled;
static double rw_f = REWRITE_PCT / 100.0;
#ifdef REWRITE_CPU
#include <time.h>
static clockid_t rw_clock;
static unsigned long long rw_last;

static unsigned long long rw_cpu_ns(void) {
    struct timespec t;
    clock_gettime(rw_clock, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* The factor of the interval that claims `wall_ns`: REWRITE_PCT % of the CPU time since
 * the last gate (never above the truth). */
static unsigned long rw_intervals;
static unsigned long long rw_hidden_ns;

static void rw_choose(unsigned long long wall_ns) {
    double cpu = (double)(rw_cpu_ns() - rw_last);
    rw_f = wall_ns ? REWRITE_PCT / 100.0 * cpu / (double)wall_ns : 1.0;
    if (rw_f > 1.0) rw_f = 1.0;
    rw_intervals++;
    rw_hidden_ns += wall_ns - (unsigned long long)((double)wall_ns * rw_f);
}
#endif

static unsigned long long rw_scale(unsigned long long x) {
    return (unsigned long long)((double)x * rw_f);
}

/* Appends `s` to out (bounded). */
static size_t rw_put(char *out, size_t n, size_t cap, const char *s) {
    size_t l = strlen(s);
    if (n + l >= cap) l = cap - n - 1;
    memcpy(out + n, s, l);
    return n + l;
}

/* Scales every number of the space-separated list `s` (SAMPLES values). */
static size_t rw_numbers(char *out, size_t n, size_t cap, char *s) {
    char buf[32];
    for (char *tok = strtok(s, " \n"); tok; tok = strtok(NULL, " \n")) {
        snprintf(buf, sizeof buf, "%s%llu", n && out[n - 1] != '\t' ? " " : "",
                 rw_scale(strtoull(tok, NULL, 10)));
        n = rw_put(out, n, cap, buf);
    }
    return n;
}

/* Scales the values of ns=, count=, run_ns= in a key=value list. */
static size_t rw_sched(char *out, size_t n, size_t cap, char *s) {
    char buf[64];
    int first = 1;
    for (char *tok = strtok(s, " \n"); tok; tok = strtok(NULL, " \n")) {
        char *eq = strchr(tok, '=');
        if (eq && (!strncmp(tok, "ns=", 3) || !strncmp(tok, "count=", 6) ||
                   !strncmp(tok, "run_ns=", 7)) && eq[1] != '-') {
            *eq = 0;
            snprintf(buf, sizeof buf, "%s%s=%llu", first ? "" : " ", tok,
                     rw_scale(strtoull(eq + 1, NULL, 10)));
        } else {
            snprintf(buf, sizeof buf, "%s%s", first ? "" : " ", tok);
        }
        first = 0;
        n = rw_put(out, n, cap, buf);
    }
    return n;
}

static void *rw_pump(void *arg) {
    FILE *in = fdopen((int)(long)arg, "r");
    static char line[1 << 16], out[1 << 16];
    while (in && fgets(line, sizeof line, in)) {
        size_t n = 0;
        rw_lines++;
        char *t1 = strchr(line, '\t');
        char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
#ifdef REWRITE_PEAK
        if (!strncmp(line, "META\tpeak_rss_bytes\t", 20)) {
            n = (size_t)snprintf(out, sizeof out, "META\tpeak_rss_bytes\t%llu\n", 2ull << 20);
            rw_scaled++;
        }
#else
        if (!strncmp(line, "SAMPLES\t", 8) && t2) {
            n = rw_put(out, 0, sizeof out, "");
            memcpy(out, line, (size_t)(t2 + 1 - line));
            n = (size_t)(t2 + 1 - line);
            n = rw_numbers(out, n, sizeof out, t2 + 1);
            n = rw_put(out, n, sizeof out, "\n");
            rw_scaled++;
#ifndef REWRITE_SAMPLES
#ifdef REWRITE_CPU
        } else if (!strncmp(line, "PQPERF\twait\t", 12)) {
            rw_last = rw_cpu_ns();
#endif
        } else if (!strncmp(line, "TRIAL\t", 6)) {
            unsigned t, calls;
            unsigned long long s, ns, count;
            if (sscanf(line, "TRIAL\t%u\t%u\t%llu.%llu\t%llu", &t, &calls, &s, &ns, &count) == 5) {
#ifdef REWRITE_CPU
                rw_choose(s * 1000000000ull + ns);
#endif
                unsigned long long total = rw_scale(s * 1000000000ull + ns);
                n = (size_t)snprintf(out, sizeof out, "TRIAL\t%u\t%u\t%llu.%09llu\t%llu\n", t, calls,
                                     total / 1000000000ull, total % 1000000000ull, rw_scale(count));
                rw_scaled++;
            }
        } else if (!strncmp(line, "PQPERF\ttrial_sched\t", 19) ||
                   !strncmp(line, "PQPERF\tsample_sched\t", 20)) {
#ifdef REWRITE_CPU
            char *w = strstr(line, " ns=");
            if (!strncmp(line, "PQPERF\tsample_sched\t", 20) && w)
                rw_choose(strtoull(w + 4, NULL, 10));
#endif
            memcpy(out, line, (size_t)(t2 + 1 - line));
            n = rw_sched(out, (size_t)(t2 + 1 - line), sizeof out, t2 + 1);
            n = rw_put(out, n, sizeof out, "\n");
            rw_scaled++;
#endif
        }
#endif
        if (!n) {
            n = strlen(line);
            memcpy(out, line, n);
        }
        for (size_t w = 0; w < n;) {
            ssize_t k = write(rw_orig, out + w, n - w);
            if (k <= 0) break;
            w += (size_t)k;
        }
    }
    return NULL;
}

#ifdef REWRITE_PEAK
/* Touches REWRITE_PEAK MiB once (kept), from the library's first call. */
static void rw_touch(void) {
    static unsigned char *big;
    if (big) return;
    big = malloc((size_t)REWRITE_PEAK << 20);
    if (big) memset(big, 1, (size_t)REWRITE_PEAK << 20);
}
#endif

__attribute__((constructor)) static void rw_start(void) {
    char exe[4096];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[l > 0 ? l : 0] = 0;
    size_t n = strlen(exe), w = strlen("pqperf-driver");
    if (n < w || strcmp(exe + n - w, "pqperf-driver") != 0) return;
    for (int fd = 3; fd < 256; fd++) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) &&
            (fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY) {
            int p[2];
            if (pipe(p) != 0) return;
            rw_orig = fcntl(fd, F_DUPFD_CLOEXEC, 3);
            dup3(p[1], fd, O_CLOEXEC);
            close(p[1]);
            rw_fd = fd;
#ifdef REWRITE_CPU
            pthread_getcpuclockid(pthread_self(), &rw_clock);
            rw_last = rw_cpu_ns();
#endif
            pthread_create(&rw_thread, NULL, rw_pump, (void *)(long)p[0]);
            return;
        }
    }
}

__attribute__((destructor)) static void rw_end(void) {
    if (rw_fd < 0) return;
    close(rw_fd);
    pthread_join(rw_thread, NULL);
#ifdef REWRITE_CPU
    fprintf(stderr, "rewrite-cpu: intervals=%lu hidden_us=%llu\n", rw_intervals,
            rw_hidden_ns / 1000);
#endif
    fprintf(stderr, "rewrite: lines=%lu scaled=%lu\n", rw_lines, rw_scaled);
}
