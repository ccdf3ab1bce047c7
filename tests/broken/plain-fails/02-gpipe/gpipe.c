/* BROKEN ON PURPOSE (plain-fails): GPipe that is right with recomputation on, but with it off the last rank
 * skips the backward of the last micro-batch, so rank P-2 waits for a gradient that never comes.
 * tests/test_grader.c asserts that the recomputation check names that run's own failure. */
#include <stdlib.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    int recompute = pp_rank_recompute(r);
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (recompute) pp_stash_checkpoint(r, stash[mb]);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    for (int mb = 0; mb < M; mb++) {
        if (!recompute && me == P - 1 && mb == M - 1) break;
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);
    pp_optimizer_step(r);
}
