/* filter.c: the driver's seccomp allow list (filter.h), and its export as BPF for the pre-exec filter. */
#include "filter.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int pp__filter_rules(scmp_filter_ctx f, pid_t self) {
    static const int allowed[] = {
        SCMP_SYS(read),          SCMP_SYS(write),           SCMP_SYS(readv),         SCMP_SYS(writev),
        SCMP_SYS(pread64),
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
    /* threads, not processes */
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                   SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    /* reading its own limits, never setting them */
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2, SCMP_A0(SCMP_CMP_EQ, 0),
                                   SCMP_A2(SCMP_CMP_EQ, 0));
    /* isatty() and the terminal's width, which stdio and printing code ask for */
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, TCGETS));
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, TIOCGWINSZ));
    if (self > 0) {
        /* signals to itself only (abort, assert, raise) */
        if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
        if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
        return rc;
    }
    /* Before the execve the pid is not known to a filter exported once: the signals a crash or raise() sends
     * pass, and the driver's own filter narrows them to itself. */
    static const int sigs[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGSYS, SIGXCPU, SIGXFSZ};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs && !rc; i++) {
        rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)sigs[i]));
        if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)sigs[i]));
    }
    static const int start[] = {SCMP_SYS(execveat), SCMP_SYS(arch_prctl), SCMP_SYS(prctl), SCMP_SYS(seccomp),
                                SCMP_SYS(newfstatat)};
    for (size_t i = 0; i < sizeof start / sizeof *start && !rc; i++) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, start[i], 0);
    /* a static executable asks where it lives; it copes without an answer */
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOENT), SCMP_SYS(readlink), 0);
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOENT), SCMP_SYS(readlinkat), 0);
    return rc;
}

const void *pp__filter_preexec(char *err, size_t len) {
    static struct sock_fprog prog;
    if (prog.filter) return &prog;
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_TRAP);
    int fd = -1, rc = f ? pp__filter_rules(f, 0) : -ENOMEM;
    if (!rc && (fd = memfd_create("pplab-filter", MFD_CLOEXEC)) < 0) rc = -errno;
    if (!rc) rc = seccomp_export_bpf(f, fd);
    off_t n = rc ? 0 : lseek(fd, 0, SEEK_END);
    struct sock_filter *code = NULL;
    if (!rc && (n <= 0 || n % (off_t)sizeof *code || n > 65536 * (off_t)sizeof *code)) rc = -EINVAL;
    if (!rc && !(code = malloc((size_t)n))) rc = -ENOMEM;
    if (!rc && pread(fd, code, (size_t)n, 0) != n) rc = -EIO;
    if (fd >= 0) close(fd);
    if (f) seccomp_release(f);
    if (rc) {
        free(code);
        snprintf(err, len, "cannot build the schedule driver's seccomp filter: %s", strerror(-rc));
        return NULL;
    }
    prog.len = (unsigned short)(n / (off_t)sizeof *code);
    prog.filter = code;
    return &prog;
}

int pp__filter_load_raw(const void *prog) {
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) ? -1 : 0;
}
