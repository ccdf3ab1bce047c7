/* Lab 08, part 1: a tensor-parallel block. With --tp T each stage is cut over T ranks, its shards, which run this
 * same step function, each on its part of every block (Megatron-LM's split): of the block's attention, shard t
 * holds whole heads, t*H/T .. (t+1)*H/T-1 of the H, as their columns of Wq, bq, Wk, Wv and bv and the same rows
 * of Wo; of its MLP, columns t*F/T .. (t+1)*F/T-1 of W1 and b1 and the same rows of W2 (F: the FFN width); LN1,
 * LN2, bo and b2 whole. You write one block's forward and backward from pp.h's block calls. Over the shards
 * together a tensor is whole (every shard holds the same values), split (every shard its own columns) or partial
 * (the value is the sum of the shards' parts): which each of your tensors is, where the sums go and what they sum
 * is yours, and docs/08-tensor.md asks the questions. The pipeline around the blocks is your 1F1B of lab 03.
 * Grade with `make grade LAB=tpblock`. */
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
    (void)b;
    return y;
}

/* One block's backward on this shard, from dy (whole, the gradient of its output): returns dx (whole). */
static pp_tensor *block_backward(pp_block *b, pp_tensor *dy) {
    pp_tensor *dx = dy;
    /* TODO 2: the halves in reverse order, the MLP's first, each layer's backward in reverse, the biases' gradients
     * and the residuals' shares. Which layers' input gradients come out partial, and where must each be summed? */
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
    (void)P, (void)M, (void)first, (void)last, (void)stage_forward, (void)stage_backward;
}
