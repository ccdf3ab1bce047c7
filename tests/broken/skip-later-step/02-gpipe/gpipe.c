/* BROKEN ON PURPOSE (skip-later-step): from the second step on, the last micro-batch's backward is skipped (a
 * counter kept across steps). The first step, whose gradients are compared, is right; only the weights and the
 * loss after K steps can tell. tests/test_grader.c asserts that the grader catches it at every size it accepts. */
#include <stdlib.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    static int steps_done;
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    int last = steps_done++ == 0 ? M : M - 1;
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    for (int mb = 0; mb < last; mb++) {
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);
    pp_optimizer_step(r);
}
