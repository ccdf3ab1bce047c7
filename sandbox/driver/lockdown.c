/* lockdown.c: what a schedule may do once it runs. A schedule only needs pp.h (its channel) and memory, so the
 * seccomp filter allows exactly that: reading and writing the descriptors it was given (its channel is shared
 * memory; 0, 1 and 2 are /dev/null and the captured output), memory management, futexes, clocks and sleeps,
 * threads (clone with CLONE_THREAD; clone3 answers ENOSYS so glibc falls back to clone), signals to itself
 * (abort, assert, raise) and exit. Everything else (open, execve, new processes, signals to others, ptrace,
 * process_vm_*, sockets, io_uring, ...) traps: the SIGSYS handler records which call it was in the channel and
 * the driver dies of SIGSYS, so the runtime can name the call in one line. uid and resource limits were set by
 * pplab before this program started. */
#include <errno.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "crash.h"
#include "driver.h"

static int my_rank;

static int rank_fixed(void) { return my_rank; }

/* The crash handler's note: what the driver died of, for the runtime's report. */
static void note_signal(int sig, const siginfo_t *info) {
    pp_chan *c = pp__drv_chan;
    __atomic_store_n(&c->death_signal, sig, __ATOMIC_SEQ_CST);
    c->death_pc = (uint64_t)(uintptr_t)info->si_addr;
}

static void on_sigsys(int sig, siginfo_t *info, void *uctx) {
    (void)uctx;
    __atomic_store_n(&pp__drv_chan->refused_syscall, info->si_syscall, __ATOMIC_SEQ_CST);
    note_signal(sig, info);
    raise(SIGSYS); /* SA_RESETHAND: the default action ends the process, by this signal */
    _exit(128 + SIGSYS);
}

static int build_filter(scmp_filter_ctx f) {
    static const int allowed[] = {
        SCMP_SYS(read),          SCMP_SYS(write),           SCMP_SYS(readv),         SCMP_SYS(writev),
        SCMP_SYS(close),         SCMP_SYS(lseek),           SCMP_SYS(fstat),         SCMP_SYS(mmap),
        SCMP_SYS(munmap),        SCMP_SYS(mprotect),        SCMP_SYS(mremap),        SCMP_SYS(brk),
        SCMP_SYS(madvise),       SCMP_SYS(futex),           SCMP_SYS(set_robust_list),
        SCMP_SYS(get_robust_list), SCMP_SYS(rseq),          SCMP_SYS(set_tid_address),
        SCMP_SYS(exit),          SCMP_SYS(exit_group),      SCMP_SYS(rt_sigaction),  SCMP_SYS(rt_sigprocmask),
        SCMP_SYS(rt_sigreturn),  SCMP_SYS(rt_sigsuspend),   SCMP_SYS(rt_sigpending), SCMP_SYS(rt_sigtimedwait),
        SCMP_SYS(sigaltstack),   SCMP_SYS(getpid),          SCMP_SYS(gettid),        SCMP_SYS(getppid),
        SCMP_SYS(getuid),        SCMP_SYS(geteuid),         SCMP_SYS(getgid),        SCMP_SYS(getegid),
        SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres),    SCMP_SYS(gettimeofday),  SCMP_SYS(time),
        SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep),     SCMP_SYS(sched_yield),   SCMP_SYS(sched_getaffinity),
        SCMP_SYS(getrandom),     SCMP_SYS(sysinfo),         SCMP_SYS(restart_syscall), SCMP_SYS(pause),
        SCMP_SYS(getrusage),     SCMP_SYS(times),           SCMP_SYS(getcpu),        SCMP_SYS(getrlimit),
    };
    /* a call this architecture lacks (fstat, time on arm64) simply has nothing to allow */
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) (void)seccomp_rule_add(f, SCMP_ACT_ALLOW, allowed[i], 0);
    int rc = 0;
    pid_t me = getpid();
    /* threads, not processes */
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                   SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    /* signals to itself only (abort, assert, raise) */
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)me));
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)me));
    /* reading its own limits, never setting them */
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2, SCMP_A0(SCMP_CMP_EQ, 0),
                                   SCMP_A2(SCMP_CMP_EQ, 0));
    /* isatty() and the terminal's width, which stdio and printing code ask for */
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, TCGETS));
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, TIOCGWINSZ));
    return rc;
}

int pp__drv_lockdown(int sandbox, int rank, char *err, size_t len) {
    my_rank = rank;
    /* stdio decides its buffering with fstat() on first use: decide it now, while that is still allowed */
    static char outbuf[4096];
    setvbuf(stdout, outbuf, _IOLBF, sizeof outbuf);
    /* a handler that runs on its own stack still reports a stack overflow */
    static char altstack[64 * 1024];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&ss, NULL);
    pp__crash_install(rank_fixed, note_signal);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
    sigaction(SIGSYS, &sa, NULL);
    if (!sandbox) return 0;

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
        snprintf(err, len, "prctl(PR_SET_NO_NEW_PRIVS) failed: %s", strerror(errno));
        return -1;
    }
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_TRAP);
    if (!f) {
        snprintf(err, len, "seccomp_init failed (out of memory?)");
        return -1;
    }
    int rc = build_filter(f);
    if (!rc) rc = seccomp_load(f);
    seccomp_release(f);
    if (rc) {
        snprintf(err, len, "the kernel refused the seccomp filter: %s", strerror(-rc));
        return -1;
    }
    return 0;
}
