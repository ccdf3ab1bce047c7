/* filter.h: the seccomp allow list of a schedule driver, written once and used twice. The driver loads it
 * itself (driver/lockdown.c) before it loads any student code; pplab exports the same list as BPF once
 * and loads it with a raw seccomp() call in each driver's child before the execve, so that even the driver's own
 * start-up runs filtered. Filters stack and the kernel applies the strictest answer, so the driver's filter only
 * ever removes calls from the one loaded before it. */
#ifndef PP_FILTER_H
#define PP_FILTER_H

#include <seccomp.h>
#include <stddef.h>
#include <sys/types.h>

/* Adds to f (made with a default action that refuses) every call a schedule needs: its descriptors, memory,
 * futexes, clocks and sleeps, threads (clone with CLONE_THREAD; clone3 answers ENOSYS so glibc falls back),
 * reading its own limits, terminal queries stdio makes. Signals go to itself only: kill and tgkill with pid
 * `self`. With self = 0 (the pre-exec filter, whose driver has no pid yet) the same calls are allowed with the
 * signals raise() and abort() send, plus what a static executable's start and the driver's own lockdown make
 * (execveat, arch_prctl, prctl, seccomp; readlink answers ENOENT). Returns 0, or a negative errno. */
int pp__filter_rules(scmp_filter_ctx f, pid_t self);

/* The pre-exec filter as a BPF program (sock_fprog), built and exported once per process; NULL with the
 * reason in err when libseccomp or the kernel refuses. The program stays valid for the process's life. */
const void *pp__filter_preexec(char *err, size_t len);

/* Loads a BPF program from pp__filter_preexec with the raw system calls (no allocation: safe between a vfork
 * and its execve); the jail has set no_new_privs before (jail.c). 0, or -1 with errno set. */
int pp__filter_load_raw(const void *prog);

#endif /* PP_FILTER_H */
