/* Lab 02: GPipe. The batch is cut into M micro-batches: every forward first, then every backward, one optimizer
 * step for the whole batch.
 *
 * Your function runs on every rank at once; rank r owns stage r (one chunk: chunk 0). The step's loss is the
 * mean over all micro-batches, which decides how the last stage seeds each backward (docs/02-gpipe.md section 2
 * asks you to work it out). With recomputation on, a stash can keep only its input until its backward (section 4).
 * Read docs/02-gpipe.md first; grade with `make grade LAB=gpipe`. */
#include <stdlib.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    //>> solution
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    //<< solution

    /* TODO 1: the forward of every micro-batch, each input from the previous stage and each output to the next
     * (as in lab 01, once per micro-batch); what must a stash keep when pp_rank_recompute(r) asks for
     * recomputation? */
    //>> solution
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (pp_rank_recompute(r)) pp_stash_checkpoint(r, stash[mb]);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    //<< solution

    /* TODO 2: the backward of every micro-batch: which scale seeds the last stage's gradient so that the step's
     * loss is the mean, where do the gradients come from and go, and when is a stash no longer needed? */
    //>> solution
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);
    //<< solution

    /* TODO 3: one optimizer step for the whole batch. */
    //>> solution
    pp_optimizer_step(r);
    //<< solution
    (void)P, (void)M, (void)me;
}
