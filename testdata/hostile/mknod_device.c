/* Hostile addition to a test candidate (issue 36, "root powers"): linked into the library, it
 * runs when the library is loaded. It makes a character device node for the kernel log
 * (/dev/kmsg, 1:11) in its scratch folder ($TMPDIR) and reads through it, then asks the
 * kernel log directly (syslog READ_ALL). Marker on stderr:
 * `HOSTILE mknod rc=<r> errno=<e> read=<bytes> syslog=<r> errno=<e>`.
 * pqperf must refuse both (no capabilities, seccomp, Landlock without MAKE_CHAR). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

__attribute__((constructor)) static void mknod_device(void) {
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/kmsg", dir ? dir : "/tmp");
    errno = 0;
    int rc = mknod(path, S_IFCHR | 0600, makedev(1, 11));
    int e1 = rc == 0 ? 0 : errno;
    long got = -1;
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd >= 0) {
        char buf[512];
        got = read(fd, buf, sizeof buf);
        close(fd);
    }
    char log[256];
    errno = 0;
    int sl = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof log);
    int e2 = sl >= 0 ? 0 : errno;
    fprintf(stderr, "HOSTILE mknod rc=%d errno=%d read=%ld syslog=%d errno=%d\n", rc, e1, got, sl,
            e2);
    fflush(stderr);
}
