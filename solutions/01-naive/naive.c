/* Lab 01: naive pipeline parallelism. The whole batch goes through the stages as one piece (M = 1): each rank
 * runs its stage when its input has arrived and passes the result on; the backward walks back the same way.
 * docs/01-naive.md says what travels between ranks, how a message is tagged and what the bubble becomes; grade
 * with `make grade LAB=naive`.
 *
 * The calls you need (see lib/pp.h): pp_rank_id, pp_rank_stages, pp_rank_microbatches, pp_recv, pp_send,
 * pp_tag, pp_stage_forward, pp_loss_grad, pp_stage_backward, pp_stash_free, pp_optimizer_step. pplab only ever
 * runs this schedule with one micro-batch (it refuses --microbatches other than 1 itself). */
#include "pp.h"

void pp_naive_step(pp_rank *r) {
    int P = pp_rank_stages(r), me = pp_rank_id(r);
    /* TODO 1: the forward of the one micro-batch on this rank's stage: where does its input come from (the
     * first stage has none: pp.h says what it passes), and where does its output go? */
    //>> solution
    pp_stash *stash;
    pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, 0, me));
    pp_tensor *y = pp_stage_forward(r, 0, 0, x, &stash);
    if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, 0, me + 1));
    //<< solution

    /* TODO 2: the backward: where does this stage's output gradient come from (the last stage has no next
     * stage: docs/01-naive.md), and where does its input gradient go? Then what becomes of the stash, and of the
     * weights? */
    //>> solution
    pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f) : pp_recv(r, me + 1, pp_tag(PP_BWD, 0, me));
    pp_tensor *dx = pp_stage_backward(r, stash, dy);
    if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, 0, me - 1));
    pp_stash_free(r, stash);
    pp_optimizer_step(r);
    //<< solution
    (void)P, (void)me;
}
