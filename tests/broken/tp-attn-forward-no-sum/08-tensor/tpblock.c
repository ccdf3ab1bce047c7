/* Broken: lab 08 part 1 whose attention half never sums Wo's output over the shards (the MLP half sums W2's): bo
 * and the residual go onto each shard's partial product, and LN2 reads it as it is. */
#include <stdlib.h>

#include "pp.h"

/* One block's forward on this shard, its attention half then its MLP half:
 *     x1 = x + Wo attn(LN1(x)) + bo,   y = x1 + W2 gelu(W1 LN2(x1) + b1) + b2;   x whole, y whole. */
static pp_tensor *block_forward(pp_block *b, pp_tensor *x) {
    pp_tensor *y = x;
    /* TODO 1: each half's four layers in order, attention's first. What is each of their outputs over the shards,
     * and does one of this shard's heads need anything of another shard's? What must happen to each half's last
     * output before the next half (or block) can read it, and where do bo, b2 and the residuals go so that any sum
     * holds each of them once? */
    pp_tensor *ln1 = pp_block_ln1(b, x);
    pp_tensor *qkv = pp_block_qkv(b, ln1);      /* the shard's heads' queries, keys and values */
    pp_tensor *a = pp_block_attention(b, qkv);  /* whole heads: each attends over its own q, k, v alone */
    pp_tensor *x1 = pp_block_proj(b, a);
    pp_block_proj_bias(b, x1);   /* after the sum, so it counts once */
    pp_block_residual(b, x1, x);
    pp_tensor *ln2 = pp_block_ln2(b, x1);
    pp_tensor *h1 = pp_block_linear1(b, ln2);
    pp_tensor *a1 = pp_block_gelu(b, h1);
    y = pp_block_linear2(b, a1);
    pp_block_allreduce(b, y); /* g again: W2's row shards */
    pp_block_bias2(b, y);
    pp_block_residual(b, y, x1);
    (void)b;
    return y;
}

/* One block's backward on this shard, from dy (whole, the gradient of its output): returns dx (whole). */
static pp_tensor *block_backward(pp_block *b, pp_tensor *dy) {
    pp_tensor *dx = dy;
    /* TODO 2: the halves in reverse order, the MLP's first, each layer's backward in reverse, the biases' gradients
     * and the residuals' shares. Which layers' input gradients come out partial, and where must each be summed? */
    pp_block_bias2_backward(b, dy);
    pp_tensor *da1 = pp_block_linear2_backward(b, dy);
    pp_tensor *dh1 = pp_block_gelu_backward(b, da1);
    pp_tensor *dln2 = pp_block_linear1_backward(b, dh1);
    pp_block_allreduce(b, dln2); /* f's conjugate: every shard's W1 read the same ln2, so its gradient sums them */
    pp_tensor *dx1 = pp_block_ln2_backward(b, dln2);
    pp_block_residual(b, dx1, dy);
    pp_block_proj_bias_backward(b, dx1);
    pp_tensor *da = pp_block_proj_backward(b, dx1);
    pp_tensor *dqkv = pp_block_attention_backward(b, da);
    pp_tensor *dln1 = pp_block_qkv_backward(b, dqkv);
    pp_block_allreduce(b, dln1); /* ... and every shard's Wq, Wk, Wv read the same ln1 */
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

void pp_tpblock_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    int first = me == 0, last = me == P - 1;
    /* TODO 3: your 1F1B of lab 03, with stage_forward and stage_backward in place of pp_stage_forward and
     * pp_stage_backward. Every shard runs it: messages stay among the ranks of one shard. */
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    int warmup = P - me - 1 < M ? P - me - 1 : M, steady = M - warmup;
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
            dy = pp_loss_grad(r, 1.0f / (float)M);
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
        pp_tensor *dy = last ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = stage_backward(r, stash[mb], dy);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);
    pp_optimizer_step(r);
    (void)P, (void)M, (void)first, (void)last, (void)stage_forward, (void)stage_backward;
}
