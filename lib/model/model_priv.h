/* model_priv.h: what model.c (parameters, stash, whole-stage passes) and layers.c (each layer of a block, forward and
 * backward) share: where a parameter sits among a stage's, and what a stash holds. Private to lib/model. */
#ifndef PP_MODEL_PRIV_H
#define PP_MODEL_PRIV_H

#include "model.h"

/* Parameter order inside a block: attention's half, then the MLP's. Keys have no bias: a bias on the keys adds
 * q . bk to every logit of a query's row alike, which the softmax cancels, so its gradient would be zero but for
 * rounding, and a gradient check of rounding against rounding can only fail at random. */
enum {
    A_LN_G, A_LN_B, A_WQ, A_BQ, A_WK, A_WV, A_BV, A_WO, A_BO,
    M_LN_G, M_LN_B, M_W1, M_B1, M_W2, M_B2, P_PER_BLOCK
};
enum { HALF_ATTN, HALF_MLP, HALVES };
enum { H_LN_G, H_LN_B, H_W, H_B, P_PER_HEAD };
enum { E_TOKENS, E_POSITIONS, P_PER_EMBED };

/* What one half of a block keeps for its backward. */
typedef struct half_acts {
    pp_tensor *x;                   /* the half's input: the block's input, or the attention half's output */
    pp_tensor *mean, *rstd, *ln;    /* its LayerNorm's statistics and output */
    pp_tensor *pre;                 /* the first linear's output: q, k and v one after another; the MLP's h1 */
    pp_tensor *act;                 /* the half's own step's output: attention's (n x h/T); GELU's (n x f/T) */
    pp_tensor *att;                 /* attention's probabilities, (B*heads*seq) x seq, for its backward */
    pp_tensor *dy, *dpre, *dln;     /* kept by the input half for the weight half */
} half_acts;

typedef struct block_acts {
    half_acts h[HALVES];
} block_acts;

struct pp_model_stash {
    int rows;
    pp_tensor *input;               /* the stage input (not owned: it lives in the rank's step arena) */
    pp_tensor *tokens, *targets;    /* first / last stage data (not owned) */
    pp_arena own;                   /* everything else, freed by checkpoint or release */
    block_acts *blocks;
    pp_tensor *emb_dy;              /* embedding: gradient kept for the weight half */
    pp_tensor *hx, *hmean, *hrstd, *hln, *probs, *dloss, *dlogits, *dhln; /* head */
    int has_acts;                   /* 0 after a checkpoint: the backward recomputes first */
    int input_done;                 /* the input half ran */
};

static inline int pp__embed_params(const pp_stage_model *s) { return s->has_embed ? P_PER_EMBED : 0; }
static inline pp_param *pp__block_param(pp_stage_model *s, int i, int k) {
    return &s->params[pp__embed_params(s) + i * P_PER_BLOCK + k];
}
static inline pp_param *pp__head_param(pp_stage_model *s, int k) {
    return &s->params[pp__embed_params(s) + s->nblocks * P_PER_BLOCK + k];
}
static inline float *pp__w(pp_param *p) { return p->w->data; }
static inline float *pp__g(pp_param *p) { return p->g->data; }

/* A tensor the stash owns. Every one is the output of the op right after it, which writes it whole. */
static inline pp_tensor *pp__stash_own(pp_model_stash *st, pp_backend *be, int rows, int cols) {
    return pp__tensor_new_output(be, &st->own, rows, cols, -1);
}

/* The columns of a half's first linear output on this stage (3*h/T for attention, f/T for the MLP) and of its own
 * step's output (h/T; f/T). */
int pp__half_pre_cols(const pp_stage_model *s, int half);
int pp__half_act_cols(const pp_stage_model *s, int half);

/* The input half of each layer's backward, from the gradient of its output: returns the gradient of its input,
 * keeping what the layer's weight half reads. The last linear's (d act) is the stash's when keep, else scratch the
 * caller frees (the weight half never reads it); LayerNorm's is the stage's dx in `arena` when to_arena. */
pp_tensor *pp__half_out_input(pp_stage_model *s, pp_model_stash *st, int i, int half, pp_tensor *dy, int keep);
pp_tensor *pp__half_act_input(pp_stage_model *s, pp_model_stash *st, int i, int half, pp_tensor *dact);
pp_tensor *pp__half_in_input(pp_stage_model *s, pp_model_stash *st, int i, int half, pp_tensor *dpre);
pp_tensor *pp__half_ln_input(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, int half,
                             pp_tensor *dln, int to_arena);
/* The weight half of one layer of block i (its own step has none; the biases bo and b2 are pp__model_bias_backward's):
 * adds its weight gradients from what its input half kept. */
void pp__layer_weight(pp_stage_model *s, pp_model_stash *st, int i, pp_layer layer);

#endif /* PP_MODEL_PRIV_H */
