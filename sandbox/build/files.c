/* files.c: reading and writing whole files (files.h). */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

char *pp__file_read(const char *path, size_t max, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    /* start from the size the file says it has; read one byte past the room to learn whether there is more */
    struct stat st;
    size_t cap = fstat(fileno(f), &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 4096, n = 0;
    if (cap > max) cap = max;
    char *buf = pp__xmalloc(cap + 2);
    for (;;) {
        n += fread(buf + n, 1, cap + 1 - n, f);
        if (n <= cap || ferror(f) || cap == max) break;
        cap = cap > max / 2 ? max : 2 * cap;
        buf = pp__xrealloc(buf, cap + 2);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad || n > max) {
        free(buf);
        errno = bad ? EIO : EFBIG;
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

int pp__file_write(const char *path, const void *buf, size_t n, mode_t mode) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) return -1;
    const char *p = buf;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            int e = k < 0 ? errno : EIO;
            close(fd);
            errno = e;
            return -1;
        }
        p += k, n -= (size_t)k;
    }
    return close(fd);
}
