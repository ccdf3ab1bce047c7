/* Lab 06, part 3: full DualPipe, DeepSeek-V3's schedule as its report draws it: two pipelines at once.
 *
 * Chunk 0 of rank r is stage r of a pipeline fed at rank 0 with micro-batches 0..M/2-1; chunk 1 is stage P-1-r of
 * a second pipeline, fed at rank P-1 with micro-batches M/2..M-1. pp_virtual_stage numbers them as the V does
 * (r and 2P-1-r), so the first pipeline is virtual stages 0..P-1 and the second P..2P-1: virtual stages 0 and P
 * read tokens, P-1 (rank P-1) and 2P-1 (rank 0) hold the losses, and nothing crosses between the two. Each
 * stage of the model now lives twice, once in each pipeline: the two copies must step with one gradient, the sum
 * of both pipelines', or they drift apart.
 *
 * Each half of the ranks runs your part 2's order for P/2 ranks on M/2 micro-batches a direction, rank r as its
 * mirror min(r, P-1-r) would. Which of rank r's chunks plays part 2's chunk 0, and what replaces part 2's turn on
 * its last rank? Read it off `build/pplab run --canonical --schedule dualpipe --stages 4 --microbatches 8
 * --timeline` and docs/06-vshape.md ("Full DualPipe"); the grader holds your bubble and stash peaks to the
 * canonical order's.
 *
 * Start from your part 2. Grade with `make grade LAB=dualpipe`. */
#include <stdlib.h>

#include "pp.h"

//>> solution
typedef struct d_op {
    char kind; /* 'F', 'I' (input half), 'W' (weight half), 'B' (whole backward) */
    int mb, chunk;
} d_op;

typedef struct d_order {
    d_op *ops;
    int n, M;
} d_order;

static void put(d_order *o, char kind, int mb, int chunk) {
    if (mb < o->M) o->ops[o->n++] = (d_op){kind, mb, chunk};
}

/* DualPipeV's bookkeeping, as in part 2. */
typedef struct dpv {
    d_order o;
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

/* DualPipeV's order for rank r of P (M >= 2P), part 2's. */
static int dualpipev_order(int P, int M, int r, d_op *ops) {
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

/* Full DualPipe's order for rank r of P (P even, M even and at least 2P): DualPipeV's at half the ranks and half
 * the micro-batches, its chunk 0 being the direction towards the middle (chunk 1 on the second half of the
 * ranks), and the second pipeline's micro-batches numbered from M/2. */
static int dualpipe_order(int P, int M, int r, d_op *ops) {
    int n = dualpipev_order(P / 2, M / 2, r < P / 2 ? r : P - 1 - r, ops);
    for (int i = 0; i < n; i++) {
        ops[i].chunk ^= r >= P / 2;
        if (ops[i].chunk == 1) ops[i].mb += M / 2;
    }
    return n;
}

/* Runs an order on the two pipelines: receives block right before their data is needed, sends are posted and
 * waited at the end. Every boundary joins two ranks; none is local, since the pipelines never turn. */
static void dual_run(pp_rank *r, const d_op *ops, int n) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash **stash = calloc((size_t)(2 * M), sizeof *stash);
    pp_request **sends = calloc((size_t)(4 * M), sizeof *sends);
    int nsends = 0;
    for (int i = 0; i < n; i++) {
        int mb = ops[i].mb, c = ops[i].chunk, vs = pp_virtual_stage(r, c);
        int first = vs % P == 0, last = vs % P == P - 1;
        /* chunk 0's pipeline runs up the ranks, chunk 1's down */
        int before = c == 0 ? me - 1 : me + 1, after = c == 0 ? me + 1 : me - 1;
        pp_stash **st = &stash[c * M + mb];
        if (ops[i].kind == 'F') {
            pp_tensor *x = first ? NULL : pp_recv(r, before, pp_tag(PP_FWD, mb, vs));
            pp_tensor *y = pp_stage_forward(r, c, mb, x, st);
            if (!last) sends[nsends++] = pp_isend(r, y, after, pp_tag(PP_FWD, mb, vs + 1));
        } else if (ops[i].kind == 'W') {
            pp_stage_backward_weight(r, *st);
            pp_stash_free(r, *st);
        } else {
            /* the loss averages over all M micro-batches, both pipelines' */
            pp_tensor *dy = last ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, after, pp_tag(PP_BWD, mb, vs));
            pp_tensor *dx = ops[i].kind == 'I' ? pp_stage_backward_input(r, *st, dy) : pp_stage_backward(r, *st, dy);
            if (ops[i].kind == 'B') pp_stash_free(r, *st);
            if (!first) sends[nsends++] = pp_isend(r, dx, before, pp_tag(PP_BWD, mb, vs - 1));
        }
    }
    pp_waitall(r, sends, nsends);
    free(sends), free(stash);
}
//<< solution

void pp_dualpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    /* TODO 1: rank me's order: which rank of a DualPipeV half is it, which chunk runs towards the middle, and
     * which micro-batches does each chunk carry? */
    //>> solution
    d_op *ops = calloc((size_t)(3 * M), sizeof *ops);
    int n = dualpipe_order(P, M, me, ops);
    //<< solution

    /* TODO 2: run it: where does each chunk's input come from and its output go, where are the two losses? */
    //>> solution
    dual_run(r, ops, n);
    free(ops);
    //<< solution

    /* TODO 3: the copies. Rank me's chunk c and rank P-1-me's chunk 1-c hold the same stage, each with the gradient
     * of its own pipeline's half of the batch. What must happen before the optimizer step, and in which order must
     * partners do it so that they meet? */
    //>> solution
    /* pp_grad_reduce sums a stage's two copies (rank r's chunk c with rank P-1-r's chunk 1-c); a reduce matches by
     * its place among a rank's reduces, so both partners reduce their chunks in the order of the stages they hold */
    int low = pp_virtual_stage(r, 0) % P < pp_virtual_stage(r, 1) % P ? 0 : 1;
    pp_grad_reduce(r, low);
    pp_grad_reduce(r, 1 - low);
    pp_optimizer_step(r);
    //<< solution
    (void)P, (void)M, (void)me;
}
