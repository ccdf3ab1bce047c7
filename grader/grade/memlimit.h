/* memlimit.h: the limit a grader process met, named in the one line that reports it: a cgroup's memory, or a full
 * disk under its files. */
#ifndef PP_MEMLIMIT_H
#define PP_MEMLIMIT_H

#include <stddef.h>

/* Writes into buf why a process of this grader got SIGKILL: where this process's cgroup or one above it (v1's
 * memory controller or v2) has a memory limit and has killed for it (the oom_kill counter), that limit, in MiB,
 * and how to raise it (a container's: docker run --memory); else the machine's memory, as before. Returns buf. */
const char *pp__memlimit_why_killed(char *buf, size_t len);

/* Writes into buf why a supervisor left no result file at path: where the file system holding path's folder has
 * less than 1 MiB free, that folder, what is free and what to do (free space, or TMPDIR elsewhere); else `other`.
 * Returns buf. */
const char *pp__memlimit_why_no_result(const char *path, const char *other, char *buf, size_t len);

#endif /* PP_MEMLIMIT_H */
