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

    /* TODO 1: the forward of every micro-batch, each input from the previous stage and each output to the next
     * (as in lab 01, once per micro-batch); what must a stash keep when pp_rank_recompute(r) asks for
     * recomputation? */

    /* TODO 2: the backward of every micro-batch: which scale seeds the last stage's gradient so that the step's
     * loss is the mean, where do the gradients come from and go, and when is a stash no longer needed? */

    /* TODO 3: one optimizer step for the whole batch. */
    (void)P, (void)M, (void)me;
}
