/* BROKEN ON PURPOSE (zero-after-backward): gradients are zeroed after the backwards, just before the optimizer
 * step. tests/test_grader.c asserts that the grader catches it with the right message. */
/* Lab 02: GPipe. All forwards, then all backwards, one optimizer step.
 *
 * Your function runs on every rank at once. Rank r owns stage r (one chunk: chunk 0). For each of the M
 * micro-batches: receive the activation from rank r-1 (rank 0 reads tokens itself: pass x = NULL), run
 * pp_stage_forward, send the output to rank r+1 (the last rank keeps its loss). Keep every stash. Then run the
 * backwards in micro-batch order 0..M-1: the last rank starts from pp_loss_grad(r, 1.0f / M), the others receive
 * the gradient from rank r+1; send dx to rank r-1; free each stash after its backward. Finally step the optimizer
 * once. Read docs/02-gpipe.md first; grade with `make grade LAB=gpipe`. */
#include <stdlib.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash **stash = calloc((size_t)M, sizeof *stash);

    /* TODO 1: forward every micro-batch 0..M-1: recv (unless rank 0), pp_stage_forward, send (unless last).
     * Tags: pp_tag(PP_FWD, mb, receiving virtual stage). With recomputation on (pp_rank_recompute(r)), call
     * pp_stash_checkpoint on each stash right after its forward. */
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (pp_rank_recompute(r)) pp_stash_checkpoint(r, stash[mb]);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }

    /* TODO 2: backward every micro-batch in order 0..M-1: the last rank's dy is pp_loss_grad(r, 1.0f / M) (the
     * step's loss is the mean over all micro-batches), the others recv dy from rank r+1; pp_stage_backward;
     * send dx to rank r-1 (unless rank 0); pp_stash_free. */
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);

    /* TODO 3: one optimizer step for the whole batch. */
    pp_grad_zero(r);
    pp_optimizer_step(r);
    (void)P, (void)M, (void)me;
}
