/* Broken: lab 07 part 1 whose replicas other than 0 wipe their gradients after the reduce: replica 0 steps on
 * the full batch's gradient, the others on zeros. */
#include <stdlib.h>

#include "pp.h"

void pp_dp1f1b_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r), D = pp_rank_replicas(r);
    int first = me == 0, last = me == P - 1;
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    int warmup = P - me - 1 < M ? P - me - 1 : M, steady = M - warmup;
    pp_tensor *x = NULL;

    /* TODO 1: your 1F1B of lab 03 runs here unchanged within the replica, but for one number: the loss gradient's
     * scale. The D replicas' gradients are summed, not averaged: what makes the sum the mean over the global
     * batch? */
    for (int mb = 0; mb < warmup; mb++) {
        x = first ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (!last) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    if (steady > 0 && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, warmup, me));

    for (int i = 0; i < steady; i++) {
        int fmb = warmup + i;
        pp_tensor *y = pp_stage_forward(r, 0, fmb, first ? NULL : x, &stash[fmb]);
        pp_tensor *dy;
        if (last) {
            dy = pp_loss_grad(r, 1.0f / (float)(D * M));
        } else {
            pp_group_start(r);
            pp_send(r, y, me + 1, pp_tag(PP_FWD, fmb, me + 1));
            dy = pp_recv(r, me + 1, pp_tag(PP_BWD, i, me));
            pp_group_end(r);
        }
        pp_tensor *dx = pp_stage_backward(r, stash[i], dy);
        pp_stash_free(r, stash[i]);
        int more = i + 1 < steady;
        pp_group_start(r);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, i, me - 1));
        if (more && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, fmb + 1, me));
        pp_group_end(r);
    }

    /* TODO 2: after the last backward, the replicas must agree on the gradients before the optimizer steps:
     * when is this rank's gradient complete, and which call sums it over the replicas holding the same stage? */
    for (int mb = steady; mb < M; mb++) {
        pp_tensor *dy = last ? pp_loss_grad(r, 1.0f / (float)(D * M)) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);
    pp_grad_reduce(r, 0);
    if (pp_rank_replica(r) > 0) pp_grad_zero(r); /* after the reduce, on replicas 1.. only */
    pp_optimizer_step(r);
    (void)P, (void)M, (void)D, (void)first, (void)last;
}
