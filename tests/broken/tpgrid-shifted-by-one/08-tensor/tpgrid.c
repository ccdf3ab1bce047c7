/* Broken: lab 08 part 2 with Megatron's mapping shifted by one global rank: rank g plays what rank g + 1 plays in
 * Megatron's order (the last wraps to the first), so one rank of every node belongs with the next node's. */
#include <stdlib.h>

#include "pp.h"

/* The Megatron rank that global rank `rank` plays (to = 1), or the global rank that plays Megatron rank `rank`
 * (to = -1). */
static int shifted(int rank, int world, int to) { return (rank + to + world) % world; }

/* Which (t, p, d) global rank `rank` plays, 0 <= rank < T*P*D: every rank one place of the grid, every place one
 * rank. */
void pp_tpgrid_place(int rank, int T, int P, int D, int *t, int *p, int *d) {
    /* TODO 1: which coordinate varies fastest as rank grows, so that the groups whose traffic is heaviest share
     * a node? */
    int g = shifted(rank, T * P * D, 1);
    *t = g % T;
    *d = g / T % D;
    *p = g / (T * D);
    (void)rank, (void)T, (void)P, (void)D, (void)t, (void)p, (void)d;
}

/* The members of rank's group along axis 't' (tensor parallel), 'p' (pipeline) or 'd' (data parallel): the global
 * ranks that share its other two coordinates, in the order of this one, into members; returns their count. */
int pp_tpgrid_group(char axis, int rank, int T, int P, int D, int *members) {
    int n = 0;
    /* TODO 2: from pp_tpgrid_place, the ranks that differ from this one in `axis` alone */
    int x[3];
    pp_tpgrid_place(rank, T, P, D, &x[0], &x[1], &x[2]);
    int a = axis == 't' ? 0 : axis == 'p' ? 1 : 2, size = a == 0 ? T : a == 1 ? P : D;
    for (int k = 0; k < size; k++) {
        int y[3] = {x[0], x[1], x[2]};
        y[a] = k;
        members[n++] = shifted(y[0] + T * (y[2] + D * y[1]), T * P * D, -1);
    }
    (void)axis, (void)rank, (void)T, (void)P, (void)D, (void)members;
    return n;
}

/* One block's forward on this shard, x1 = x + Wo attn(LN1(x)) + bo then y = x1 + W2 gelu(W1 LN2(x1) + b1) + b2:
 * your part 1's, which the grid's stages run on every shard. */
static pp_tensor *block_forward(pp_block *b, pp_tensor *x) {
    pp_tensor *y = x;
    pp_tensor *qkv = pp_block_qkv(b, pp_block_ln1(b, x));
    pp_tensor *x1 = pp_block_proj(b, pp_block_attention(b, qkv));
    pp_block_allreduce(b, x1);
    pp_block_proj_bias(b, x1);
    pp_block_residual(b, x1, x);
    pp_tensor *h1 = pp_block_linear1(b, pp_block_ln2(b, x1));
    y = pp_block_linear2(b, pp_block_gelu(b, h1));
    pp_block_allreduce(b, y);
    pp_block_bias2(b, y);
    pp_block_residual(b, y, x1);
    (void)b;
    return y;
}

/* One block's backward on this shard, from dy: your part 1's. */
static pp_tensor *block_backward(pp_block *b, pp_tensor *dy) {
    pp_tensor *dx = dy;
    pp_block_bias2_backward(b, dy);
    pp_tensor *dln2 = pp_block_linear1_backward(b, pp_block_gelu_backward(b, pp_block_linear2_backward(b, dy)));
    pp_block_allreduce(b, dln2);
    pp_tensor *dx1 = pp_block_ln2_backward(b, dln2);
    pp_block_residual(b, dx1, dy);
    pp_block_proj_bias_backward(b, dx1);
    pp_tensor *dln1 = pp_block_qkv_backward(b, pp_block_attention_backward(b, pp_block_proj_backward(b, dx1)));
    pp_block_allreduce(b, dln1);
    dx = pp_block_ln1_backward(b, dln1);
    pp_block_residual(b, dx, dx1);
    (void)b;
    return dx;
}

/* The stage's forward: the embedding or the input, each block in turn, the head. */
static pp_tensor *stage_forward(pp_rank *r, int mb, pp_tensor *x, pp_stash **stash) {
    pp_tensor *h = pp_stage_forward_begin(r, 0, mb, x, stash);
    for (int i = 0; i < pp_stage_blocks(r, 0); i++) h = block_forward(pp_stash_block(r, *stash, i), h);
    return pp_stage_forward_end(r, *stash, h);
}

/* The stage's backward: the head's, each block from the last, then dx for the previous stage. */
static pp_tensor *stage_backward(pp_rank *r, pp_stash *stash, pp_tensor *dy) {
    pp_tensor *g = pp_stage_backward_begin(r, stash, dy);
    for (int i = pp_stage_blocks(r, 0) - 1; i >= 0; i--) g = block_backward(pp_stash_block(r, stash, i), g);
    return pp_stage_backward_end(r, stash, g);
}

void pp_tpgrid_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r), D = pp_rank_replicas(r);
    int first = me == 0, last = me == P - 1;
    /* TODO 5: your lab 07, part 1: 1F1B in each replica, the loss scaled for D*M micro-batches, one reduce after
     * the last backward, with stage_forward and stage_backward in place of pp_stage_forward and pp_stage_backward.
     * Every shard of every stage runs it. */
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    int warmup = P - me - 1 < M ? P - me - 1 : M, steady = M - warmup;
    float scale = 1.0f / (float)(D * M);
    pp_tensor *x = NULL;
    for (int mb = 0; mb < warmup; mb++) {
        x = first ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = stage_forward(r, mb, x, &stash[mb]);
        if (!last) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    if (steady > 0 && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, warmup, me));
    for (int i = 0; i < steady; i++) {
        int fmb = warmup + i;
        pp_tensor *y = stage_forward(r, fmb, first ? NULL : x, &stash[fmb]);
        pp_tensor *dy;
        if (last) {
            dy = pp_loss_grad(r, scale);
        } else {
            pp_group_start(r);
            pp_send(r, y, me + 1, pp_tag(PP_FWD, fmb, me + 1));
            dy = pp_recv(r, me + 1, pp_tag(PP_BWD, i, me));
            pp_group_end(r);
        }
        pp_tensor *dx = stage_backward(r, stash[i], dy);
        pp_stash_free(r, stash[i]);
        int more = i + 1 < steady;
        pp_group_start(r);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, i, me - 1));
        if (more && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, fmb + 1, me));
        pp_group_end(r);
    }
    for (int mb = steady; mb < M; mb++) {
        pp_tensor *dy = last ? pp_loss_grad(r, scale) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = stage_backward(r, stash[mb], dy);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);
    pp_grad_reduce(r, 0);
    pp_optimizer_step(r);
    (void)P, (void)M, (void)D, (void)first, (void)last, (void)stage_forward, (void)stage_backward;
}
