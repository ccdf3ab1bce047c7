/* VALID ON PURPOSE (split-backward): the reference naive pipeline with each pp_stage_backward written as
 * pp_stage_backward_input then pp_stage_backward_weight at once, which pp.h says is the same thing. It keeps
 * full marks: tests/test_grader.c asserts it. */
/* Lab 01: naive pipeline parallelism. The whole batch goes through the stages as one piece (M = 1): rank 0
 * runs its forward while everyone else waits, then rank 1, and so on; the backward walks back the same way.
 * Only one rank is ever busy, so the bubble is (P-1)/P. Read docs/01-naive.md; grade with `make grade LAB=naive`.
 *
 * The calls you need (see lib/pp.h): pp_rank_id, pp_rank_stages, pp_rank_microbatches, pp_recv, pp_send,
 * pp_tag, pp_stage_forward, pp_loss_grad, pp_stage_backward, pp_stash_free, pp_optimizer_step. pplab only ever
 * runs this schedule with one micro-batch (it refuses --microbatches other than 1 itself). */
#include "pp.h"

void pp_naive_step(pp_rank *r) {
    int P = pp_rank_stages(r), me = pp_rank_id(r);
    /* TODO 1: forward: receive the activation from rank me-1 (rank 0 passes x = NULL and reads tokens itself),
     * run pp_stage_forward on chunk 0, micro-batch 0, and send the output to rank me+1 (the last rank keeps
     * its loss). Tags: pp_tag(PP_FWD, 0, receiving virtual stage). */
    pp_stash *stash;
    pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, 0, me));
    pp_tensor *y = pp_stage_forward(r, 0, 0, x, &stash);
    if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, 0, me + 1));

    /* TODO 2: backward: the last rank starts from pp_loss_grad(r, 1.0f) (one micro-batch is the whole
     * batch), the others receive dy from rank me+1; run pp_stage_backward, send dx to rank me-1, free the
     * stash, then step the optimizer once. */
    pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f) : pp_recv(r, me + 1, pp_tag(PP_BWD, 0, me));
    pp_tensor *dx = pp_stage_backward_input(r, stash, dy);
    pp_stage_backward_weight(r, stash);
    if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, 0, me - 1));
    pp_stash_free(r, stash);
    pp_optimizer_step(r);
    (void)P, (void)me;
}
