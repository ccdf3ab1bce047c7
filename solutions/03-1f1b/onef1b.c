/* Lab 03: 1F1B (one forward, one backward), as PipeDream and Megatron-LM schedule it.
 *
 * GPipe's operations in another order: a warm-up of forwards, then one forward and one backward in turn (the
 * steady state) until every forward ran, then the remaining backwards (the cool-down). The warm-up is as long
 * as it takes rank r's first gradient to come back: its length is for you to find, from the timelines of
 * docs/03-1f1b.md, which asks what the order does to the bubble and what it saves in stashes. The grader holds
 * your bubble and stash peaks to the canonical order's; an order that differs but does no worse keeps full marks.
 *
 * Sends block until the neighbour posts the matching receive (rendezvous, like NCCL). In the steady state two
 * neighbours send to each other at the same time: find an order of calls in which neither waits for the other
 * forever (docs/03-1f1b.md section 4 shows two). Grade with `make grade LAB=1f1b`. */
#include <stdlib.h>

#include "pp.h"

void pp_1f1b_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    int first = me == 0, last = me == P - 1;
    //>> solution
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    int warmup = P - me - 1 < M ? P - me - 1 : M, steady = M - warmup;
    pp_tensor *x = NULL;
    //<< solution

    /* TODO 1: the warm-up forwards: how many on this rank, with M possibly smaller than P? */
    //>> solution
    for (int mb = 0; mb < warmup; mb++) {
        x = first ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (!last) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    if (steady > 0 && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, warmup, me));
    //<< solution

    /* TODO 2: the steady state, one forward then one backward: which micro-batches, and which calls let both
     * neighbours' sends complete? */
    //>> solution
    for (int i = 0; i < steady; i++) {
        int fmb = warmup + i;
        pp_tensor *y = pp_stage_forward(r, 0, fmb, first ? NULL : x, &stash[fmb]);
        pp_tensor *dy;
        if (last) {
            dy = pp_loss_grad(r, 1.0f / (float)M);
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
    //<< solution

    /* TODO 3: the cool-down: the backwards still to run, then one optimizer step. */
    //>> solution
    for (int mb = steady; mb < M; mb++) {
        pp_tensor *dy = last ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);
    pp_optimizer_step(r);
    //<< solution
    (void)P, (void)M, (void)first, (void)last;
}
