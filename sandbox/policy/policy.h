/* policy.h: the sandbox as a whole (its jail, each step of which is jail.h's): the defaults, the probe of what
 * this machine allows (seccomp, the uid switch, the build's view), the driver's mode, the tasks a test may run,
 * and the private folder that keeps the kit's files from the jailed uids. */
#ifndef PP_POLICY_H
#define PP_POLICY_H

#include <stddef.h>
#include <sys/types.h>

#include "jail.h"

/* The defaults: lockdown on; as root the uid switch (the uid itself comes from pp__sandbox_probe, and per test
 * from the runner); view AUTO; 256 MiB of address space, 64 MiB of output, no CPU limit; descriptors -1. */
void pp__sandbox_defaults(pp_sandbox *sb);

/* Checks, in a short-lived child, that this machine lets a process load a seccomp filter and (with drop_uid)
 * switch uid, takes a uid for this process's jails (as root, unless sb has one of the range already), builds
 * the pre-exec filter and the empty root, and checks that a view asked for by name exists here (AUTO is left
 * for the first build to resolve: the best this machine allows). Returns 0, or -1 with one line saying what was
 * refused and what to do. */
int pp__sandbox_probe(pp_sandbox *sb, char *err, size_t len);

/* Sets sb->view to the view grading gets for `want`: AUTO becomes namespaces where bubblewrap starts here in the
 * jail a build gets (as sb's uid; probed once per process), else landlock where the kernel has it, else none. A
 * view asked for by name that this machine cannot give is refused: -1 with the reason and what to do in err. */
int pp__sandbox_view(pp_sandbox *sb, pp_view want, char *err, size_t len);

/* 0 when every test's driver could start from driver (build/pplab-driver) under sb: a test's uid (as root) may
 * execute it. -1 with one line in err naming its mode and the fix: a tree made private file by file (chmod -R
 * go-rwx) leaves the driver to its owner alone, and every test would fail as if the student had. */
int pp__sandbox_check_driver(const pp_sandbox *sb, const char *driver, char *err, size_t len);

/* Sizes sb->nproc for a test of `drivers` drivers: as root, for the test's own uid; otherwise the tasks this
 * user runs now plus the test's, which caps a runaway but cannot tell the test's tasks from the user's others. */
void pp__sandbox_size_tasks(pp_sandbox *sb, int drivers);

/* 1 when "others" can reach path: every folder above it searchable by them (a jailed uid can enter it), else 0. */
int pp__path_others_reach(const char *path);

/* A private folder of this process (mode 0700, created on first use under $TMPDIR or /tmp, removed with what
 * is in it when the process that made it exits): where the grader keeps results and captures. NULL when it
 * cannot be made. */
const char *pp__private_dir(void);

/* As root: when path (a file, or a folder and so all it holds) could be read by a jailed uid, which has no
 * groups and so gets what "others" may (the file readable or the folder enterable, every folder above it
 * searchable), takes the group's and others' rights to path itself away and returns 1, so the caller can say
 * so; 0 when it was private already (or pplab is not root, when no uid switch exists to guard against, or path
 * is no file or folder but a device or a pipe, which are the machine's), -1 when the mode could not be changed. */
int pp__private_fix(const char *path);

#endif /* PP_POLICY_H */
