/* Hostile addition to a test candidate (issue 36, "processes the candidate cannot tell
 * apart"): linked into the library, it runs when the library is loaded and prints what it can
 * read of its own environment (/proc/self/environ, getenv's view) and of PID 1 of its PID
 * namespace (/proc/1/environ, /proc/1/cmdline; a fork of pqperf), with NUL bytes shown as
 * '|' and everything else printable, so that a secret of pqperf's environment or pqperf's
 * argv would land in the captured stderr (the record's processes[].stderr). Marker on stderr:
 * `HOSTILE environ self[...] 1env(<n>)[...] 1cmd(<n>)[...]` (n: bytes read, -errno when the
 * read failed). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static void show(const char *tag, const char *path) {
    char buf[600];
    long n = -1;
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        n = read(fd, buf, sizeof buf - 1);
        if (n < 0) n = -errno;
        close(fd);
    } else {
        n = -errno;
    }
    fprintf(stderr, " %s(%ld)[", tag, n);
    for (long i = 0; i < n; i++) {
        char c = buf[i];
        fputc(c == 0 ? '|' : (c >= 32 && c < 127 ? c : '?'), stderr);
    }
    fputc(']', stderr);
}

__attribute__((constructor)) static void read_environ(void) {
    fprintf(stderr, "HOSTILE environ");
    show("self", "/proc/self/environ");
    show("1env", "/proc/1/environ");
    show("1cmd", "/proc/1/cmdline");
    fputc('\n', stderr);
    fflush(stderr);
}
