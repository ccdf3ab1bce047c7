/* VALID ON PURPOSE (zbv-from-the-handout): a ZBV written from what a handout holds, lib/pp.h and
 * docs/06-vshape.md, without the reference: the placement and each chunk's neighbours from pp_virtual_stage and
 * pp.h's Vocabulary, the local turn on rank P-1 and the loss on rank 0 as the chapter's section 1 says, and the
 * order read off the chapter's timelines (and `pplab run --canonical --schedule zbv ... --timeline` for other
 * shapes): chunk-0 forwards down the V, chunk-1 forwards as they come back, then rounds that run each backward's
 * input half at once and its weight half after, the cool-down's input halves before the weight halves they hold.
 * It keeps full marks: tests/test_grader.c grades it. */
#include <stdlib.h>

#include "pp.h"

enum { OP_F, OP_B, OP_W };

typedef struct op {
    int kind, chunk, mb;
} op;

/* The op list of one rank, and the micro-batch each (kind, chunk) is at. */
typedef struct plan {
    op *ops;
    int n, M;
    int next[3][2];
} plan;

/* Appends the next op of (kind, chunk); the order is written for at least 2P-1 micro-batches, and an op of a
 * micro-batch that does not exist is left out (the chapter, section 2). */
static void add(plan *p, int kind, int chunk) {
    int mb = p->next[kind][chunk]++;
    if (mb < p->M) p->ops[p->n++] = (op){kind, chunk, mb};
}

/* Read off the timelines: rank r sends 2(P-r)-1 chunk-0 forwards down the V, then alternates chunk 1 and chunk 0
 * forwards r times; P-r rounds of chunk 1's forward, input half and weight half follow; then, while forwards
 * remain, a chunk-0 forward (while any is left), chunk 0's halves, and chunk 1's forward and halves; the
 * cool-down runs r pairs of input halves (chunk 0, chunk 1), P-r rounds of a chunk-0 input half and a chunk-0
 * weight half, and the weight halves left, chunk 1's before chunk 0's. */
static void build(plan *p, int P, int r) {
    int virtual_m = p->M > 2 * P - 1 ? p->M : 2 * P - 1;
    for (int i = 0; i < 2 * (P - r) - 1; i++) add(p, OP_F, 0);
    for (int i = 0; i < r; i++) add(p, OP_F, 1), add(p, OP_F, 0);
    for (int i = 0; i < P - r; i++) add(p, OP_F, 1), add(p, OP_B, 1), add(p, OP_W, 1);
    while (p->next[OP_F][1] < p->next[OP_F][0] || p->next[OP_F][0] < virtual_m) {
        if (p->next[OP_F][0] < virtual_m) add(p, OP_F, 0);
        add(p, OP_B, 0), add(p, OP_W, 0);
        add(p, OP_F, 1), add(p, OP_B, 1), add(p, OP_W, 1);
    }
    for (int i = 0; i < r; i++) add(p, OP_B, 0), add(p, OP_B, 1);
    for (int i = 0; i < P - r; i++) add(p, OP_B, 0), add(p, OP_W, 0);
    while (p->next[OP_W][1] < p->next[OP_B][1]) add(p, OP_W, 1);
    while (p->next[OP_W][0] < p->next[OP_B][0]) add(p, OP_W, 0);
}

/* pp.h, Vocabulary: in a V rank r holds virtual stages r and 2P-1-r. */
static int holder(int P, int vstage) { return vstage < P ? vstage : 2 * P - 1 - vstage; }

void pp_zbv_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r), last = pp_virtual_stages(r) - 1;
    plan p = {.ops = malloc((size_t)(6 * M) * sizeof *p.ops), .M = M};
    build(&p, P, me);
    /* per chunk and micro-batch: the stash, and what the turn hands over without a message */
    pp_stash **stash = calloc((size_t)(2 * M), sizeof *stash);
    pp_tensor **handed_fwd = calloc((size_t)M, sizeof *handed_fwd);
    pp_tensor **handed_bwd = calloc((size_t)M, sizeof *handed_bwd);
    pp_request **sends = malloc((size_t)(4 * M) * sizeof *sends);
    int nsends = 0;
    for (int i = 0; i < p.n; i++) {
        int c = p.ops[i].chunk, mb = p.ops[i].mb, s = pp_virtual_stage(r, c);
        pp_stash **st = &stash[c * M + mb];
        if (p.ops[i].kind == OP_F) {
            pp_tensor *x = NULL;
            if (s > 0 && holder(P, s - 1) == me) x = handed_fwd[mb];
            else if (s > 0) x = pp_recv(r, holder(P, s - 1), pp_tag(PP_FWD, mb, s));
            pp_tensor *y = pp_stage_forward(r, c, mb, x, st);
            if (s < last && holder(P, s + 1) == me) handed_fwd[mb] = y;
            else if (s < last) sends[nsends++] = pp_isend(r, y, holder(P, s + 1), pp_tag(PP_FWD, mb, s + 1));
        } else if (p.ops[i].kind == OP_B) {
            pp_tensor *dy = s == last                   ? pp_loss_grad(r, 1.0f / (float)M)
                            : holder(P, s + 1) == me ? handed_bwd[mb]
                                                     : pp_recv(r, holder(P, s + 1), pp_tag(PP_BWD, mb, s));
            pp_tensor *dx = pp_stage_backward_input(r, *st, dy);
            if (s > 0 && holder(P, s - 1) == me) handed_bwd[mb] = dx;
            else if (s > 0) sends[nsends++] = pp_isend(r, dx, holder(P, s - 1), pp_tag(PP_BWD, mb, s - 1));
        } else {
            pp_stage_backward_weight(r, *st);
            pp_stash_free(r, *st);
        }
    }
    pp_waitall(r, sends, nsends);
    pp_optimizer_step(r);
    free(sends), free(handed_bwd), free(handed_fwd), free(stash), free(p.ops);
}
