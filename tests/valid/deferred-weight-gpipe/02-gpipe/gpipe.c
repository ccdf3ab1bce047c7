/* VALID ON PURPOSE (deferred-weight-gpipe): GPipe running every weight half (pp_stage_backward_weight) after the
 * last input half, unless the run recomputes. GPipe's bubble and its peak of M stashes do not depend on where a
 * weight half runs, so it keeps full marks: tests/test_grader.c asserts it. With recomputation a deferred weight
 * half would keep its rebuilt stash whole (tests/broken/deferred-weight-recompute). */
#include <stdlib.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    int recompute = pp_rank_recompute(r);

    for (int mb = 0; mb < M; mb++) {
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (pp_rank_recompute(r)) pp_stash_checkpoint(r, stash[mb]);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }

    for (int mb = 0; mb < M; mb++) {
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward_input(r, stash[mb], dy);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        if (recompute) {
            pp_stage_backward_weight(r, stash[mb]);
            pp_stash_free(r, stash[mb]);
        }
    }
    for (int mb = 0; mb < M && !recompute; mb++) {
        pp_stage_backward_weight(r, stash[mb]);
        pp_stash_free(r, stash[mb]);
    }
    free(stash);

    pp_optimizer_step(r);
    (void)P, (void)M, (void)me;
}
