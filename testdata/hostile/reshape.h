/* Hostile addition to a test candidate (issue 36, "the headline figure cannot move more than
 * the stated bound"): inside the timing driver (/proc/self/exe ends in pqperf-driver) a
 * constructor takes over the result channel (the only write-only pipe among descriptors
 * 3..255: dup3 of a new pipe onto its number) and a thread copies the driver's lines to the
 * real channel, reshaping only the per-call SAMPLES of each sampled trial while keeping
 * their sum exactly (so every sum the parent checks still holds):
 *   default        RESHAPE_LOW_SHARE percent of the calls (the first RESHAPE_LOW_SHARE of
 *                  every 100) are reported at RESHAPE_PCT percent of their ticks and the others
 *                  carry the rest in equal parts: the median moves to RESHAPE_PCT % while
 *                  q3/q1 stays narrow (the estimator stays `p50`);
 *   RESHAPE_FENCE  every call at RESHAPE_PCT percent and the last one carries the rest (far
 *                  above the fence): the fenced mean moves to RESHAPE_PCT %.
 * A destructor closes the taken descriptor and waits for the thread, so every line arrives.
 * Marker: `reshape: lines=N reshaped=S` on stderr at the end. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef RESHAPE_PCT
#define RESHAPE_PCT 50
#endif
#ifndef RESHAPE_LOW_SHARE
#define RESHAPE_LOW_SHARE 80
#endif

static int rs_fd = -1, rs_real = -1;
static pthread_t rs_thread;
static unsigned long rs_lines, rs_reshaped;
static unsigned long long rs_v[8192];

/* Whether call i is reported low (the default shape): RESHAPE_LOW_SHARE of every 100. */
static int rs_low(size_t i) { return (int)(i % 100) < RESHAPE_LOW_SHARE; }

/* Reshapes the n values of rs_v keeping their sum. */
static void rs_reshape(size_t n) {
    unsigned long long sum = 0, low = 0;
    size_t high = 0;
    for (size_t i = 0; i < n; i++) sum += rs_v[i];
#ifdef RESHAPE_FENCE
    for (size_t i = 0; i + 1 < n; i++) {
        rs_v[i] = rs_v[i] * RESHAPE_PCT / 100;
        low += rs_v[i];
    }
    if (n) rs_v[n - 1] = sum - low;
#else
    for (size_t i = 0; i < n; i++) {
        if (rs_low(i)) {
            rs_v[i] = rs_v[i] * RESHAPE_PCT / 100;
            low += rs_v[i];
        } else {
            high++;
        }
    }
    unsigned long long rest = sum - low, k = 0;
    for (size_t i = 0; i < n && high; i++) {
        if (rs_low(i)) continue;
        k++;
        /* equal parts, the remainder on the last */
        rs_v[i] = k == high ? rest - (rest / high) * (high - 1) : rest / high;
    }
#endif
}

static void *rs_pump(void *arg) {
    FILE *in = fdopen((int)(long)arg, "r");
    static char line[1 << 17], out[1 << 17];
    while (in && fgets(line, sizeof line, in)) {
        size_t n = strlen(line);
        rs_lines++;
        char *t1 = strchr(line, '\t');
        char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!strncmp(line, "SAMPLES\t", 8) && t2) {
            size_t m = 0;
            for (char *tok = strtok(t2 + 1, " \n"); tok && m < 8192; tok = strtok(NULL, " \n"))
                rs_v[m++] = strtoull(tok, NULL, 10);
            rs_reshape(m);
            size_t o = (size_t)(t2 + 1 - line);
            memcpy(out, line, o);
            for (size_t i = 0; i < m && o + 32 < sizeof out; i++)
                o += (size_t)snprintf(out + o, sizeof out - o, "%s%llu", i ? " " : "", rs_v[i]);
            out[o++] = '\n';
            n = o;
            rs_reshaped++;
        } else {
            memcpy(out, line, n);
        }
        for (size_t w = 0; w < n;) {
            ssize_t k = write(rs_real, out + w, n - w);
            if (k <= 0) break;
            w += (size_t)k;
        }
    }
    return NULL;
}

__attribute__((constructor)) static void rs_start(void) {
    char exe[4096];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[l > 0 ? l : 0] = 0;
    size_t n = strlen(exe), w = strlen("pqperf-driver");
    if (n < w || strcmp(exe + n - w, "pqperf-driver") != 0) return;
    for (int fd = 3; fd < 256; fd++) {
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) ||
            (fcntl(fd, F_GETFL) & O_ACCMODE) != O_WRONLY)
            continue;
        int p[2];
        if (pipe(p) != 0) return;
        rs_real = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        dup3(p[1], fd, O_CLOEXEC);
        close(p[1]);
        rs_fd = fd;
        pthread_create(&rs_thread, NULL, rs_pump, (void *)(long)p[0]);
        return;
    }
}

__attribute__((destructor)) static void rs_end(void) {
    if (rs_fd < 0) return;
    close(rs_fd);
    pthread_join(rs_thread, NULL);
    fprintf(stderr, "reshape: lines=%lu reshaped=%lu\n", rs_lines, rs_reshaped);
}
