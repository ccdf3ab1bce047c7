/* sys.h: a raw system call, for the objects in this folder. They are what a submission would hand the schedule
 * driver if it got past every check of the build (inline assembly, any bytes): tests/test_hostile.c compiles them
 * straight to objects with the compiler, skipping the kit's build, and runs them in the real driver, to show that
 * what holds after the build (the loader, the seccomp filters, the uid, the empty root, Landlock, the limits)
 * holds alone. */
#ifndef HOSTILE_SYS_H
#define HOSTILE_SYS_H

static inline long sys6(long n, long a, long b, long c, long d, long e, long f) {
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
}
#define sys(n, ...) sys_(n, __VA_ARGS__, 0, 0, 0, 0, 0, 0)
#define sys_(n, a, b, c, d, e, f, ...) sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

/* x86-64 numbers, spelled out: the object includes no system header beyond what pp.h needs */
enum {
    NR_write = 1, NR_mprotect = 10, NR_getpid = 39, NR_socket = 41, NR_fork = 57, NR_kill = 62, NR_getuid = 102,
    NR_getgid = 104, NR_geteuid = 107, NR_ptrace = 101, NR_getppid = 110, NR_setsid = 112, NR_prctl = 157,
    NR_openat = 257, NR_prlimit64 = 302, NR_process_vm_writev = 311, NR_seccomp = 317, NR_execveat = 322,
    NR_nanosleep = 35, NR_lseek = 8,
};

#endif
