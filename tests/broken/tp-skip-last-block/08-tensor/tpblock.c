/* Broken: lab 08 part 1 whose stage runs every block but its last, forward and backward alike. */
#include <stdlib.h>

#include "pp.h"

/* One block's forward on this shard: y = x + W2 gelu(W1 LN(x) + b1) + b2, x whole, y whole. */
static pp_tensor *block_forward(pp_block *b, pp_tensor *x) {
    pp_tensor *y = x;
    /* TODO 1: the four layers in order; then what must happen to W2's output before the next block can read it,
     * and where do b2 and the residual go so that the sum holds each of them once? */
    pp_tensor *ln = pp_block_layernorm(b, x);
    pp_tensor *h1 = pp_block_linear1(b, ln);
    pp_tensor *a1 = pp_block_gelu(b, h1);
    y = pp_block_linear2(b, a1);
    pp_block_allreduce(b, y); /* g: W2's row shards make partial products; the sum is the whole a1 W2 */
    pp_block_bias2(b, y);     /* after the sum, so it counts once */
    pp_block_residual(b, y, x);
    (void)b;
    return y;
}

/* One block's backward on this shard, from dy (whole, the gradient of its output): returns dx (whole). */
static pp_tensor *block_backward(pp_block *b, pp_tensor *dy) {
    pp_tensor *dx = dy;
    /* TODO 2: the layers' backwards in reverse order, b2's gradient, and the residual's share. One of the
     * layers' input gradients comes out partial: whose, and where must it be summed? */
    pp_block_bias2_backward(b, dy);
    pp_tensor *da1 = pp_block_linear2_backward(b, dy);
    pp_tensor *dh1 = pp_block_gelu_backward(b, da1);
    pp_tensor *dln = pp_block_linear1_backward(b, dh1);
    pp_block_allreduce(b, dln); /* f's conjugate: every shard's W1 read the same ln, so its gradient sums them */
    dx = pp_block_layernorm_backward(b, dln);
    pp_block_residual(b, dx, dy);
    (void)b;
    return dx;
}

/* The stage's forward: the embedding or the input, each block in turn, the head. */
static pp_tensor *stage_forward(pp_rank *r, int mb, pp_tensor *x, pp_stash **stash) {
    pp_tensor *h = pp_stage_forward_begin(r, 0, mb, x, stash);
    for (int i = 0; i + 1 < pp_stage_blocks(r, 0); i++) h = block_forward(pp_stash_block(r, *stash, i), h);
    return pp_stage_forward_end(r, *stash, h);
}

/* The stage's backward: the head's, each block from the last, then dx for the previous stage. */
static pp_tensor *stage_backward(pp_rank *r, pp_stash *stash, pp_tensor *dy) {
    pp_tensor *g = pp_stage_backward_begin(r, stash, dy);
    for (int i = pp_stage_blocks(r, 0) - 2; i >= 0; i--) g = block_backward(pp_stash_block(r, stash, i), g);
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
