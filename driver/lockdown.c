/* lockdown.c: what a schedule may do once it runs. A schedule only needs pp.h (its channel) and memory, so the
 * seccomp filter (sandbox/policy/filter.c, the list pplab also loads before this program starts) allows exactly
 * that: reading and writing the descriptors it was given (its channel is shared memory; 0, 1 and 2 are /dev/null
 * and the captured output), memory management, futexes, clocks and sleeps, threads, signals to itself and exit.
 * Everything else (open, execve, new processes, signals to others, ptrace, process_vm_*, sockets, io_uring, ...)
 * traps: the SIGSYS handler records which call it was in the channel and the driver dies of SIGSYS, so the
 * runtime can name the call in one line. Once the object is loaded, a second filter (pp__drv_seal) takes away
 * executable memory: the loader's text is the last code this process ever maps. uid, root, Landlock and resource
 * limits were set by pplab before this program started. */
#include <errno.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "crash.h"
#include "driver.h"
#include "filter.h"

static int my_rank;

static int rank_fixed(void) { return my_rank; }

/* The crash handler's note: what the driver died of, for the runtime's report. */
static void note_signal(int sig, const siginfo_t *info) {
    pp_chan *c = pp__drv_chan;
    pp__drv_settle(); /* a crash past a refused call never happened: the run stops at the call */
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

/* Writes of the schedule's stdout and stderr: they wait for the posts before them to be served, so that the
 * output a report shows ends where the run stopped, as if every call had waited. */
static ssize_t out_write(void *cookie, const char *buf, size_t n) {
    pp__drv_settle();
    int fd = (int)(intptr_t)cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(fd, buf + done, n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return done ? (ssize_t)done : -1;
        done += (size_t)k;
    }
    return (ssize_t)n;
}

/* stdout and stderr become streams over out_write, with the buffering they would have. 0, or -1. */
static int output_streams(void) {
    static char outbuf[4096];
    cookie_io_functions_t io = {.write = out_write};
    FILE *out = fopencookie((void *)(intptr_t)1, "w", io), *errs = fopencookie((void *)(intptr_t)2, "w", io);
    if (!out || !errs) return -1;
    setvbuf(out, outbuf, _IOLBF, sizeof outbuf);
    setvbuf(errs, NULL, _IONBF, 0);
    stdout = out, stderr = errs;
    return 0;
}

int pp__drv_lockdown(int sandbox, int rank, char *err, size_t len) {
    my_rank = rank;
    /* decided now, while memory for the streams can still be had freely */
    if (output_streams()) {
        snprintf(err, len, "cannot set up the schedule's output streams: %s", strerror(errno));
        return -1;
    }
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

    /* set by pplab's jail before the execve, which keeps it (jail.c); unset, this driver was started some other
     * way, and nothing of the jail can be assumed */
    if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
        snprintf(err, len, "no_new_privs is not set: the schedule driver runs only as pplab's jail starts it");
        errno = EPERM;
        return -1;
    }
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_TRAP);
    if (!f) {
        snprintf(err, len, "seccomp_init failed (out of memory?)");
        errno = ENOMEM;
        return -1;
    }
    int rc = pp__filter_rules(f, getpid());
    /* one more filter, pp__drv_seal's, may come later: a filter can only take calls away */
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 1,
                                   SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER));
    if (!rc) rc = seccomp_load(f);
    seccomp_release(f);
    if (rc) {
        snprintf(err, len, "the kernel refused the seccomp filter: %s", strerror(-rc));
        errno = -rc;
        return -1;
    }
    return 0;
}

int pp__drv_seal(char *err, size_t len) {
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
    if (!f) {
        snprintf(err, len, "seccomp_init failed (out of memory?)");
        errno = ENOMEM;
        return -1;
    }
    /* no_new_privs is set already; asking again would need prctl, which the first filter refuses */
    int rc = seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 0);
    static const int calls[] = {SCMP_SYS(mmap), SCMP_SYS(mprotect), SCMP_SYS(pkey_mprotect), SCMP_SYS(remap_file_pages)};
    for (size_t i = 0; i < sizeof calls / sizeof *calls && !rc; i++)
        rc = seccomp_rule_add(f, SCMP_ACT_TRAP, calls[i], 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
    /* and no further filters of the student's: nothing is left to take away that the trap would not report */
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_TRAP, SCMP_SYS(seccomp), 0);
    if (!rc) rc = seccomp_load(f);
    seccomp_release(f);
    if (rc) snprintf(err, len, "the kernel refused the second seccomp filter: %s", strerror(-rc)), errno = -rc;
    return rc ? -1 : 0;
}
