/* A fake timing driver for campaign tests that need no real timing ($PQPERF_DRIVER points at
 * it; the tests build it with gcc). It takes the real driver's arguments
 * (LIB OP BYTES TRIALS 1 ITERS WARMUPS [--samples] ...), loads nothing and writes canned
 * protocol lines (the real driver's META/TRIAL/PQPERF/SAMPLES/STATUS format, crates/driver)
 * to the result descriptor named in PQPERF_RESULT_FD (stdout without it). With a control pipe
 * (PQPERF_CONTROL_FD) it stops at the real driver's gates (`PQPERF wait <n>`, then reads the
 * parent's `go`): after its META lines, between timed intervals, after the last one and at
 * its end.
 *
 * The behaviour is chosen by the library file name: the first of these words it contains.
 *   complete      every call takes 1000 ns of CPU time (it spins that long), nothing disturbed
 *                 (the default)
 *   disturbed     every trial waited on the run queue for a share of its time between 10 %
 *                 and 90 %, different in every process (so the least disturbed is known)
 *   crashed       one trial, then SIGSEGV
 *   hung          one trial, then sleeps forever
 *   inconsistent  claims 10 s per trial and exits at once: far more than its CPU time (the
 *                 other modes spin for the CPU time they claim)
 * It writes the seed it was given (`--seed HEX`, else "reference") as META fake_seed.
 * Independent of the mode (words anywhere in the file name):
 *   slower        every call takes 1250 ns instead of 1000 ns (a 25 % regression)
 *   busy          the canary (PQPERF canary line, a fixed workload the real driver times)
 *                 claims twice its normal ticks: a machine that ran at half speed
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static FILE *out;
static int control = -1;
static unsigned gates;
/* Ticks of the host's fixed counter per ns (measured at start), so that the tick counts it
 * claims agree with the seconds at the rate pqperf measures for the host. */
static double ticks_per_ns = 3.0;

static unsigned long long wall_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

static unsigned long long ticks(void) {
#if defined(__x86_64__)
    unsigned lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((unsigned long long)hi << 32) | lo;
#elif defined(__aarch64__)
    unsigned long long v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return wall_ns() * 3;
#endif
}

/* The counter's rate over 20 ms of wall time (wall time on both sides, so load does not
 * matter). */
static void measure_ticks_per_ns(void) {
    unsigned long long w0 = wall_ns(), t0 = ticks(), w1;
    do
        w1 = wall_ns();
    while (w1 - w0 < 20000000ULL);
    ticks_per_ns = (double)(ticks() - t0) / (double)(w1 - w0);
}

static unsigned long long count_of(unsigned long long ns) {
    return (unsigned long long)((double)ns * ticks_per_ns);
}

__attribute__((format(printf, 1, 2))) static void line(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
    fflush(out);
}

/* Spins for `ns` of wall time, as an honest driver's interval does: the claim is the wall
 * time, backed by this thread's CPU time plus any wait for the CPU (a claim of CPU time
 * alone would hide the run-queue wait, which the parent's window check refuses). */
static void spin(unsigned long long ns) {
    unsigned long long a = wall_ns();
    while (wall_ns() - a < ns)
        ;
}

/* The real driver's gate: say where it is and wait for the parent's word. */
static void gate(void) {
    char word[3];
    size_t got = 0;
    if (control < 0) return;
    line("PQPERF\twait\t%u", gates++);
    while (got < sizeof word) {
        ssize_t k = read(control, word + got, sizeof word - got);
        if (k <= 0) exit(3);
        got += (size_t)k;
    }
}

static void trial(const char *key, unsigned t, unsigned long calls, unsigned long long ns,
                  unsigned long long runq) {
    if (strcmp(key, "trial_sched") == 0)
        line("TRIAL\t%u\t%lu\t%llu.%09llu\t%llu", t, calls, ns / 1000000000ULL,
             ns % 1000000000ULL, count_of(ns));
    line("PQPERF\t%s\ttrial=%u calls=%lu ns=%llu count=%llu nivcsw=0 nvcsw=0 runq_ns=%llu "
         "run_ns=%llu minflt=0 majflt=0 migrations=0 cpu_changed=0",
         key, t, calls, ns, count_of(ns), runq, ns - runq);
}

int main(int argc, char **argv) {
    const char *fd = getenv("PQPERF_RESULT_FD");
    out = fd ? fdopen(atoi(fd), "w") : stdout;
    const char *ctl = getenv("PQPERF_CONTROL_FD");
    control = ctl ? atoi(ctl) : -1;
    if (!out || argc < 8) {
        fprintf(stderr, "fake driver: usage: LIB OP BYTES TRIALS 1 ITERS WARMUPS [options]\n");
        return 2;
    }
    const char *lib = strrchr(argv[1], '/');
    lib = lib ? lib + 1 : argv[1];
    const char *op = argv[2];
    unsigned trials = (unsigned)atoi(argv[4]);
    unsigned long iters = strtoul(argv[6], NULL, 10);
    int samples = 0;
    const char *seed = "reference";
    for (int i = 8; i < argc; i++) {
        if (strcmp(argv[i], "--samples") == 0)
            samples = 1;
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = argv[i + 1];
    }
    const char *mode = "complete";
    const char *modes[] = {"disturbed", "crashed", "hung", "inconsistent"};
    for (unsigned i = 0; i < sizeof modes / sizeof *modes; i++)
        if (strstr(lib, modes[i])) {
            mode = modes[i];
            break;
        }
    unsigned long long per_call = strcmp(mode, "inconsistent") == 0 ? 10000000000ULL / iters
                                  : strstr(lib, "slower")                 ? 1250ULL
                                                                          : 1000ULL;
    unsigned long long canary_ns = strstr(lib, "busy") ? 60000ULL : 30000ULL;
    /* Run-queue share of this process's trials: 10..90 %, from the process id. */
    unsigned long long share = strcmp(mode, "disturbed") == 0 ? 10 + (unsigned)getpid() % 81 : 0;
    measure_ticks_per_ns();
    fprintf(stderr, "fake driver: %s %s mode %s\n", lib, op, mode);
    line("META\tid\tfake");
    line("META\toperation\t%s", op);
    line("META\tinput_bytes\t%s", argv[3]);
    line("META\tbuild_flags\t-O2 (fake driver)");
    line("META\tbaseline_rss_bytes\t1048576");
    line("META\tpk_bytes\t32");
    line("META\tsk_bytes\t64");
    line("META\tsignature_bytes\t48");
    line("META\tmode\tfixed_iterations");
    line("META\tcpu_cycles_available\tno");
    line("META\ttiming_scope\tloop");
    line("PQPERF\tcounter\ttsc");
    line("PQPERF\tpeak_rss_reset\ttrue");
    line("META\twarmups\t%s", argv[7]);
    /* The stream it was given (--seed HEX, else the reference's fixed seed). */
    line("META\tfake_seed\t%s", seed);
    gate();
    for (unsigned t = 1; t <= trials; t++) {
        unsigned long long ns = per_call * iters;
        if (t > 1) gate();
        if (strcmp(mode, "inconsistent") != 0)
            spin(ns);
        trial("trial_sched", t, iters, ns, ns * share / 100);
        if (strcmp(mode, "crashed") == 0)
            raise(SIGSEGV);
        if (strcmp(mode, "hung") == 0)
            for (;;)
                pause();
    }
    unsigned long calls = iters < 400 ? iters : 400;
    for (unsigned t = 1; samples && t <= trials; t++) {
        gate();
        if (strcmp(mode, "inconsistent") != 0)
            spin(per_call * calls);
        trial("sample_sched", t, calls, per_call * calls, per_call * calls * share / 100);
        fprintf(out, "SAMPLES\t%u\t", t);
        for (unsigned long i = 0; i < calls; i++)
            fprintf(out, i ? " %llu" : "%llu", count_of(per_call) + i % 7);
        line("%s", "");
    }
    gate();
    line("PQPERF\tcanary\tbefore=%llu after=%llu reps=5 steps=20000", count_of(canary_ns),
         count_of(canary_ns));
    line("META\tverify_rejections\t0");
    line("META\tpeak_rss_bytes\t2097152");
    line("PQPERF\tmem_stack_bytes\t512");
    line("PQPERF\tmem_stack_region_bytes\t1048576");
    line("PQPERF\tmem_stack_overflow\t0");
    line("PQPERF\tmem_heap_peak_bytes\t0");
    line("PQPERF\tmem_heap_allocations\t0");
    line("META\tmeasurement_count\t%lu", (unsigned long)trials * iters);
    line("META\tguide_100_measurements\t%s", trials * iters >= 100 ? "met" : "not_met");
    line("STATUS\tcomplete");
    gate();
    return 0;
}
