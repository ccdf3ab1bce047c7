/* policy.h: what a jailed process may do, in one place. Two kinds of process run code or input of a student's:
 *   PP_JAIL_DRIVER  a schedule driver (sandbox/driver), one per rank or one for the warm-up;
 *   PP_JAIL_BUILD   the lab build's tools (the compiler, the assembler, objcopy), sandbox/toolchain.
 * pp__jail_enter puts the calling child into its jail between fork and execve: descriptors were placed by the
 * caller; then, for a driver, an empty root (as root); a uid and gid of the test's own with no groups (as root);
 * the parent-death signal; resource limits (no core files, output, CPU time, processes and threads of the uid,
 * address space); the file-system view (Landlock for drivers, the chosen view for builds); and for a driver the
 * pre-exec seccomp filter. The caller then execs with an empty (driver) or fixed (build) environment.
 *
 * Everything a grade rests on is set here or in the driver's own lockdown (sandbox/driver/lockdown.c), which
 * loads the same allow list (filter.h) before it loads the student's object. */
#ifndef PP_POLICY_H
#define PP_POLICY_H

#include <stddef.h>
#include <sys/types.h>

#include "view.h"

typedef enum { PP_JAIL_DRIVER = 1, PP_JAIL_BUILD = 2 } pp_jail_kind;

typedef struct pp_sandbox {
    int lockdown;            /* 1: seccomp and Landlock (the default); 0: --unsafe-no-sandbox */
    int drop_uid;            /* 1: jailed processes run as uid/gid, drivers in an empty root (pplab is root) */
    uid_t uid;               /* the uid of what is jailed (uids.h): the process's own after pp__sandbox_probe,
                              * a test's or a build's own on top; gid = uid */
    gid_t gid;
    pp_view view;            /* how a build's tools see the file system (resolved by pp__sandbox_probe) */
    size_t memory_limit;     /* address space of a driver, bytes (0: no limit) */
    double cpu_limit_s;      /* CPU seconds of a driver (0: no limit) */
    size_t output_limit;     /* bytes a driver may write to its output (0: no limit) */
    int nproc;               /* RLIMIT_NPROC of the uid: every task of the test together (0: no limit) */
    int exe_fd;              /* drivers: the driver executable, opened read-only (never by path later) */
    int obj_fd;              /* drivers: the lab's object, opened read-only; -1 for none */
    char empty_root[256];    /* drivers as root: an empty folder that becomes their root ("" for none) */
    const void *prefilter;   /* drivers: the pre-exec filter (filter.h), NULL for none */
    char capture[320];       /* drivers: each one's output goes to "<capture>.rank<r>", so a report can show the
                              * ranks' output in rank order; "" for the caller's own stdout and stderr */
    int test_without_seccomp; /* for the kit's own tests only: every layer but the two seccomp filters, to show
                               * that the uid, the root, Landlock and the limits hold by themselves */
} pp_sandbox;

#define PP_SANDBOX_MEMORY_DEFAULT ((size_t)256 << 20)
#define PP_SANDBOX_OUTPUT_DEFAULT ((size_t)64 << 20)
/* Threads one driver may start besides its own; RLIMIT_NPROC is sized from it for all of a test's drivers. */
#define PP_SANDBOX_THREADS_PER_DRIVER 16
/* The largest file a build may write (its preprocessed text, assembly, object): a lab needs far less. */
#define PP_BUILD_MAX_FILE ((size_t)16 << 20)
/* Processes and threads of one build's uid (the compiler driver, cc1, as, objcopy, bubblewrap). */
#define PP_BUILD_MAX_TASKS 64

/* The defaults: lockdown on; as root the uid switch (the uid itself comes from pp__sandbox_probe, and per test
 * from the runner); view AUTO; 256 MiB of address space, 64 MiB of output, no CPU limit; descriptors -1. */
void pp__sandbox_defaults(pp_sandbox *sb);

/* Checks, in a short-lived child, that this machine lets a process load a seccomp filter and (with drop_uid)
 * switch uid, takes a uid for this process's jails (as root, unless sb has one of the range already), builds
 * the pre-exec filter and the empty root, and checks that a view asked for by name exists here (AUTO is left
 * for the first build to resolve: the best this machine allows). Returns 0, or -1 with one line saying what was
 * refused and what to do. */
int pp__sandbox_probe(pp_sandbox *sb, char *err, size_t len);

/* 0 when every test's driver could start from driver (build/pplab-driver) under sb: a test's uid (as root) may
 * execute it. -1 with one line in err naming its mode and the fix: a tree made private file by file (chmod -R
 * go-rwx) leaves the driver to its owner alone, and every test would fail as if the student had. */
int pp__sandbox_check_driver(const pp_sandbox *sb, const char *driver, char *err, size_t len);

/* Sizes sb->nproc for a test of `drivers` drivers: as root, for the test's own uid; otherwise the tasks this
 * user runs now plus the test's, which caps a runaway but cannot tell the test's tasks from the user's others. */
void pp__sandbox_size_tasks(pp_sandbox *sb, int drivers);

/* Enters the jail of kind (see above) in a child that will execve next. Raw system calls only, no allocation,
 * for a driver (its caller is a vfork child sharing pplab's memory). Returns 0, or -1 with errno set and the
 * step that failed in *what (a static string, for the report). */
int pp__jail_enter(const pp_sandbox *sb, pp_jail_kind kind, const char **what);

/* A private folder of this process (mode 0700, created on first use under $TMPDIR or /tmp, removed with what
 * is in it when the process that made it exits): where pplab keeps results, captures and the drivers' empty
 * root. NULL when it cannot be made. */
const char *pp__private_dir(void);

/* As root: when path (a file, or a folder and so all it holds) could be read by a jailed uid, which has no
 * groups and so gets what "others" may (the file readable or the folder enterable, every folder above it
 * searchable), takes the group's and others' rights to path itself away and returns 1, so the caller can say
 * so; 0 when it was private already (or pplab is not root, when no uid switch exists to guard against, or path
 * is no file or folder but a device or a pipe, which are the machine's), -1 when the mode could not be changed. */
int pp__private_fix(const char *path);

#endif /* PP_POLICY_H */
