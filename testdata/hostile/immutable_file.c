/* Hostile addition to a test candidate (issue 36, "root powers"): linked into the library, it
 * runs when the library is loaded. It writes a file in its scratch folder ($TMPDIR) and makes
 * it immutable (chattr +i: ioctl FS_IOC_SETFLAGS with FS_IMMUTABLE_FL), so that the folder
 * could not be removed after the child. Marker on stderr:
 * `HOSTILE immutable write=<bytes> ioctl=<r> errno=<e>`. pqperf must refuse it (no
 * CAP_LINUX_IMMUTABLE, seccomp) and leave no scratch folder behind. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

__attribute__((constructor)) static void immutable_file(void) {
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/pqperf-hostile-immutable", dir ? dir : "/tmp");
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    long w = -1;
    int rc = -1, e = 0;
    if (fd >= 0) {
        char buf[4096] = {1};
        w = write(fd, buf, sizeof buf);
        int flags = 0;
        ioctl(fd, FS_IOC_GETFLAGS, &flags);
        flags |= FS_IMMUTABLE_FL;
        errno = 0;
        rc = ioctl(fd, FS_IOC_SETFLAGS, &flags);
        e = rc == 0 ? 0 : errno;
        close(fd);
    } else {
        e = errno;
    }
    fprintf(stderr, "HOSTILE immutable write=%ld ioctl=%d errno=%d\n", w, rc, e);
    fflush(stderr);
}
