/* Lab 05, part 2: ZB-H2, the zero-bubble schedule that spends memory to hide communication (Qi et al., "Zero
 * Bubble Pipeline Parallelism", ICLR 2024).
 *
 * Part 1's order with a longer warm-up: each rank runs more forwards before its first backward, so that while a
 * message is on its way the rank has a forward to run instead of waiting. docs/05-zerobubble.md asks how long the
 * warm-up must be to hide a latency, what it costs in stashes, and why on a clock without latency the two parts
 * tie; the grader holds your bubble and stash peaks to the canonical order's, and names the first op that
 * differs only when one of them falls short.
 *
 * Start from your part 1. Grade with `make grade LAB=zbh2`. */
#include <stdlib.h>

#include "pp.h"

//>> solution
/* The step's state on one rank: its stashes, the sends in flight, and how far each kind of op has got. */
typedef struct zb_state {
    pp_rank *r;
    int P, M, me;
    pp_stash **stash;
    pp_request **sends;
    int nsends, fwd, bwd, wgt;
} zb_state;

static void forward(zb_state *s) {
    int mb = s->fwd++;
    pp_tensor *x = s->me == 0 ? NULL : pp_recv(s->r, s->me - 1, pp_tag(PP_FWD, mb, s->me));
    pp_tensor *y = pp_stage_forward(s->r, 0, mb, x, &s->stash[mb]);
    if (s->me < s->P - 1) s->sends[s->nsends++] = pp_isend(s->r, y, s->me + 1, pp_tag(PP_FWD, mb, s->me + 1));
}

/* The input half, then the oldest held weight half once more than `hold` are waiting. */
static void backward(zb_state *s, int hold) {
    int mb = s->bwd++;
    pp_tensor *dy = s->me == s->P - 1 ? pp_loss_grad(s->r, 1.0f / (float)s->M)
                                      : pp_recv(s->r, s->me + 1, pp_tag(PP_BWD, mb, s->me));
    pp_tensor *dx = pp_stage_backward_input(s->r, s->stash[mb], dy);
    if (s->me > 0) s->sends[s->nsends++] = pp_isend(s->r, dx, s->me - 1, pp_tag(PP_BWD, mb, s->me - 1));
    while (s->bwd - s->wgt > hold) {
        pp_stage_backward_weight(s->r, s->stash[s->wgt]);
        pp_stash_free(s->r, s->stash[s->wgt++]);
    }
}
//<< solution

void pp_zbh2_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    //>> solution
    zb_state s = {.r = r, .P = P, .M = M, .me = me, .stash = calloc((size_t)M, sizeof *s.stash),
                  .sends = calloc((size_t)(2 * M), sizeof *s.sends)};
    int warmup = 2 * (P - me - 1) < M ? 2 * (P - me - 1) : M;
    //<< solution

    /* TODO 1: the warm-up forwards: how many hide a message behind a forward (docs/05-zerobubble.md)? */
    //>> solution
    while (s.fwd < warmup) forward(&s);
    //<< solution

    /* TODO 2: the steady state and the cool-down: a forward (while any is left), then a backward's input half;
     * run each weight half as late as the schedule allows (docs/05-zerobubble.md), and free its stash after it. */
    //>> solution
    while (s.bwd < M) {
        if (s.fwd < M) forward(&s);
        backward(&s, me);
    }
    //<< solution

    /* TODO 3: the weight halves still held back, then one optimizer step. */
    //>> solution
    while (s.wgt < M) {
        pp_stage_backward_weight(r, s.stash[s.wgt]);
        pp_stash_free(r, s.stash[s.wgt++]);
    }
    pp_waitall(r, s.sends, s.nsends);
    free(s.sends);
    free(s.stash);
    pp_optimizer_step(r);
    //<< solution
    (void)P, (void)M, (void)me;
}
