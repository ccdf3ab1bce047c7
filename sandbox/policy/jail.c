/* jail.c: the jail's steps, one function each, and pp__jail_enter, their one caller (jail.h). Raw system calls
 * only: a driver's and the reaper's callers are vfork children that share pplab's memory. */
#include "jail.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "filter.h"
#include "landlock.h"

/* Each step returns 0, or -1 with errno set and the failing call in *what. */
#define STEP(cond, name)                                                                                       \
    do {                                                                                                       \
        if (cond) return *what = (name), -1;                                                                   \
    } while (0)

/* A driver's root becomes an empty folder, while the process is still root (chroot needs CAP_SYS_CHROOT). The
 * folder was removed once opened, so it is entered by its descriptor: removed, it can hold nothing. */
static int step_root(const pp_sandbox *sb, const char **what) {
    STEP(syscall(SYS_fchdir, sb->root_fd), "fchdir(empty root)");
    STEP(syscall(SYS_chroot, "."), "chroot(empty root)");
    return 0;
}

/* The uid and gid of sb, with no supplementary groups: the one uid switch of the kit. */
static const char become_groups[] = "setgroups", become_gid[] = "setresgid", become_uid[] = "setresuid";

static int step_become(const pp_sandbox *sb, const char **what) {
    STEP(syscall(SYS_setgroups, 0, NULL), become_groups);
    STEP(syscall(SYS_setresgid, sb->gid, sb->gid, sb->gid), become_gid);
    STEP(syscall(SYS_setresuid, sb->uid, sb->uid, sb->uid), become_uid);
    return 0;
}

int pp__jail_failed_to_become(const char *what) {
    return what == become_groups || what == become_gid || what == become_uid;
}

/* Killed with pplab: after the uid switch, which clears it. Only a locked-down jail fails on it. */
static int step_parent_death(const pp_sandbox *sb, const char **what) {
    STEP(syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) && sb->lockdown, "prctl(PR_SET_PDEATHSIG)");
    return 0;
}

/* Limit res to v, or to the limit it has already when that is lower: a jail never raises what the caller's own
 * limits hold (`ulimit -v` around pplab), which a process no longer root could not do anyway. */
static int set_limit(int res, rlim_t v) {
    struct rlimit now;
    if (syscall(SYS_prlimit64, 0, res, NULL, &now)) return -1;
    if (now.rlim_max != RLIM_INFINITY && now.rlim_max < v) v = now.rlim_max;
    struct rlimit rl = {v, v};
    return (int)syscall(SYS_prlimit64, 0, res, &rl, NULL);
}

/* The resource limits of kind: a driver's from sb, a build's fixed; a tool adds only its address space. */
static int step_limits(const pp_sandbox *sb, pp_jail_kind kind, const char **what) {
    if (kind == PP_JAIL_TOOL) {
        STEP(set_limit(RLIMIT_AS, (rlim_t)PP_BUILD_MAX_AS), "setrlimit(RLIMIT_AS)");
        return 0;
    }
    int driver = kind == PP_JAIL_DRIVER;
    STEP(set_limit(RLIMIT_CORE, 0), "setrlimit(RLIMIT_CORE)");
    size_t fsize = driver ? sb->output_limit : PP_BUILD_MAX_FILE;
    if (fsize) STEP(set_limit(RLIMIT_FSIZE, (rlim_t)fsize), "setrlimit(RLIMIT_FSIZE)");
    double cpu = driver ? sb->cpu_limit_s : 120;
    if (cpu > 0) STEP(set_limit(RLIMIT_CPU, (rlim_t)(cpu + 1)), "setrlimit(RLIMIT_CPU)");
    int nproc = driver ? sb->nproc : sb->drop_uid ? PP_BUILD_MAX_TASKS : 0;
    if (nproc > 0) STEP(set_limit(RLIMIT_NPROC, (rlim_t)nproc), "setrlimit(RLIMIT_NPROC)");
    /* after everything that could still allocate (a driver's child shares pplab's address space, which may be far
     * larger than the limit), before the filter, which has no setrlimit */
    if (driver && sb->memory_limit) STEP(set_limit(RLIMIT_AS, (rlim_t)sb->memory_limit), "setrlimit(RLIMIT_AS)");
    return 0;
}

/* No execve from here on gains privileges (a setuid file's): what Landlock and seccomp require of a process that
 * is not CAP_SYS_ADMIN, and the one place the kit sets it. */
static int step_no_new_privs(const char **what) {
    STEP(syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)");
    return 0;
}

/* What of the file system stays open: for a driver its own executable (a kernel without Landlock still has the
 * empty root, as root, and the filter, which has no open()); for a Landlock build the toolchain and its folder. */
static int step_view(const pp_sandbox *sb, pp_jail_kind kind, const char **what) {
    if (kind == PP_JAIL_DRIVER && pp__landlock_abi() > 0) STEP(pp__landlock_driver(sb->exe_fd), "landlock");
    if (kind == PP_JAIL_BUILD) STEP(pp__landlock_build(sb->tools), "landlock");
    return 0;
}

/* A driver's pre-exec filter; for the probe, a filter that allows everything, which is what the kernel must
 * accept before any real one can be loaded. */
static int step_filter(const pp_sandbox *sb, pp_jail_kind kind, const char **what) {
    if (kind == PP_JAIL_PROBE) {
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = {.len = 1, .filter = &allow};
        STEP(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog), "seccomp");
        return 0;
    }
    STEP(pp__filter_load_raw(sb->prefilter), "seccomp(pre-exec filter)");
    return 0;
}

int pp__jail_enter(const pp_sandbox *sb, pp_jail_kind kind, const char **what) {
    int driver = kind == PP_JAIL_DRIVER, build = kind == PP_JAIL_BUILD;
    if (driver && sb->drop_uid && sb->empty_root[0] && step_root(sb, what)) return -1;
    if ((kind == PP_JAIL_REAPER || (sb->drop_uid && kind != PP_JAIL_TOOL)) && step_become(sb, what)) return -1;
    if (kind == PP_JAIL_REAPER) return 0;
    if ((driver || build) && step_parent_death(sb, what)) return -1;
    if (kind != PP_JAIL_PROBE && step_limits(sb, kind, what)) return -1;
    int landlock_build = build && sb->lockdown && sb->view == PP_VIEW_LANDLOCK;
    if (((driver && sb->lockdown) || landlock_build || kind == PP_JAIL_PROBE) && step_no_new_privs(what)) return -1;
    if (((driver && sb->lockdown) || landlock_build) && step_view(sb, kind, what)) return -1;
    int filter = (driver && sb->lockdown && sb->prefilter && !sb->test_without_seccomp) || kind == PP_JAIL_PROBE;
    if (filter && step_filter(sb, kind, what)) return -1;
    return 0;
}
