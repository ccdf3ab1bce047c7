/* files.h: a whole file in, a whole buffer out: what the build, its cache and the test's result files need. */
#ifndef PP_FILES_H
#define PP_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A max for pp__file_read that no file reaches: a result file's size follows from its configuration. */
#define PP_FILE_ANY_SIZE (SIZE_MAX / 4)

/* The whole file at path, NUL-terminated (*len bytes before the NUL), if it holds at most max bytes. NULL with
 * errno set when it cannot be opened or read (EIO), or is larger (EFBIG). The caller frees it; exits with a
 * message when memory runs out. */
char *pp__file_read(const char *path, size_t max, size_t *len);

/* Writes the n bytes at buf to path, created with mode (less the umask) or truncated. 0, or -1 with errno set. */
int pp__file_write(const char *path, const void *buf, size_t n, mode_t mode);

#endif /* PP_FILES_H */
