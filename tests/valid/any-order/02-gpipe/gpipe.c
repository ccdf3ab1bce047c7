/* VALID ON PURPOSE (any-order): GPipe with its micro-batches in another order inside each phase, the same on
 * every rank: forwards odd micro-batches first, then even ones; backwards last to first. GPipe's bubble and peak
 * do not depend on that order, so it keeps full marks: tests/test_grader.c asserts it. */
#include <stdlib.h>

#include "pp.h"

/* The i-th micro-batch of the forward phase: 1, 3, 5, ..., then 0, 2, 4, ... */
static int forward_mb(int i, int M) {
    int odd = M / 2;
    return i < odd ? 2 * i + 1 : 2 * (i - odd);
}

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    for (int i = 0; i < M; i++) {
        int mb = forward_mb(i, M);
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (pp_rank_recompute(r)) pp_stash_checkpoint(r, stash[mb]);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    for (int mb = M - 1; mb >= 0; mb--) {
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        pp_stash_free(r, stash[mb]);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
    }
    free(stash);
    pp_optimizer_step(r);
}
