/* Lab 06, part 2: DualPipeV, DeepSeek-V3's DualPipe folded onto a V (PyTorch's ScheduleDualPipeV).
 *
 * The placement and the turn of part 1. DualPipeV's main phase pairs a forward of one chunk with a backward of the
 * other, which a GPU overlaps (the forward's message hides behind the backward's compute); here a pair is the
 * forward, then the whole backward. The cool-down splits the second half of its backwards into input and weight
 * halves to fill the drain. Read the order off docs/06-vshape.md's timeline and `build/pplab run --canonical
 * --schedule dualpipev ... --timeline` (it needs M >= 2P); the grader holds your bubble and chunk-stash peaks to
 * the canonical order's, and compares your order with it op by op only when one of them falls short.
 *
 * Start from your part 1's runner. Grade with `make grade LAB=dualpipev`. */
#include <stdlib.h>

#include "pp.h"

//>> solution
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

/* DualPipeV's bookkeeping: per chunk the next forward and backward, and the weight halves held back in order. */
typedef struct dpv {
    v_order o;
    int f[2], b[2];
    int *wq_mb, *wq_chunk, head, tail;
} dpv;

static void f_(dpv *d, int c) { put(&d->o, 'F', d->f[c]++, c); }
static void whole(dpv *d, int c) { put(&d->o, 'B', d->b[c]++, c); }

static void input(dpv *d, int c) {
    d->wq_chunk[d->tail] = c, d->wq_mb[d->tail++] = d->b[c];
    put(&d->o, 'I', d->b[c]++, c);
}

static void weight(dpv *d) {
    if (d->head < d->tail) put(&d->o, 'W', d->wq_mb[d->head], d->wq_chunk[d->head]), d->head++;
}

/* Rank r's order (M >= 2P). */
static int dualpipev_order(int P, int M, int r, v_op *ops) {
    dpv d = {.o = {ops, 0, M}, .wq_mb = calloc((size_t)(2 * M), sizeof(int)), .wq_chunk = calloc((size_t)(2 * M), sizeof(int))};
    for (int i = 0; i < 2 * (P - r - 1); i++) f_(&d, 0);
    for (int i = 0; i < r + 1; i++) f_(&d, 0), f_(&d, 1);
    for (int i = 0; i < P - r - 1; i++) input(&d, 1), weight(&d), f_(&d, 1);
    for (int i = 0; i < M - 2 * P + r + 1; i++) f_(&d, 0), whole(&d, 1), f_(&d, 1), whole(&d, 0);
    for (int i = 0; i < P - r - 1; i++) whole(&d, 1), f_(&d, 1), whole(&d, 0);
    int zb = 0, half = (r + 1) / 2;
    for (int i = 0; i < r + 1; i++) {
        if (i == half && r % 2 == 1) zb = 1;
        zb ? input(&d, 1) : whole(&d, 1);
        if (i == half && r % 2 == 0) zb = 1;
        zb ? input(&d, 0) : whole(&d, 0);
    }
    for (int i = 0; i < P - r - 1; i++) {
        weight(&d);
        zb ? input(&d, 0) : whole(&d, 0);
    }
    for (int i = 0; i < r + 1; i++) weight(&d);
    free(d.wq_mb), free(d.wq_chunk);
    return d.o.n;
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
            pp_tensor *dy = vs == 2 * P - 1 ? pp_loss_grad(r, 1.0f / (float)M)
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
//<< solution

void pp_dualpipev_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    /* TODO 1: rank me's order, phase by phase as the timelines show it: which backwards are whole, which split? */
    //>> solution
    v_op *ops = calloc((size_t)(6 * M), sizeof *ops);
    int n = dualpipev_order(P, M, me, ops);
    //<< solution

    /* TODO 2: run it: where does each input come from and each output go, for chunk 0 and chunk 1, and what
     * changes on rank P-1? Then one optimizer step. */
    //>> solution
    v_run(r, ops, n);
    free(ops);
    pp_optimizer_step(r);
    //<< solution
    (void)P, (void)M, (void)me;
}
