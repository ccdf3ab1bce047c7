/* VALID ON PURPOSE (receive-first): 1F1B with plain blocking calls only, each rank receiving the gradient before it
 * sends its forward's output, which the lab README says happens to work for this order. It keeps full marks:
 * tests/test_grader.c asserts it. */
/* Lab 03: 1F1B (one forward, one backward), as PipeDream and Megatron-LM schedule it.
 *
 * Rank r first runs warmup = min(P-r-1, M) forwards, then alternates one forward and one backward (the steady
 * state) until every forward ran, then runs the remaining backwards (cooldown). The bubble is GPipe's, but a
 * stash is freed as soon as its backward ran, so rank r never holds more than min(P-r, M) stashes instead of M.
 *
 * Sends block until the neighbour posts the matching receive (rendezvous, like NCCL). In the steady state a
 * rank sends forward while its neighbour sends backward to it: if both block in pp_send, neither reaches its
 * receive. Post each send together with the receive that follows it, in one pp_group_start/pp_group_end pair.
 * Read docs/03-1f1b.md; grade with `make grade LAB=1f1b`. */
#include <stdlib.h>

#include "pp.h"

void pp_1f1b_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    int first = me == 0, last = me == P - 1;
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    int warmup = P - me - 1 < M ? P - me - 1 : M, steady = M - warmup;
    pp_tensor *x = NULL;

    /* TODO 1: warmup: forwards 0..warmup-1, each: recv x (unless first), forward, send (unless last). */
    for (int mb = 0; mb < warmup; mb++) {
        x = first ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (!last) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    if (steady > 0 && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, warmup, me));

    /* TODO 2: steady state, i = 0..M-warmup-1: forward of micro-batch warmup+i, then backward of micro-batch
     * i. Send the forward output while receiving the gradient for micro-batch i in one group; send dx while
     * receiving the next forward input in one group (the last iteration only sends). */
    for (int i = 0; i < steady; i++) {
        int fmb = warmup + i;
        pp_tensor *y = pp_stage_forward(r, 0, fmb, first ? NULL : x, &stash[fmb]);
        pp_tensor *dy;
        if (last) {
            dy = pp_loss_grad(r, 1.0f / (float)M);
        } else {
            dy = pp_recv(r, me + 1, pp_tag(PP_BWD, i, me));
            pp_send(r, y, me + 1, pp_tag(PP_FWD, fmb, me + 1));
        }
        pp_tensor *dx = pp_stage_backward(r, stash[i], dy);
        pp_stash_free(r, stash[i]);
        int more = i + 1 < steady;
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, i, me - 1));
        if (more && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, fmb + 1, me));
    }

    /* TODO 3: cooldown: the remaining backwards, then one optimizer step. */
    for (int mb = steady; mb < M; mb++) {
        pp_tensor *dy = last ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);
    pp_optimizer_step(r);
    (void)P, (void)M, (void)first, (void)last;
}
