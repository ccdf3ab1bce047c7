/* HOSTILE ON PURPOSE (kill-grader): kills the process that serves it, to stop the grading.
 * tests/test_hostile.c asserts what stops it. */
#include <signal.h>
#include <unistd.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    kill(getppid(), SIGKILL);
    (void)r;
}
