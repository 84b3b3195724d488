/* Hostile addition to a test candidate (issue 31, "what the candidate prints"): linked into the
 * library next to the candidate's code, it runs when the library is loaded and prints a host
 * path (LEAK_FILE, given with -DLEAK_FILE="...") and, where the sandbox lets it read the file,
 * the file's content with terminal control sequences on stderr. pqperf must keep that as
 * evidence only: stored capped with the control characters escaped, the path redacted on
 * publish, every other candidate's evidence still published. */
#include <stdio.h>

#ifndef LEAK_FILE
#define LEAK_FILE "/etc/hostname"
#endif

__attribute__((constructor)) static void print_host_file(void) {
    char buf[256];
    size_t n = 0;
    FILE *f = fopen(LEAK_FILE, "r");
    if (f) {
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    buf[n] = 0;
    fprintf(stderr, "\033[2J\033[31mread %s: %s\033[0m\n", LEAK_FILE, f ? buf : "(unreadable)");
    fflush(stderr);
}
