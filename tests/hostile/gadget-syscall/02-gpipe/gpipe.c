/* HOSTILE ON PURPOSE (gadget-syscall): plain C, which every build check lets through, that finds the driver's own
 * syscall() by its bytes and calls it. From printf's address (a function a lab file may call) it walks back to
 * the driver's ELF header, reads the program headers for the executable segment, and looks there for the first
 * instructions of glibc's syscall(); then it asks for openat on /etc/passwd. Only the kernel's filter can stop
 * this: tests/jail_cases.h expects it named in every mode of the jail (root or not, namespaces or Landlock). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pp.h"

/* mov %rdi,%rax; mov %rsi,%rdi; mov %rdx,%rsi; mov %rcx,%rdx; mov %r8,%r10; mov %r9,%r8; mov 8(%rsp),%r9; syscall */
static const unsigned char prologue[] = {0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6, 0x48, 0x89, 0xca, 0x4d,
                                         0x89, 0xc2, 0x4d, 0x89, 0xc8, 0x4c, 0x8b, 0x4c, 0x24, 0x08, 0x0f, 0x05};

static uint64_t get(uintptr_t at, int bytes) {
    uint64_t v = 0;
    memcpy(&v, (const void *)at, (size_t)bytes);
    return v;
}

static uintptr_t find_syscall(void) {
    int (*pf)(const char *, ...) = printf;
    uintptr_t page = (uintptr_t)pf & ~(uintptr_t)4095;
    while (memcmp((const void *)page, "\x7f" "ELF", 4)) page -= 4096;
    uintptr_t base = get(page + 16, 2) == 3 ? page : 0; /* ET_DYN: addresses are offsets from the header */
    uint64_t phoff = get(page + 32, 8), phentsize = get(page + 54, 2), phnum = get(page + 56, 2);
    for (uint64_t i = 0; i < phnum; i++) {
        uintptr_t ph = page + phoff + i * phentsize;
        if (get(ph, 4) != 1 || !(get(ph + 4, 4) & 1)) continue; /* PT_LOAD, PF_X */
        uintptr_t lo = base + get(ph + 16, 8), hi = lo + get(ph + 40, 8) - sizeof prologue;
        for (uintptr_t p = lo; p < hi; p++)
            if (!memcmp((const void *)p, prologue, sizeof prologue)) return p;
    }
    return 0;
}

void pp_gpipe_step(pp_rank *r) {
    uintptr_t at = find_syscall();
    if (!at) pp_fail(r, "gadget-syscall: no syscall() found in the driver");
    long (*sc)(long, long, long, long, long, long) = (long (*)(long, long, long, long, long, long))at;
    long fd = sc(257, -100, (long)"/etc/passwd", 0, 0, 0);
    pp_fail(r, "gadget-syscall: openat returned %ld and the process lives on", fd);
}
