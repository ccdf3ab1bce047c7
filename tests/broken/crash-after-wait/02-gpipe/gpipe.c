/* BROKEN ON PURPOSE (crash-after-wait): each of two ranks waits for a message the other sends only after its
 * own wait; past it, rank 0 prints and rank 1 crashes; rank 2 waits for rank 1 too, then exits. In-process the waits never return: a deadlock, and nothing
 * printed after them. In the sandbox pp_recv returns at once (the driver posts it and goes on), so the drivers
 * reach the printf, the crash and the exit; each must wait for the receive as if it had blocked, and the report must be
 * the same deadlock. tests/test_grader.c asserts that the grader catches it with the right message. */
#include <stdio.h>
#include <stdlib.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    int me = pp_rank_id(r), other = 1 - me;
    if (me == 2) {
        pp_recv(r, 1, pp_tag(PP_FWD, 0, 2));
        exit(3);
    }
    if (me > 2) return;
    printf("rank %d before its wait\n", me);
    pp_tensor *t = pp_recv(r, other, me == 0 ? pp_tag(PP_BWD, 0, 0) : pp_tag(PP_FWD, 0, 1));
    if (me == 1) *(volatile int *)0 = 1;
    printf("rank %d past its wait\n", me);
    fflush(stdout);
    pp_send(r, t, other, pp_tag(PP_FWD, 0, 1));
}
