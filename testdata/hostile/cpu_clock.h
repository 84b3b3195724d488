/* Hostile addition to a test candidate (issue 36, run-queue wait): every timed interval is
 * claimed at the CPU time the library's thread spent in it (its thread CPU clock, the clock
 * CLOCK_THREAD_CPUTIME_ID reads, taken from the result channel's relay thread with
 * pthread_getcpuclockid) in place of its wall time. On a quiet CPU the two agree and the
 * claim is honest; on a CPU shared with another task the wall time also holds the run-queue
 * wait, and the claim hides it: a figure as if the candidate had the CPU to itself, while
 * every rival's figure keeps its wait. The CPU time of the window stays as the parent reads
 * it, so only the parent's per-window run-queue readings can catch it.
 * It is rewrite.h's REWRITE_CPU at 100 %. Marker: `rewrite-cpu: intervals=N hidden_us=H` on
 * stderr at the end (H: the wall time the claims left out). */
#define REWRITE_CPU 1
#undef REWRITE_PCT
#define REWRITE_PCT 100
#include "rewrite.h"
