/* Broken: lab 05's ZB-H1 stepping its optimizer before the weight halves it still holds back: every backward
 * ran, but the step took the gradients without the last weight halves' share. */
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

    /* TODO 1: the warm-up forwards: how many does a rank need before its first gradient can come back? */
    while (s.fwd < warmup) forward(&s);

    /* TODO 2: the steady state and the cool-down: a forward (while any is left), then a backward's input half;
     * run each weight half as late as the schedule allows (docs/05-zerobubble.md), and free its stash after it. */
    while (s.bwd < M) {
        if (s.fwd < M) forward(&s);
        backward(&s, me);
    }

    /* TODO 3: the weight halves still held back, then one optimizer step. */
    pp_optimizer_step(r); /* before the weight halves still held */
    while (s.wgt < M) {
        pp_stage_backward_weight(r, s.stash[s.wgt]);
        pp_stash_free(r, s.stash[s.wgt++]);
    }
    pp_waitall(r, s.sends, s.nsends);
    free(s.sends);
    free(s.stash);
    (void)P, (void)M, (void)me;
}
