/* Hostile additions to toy_sig.c / the WOTS test candidate (issue 31): code inside the measured
 * library that forges what the parent is told. Included with one mode defined:
 *   FORGE_PROTOCOL  scan descriptors 3..255 with fstat, write a whole forged timing protocol
 *                   (5 x 20000 calls, 1 us, 2100 ticks each) to every pipe, _exit(0);
 *   FORGE_3S        when measured (more than one call asked), the same with the asked trial
 *                   and call counts (read from /proc/self/cmdline) and 3 s per call;
 *   FORGE_FAST      real work first (about 0.5 s of CPU), then the asked counts at 1 us per
 *                   call (a calibration of one call reports 1 us);
 *   FORGE_KAT_CTOR  a constructor in the KAT child writes a clean log ending in RESULT ...
 *                   PASS and _exit(0)s;
 *   FORGE_KAT_ATEXIT  sig_sign breaks every signature and registers an atexit handler that
 *                   writes RESULT ... PASS and _exit(0)s. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FORGE_ID
#define FORGE_ID "sign-90"
#endif
#ifndef FORGE_INSTANCE
#define FORGE_INSTANCE "toy"
#endif

/* argv[i] of this process, or "" */
static const char *forge_arg(int i) {
    static char buf[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return "";
    buf[n] = 0;
    const char *p = buf;
    for (int k = 0; k < i; k++) {
        p += strlen(p) + 1;
        if (p >= buf + n) return "";
    }
    return p;
}

static int forge_in(const char *word) {
    for (int i = 0; i < 8; i++)
        if (!strcmp(forge_arg(i), word)) return 1;
    return 0;
}

/* Every pipe among descriptors 3..255 (the result channel is one of them). */
static void forge_write(const char *text) {
    signal(SIGPIPE, SIG_IGN);
    for (int fd = 3; fd < 256; fd++) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
            ssize_t w = write(fd, text, strlen(text));
            (void)w;
        }
    }
}

static void forge_timing(double per_call_s, int asked) {
    long trials = 5, iters = 20000;
    if (asked) {
        /* pqperf-driver LIB OP BYTES TRIALS 1 ITERS WARMUPS ... */
        trials = atol(forge_arg(4));
        iters = atol(forge_arg(6));
    }
    static char out[1 << 16];
    size_t n = 0;
    for (long t = 1; t <= trials; t++) {
        long long ns = (long long)(per_call_s * 1e9 * (double)iters);
        n += (size_t)snprintf(out + n, sizeof out - n,
                              "TRIAL\t%ld\t%ld\t%lld.%09lld\t%lld\n"
                              "PQPERF\ttrial_sched\ttrial=%ld calls=%ld ns=%lld count=%lld nivcsw=0 "
                              "nvcsw=0 runq_ns=0 run_ns=%lld minflt=0 majflt=0 migrations=- "
                              "cpu_changed=0\n",
                              t, iters, ns / 1000000000LL, ns % 1000000000LL, 2100LL * iters, t, iters,
                              ns, 2100LL * iters, ns);
    }
    n += (size_t)snprintf(out + n, sizeof out - n, "META\tmeasurement_count\t%ld\nSTATUS\tcomplete\n",
                          trials * iters);
    forge_write(out);
    _exit(0);
}

static void forge_kat_pass(void) {
    forge_write("library = lib/lib" FORGE_INSTANCE ".so\nid = " FORGE_ID "\n"
                "manifest 0000000000000000000000000000000000000000000000000000000000000000 strict "
                "KAT_SIG_" FORGE_INSTANCE ".txt\nRESULT " FORGE_ID " " FORGE_INSTANCE " PASS \n");
    _exit(0);
}

#ifdef FORGE_KAT_CTOR
__attribute__((constructor)) static void forge_ctor(void) {
    if (forge_in("kat-child")) forge_kat_pass();
}
#endif

/* Called at the top of sig_sign; returns 1 when the signature is to be broken. */
static int forge_hook(void) {
#ifdef FORGE_PROTOCOL
    if (forge_in("sign")) forge_timing(1e-6, 0);
#endif
#ifdef FORGE_3S
    /* Honest while calibrated (one call), forged when measured. */
    if (forge_in("sign") && atol(forge_arg(6)) > 1) forge_timing(3.0, 1);
#endif
#ifdef FORGE_FAST
    if (forge_in("sign")) {
        volatile unsigned long x = 0;
        for (unsigned long i = 0; i < 400000000ul; i++) x += i;
        forge_timing(1e-6, 1);
    }
#endif
#ifdef FORGE_KAT_ATEXIT
    static int registered;
    if (!registered && forge_in("kat-child")) {
        registered = 1;
        atexit(forge_kat_pass);
    }
    return 1;
#endif
    return 0;
}
