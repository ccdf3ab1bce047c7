/* VALID ON PURPOSE (whole-backward-where-free): the reference ZB-H1 where a weight half would run right
 * after its input half (on rank 0, which holds none back), run as one whole pp_stage_backward: the same op at the
 * same cost, so the same bubble and peaks. Outcomes are graded, not the calls: tests/test_grader.c asserts it keeps
 * full marks. */
/* Lab 05, part 1: ZB-H1, the zero-bubble schedule with 1F1B's memory (Qi et al., "Zero Bubble Pipeline
 * Parallelism", ICLR 2024).
 *
 * A backward has two halves: the input half B (pp_stage_backward_input) produces the gradient the previous
 * stage is waiting for; the weight half W (pp_stage_backward_weight) only adds to this rank's own gradients, so
 * nobody waits for it. Run 1F1B's order with every backward split, and move weight halves later so that they
 * fill the time a rank would otherwise spend waiting in the cool-down. docs/05-zerobubble.md derives how many
 * weight halves each rank holds back and what that costs in stashes; the grader compares your order with the
 * canonical one and names the first op that differs.
 *
 * Sends are rendezvous, as in lab 03: choose a communication style that cannot deadlock for this order.
 * Grade with `make grade LAB=zbh1`. */
#include <stdlib.h>

#include "pp.h"

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
    if (hold == 0 && s->wgt == mb) {
        /* its weight half would follow at once: the whole backward is the same op */
        pp_tensor *dx = pp_stage_backward(s->r, s->stash[mb], dy);
        if (s->me > 0) s->sends[s->nsends++] = pp_isend(s->r, dx, s->me - 1, pp_tag(PP_BWD, mb, s->me - 1));
        pp_stash_free(s->r, s->stash[s->wgt++]);
        return;
    }
    pp_tensor *dx = pp_stage_backward_input(s->r, s->stash[mb], dy);
    if (s->me > 0) s->sends[s->nsends++] = pp_isend(s->r, dx, s->me - 1, pp_tag(PP_BWD, mb, s->me - 1));
    while (s->bwd - s->wgt > hold) {
        pp_stage_backward_weight(s->r, s->stash[s->wgt]);
        pp_stash_free(s->r, s->stash[s->wgt++]);
    }
}

void pp_zbh1_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    zb_state s = {.r = r, .P = P, .M = M, .me = me, .stash = calloc((size_t)M, sizeof *s.stash),
                  .sends = calloc((size_t)(2 * M), sizeof *s.sends)};
    int warmup = P - me - 1 < M ? P - me - 1 : M;

    /* TODO 1: the warm-up forwards (as many as 1F1B runs). */
    while (s.fwd < warmup) forward(&s);

    /* TODO 2: the steady state and the cool-down: a forward (while any is left), then a backward's input half;
     * run each weight half as late as the schedule allows (docs/05-zerobubble.md), and free its stash after it. */
    while (s.bwd < M) {
        if (s.fwd < M) forward(&s);
        backward(&s, me);
    }

    /* TODO 3: the weight halves still held back, then one optimizer step. */
    while (s.wgt < M) {
        pp_stage_backward_weight(r, s.stash[s.wgt]);
        pp_stash_free(r, s.stash[s.wgt++]);
    }
    pp_waitall(r, s.sends, s.nsends);
    free(s.sends);
    free(s.stash);
    pp_optimizer_step(r);
    (void)P, (void)M, (void)me;
}
