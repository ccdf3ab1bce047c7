/* BROKEN ON PURPOSE (zbv-loss-wrong-rank): ZBV with the loss taken to be on rank P-1, as in a looped pipeline:
 * chunk 1 of rank P-1 starts its backward from pp_loss_grad, and chunk 1 of rank 0 waits for a gradient from
 * rank -1. Both ranks fail; the report must lead with the one earlier on the virtual clock, on every run.
 * tests/test_grader.c asserts that the grader catches it with the same message each time. */
/* Lab 06, part 1: ZBV, zero bubble on a V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 6;
 * PyTorch's ScheduleZBVZeroBubble).
 *
 * Every rank holds two chunks: chunk 0 is virtual stage r, chunk 1 is virtual stage 2P-1-r (pp_virtual_stage says
 * so). Activations go down the ranks through chunk 0, turn on rank P-1 and come back up through chunk 1, so rank 0
 * holds both the embedding and the loss, and the turn needs no message: on rank P-1 chunk 0's output is chunk 1's
 * input, and chunk 1's input gradient is chunk 0's output gradient. Every backward is split into its input half
 * and its weight half. docs/06-vshape.md derives the order (warm-up, steady state, cool-down) phase by phase; the
 * grader compares yours with it op by op when the bubble or the peak is off.
 *
 * Grade with `make grade LAB=zbv`. */
#include <stdlib.h>

#include "pp.h"

typedef struct v_op {
    char kind; /* 'F', 'I' (input half), 'W' (weight half), 'B' (whole backward) */
    int mb, chunk;
} v_op;

typedef struct v_order {
    v_op *ops;
    int n, M;
} v_order;

static void put(v_order *o, char kind, int mb, int chunk) {
    if (mb < o->M) o->ops[o->n++] = (v_op){kind, mb, chunk};
}

/* Rank r's order, written for at least 2P-1 micro-batches and cut down to M. */
static int zbv_order(int P, int M, int r, v_op *ops) {
    v_order o = {ops, 0, M};
    int nm = M > 2 * P - 1 ? M : 2 * P - 1, f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    for (int i = 0; i < 2 * (P - r) - 1; i++) put(&o, 'F', f0++, 0);
    for (int i = 0; i < r; i++) put(&o, 'F', f1++, 1), put(&o, 'F', f0++, 0);
    for (int i = 0; i < P - r; i++) put(&o, 'F', f1++, 1), put(&o, 'I', b1, 1), put(&o, 'W', b1++, 1);
    while (f1 < f0 || f0 < nm) {
        if (f0 < nm) put(&o, 'F', f0++, 0);
        put(&o, 'I', b0, 0), put(&o, 'W', b0++, 0);
        put(&o, 'F', f1++, 1), put(&o, 'I', b1, 1), put(&o, 'W', b1++, 1);
    }
    int w0 = b0, w1 = b1;
    for (int i = 0; i < r; i++) put(&o, 'I', b0++, 0), put(&o, 'I', b1++, 1);
    for (int i = 0; i < P - r; i++) put(&o, 'I', b0++, 0), put(&o, 'W', w0++, 0);
    while (w1 < b1) put(&o, 'W', w1++, 1);
    while (w0 < b0) put(&o, 'W', w0++, 0);
    return o.n;
}

/* Runs an order on a V: receives block right before their data is needed, sends are posted and waited at the
 * end, and the turn on rank P-1 passes tensors straight from one chunk to the other. */
static void v_run(pp_rank *r, const v_op *ops, int n) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r), turn = me == P - 1;
    pp_stash **stash = calloc((size_t)(2 * M), sizeof *stash);
    pp_tensor **y0 = calloc((size_t)M, sizeof *y0), **dx1 = calloc((size_t)M, sizeof *dx1);
    pp_request **sends = calloc((size_t)(4 * M), sizeof *sends);
    int nsends = 0;
    for (int i = 0; i < n; i++) {
        int mb = ops[i].mb, c = ops[i].chunk, vs = pp_virtual_stage(r, c);
        /* chunk 0's neighbours are ranks me-1 (before) and me+1 (after); chunk 1's the other way round */
        int before = c == 0 ? me - 1 : me + 1, after = c == 0 ? me + 1 : me - 1;
        pp_stash **st = &stash[c * M + mb];
        if (ops[i].kind == 'F') {
            pp_tensor *x = vs == 0 ? NULL : c == 1 && turn ? y0[mb] : pp_recv(r, before, pp_tag(PP_FWD, mb, vs));
            pp_tensor *y = pp_stage_forward(r, c, mb, x, st);
            if (c == 0 && turn) y0[mb] = y;
            else if (vs < 2 * P - 1) sends[nsends++] = pp_isend(r, y, after, pp_tag(PP_FWD, mb, vs + 1));
        } else if (ops[i].kind == 'W') {
            pp_stage_backward_weight(r, *st);
            pp_stash_free(r, *st);
        } else {
            pp_tensor *dy = me == P - 1 && c == 1 ? pp_loss_grad(r, 1.0f / (float)M)
                            : c == 0 && turn ? dx1[mb]
                                             : pp_recv(r, after, pp_tag(PP_BWD, mb, vs));
            pp_tensor *dx = ops[i].kind == 'I' ? pp_stage_backward_input(r, *st, dy) : pp_stage_backward(r, *st, dy);
            if (ops[i].kind == 'B') pp_stash_free(r, *st);
            if (c == 1 && turn) dx1[mb] = dx;
            else if (vs > 0) sends[nsends++] = pp_isend(r, dx, before, pp_tag(PP_BWD, mb, vs - 1));
        }
    }
    pp_waitall(r, sends, nsends);
    free(sends), free(dx1), free(y0), free(stash);
}

void pp_zbv_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    /* TODO 1: rank me's order of forwards, input halves and weight halves, chunk by chunk (docs/06-vshape.md). */
    v_op *ops = calloc((size_t)(6 * M), sizeof *ops);
    int n = zbv_order(P, M, me, ops);

    /* TODO 2: run it: where does each input come from and each output go, for chunk 0 and chunk 1, and what
     * changes on rank P-1? Then one optimizer step. */
    v_run(r, ops, n);
    free(ops);
    pp_optimizer_step(r);
    (void)P, (void)M, (void)me;
}
