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

typedef struct pp_param {
    char name[32];          /* "block3.w1", global over the whole model, the same on every rank */
    pp_tensor *w, *g;       /* weight and its gradient */
    pp_tensor *m, *v;       /* AdamW moments, NULL until the first AdamW step */
} pp_param;

typedef struct pp_stage_model {
    pp_model_dims d;
    int first_block, nblocks;
    int has_embed, has_head;
    pp_backend *be;
    pp_param *params;
    int nparams;
} pp_stage_model;

/* What one forward keeps for its backward. Bytes are counted in the rank's stash accounting. */
typedef struct pp_model_stash pp_model_stash;

/* Makes the stage's parameters, initialised from d.seed so that every block gets the same values whichever
 * stage holds it (the reference model and any partition agree bit for bit). Gradients start at zero. */
void pp__model_init(pp_stage_model *s, const pp_model_dims *d, int first_block, int nblocks, int has_embed,
                    int has_head, pp_backend *be);
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
 * fills *stash (malloc'd; free with pp__stash_release). */
pp_tensor *pp__model_forward(pp_stage_model *s, pp_arena *arena, int rows, pp_tensor *x, pp_tensor *tokens,
                             pp_tensor *targets, pp_model_stash **stash);
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

/* The tokens and next-token targets of micro-batch mb (global index) of step `step`: rows = mb_size * seq
 * ints each. Deterministic in (seed, step, mb). The task is learnable: target = (a * token + c) mod V. */
void pp__data_microbatch(const pp_model_dims *d, int mb_size, int step, int mb, int *tokens, int *targets);

#endif /* PP_MODEL_H */
