/* HOSTILE ON PURPOSE (object write-grader): writes into the memory of the process that serves it. */
#include "sys.h"
#include "pp.h"
void pp_gpipe_step(pp_rank *r) {
    static char buf[8];
    struct { void *base; unsigned long len; } local = {buf, 8}, remote = {(void *)0x400000, 8};
    sys(NR_process_vm_writev, sys(NR_getppid, 0), &local, 1, &remote, 1, 0);
    (void)r;
}
