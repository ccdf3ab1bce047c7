/* spawn.c: schedule driver processes: start (fork, then only system calls until the execve of the driver
 * executable), requests, death reports, stop. */
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long a wait for a request sleeps before it checks that the driver still runs. */
#define ALIVE_POLL_MS 20
/* Exit status of a child that could not become a driver; its reason is in the channel's reply slot. */
#define SPAWN_FAILED 121

void pp__sandbox_defaults(pp_sandbox *sb) {
    memset(sb, 0, sizeof *sb);
    sb->exe_fd = -1;
    sb->lockdown = 1;
    sb->drop_uid = geteuid() == 0;
    struct passwd *pw = getpwnam("nobody");
    sb->uid = pw ? pw->pw_uid : 65534;
    sb->gid = pw ? pw->pw_gid : 65534;
    sb->memory_limit = PP_SANDBOX_MEMORY_DEFAULT;
    sb->output_limit = PP_SANDBOX_OUTPUT_DEFAULT;
}

/* ---- in the child, between fork and execve: raw system calls only ------------------------------------- */

static void child_fail(pp_chan *c, const char *what, int err) {
    /* the reply slot is unused until the first request: the parent reads the reason there */
    char *out = (char *)c->rep;
    size_t n = 0, cap = 200;
    for (const char *p = what; *p && n < cap; p++) out[n++] = *p;
    const char *e = strerror(err); /* glibc's table lookup: no allocation for known errors */
    for (const char *p = ": "; *p && n < cap; p++) out[n++] = *p;
    for (const char *p = e; *p && n < cap; p++) out[n++] = *p;
    out[n] = 0;
    _exit(SPAWN_FAILED);
}

/* A raw system call: in a sanitized build no interceptor may run (and allocate) once the address space is capped. */
static void set_limit(pp_chan *c, int res, rlim_t v, const char *what) {
    struct rlimit rl = {v, v};
    if (syscall(SYS_setrlimit, res, &rl)) child_fail(c, what, errno);
}

typedef struct child_args {
    const pp_sandbox *sb;
    pp_chan *c;
    int chan_fd, devnull;
    pid_t parent;
} child_args;

/* Runs on its own stack in the parent's memory until execve (CLONE_VM | CLONE_VFORK: no page tables copied,
 * which matters in a process that maps CUDA's libraries), with its own descriptors, signal handlers and
 * credentials. */
static int child(void *arg) {
    const child_args *a = arg;
    const pp_sandbox *sb = a->sb;
    pp_chan *c = a->c;
    int chan_fd = a->chan_fd, devnull = a->devnull;
    pid_t parent = a->parent;
    /* any of the three may sit on 0..4 already: lift them out of the way, then place them */
    int exe = fcntl(sb->exe_fd, F_DUPFD_CLOEXEC, 10), ch = fcntl(chan_fd, F_DUPFD_CLOEXEC, 10),
        nul = fcntl(devnull, F_DUPFD_CLOEXEC, 10);
    if (exe < 0 || ch < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(ch, PP_CHAN_FD) < 0 ||
        dup3(exe, PP_CHAN_FD + 1, O_CLOEXEC) < 0)
        child_fail(c, "dup2", errno);
    syscall(SYS_close_range, PP_CHAN_FD + 2, ~0u, 0);
    /* dispositions and the signal mask survive execve: start from the defaults (SIGXFSZ stays ignored, so that
     * output past the limit is dropped rather than fatal) */
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) signal(sig, sig == SIGXFSZ ? SIG_IGN : SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (sb->drop_uid) {
        if (syscall(SYS_setgroups, 0, NULL)) child_fail(c, "setgroups", errno);
        if (syscall(SYS_setresgid, sb->gid, sb->gid, sb->gid)) child_fail(c, "setresgid", errno);
        if (syscall(SYS_setresuid, sb->uid, sb->uid, sb->uid)) child_fail(c, "setresuid", errno);
    }
    /* after the uid switch, which clears it; and it fires when the thread that forked (the run's main thread)
     * ends, which is when the run ends */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) && sb->lockdown) child_fail(c, "prctl(PR_SET_PDEATHSIG)", errno);
    if (getppid() != parent) _exit(SPAWN_FAILED); /* the run ended already: nobody is left to serve */
    set_limit(c, RLIMIT_CORE, 0, "setrlimit(RLIMIT_CORE)");
    if (sb->output_limit) set_limit(c, RLIMIT_FSIZE, (rlim_t)sb->output_limit, "setrlimit(RLIMIT_FSIZE)");
    if (sb->cpu_limit_s > 0) set_limit(c, RLIMIT_CPU, (rlim_t)(sb->cpu_limit_s + 1), "setrlimit(RLIMIT_CPU)");
    if (chdir("/")) child_fail(c, "chdir(/)", errno);
    char *argv[] = {"pplab-driver", NULL}, *envp[] = {NULL};
    /* last: this child still shares pplab's address space, which may be far larger than the driver's limit */
    if (sb->memory_limit) set_limit(c, RLIMIT_AS, (rlim_t)sb->memory_limit, "setrlimit(RLIMIT_AS)");
    /* by descriptor: the executable's folder may be one the new uid cannot enter */
    syscall(SYS_execveat, PP_CHAN_FD + 1, "", argv, envp, AT_EMPTY_PATH);
    child_fail(c, "execveat(driver)", errno);
    return SPAWN_FAILED;
}

/* ---- starting ------------------------------------------------------------------------------------------- */

int pp__driver_start(pp_driver *d, const pp_sandbox *sb, const pp_chan_facts *f, char *err, size_t len) {
    memset(d, 0, sizeof *d);
    int fd, devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || pp__chan_create(&d->chan, &fd)) {
        snprintf(err, len, "cannot make a driver channel: %s", strerror(errno));
        if (devnull >= 0) close(devnull);
        return -1;
    }
    d->chan->facts = *f;
    d->chan->facts.magic = PP_CHAN_MAGIC;
    d->chan->facts.sandbox = sb->lockdown;
    d->spin_ns = f->spin_ns;
    d->memory_limit = sb->memory_limit;
    fflush(stdout);
    fflush(stderr);
    enum { STACK = 64 * 1024 };
    char *stack = malloc(STACK);
    child_args args = {sb, d->chan, fd, devnull, getpid()};
    pid_t pid = stack ? clone(child, stack + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &args) : -1;
    int e = errno;
    free(stack);
    close(fd);
    close(devnull);
    if (pid < 0) {
        snprintf(err, len, "cannot start a schedule driver: fork: %s", strerror(e));
        pp__chan_unmap(d->chan);
        d->chan = NULL;
        return -1;
    }
    d->pid = pid;
    return 0;
}

/* ---- serving -------------------------------------------------------------------------------------------- */

int pp__driver_alive(pp_driver *d) {
    if (d->reaped || !d->pid) return 0;
    int st;
    pid_t w = waitpid(d->pid, &st, WNOHANG);
    if (w == 0) return 1;
    d->reaped = 1;
    d->status = w == d->pid ? st : 0;
    return 0;
}

static int alive_cb(void *ctx) { return pp__driver_alive(ctx); }

int pp__driver_next(pp_driver *d) {
    if (!d->chan || d->reaped) return 0;
    d->pending = 0;
    if (!pp__chan_await_request(d->chan, &d->seq, d->spin_ns, ALIVE_POLL_MS, alive_cb, d, d->req, sizeof d->req,
                                &d->req_len))
        return 0;
    d->pending = 1;
    return 1;
}

void pp__driver_reply(pp_driver *d, size_t len) {
    if (!d->pending) return;
    d->pending = 0;
    pp__chan_reply(d->chan, d->seq, len);
}

/* ---- ending --------------------------------------------------------------------------------------------- */

static const char *signal_desc(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic error)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (abort: a failed assert?)";
    case SIGKILL: return "SIGKILL";
    case SIGXCPU: return "SIGXCPU (its CPU time limit)";
    case SIGXFSZ: return "SIGXFSZ (its output limit)";
    default: return strsignal(sig);
    }
}

/* The family a refused call belongs to, as a reader knows it ("open()" for openat, "fork()" for clone...). */
static void syscall_name(int nr, char *buf, size_t len) {
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    static const struct {
        const char *sys, *shown;
    } families[] = {{"openat", "open"},   {"openat2", "open"}, {"creat", "open"},    {"clone", "fork"},
                    {"vfork", "fork"},    {"execveat", "execve"}, {"tkill", "kill"}, {"tgkill", "kill"},
                    {"newfstatat", "stat"}, {"statx", "stat"}, {"lstat", "stat"}};
    const char *shown = name ? name : NULL;
    for (size_t i = 0; name && i < sizeof families / sizeof *families; i++)
        if (!strcmp(name, families[i].sys)) shown = families[i].shown;
    if (shown)
        snprintf(buf, len, "%s()", shown);
    else
        snprintf(buf, len, "system call %d", nr);
    free(name);
}

int pp__driver_ended(const pp_driver *d, int *status) {
    if (d->reaped) return *status = d->status, 1;
    if (!d->pid) return 0;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)d->pid, &si, WEXITED | WNOHANG | WNOWAIT) || si.si_pid != d->pid) return 0;
    *status = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0) : si.si_status; /* as waitpid would say */
    return 1;
}

pp_status pp__driver_death(const pp_driver *d, char *msg, size_t len, const char **hint) {
    return pp__driver_death_of(d, d->status, msg, len, hint);
}

pp_status pp__driver_death_of(const pp_driver *d, int st, char *msg, size_t len, const char **hint) {
    int warmup = d->chan->facts.mode == PP_CHAN_WARMUP;
    const char *who = warmup ? "the warm-up code" : "the schedule";
    int refused = __atomic_load_n(&d->chan->refused_syscall, __ATOMIC_SEQ_CST);
    *hint = NULL;
    if (WIFEXITED(st) && WEXITSTATUS(st) == SPAWN_FAILED) {
        char why[208];
        memcpy(why, d->chan->rep, sizeof why - 1);
        why[sizeof why - 1] = 0;
        snprintf(msg, len, "the schedule driver could not start: %s", why[0] ? why : "(no reason given)");
        *hint = strstr(why, "Cannot allocate memory")
                    ? "the lab file's static arrays do not fit the schedule's address space (--memory-limit)"
                    : "see docs/design.md, section \"The trust boundary\", for what the sandbox needs (seccomp, a uid "
                      "switch when root)";
        return PP_ERR_SANDBOX;
    }
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) {
        if (refused >= 0) {
            char name[64];
            syscall_name(refused, name, sizeof name);
            snprintf(msg, len, "%s called %s, which %s never needs: it may use only %s", who, name,
                     warmup ? "it" : "a schedule", warmup ? "memory" : "pp.h and memory");
        } else {
            snprintf(msg, len, "the sandbox stopped %s (SIGSYS) for a system call it may not make: it may use only %s",
                     who, warmup ? "memory" : "pp.h and memory");
        }
        return PP_ERR_SANDBOX;
    }
    uint64_t oom = __atomic_load_n(&d->chan->oom_bytes, __ATOMIC_SEQ_CST);
    if (WIFSIGNALED(st) && oom) {
        snprintf(msg, len, "%s ran out of memory (an allocation of %llu bytes failed) and then crashed with %s", who,
                 (unsigned long long)oom, signal_desc(WTERMSIG(st)));
        static char why[160];
        snprintf(why, sizeof why, "a schedule's process may use %zu MiB of address space (--memory-limit); the "
                 "model's memory is pplab's, a schedule needs only small arrays", d->memory_limit >> 20);
        *hint = why;
        return PP_ERR_LIMIT;
    }
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        snprintf(msg, len, "%s crashed with %s", who, signal_desc(sig));
        if (sig == SIGXCPU) snprintf(msg, len, "%s used up its CPU time limit (SIGXCPU)", who);
        static char why[400];
        const pp_chan_facts *f = &d->chan->facts;
        char sched[48] = "";
        sscanf(f->symbol, "pp_%40[a-z0-9]_step", sched);
        if (warmup || !sched[0])
            snprintf(why, sizeof why, "check the pointers and array bounds in your functions; the process may use "
                     "%zu MiB (--memory-limit), large arrays included", d->memory_limit >> 20);
        else
            snprintf(why, sizeof why, "to see where, run it in-process under gdb: gdb -ex run --args build/pplab run "
                     "--in-process --schedule %s --stages %d --microbatches %d%s%.0d; a schedule's process may use "
                     "%zu MiB (--memory-limit), large arrays included", sched, f->P, f->M, f->v > 1 ? " --chunks " : "",
                     f->v > 1 ? f->v : 0, d->memory_limit >> 20);
        *hint = why;
        return PP_ERR_CRASH;
    }
    snprintf(msg, len, "%s's process exited (status %d) in the middle of its %s: did it call exit()?", who,
             WIFEXITED(st) ? WEXITSTATUS(st) : -1, warmup ? "answers" : "step");
    *hint = warmup ? "return the answer instead of exiting"
                   : "return from the step function instead of exiting; pp_fail() stops a run with a message";
    return PP_ERR_CRASH;
}

void pp__driver_stop(pp_driver *d, double grace_s) {
    if (d->pid && !d->reaped) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (grace_s > 0 && pp__driver_alive(d)) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > grace_s) break;
            usleep(1000);
        }
        if (!d->reaped) {
            kill(d->pid, SIGKILL);
            int st;
            while (waitpid(d->pid, &st, 0) < 0 && errno == EINTR) {}
            d->reaped = 1;
            d->status = st;
        }
    }
    pp__chan_unmap(d->chan);
    d->chan = NULL;
}

/* ---- can this machine sandbox? ------------------------------------------------------------------------- */

int pp__sandbox_probe(const pp_sandbox *sb, char *err, size_t len) {
    int fds[2];
    if (pipe(fds)) {
        snprintf(err, len, "cannot probe the sandbox: pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char why[200] = "";
        if (sb->drop_uid && (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, sb->gid, sb->gid, sb->gid) ||
                             syscall(SYS_setresuid, sb->uid, sb->uid, sb->uid)))
            snprintf(why, sizeof why, "switching to uid %u failed (%s)", (unsigned)sb->uid, strerror(errno));
        if (!why[0] && sb->lockdown) {
            scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
            int rc = !f ? -ENOMEM : prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -errno : seccomp_load(f);
            if (rc) snprintf(why, sizeof why, "loading a seccomp filter failed (%s)", strerror(-rc));
        }
        (void)!write(fds[1], why, strlen(why));
        _exit(0);
    }
    close(fds[1]);
    char why[200] = "";
    ssize_t n = pid > 0 ? read(fds[0], why, sizeof why - 1) : -1;
    close(fds[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    if (pid < 0) {
        snprintf(err, len, "cannot probe the sandbox: fork: %s", strerror(errno));
        return -1;
    }
    if (n > 0) {
        why[n] = 0;
        snprintf(err, len, "this machine refuses the sandbox: %s; run where seccomp and uid switches are allowed "
                 "(docs/design.md, section \"The trust boundary\"), or pass --unsafe-no-sandbox if you trust every "
                 "submission", why);
        return -1;
    }
    return 0;
}
