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

/* Opens root/rel (rel being "02-gpipe/gpipe.c") as a submission's file: no name on the way is followed, every
 * folder on it is a folder and the file a regular file with one name and at most max bytes. The descriptor, or
 * -1 with one line in why ("refused: 02-gpipe/gpipe.c is a symbolic link; ..."). Read as root, a link could
 * otherwise hand the grader's files to the student's compile errors. */
int pp__file_open_plain(const char *root, const char *rel, size_t max, char *why, size_t len);

/* The same file read whole through pp__file_open_plain (NUL-terminated, *len bytes); NULL with why set. */
char *pp__file_read_plain(const char *root, const char *rel, size_t max, size_t *len, char *why, size_t wlen);

/* 0 when root/folder holds nothing but plain files and folders (or is not a folder: the file's own walk says
 * so); -1 with one line in why naming the first symbolic link, FIFO, socket or device in it. */
int pp__file_check_folder(const char *root, const char *folder, char *why, size_t len);

/* name with every byte outside printable ASCII made '?', cut to fit len: a file name a student chose, safe to
 * print in any report. */
void pp__file_name_clean(const char *name, char *out, size_t len);

/* Writes the n bytes at buf to path, created with mode (less the umask) or truncated. 0, or -1 with errno set. */
int pp__file_write(const char *path, const void *buf, size_t n, mode_t mode);

#endif /* PP_FILES_H */
