/* files.c: reading and writing whole files (files.h). */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

/* The whole of what fd reads (up to max bytes, one more to learn whether there is more), NUL-terminated; closes
 * fd. NULL with errno EIO or EFBIG. */
static char *read_fd(int fd, size_t max, size_t *len) {
    struct stat st;
    /* start from the size the file says it has */
    size_t cap = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 4096, n = 0;
    if (cap > max) cap = max;
    char *buf = pp__xmalloc(cap + 2);
    int bad = 0;
    for (;;) {
        ssize_t k = read(fd, buf + n, cap + 1 - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) bad = 1;
        if (k <= 0) break;
        n += (size_t)k;
        if (n <= cap) continue;
        if (cap == max) break;
        cap = cap > max / 2 ? max : 2 * cap;
        buf = pp__xrealloc(buf, cap + 2);
    }
    close(fd);
    if (bad || n > max) {
        free(buf);
        errno = bad ? EIO : EFBIG;
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

char *pp__file_read(const char *path, size_t max, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? NULL : read_fd(fd, max, len);
}

/* What a directory entry of mode m is, for a refusal; NULL for a plain file or folder. */
static const char *odd_kind(mode_t m) {
    return S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m) || S_ISBLK(m) ? "a device" : S_ISREG(m) || S_ISDIR(m) ? NULL : "not a plain file";
}

int pp__file_open_plain(const char *root, const char *rel, size_t max, char *why, size_t len) {
    int dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
    if (dir < 0) {
        snprintf(why, len, "cannot open the folder %s: %s", root, strerror(errno));
        return -1;
    }
    char walk[4096];
    snprintf(walk, sizeof walk, "%s", rel);
    char *part = walk, *slash;
    struct stat st;
    /* one name at a time, none followed: what is opened is what the names say, whatever a name was made into */
    while (part) {
        slash = strchr(part, '/');
        if (slash) *slash = 0;
        const char *kind = NULL;
        if (fstatat(dir, part, &st, AT_SYMLINK_NOFOLLOW)) {
            snprintf(why, len, "cannot read %s: %s", rel, strerror(errno));
            break;
        }
        kind = odd_kind(st.st_mode);
        if (!kind && slash && !S_ISDIR(st.st_mode)) kind = "not a folder";
        if (!kind && !slash && !S_ISREG(st.st_mode)) kind = "a folder";
        if (kind) {
            snprintf(why, len, "refused: %.*s is %s; a lab file and its folder are plain files: put the file itself "
                     "there", (int)(part + strlen(part) - walk), rel, kind);
            break;
        }
        int next = openat(dir, part, (slash ? O_DIRECTORY : O_NONBLOCK) | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        /* the name may have changed between the look and the open: fstat says what was opened */
        if (next < 0 || fstat(next, &st) || (slash ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
            snprintf(why, len, "refused: %s changed or cannot be opened as a plain file (%s)", rel,
                     next < 0 ? strerror(errno) : "it is not one");
            if (next >= 0) close(next);
            break;
        }
        close(dir);
        dir = -1;
        if (!slash) {
            fd = next;
            break;
        }
        dir = next;
        part = slash + 1;
    }
    if (dir >= 0) close(dir);
    if (fd < 0) return -1;
    if (st.st_nlink > 1) {
        snprintf(why, len, "refused: %s has %ju names (a hard link): a lab file must be a file of its own; copy it",
                 rel, (uintmax_t)st.st_nlink);
    } else if ((size_t)st.st_size > max) {
        snprintf(why, len, "refused: %s is larger than the %zu KiB a lab file may have", rel, max >> 10);
    } else {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        return fd;
    }
    close(fd);
    return -1;
}

char *pp__file_read_plain(const char *root, const char *rel, size_t max, size_t *len, char *why, size_t wlen) {
    int fd = pp__file_open_plain(root, rel, max, why, wlen);
    char *text = fd < 0 ? NULL : read_fd(fd, max, len);
    if (fd >= 0 && !text)
        snprintf(why, wlen, errno == EFBIG ? "refused: %s grew past the %zu KiB a lab file may have while it was read"
                                           : "cannot read %s (an input/output error)", rel, max >> 10);
    return text;
}

int pp__file_check_folder(const char *root, const char *folder, char *why, size_t len) {
    int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = dfd < 0 ? -1 : openat(dfd, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0) close(dfd);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0) close(fd);
        /* a folder that is itself a link, or missing: the file's own walk names it */
        return 0;
    }
    struct dirent *e;
    int bad = 0;
    struct stat st;
    while (!bad && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        const char *kind = fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ? NULL : odd_kind(st.st_mode);
        if (kind) {
            char name[64];
            pp__file_name_clean(e->d_name, name, sizeof name);
            snprintf(why, len, "refused: %s/%s is %s; a lab folder holds plain files and folders only: replace it "
                     "with the file itself", folder, name, kind);
            bad = 1;
        }
    }
    closedir(d);
    return bad ? -1 : 0;
}

void pp__file_name_clean(const char *name, char *out, size_t len) {
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && k + 1 < len; p++)
        out[k++] = *p >= 0x20 && *p < 0x7f ? (char)*p : '?';
    out[k] = 0;
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
