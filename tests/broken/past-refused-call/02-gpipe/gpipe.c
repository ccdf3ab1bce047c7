/* BROKEN ON PURPOSE (past-refused-call): rank 0 asks for a chunk it does not have, then prints and crashes.
 * In the sandbox pp_stage_forward returns before pplab has checked it (the call cannot wait for another rank,
 * so the driver posts it and goes on), yet nothing the schedule does after a refused call may show: the report
 * names the call, shows the output before it and none after it, and no crash.
 * tests/test_grader.c asserts that the grader catches it with the right message. */
#include <stdio.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    if (pp_rank_id(r) != 0) return;
    pp_stash *s;
    printf("rank 0 before the call\n");
    pp_tensor *y = pp_stage_forward(r, 7, 0, NULL, &s);
    printf("rank 0 past the refused call\n");
    fflush(stdout);
    pp_send(r, y, 1, pp_tag(PP_FWD, 0, 1));
    *(volatile int *)0 = 1;
}
