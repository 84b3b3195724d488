/* Hostile addition to a test candidate (issue 36, "root powers"): linked into the library, it
 * runs when the library is loaded. It adds a key to the user keyring of its uid (root's, when
 * pqperf runs as root), which outlives the process. Marker on stderr:
 * `HOSTILE keyring add_key=<r> errno=<e>`. pqperf must refuse it (seccomp); no key named
 * `pqperf-hostile-key` may be left in the host's keyrings. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_SPEC_USER_KEYRING -4

__attribute__((constructor)) static void keyring(void) {
    errno = 0;
    long r = syscall(SYS_add_key, "user", "pqperf-hostile-key", "owned", 5,
                     KEY_SPEC_USER_KEYRING);
    int e = r == -1 ? errno : 0;
    fprintf(stderr, "HOSTILE keyring add_key=%ld errno=%d\n", r, e);
    fflush(stderr);
}
