/* VALID ON PURPOSE (comm-styles): ZB-H1 with every receive posted at the start of the step (pp_irecv, waited
 * right before its data is used) and blocking sends, which then never wait long: the receiver posted long ago.
 * It keeps full marks: tests/test_grader.c asserts it. */
#include <stdlib.h>

#include "pp.h"

#define HOLD(P, me) (me)
#define WARMUP(P, me) ((P) - (me) - 1)

void pp_zbh1_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    int first = me == 0, last = me == P - 1, warmup = WARMUP(P, me) < M ? WARMUP(P, me) : M;
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    pp_tensor **x = calloc((size_t)M, sizeof *x), **dy = calloc((size_t)M, sizeof *dy);
    pp_request **xr = calloc((size_t)M, sizeof *xr), **dyr = calloc((size_t)M, sizeof *dyr);
    for (int mb = 0; mb < M; mb++) {
        if (!first) xr[mb] = pp_irecv(r, me - 1, pp_tag(PP_FWD, mb, me), &x[mb]);
        if (!last) dyr[mb] = pp_irecv(r, me + 1, pp_tag(PP_BWD, mb, me), &dy[mb]);
    }
    int fwd = 0, wgt = 0;
    for (int bwd = -warmup; bwd < M; bwd++) {
        if (fwd < M) {
            if (!first) pp_wait(r, xr[fwd]);
            pp_tensor *y = pp_stage_forward(r, 0, fwd, first ? NULL : x[fwd], &stash[fwd]);
            if (!last) pp_send(r, y, me + 1, pp_tag(PP_FWD, fwd, me + 1));
            fwd++;
        }
        if (bwd < 0) continue;
        if (!last) pp_wait(r, dyr[bwd]);
        pp_tensor *g = pp_stage_backward_input(r, stash[bwd], last ? pp_loss_grad(r, 1.0f / (float)M) : dy[bwd]);
        if (!first) pp_send(r, g, me - 1, pp_tag(PP_BWD, bwd, me - 1));
        for (; bwd + 1 - wgt > HOLD(P, me); wgt++) {
            pp_stage_backward_weight(r, stash[wgt]);
            pp_stash_free(r, stash[wgt]);
        }
    }
    for (; wgt < M; wgt++) {
        pp_stage_backward_weight(r, stash[wgt]);
        pp_stash_free(r, stash[wgt]);
    }
    free(stash), free(x), free(dy), free(xr), free(dyr);
    pp_optimizer_step(r);
}
