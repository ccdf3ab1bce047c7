/* jail.h: the jail of a process that runs code or input of a student's, and each of its steps. The kinds:
 *   PP_JAIL_DRIVER  a schedule driver (driver/), one per rank or one for the warm-up;
 *   PP_JAIL_BUILD   the lab build (sandbox/toolchain): the builder and the tools it starts;
 *   PP_JAIL_TOOL    one tool of a build (the compiler, the assembler, objcopy) on top of the build's jail;
 *   PP_JAIL_PROBE   what pplab asks of this machine before grading: the uid switch and a seccomp filter;
 *   PP_JAIL_REAPER  the helper that kills every process of a test's uid (uids.h): that uid and nothing else.
 * pp__jail_enter puts the calling child into its jail between fork and execve, descriptors placed by the caller:
 * for a driver an empty root (as root); the uid and gid of the test's own with no groups (as root); the
 * parent-death signal; resource limits (no core files, output, CPU time, processes and threads of the uid,
 * address space); no new privileges; the file-system view (Landlock for drivers, the chosen view for builds);
 * and for a driver the pre-exec seccomp filter. Each step is one function of jail.c, called from
 * pp__jail_enter alone, which takes for each kind the steps it needs; the caller then execs with an empty
 * (driver) or fixed (build) environment.
 *
 * Everything a grade rests on is set here or in the driver's own lockdown (driver/lockdown.c), which
 * checks that no new privileges is set and loads the same allow list (filter.h) before the student's object. */
#ifndef PP_JAIL_H
#define PP_JAIL_H

#include <stddef.h>
#include <sys/types.h>

#include "view.h"

typedef enum {
    PP_JAIL_DRIVER = 1,
    PP_JAIL_BUILD = 2,
    PP_JAIL_TOOL = 3,
    PP_JAIL_PROBE = 4,
    PP_JAIL_REAPER = 5,
} pp_jail_kind;

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
    char empty_root[256];    /* drivers as root: the path the empty folder that becomes their root was made at
                              * (for messages; "" for none); the folder itself is removed at once */
    int root_fd;             /* that folder, opened (O_PATH) before it was removed: a driver enters it by this */
    const void *prefilter;   /* drivers: the pre-exec filter (filter.h), NULL for none */
    char capture[320];       /* drivers: each one's output goes to "<capture>.rank<r>", so a report can show the
                              * ranks' output in rank order; "" for the caller's own stdout and stderr */
    const char *const *tools; /* builds: the toolchain's folders (view.h's pp__view_tools), which Landlock opens */
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
/* The address space of one build tool: cc1 on a lab file needs a fraction of it. */
#define PP_BUILD_MAX_AS ((size_t)2 << 30)

/* Enters the jail of kind (see above) in a child that will execve next. Raw system calls only, no allocation,
 * for a driver and the reaper (their callers are vfork children sharing pplab's memory). Returns 0, or -1 with
 * errno set and the step that failed in *what (a static string, for the report). */
int pp__jail_enter(const pp_sandbox *sb, pp_jail_kind kind, const char **what);

/* 1 when the step pp__jail_enter named in what is the uid switch (a machine that refuses it refuses the
 * sandbox for another reason than one that refuses seccomp). */
int pp__jail_failed_to_become(const char *what);

#endif /* PP_JAIL_H */
