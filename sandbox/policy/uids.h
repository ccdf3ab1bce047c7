/* uids.h: one uid and gid for each test and each build, when grading as root. A uid of its own is what lets a
 * test end every process it started, however they forked, setsid or reparented (the kernel delivers a
 * kill(-1) from that uid to exactly its processes), caps its processes and threads together (RLIMIT_NPROC is
 * counted per real uid), and keeps one test's leftovers from reaching the next test's files or processes.
 *
 * The uids come at random from a reserved range that no account on the machine uses, and a uid is taken again
 * only once no task of it is left. Without root there is no uid switch: see pp__uid_tasks. */
#ifndef PP_UIDS_H
#define PP_UIDS_H

#include <stddef.h>
#include <sys/types.h>

/* The reserved range: [PP_UID_BASE, PP_UID_BASE + PP_UID_SPAN), above the ranges Debian's adduser, systemd's
 * dynamic users and the usual subordinate-uid blocks hand out. gid = uid. */
#define PP_UID_BASE 1600000000u
#define PP_UID_SPAN (1u << 24)

/* Draws a uid of the range that no passwd or group entry names and no task uses (real, effective, saved or
 * file-system uid, seen in /proc). Returns 0 with *uid set, or -1 with the reason in err. */
int pp__uid_take(uid_t *uid, char *err, size_t len);

/* Kills every process of uid: a helper switched to that uid sends kill(-1, SIGKILL), which reaches each of
 * them at once (no fork can slip past it) and nothing else; then reaps those that are (or, orphaned, become)
 * this process's children, which a subreaper adopts. Needs root. Returns the number of tasks of uid /proc still
 * shows after a moment (0: all gone), or -1 when the helper could not run. */
int pp__uid_reap(uid_t uid);

/* The same without the count afterwards: only fork, setresuid, kill and waitpid, all async-signal-safe, for a
 * signal handler that ends the tests in flight. 0, or -1 when the helper could not run. */
int pp__uid_kill(uid_t uid);

/* The tasks (threads included) whose real uid is uid, from /proc: what RLIMIT_NPROC counts. */
int pp__uid_tasks(uid_t uid);

#endif /* PP_UIDS_H */
