/* VALID ON PURPOSE (comm-styles): 1F1B without groups: every send a pp_isend waited once at the end of the step,
 * every receive blocking. Only receives block, in the order the schedule consumes data, so it never deadlocks
 * and keeps full marks: tests/test_grader.c asserts it. */
#include <stdlib.h>

#include "pp.h"

void pp_1f1b_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    int first = me == 0, last = me == P - 1;
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    pp_request **sends = calloc((size_t)(2 * M), sizeof *sends);
    int nsends = 0, warmup = P - me - 1 < M ? P - me - 1 : M;
    int fwd = 0, bwd = 0;
    /* one forward and one backward, as closures over the loop state */
#define FORWARD()                                                                                                  \
    do {                                                                                                           \
        pp_tensor *x = first ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, fwd, me));                                 \
        pp_tensor *y = pp_stage_forward(r, 0, fwd, x, &stash[fwd]);                                                \
        if (!last) sends[nsends++] = pp_isend(r, y, me + 1, pp_tag(PP_FWD, fwd, me + 1));                          \
        fwd++;                                                                                                     \
    } while (0)
#define BACKWARD()                                                                                                 \
    do {                                                                                                           \
        pp_tensor *dy = last ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, bwd, me));     \
        pp_tensor *dx = pp_stage_backward(r, stash[bwd], dy);                                                      \
        if (!first) sends[nsends++] = pp_isend(r, dx, me - 1, pp_tag(PP_BWD, bwd, me - 1));                        \
        pp_stash_free(r, stash[bwd]);                                                                              \
        bwd++;                                                                                                     \
    } while (0)
    for (int i = 0; i < warmup; i++) FORWARD();
    for (int i = 0; i < M - warmup; i++) {
        FORWARD();
        BACKWARD();
    }
    for (int i = 0; i < warmup; i++) BACKWARD();
#undef FORWARD
#undef BACKWARD
    pp_waitall(r, sends, nsends);
    free(sends);
    free(stash);
    pp_optimizer_step(r);
}
