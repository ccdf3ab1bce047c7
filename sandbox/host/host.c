/* host.c: schedule driver processes (host.h): start (a vfork-like clone, then only system calls until the execve
 * of the driver executable), requests, death reports, stop. */
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long a wait for a request sleeps before it checks that the driver still runs. */
#define ALIVE_POLL_MS 20
/* Exit status of a child that could not become a driver. */
#define SPAWN_FAILED 121

/* ---- in the child, between fork and execve: raw system calls only ------------------------------------- */

/* The child's reason goes into a pipe that execve closes (close-on-exec): what comes out of it was said before
 * any of the driver's code ran, and so before any of the student's. */
static void child_fail(int why_fd, const char *what, int err) {
    char out[200];
    size_t n = 0, cap = sizeof out;
    for (const char *p = what; *p && n < cap; p++) out[n++] = *p;
    const char *e = strerror(err); /* glibc's table lookup: no allocation for known errors */
    for (const char *p = ": "; *p && n < cap; p++) out[n++] = *p;
    for (const char *p = e; *p && n < cap; p++) out[n++] = *p;
    ssize_t w = write(why_fd, out, n);
    (void)w;
    _exit(SPAWN_FAILED);
}

typedef struct child_args {
    const pp_sandbox *sb;
    int chan_fd, devnull, out_fd; /* out_fd: the driver's own capture file, or -1 for the caller's output */
    int why_fd;                   /* the pipe child_fail says why into (close-on-exec) */
    pid_t parent;
} child_args;

/* Runs on its own stack in the parent's memory until execve (CLONE_VM | CLONE_VFORK: no page tables copied,
 * which matters in a process that maps CUDA's libraries), with its own descriptors, signal handlers and
 * credentials. */
static int child(void *arg) {
    const child_args *a = arg;
    pp_sandbox sb = *a->sb; /* a copy on this stack: the descriptors it names move below */
    int c = fcntl(a->why_fd, F_DUPFD_CLOEXEC, 10);
    if (c < 0) _exit(SPAWN_FAILED);
    /* any of them may sit on 0..5 already: lift them out of the way, then place them */
    int exe = fcntl(sb.exe_fd, F_DUPFD_CLOEXEC, 10), ch = fcntl(a->chan_fd, F_DUPFD_CLOEXEC, 10),
        nul = fcntl(a->devnull, F_DUPFD_CLOEXEC, 10), obj = sb.obj_fd >= 0 ? fcntl(sb.obj_fd, F_DUPFD_CLOEXEC, 10) : -2;
    int out = a->out_fd >= 0 ? fcntl(a->out_fd, F_DUPFD_CLOEXEC, 10) : -2;
    /* the empty root, above c: the only way into it, since its folder is removed */
    int root = sb.empty_root[0] ? fcntl(sb.root_fd, F_DUPFD_CLOEXEC, c + 1) : -2;
    if (exe < 0 || ch < 0 || nul < 0 || obj == -1 || out == -1 || root == -1 || dup2(nul, 0) < 0 || dup2(ch, PP_CHAN_FD) < 0 ||
        dup3(exe, PP_EXE_FD, O_CLOEXEC) < 0 || (obj >= 0 && dup2(obj, PP_OBJ_FD) < 0) ||
        (out >= 0 && (dup2(out, 1) < 0 || dup2(out, 2) < 0)))
        child_fail(c, "dup2", errno);
    /* every descriptor above the driver's own goes, but the one to say why in and the root's (close-on-exec
     * already) */
    if (c > PP_OBJ_FD + 1) syscall(SYS_close_range, PP_OBJ_FD + 1, (unsigned)c - 1, 0);
    if (root > c + 1) syscall(SYS_close_range, (unsigned)c + 1, (unsigned)root - 1, 0);
    syscall(SYS_close_range, (unsigned)(root > c ? root : c) + 1, ~0u, 0);
    sb.root_fd = root;
    sb.exe_fd = PP_EXE_FD;
    sb.obj_fd = obj >= 0 ? PP_OBJ_FD : -1;
    /* dispositions and the signal mask survive execve: start from the defaults (SIGXFSZ stays ignored, so that
     * output past the limit is dropped rather than fatal) */
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) signal(sig, sig == SIGXFSZ ? SIG_IGN : SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    const char *what = NULL;
    if (pp__jail_enter(&sb, PP_JAIL_DRIVER, &what)) child_fail(c, what, errno);
    if (getppid() != a->parent) _exit(SPAWN_FAILED); /* the run ended already: nobody is left to serve */
    char *argv[] = {"pplab-driver", NULL}, *envp[] = {NULL};
    /* by descriptor: the executable's folder is one the new uid cannot enter, and its root is empty */
    syscall(SYS_execveat, PP_EXE_FD, "", argv, envp, AT_EMPTY_PATH);
    child_fail(c, "execveat(driver)", errno);
    return SPAWN_FAILED;
}

/* ---- starting ------------------------------------------------------------------------------------------- */

int pp__host_open(pp_sandbox *sb, const char *driver, const char *object, char *err, size_t len) {
    sb->exe_fd = open(driver, O_RDONLY | O_CLOEXEC);
    sb->obj_fd = sb->exe_fd >= 0 ? open(object, O_RDONLY | O_CLOEXEC) : -1;
    if (sb->obj_fd >= 0) return 0;
    snprintf(err, len, "cannot open %s: %s: is pplab built (make)?", sb->exe_fd < 0 ? driver : object, strerror(errno));
    pp__host_close(sb);
    return -1;
}

void pp__host_close(pp_sandbox *sb) {
    if (sb->exe_fd >= 0) close(sb->exe_fd);
    if (sb->obj_fd >= 0) close(sb->obj_fd);
    sb->exe_fd = sb->obj_fd = -1;
}

int pp__driver_start(pp_driver *d, const pp_sandbox *sb, const pp_chan_facts *f, char *err, size_t len) {
    memset(d, 0, sizeof *d);
    int fd, devnull = open("/dev/null", O_RDONLY | O_CLOEXEC), why[2] = {-1, -1};
    if (devnull < 0 || pipe2(why, O_CLOEXEC) || pp__chan_create(&d->chan, &fd)) {
        snprintf(err, len, "cannot make a driver channel: %s", strerror(errno));
        if (devnull >= 0) close(devnull);
        if (why[0] >= 0) close(why[0]), close(why[1]);
        return -1;
    }
    d->chan->facts = *f;
    d->chan->facts.magic = PP_CHAN_MAGIC;
    d->chan->facts.sandbox = sb->lockdown && !sb->test_without_seccomp;
    d->spin_ns = f->spin_ns;
    d->memory_limit = sb->memory_limit;
    fflush(stdout);
    fflush(stderr);
    enum { STACK = 64 * 1024 };
    char *stack = malloc(STACK);
    /* its own capture file: the report shows the ranks' output one rank after another, the same on every run */
    int out_fd = -1;
    if (sb->capture[0]) {
        char path[sizeof sb->capture + 16];
        snprintf(path, sizeof path, "%s.rank%d", sb->capture, f->rank);
        out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    }
    child_args args = {sb, fd, devnull, out_fd, why[1], getpid()};
    pid_t pid = stack ? clone(child, stack + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &args) : -1;
    int e = errno;
    free(stack);
    close(fd);
    close(devnull);
    close(why[1]);
    if (out_fd >= 0) close(out_fd);
    /* the child has run execve or is ending (CLONE_VFORK): the pipe ends with what it said, if anything */
    size_t got = 0;
    for (ssize_t k; pid > 0 && got < sizeof d->spawn_failed - 1; got += (size_t)k)
        if ((k = read(why[0], d->spawn_failed + got, sizeof d->spawn_failed - 1 - got)) <= 0) {
            if (k < 0 && errno == EINTR) k = 0;
            else break;
        }
    d->spawn_failed[got] = 0;
    close(why[0]);
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

/* Seconds on the monotonic clock: the deadlines of the waits for a driver. */
static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* What a wait for a request asks each time it wakes with nothing: is the driver alive, and is there time left. */
typedef struct next_wait {
    pp_driver *d;
    double until; /* now_s() past which the wait ends; 0: no end */
    int late;
} next_wait;

static int alive_cb(void *ctx) {
    next_wait *w = ctx;
    if (!pp__driver_alive(w->d)) return 0;
    if (w->until > 0 && now_s() >= w->until) return w->late = 1, 0;
    return 1;
}

static int next_until(pp_driver *d, double until) {
    if (!d->chan || d->reaped) return 0;
    next_wait w = {.d = d, .until = until};
    d->pending = 0;
    if (!pp__chan_await_request(d->chan, &d->seq, &d->taken, &d->posted, d->spin_ns, ALIVE_POLL_MS, alive_cb, &w,
                                d->req, sizeof d->req, &d->req_len))
        return w.late && !d->reaped ? -1 : 0;
    d->pending = 1;
    return 1;
}

int pp__driver_next(pp_driver *d) { return next_until(d, 0); }

int pp__driver_next_within(pp_driver *d, double limit_s) { return next_until(d, now_s() + limit_s); }

void pp__driver_reply(pp_driver *d, size_t len) {
    if (!d->pending) return;
    d->pending = 0;
    if (d->posted) pp__chan_served(d->chan, d->taken);
    else pp__chan_reply(d->chan, d->seq, len);
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
    if (d->spawn_failed[0]) {
        const char *why = d->spawn_failed;
        snprintf(msg, len, "the schedule driver could not start: %s", why);
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

/* Waits up to ms milliseconds for the driver to end, without polling where the kernel has pidfds. */
static void await_end(pp_driver *d, int ms) {
    int fd = (int)syscall(SYS_pidfd_open, d->pid, 0);
    if (fd < 0) return;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, ms) < 0 && errno == EINTR) {}
    close(fd);
}

void pp__driver_stop(pp_driver *d, double grace_s) {
    if (d->pid && !d->reaped) {
        double t0 = now_s();
        if (grace_s > 0 && pp__driver_alive(d)) await_end(d, (int)(grace_s * 1000));
        while (grace_s > 0 && pp__driver_alive(d)) {
            if (now_s() - t0 > grace_s) break;
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
