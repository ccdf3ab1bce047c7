/* model.h: the model, cut into stages. An embedding, L residual MLP blocks
 * (x + W2 gelu(W1 LN(x) + b1) + b2), a final LayerNorm, an LM head and softmax cross-entropy.
 * A stage is a contiguous range of blocks, plus the embedding when it is the first and the head and loss when it
 * is the last; the full-batch reference is simply the one stage that holds everything. */
#ifndef PP_MODEL_H
#define PP_MODEL_H

#include "tensor.h"

typedef struct pp_model_dims {
    int vocab;      /* V */
    int hidden;     /* h */
    int ffn;        /* 4h */
    int seq;        /* tokens per sample */
    int layers;     /* L blocks in the whole model */
    unsigned seed;  /* weights and data */
} pp_model_dims;

/* How a tensor-parallel shard holds a parameter (pp_tp_shard): whole, or its part of the columns or the rows. */
typedef enum { PP_SPLIT_NONE = 0, PP_SPLIT_COLS, PP_SPLIT_ROWS } pp_split;

typedef struct pp_param {
    char name[32];          /* "block3.w1", global over the whole model, the same on every rank */
    pp_tensor *w, *g;       /* weight and its gradient */
    pp_tensor *m, *v;       /* AdamW moments, NULL until the first AdamW step */
    pp_split split;         /* a shard's part of the parameter: columns or rows tp_rank of tp (whole: none) */
} pp_param;

/* Tensor parallelism inside a stage, Megatron-LM's MLP split: each block's W1 and b1 cut by columns and W2 by
 * rows over `size` ranks, this one being `rank`; LayerNorm, b2, the embedding and the head stay whole on every
 * rank. allreduce must replace t on every rank of the group by the sum of the ranks' t, added in rank order 0, 1,
 * ..., size-1, so that every rank (and every transport) gets the same bits; t is on the stage's backend (the device
 * under cuda). Which tensors a block sums is the block's: the library's own (answers.h), which only the kit has,
 * or a schedule's that writes its blocks itself (lab 08). A recomputed forward sums again, so every rank of the
 * group must recompute where the others do. */
typedef struct pp_tp_shard {
    int size, rank;
    void (*allreduce)(void *ctx, pp_tensor *t);
    void *ctx;
} pp_tp_shard;

typedef struct pp_stage_model {
    pp_model_dims d;
    int first_block, nblocks;
    int has_embed, has_head;
    pp_backend *be;
    pp_param *params;
    int nparams;
    pp_tp_shard tp;         /* size 1: the whole stage on this rank */
    int ffn_local;          /* the FFN columns this rank holds: ffn / tp.size */
} pp_stage_model;

/* What one forward keeps for its backward. Bytes are counted in the rank's stash accounting. */
typedef struct pp_model_stash pp_model_stash;

/* Makes the stage's parameters, initialised from d.seed so that every block gets the same values whichever
 * stage holds it (the reference model and any partition agree bit for bit). Gradients start at zero. */
void pp__model_init(pp_stage_model *s, const pp_model_dims *d, int first_block, int nblocks, int has_embed,
                    int has_head, pp_backend *be);
/* The same stage as tensor-parallel shard tp->rank of tp->size (d->ffn must divide by the size): each parameter
 * that is cut holds its slice of the whole model's values, so the shards together are the stage pp__model_init
 * makes. NULL or size 1: the whole stage. */
void pp__model_init_shard(pp_stage_model *s, const pp_model_dims *d, int first_block, int nblocks, int has_embed,
                          int has_head, pp_backend *be, const pp_tp_shard *tp);
/* Parameters (floats) of a stage of nblocks blocks, with the embedding and the head as flagged: what
 * pp__model_init makes, counted without making it (the reduce's cost model needs the bytes). */
long pp__model_param_count(const pp_model_dims *d, int nblocks, int has_embed, int has_head);
/* Frees the stage's parameters, gradients and optimizer moments; s is zeroed and may be initialised again. */
void pp__model_free(pp_stage_model *s);
/* Sets every gradient of the stage to zero (before a step: backwards only add to them). */
void pp__model_zero_grad(pp_stage_model *s);

/* One optimizer update of every parameter from its gradient: SGD, or AdamW (betas 0.9/0.999, eps 1e-8) at
 * step t >= 1, its moments made on first use. */
void pp__model_update(pp_stage_model *s, int adamw, float lr, float weight_decay, int t);

/* Forward over n = rows tokens. Input: x (n x h) for an inner stage, or tokens (n x 1 i32) for a first
 * stage; targets (n x 1 i32) for a last stage (both on the stage's backend). Returns the output (n x h, or 1x1 mean loss) from arena and
 * fills *stash (malloc'd; free with pp__stash_release), before the forward runs, so that a caller whose shards'
 * sum leaves the forward early still holds it. */
pp_tensor *pp__model_forward(pp_stage_model *s, pp_arena *arena, int rows, pp_tensor *x, pp_tensor *tokens,
                             pp_tensor *targets, pp_model_stash **stash);
/* The last forward's softmax probabilities (n x V, on the stage's backend) of a stage that holds the head, while the
 * stash still holds them (before a checkpoint or drop); NULL otherwise. For sampling text from a trained model. */
const pp_tensor *pp__stash_probs(const pp_model_stash *st);
/* Input half of the backward: returns dx (n x h; NULL on a first stage), keeps what the weight half needs. */
pp_tensor *pp__model_backward_input(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy);
/* Weight half: adds the weight gradients. */
void pp__model_backward_weight(pp_stage_model *s, pp_model_stash *st);
/* Drops all but the stage input (recomputation); a later backward recomputes the forward first. */
void pp__stash_checkpoint(pp_model_stash *st);
/* 1 when the backward must recompute (after a checkpoint), so the caller can charge a forward's cost. */
int pp__stash_needs_recompute(const pp_model_stash *st);
/* Drops everything once the backward is complete (the stash handle stays valid, holding nothing). */
void pp__stash_drop(pp_model_stash *st);
/* Bytes the stash holds now. */
size_t pp__stash_bytes(const pp_model_stash *st);
/* Frees a stash and all it owns (not the stage input it refers to). NULL is fine. */
void pp__stash_release(pp_model_stash *st);

/* ---- the stage layer by layer: a schedule that runs its own blocks (lab 08) ------------------- */

/* A block's layers, in forward order: LayerNorm; W1 with b1 (cut by columns under tensor parallelism); GELU; W2
 * without b2 (cut by rows: its output is then this shard's partial product). b2 and the residual are apart. */
typedef enum { PP_LAYER_LN = 0, PP_LAYER_W1, PP_LAYER_GELU, PP_LAYER_W2, PP_LAYERS } pp_layer;

/* Opens the stash of a forward over `rows` tokens (*stash; release with pp__stash_release) and runs the embedding
 * on a first stage. Returns block 0's input: x, or the embedding's output. */
pp_tensor *pp__model_open(pp_stage_model *s, pp_arena *arena, int rows, pp_tensor *x, pp_tensor *tokens,
                          pp_tensor *targets, pp_model_stash **stash);
/* Runs `layer` of block i (0..nblocks-1) forward on in (n x h, or n x ffn_local for GELU and W2), keeping in as
 * the input its backward reads (a later call of the same layer replaces it); returns its output, a new tensor of
 * the stash. The caller checks shapes. */
pp_tensor *pp__model_layer_forward(pp_stage_model *s, pp_model_stash *st, int i, pp_layer layer, pp_tensor *in);
/* y += block i's b2 (y: n x h). */
void pp__model_bias2_forward(pp_stage_model *s, int i, pp_tensor *y);
/* Ends the forward on x (the last block's output): the head and the loss on a last stage (the 1x1 mean loss),
 * else a copy of x; either way in arena, the stage's output. */
pp_tensor *pp__model_close(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *x);
/* 1 when block i's forward ran `layer`, so that its backward has the input it reads. */
int pp__model_layer_kept(const pp_model_stash *st, int i, pp_layer layer);
/* Starts the backward from dy: on a last stage the head's whole backward (its weight gradients added), returning
 * the gradient of the last block's output; else dy. */
pp_tensor *pp__model_back_open(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy);
/* Runs `layer` of block i backward on dout, the gradient of its output: adds its weight gradients and returns the
 * gradient of its input, a new tensor of the stash. Its forward must have run (pp__model_layer_kept). */
pp_tensor *pp__model_layer_backward(pp_stage_model *s, pp_model_stash *st, int i, pp_layer layer, pp_tensor *dout);
/* Block i's b2 gradient += the column sums of dy. */
void pp__model_bias2_backward(pp_stage_model *s, int i, pp_tensor *dy);
/* Ends the backward on dy (block 0's input gradient): the embedding's gradient on a first stage (returns NULL),
 * else a copy of dy in arena, the stage's dx. */
pp_tensor *pp__model_back_close(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy);
/* The bytes a stash of the layered forward holds once it ends, each layer run once: the stage input (x), the
 * embedding's output, per block LayerNorm's statistics and output, the shard's two FFN activations and W2's
 * output, and the head's; `rows` tokens, the FFN cut over d->ffn / ffn_local shards. What lab 08 holds a run to. */
size_t pp__model_layered_bytes(const pp_model_dims *d, int nblocks, int has_embed, int has_head, int ffn_local,
                               int rows);

/* The tokens and next-token targets of micro-batch mb (global index) of step `step`: rows = mb_size * seq
 * ints each. Deterministic in (seed, step, mb). The task is learnable: target = (a * token + c) mod V. */
void pp__data_microbatch(const pp_model_dims *d, int mb_size, int step, int mb, int *tokens, int *targets);

#endif /* PP_MODEL_H */
