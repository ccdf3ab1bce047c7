/* VALID ON PURPOSE (comm-styles): GPipe with every message a pp_irecv / pp_isend request waited on its own, the
 * backwards' sends all waited at the end, and a pp_grad_zero before the first backward (the library has zeroed
 * the buffers already, so it changes nothing). pp.h makes these equivalent to blocking calls; it keeps full
 * marks: tests/test_grader.c asserts it. */
#include <stdlib.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    pp_request **back = calloc((size_t)M, sizeof *back);
    int nback = 0;
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *x = NULL;
        if (me > 0) {
            pp_request *q = pp_irecv(r, me - 1, pp_tag(PP_FWD, mb, me), &x);
            pp_wait(r, q);
        }
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (pp_rank_recompute(r)) pp_stash_checkpoint(r, stash[mb]);
        if (me < P - 1) pp_wait(r, pp_isend(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1)));
    }
    pp_grad_zero(r);
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *dy;
        if (me == P - 1) {
            dy = pp_loss_grad(r, 1.0f / (float)M);
        } else {
            pp_request *q = pp_irecv(r, me + 1, pp_tag(PP_BWD, mb, me), &dy);
            pp_wait(r, q);
        }
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (me > 0) back[nback++] = pp_isend(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    pp_waitall(r, back, nback);
    free(back);
    free(stash);
    pp_optimizer_step(r);
}
