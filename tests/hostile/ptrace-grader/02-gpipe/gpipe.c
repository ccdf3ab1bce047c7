/* HOSTILE ON PURPOSE (ptrace-grader): attaches to the process that serves it, to rewrite its memory.
 * tests/test_hostile.c asserts what stops it. */
#include <sys/ptrace.h>
#include <unistd.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    ptrace(PTRACE_ATTACH, getppid(), 0, 0);
    (void)r;
}
