/* HOSTILE ON PURPOSE (vm-write): writes into the memory of the process that serves it with process_vm_writev.
 * tests/test_hostile.c asserts what stops it. */
#define _GNU_SOURCE
#include <sys/uio.h>
#include <unistd.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    char zeros[4096] = {0};
    struct iovec local = {zeros, sizeof zeros}, remote = {(void *)0x400000, sizeof zeros};
    process_vm_writev(getppid(), &local, 1, &remote, 1, 0);
    (void)r;
}
