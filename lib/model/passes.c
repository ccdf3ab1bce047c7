/* passes.c: forward and backward of one stage (a contiguous range of blocks, plus the embeddings on the first stage
 * and the head + loss on the last), with the backward split into an input half (B) and a weight half (W), and the
 * stash each forward keeps; and the same stage opened and closed around its blocks, for a schedule that writes its
 * own blocks (lab 08). Every op goes through the stage's backend, so the same code runs on cpu and cuda. */
#include "model_priv.h"

#include <string.h>

#include "answers.h"
#include "error.h"

/* The stage's edges and a new stash, shared by the whole-stage passes and the layered ones (below). */
static pp_model_stash *stash_open(const pp_stage_model *s, int rows, pp_tensor *x, pp_tensor *tokens,
                                  pp_tensor *targets);
static pp_tensor *embed_forward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st);
static pp_tensor *head_forward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *x);
static pp_tensor *head_backward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy, int inner);
static void head_weight(pp_stage_model *s, pp_model_stash *st);

size_t pp__stash_bytes(const pp_model_stash *st) { return (st->input ? st->input->bytes : 0) + st->own.live_bytes; }

int pp__stash_needs_recompute(const pp_model_stash *st) { return !st->has_acts; }

void pp__stash_checkpoint(pp_model_stash *st) {
    if (!st->has_acts) return;
    pp__arena_clear(&st->own);
    st->has_acts = 0;
}

void pp__stash_drop(pp_model_stash *st) {
    pp__arena_clear(&st->own);
    st->input = NULL;
    st->has_acts = 0;
}

void pp__stash_release(pp_model_stash *st) {
    if (!st) return;
    pp__arena_clear(&st->own);
    free(st->blocks);
    free(st);
}

/* ---- forward ------------------------------------------------------------------------------------------- */

/* The tensor-parallel group's sum of t (a no-op for a whole stage). The backend's queued work is finished first, so
 * that the sum reads what the ops before it wrote. */
static void tp_allreduce(pp_stage_model *s, pp_tensor *t) {
    if (s->tp.size == 1) return;
    if (s->be->ops->sync) s->be->ops->sync(s->be->ctx);
    s->tp.allreduce(s->tp.ctx, t);
}

/* Where block i's half ends: the MLP half of the last block of a stage without the head makes a new stage output,
 * every other half a tensor of the stash. */
static pp_tensor *half_output(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, int half) {
    int last = half == HALF_MLP && i == s->nblocks - 1 && !s->has_head;
    return last ? pp__tensor_new_output(s->be, arena, st->rows, s->d.hidden, -1) : pp__stash_own(st, s->be, st->rows, s->d.hidden);
}

static pp_layer half_layer(int half, int kind) { return (pp_layer)(half * PP_HALF_LAYERS + kind); }

/* y = act Wout + beta y: the half's last linear (Wo, W2), from its activation (n x h/T, n x f/T) onto y (n x h). */
static void out_linear(pp_stage_model *s, int i, int half, int n, const pp_tensor *act, pp_tensor *y, float beta) {
    int h = s->d.hidden, c = pp__half_act_cols(s, half);
    s->be->ops->gemm(s->be->ctx, 0, 0, n, h, c, 1.0f, act->data, c, pp__w(pp__block_param(s, i, half ? M_W2 : A_WO)), h,
                     beta, y->data, h);
}

/* A half of block i whole on this rank: y = x + act Wout + bout, x copied into y first so that the product adds
 * onto it. */
static pp_tensor *half_forward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, int half, pp_tensor *x) {
    int n = st->rows;
    pp_tensor *t = pp__model_layer_forward(s, st, i, half_layer(half, 0), x);
    t = pp__model_layer_forward(s, st, i, half_layer(half, 1), t);
    t = st->blocks[i].h[half].act = pp__model_layer_forward(s, st, i, half_layer(half, 2), t);
    pp_tensor *y = half_output(s, arena, st, i, half);
    s->be->ops->copy(s->be->ctx, y->data, x->data, x->bytes);
    out_linear(s, i, half, n, t, y, 1.0f);
    pp__model_bias_forward(s, i, half_layer(half, 3), y);
    return y;
}

/* A half of block i on a tensor-parallel shard, as the steps of the library's own block (answers.h) say, each on
 * the running tensor. */
static pp_tensor *half_forward_shard(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, int half,
                                     pp_tensor *x, const pp_block_recipe *rc) {
    int n = st->rows, h = s->d.hidden;
    pp_tensor *cur = x;
    for (int k = 0; k < rc->nfwd; k++) {
        switch (rc->fwd[k]) {
        case PP_BLOCK_LN: cur = pp__model_layer_forward(s, st, i, half_layer(half, 0), cur); break;
        case PP_BLOCK_IN: cur = pp__model_layer_forward(s, st, i, half_layer(half, 1), cur); break;
        case PP_BLOCK_ACT: cur = pp__model_layer_forward(s, st, i, half_layer(half, 2), cur); break;
        case PP_BLOCK_OUT: { /* its input is the activation the weight half reads, as the layered one keeps it */
            pp_tensor *y = half_output(s, arena, st, i, half);
            out_linear(s, i, half, n, cur, y, 0.0f);
            st->blocks[i].h[half].act = cur, cur = y;
            break;
        }
        case PP_BLOCK_SUM: tp_allreduce(s, cur); break;
        case PP_BLOCK_RESIDUAL: s->be->ops->axpy(s->be->ctx, cur->data, 1.0f, x->data, n * h); break;
        case PP_BLOCK_BIAS: pp__model_bias_forward(s, i, half_layer(half, 3), cur); break;
        }
    }
    return cur;
}

/* Runs the forward, filling st's activations; returns the output (in `arena`). A stage cut over shards runs the
 * library's own tensor-parallel block, which only the kit has (pp__config_check refuses --tp on whole-stage
 * schedules where this build holds none). */
static pp_tensor *forward_acts(pp_stage_model *s, pp_arena *arena, pp_model_stash *st) {
    const pp_block_recipe *rc = s->tp.size > 1 ? pp__answers_tp_block() : NULL;
    PP_ASSERT(s->tp.size == 1 || rc);
    pp_tensor *x = s->has_embed ? embed_forward(s, arena, st) : st->input;
    for (int i = 0; i < s->nblocks; i++)
        for (int half = 0; half < HALVES; half++)
            x = rc ? half_forward_shard(s, arena, st, i, half, x, rc) : half_forward(s, arena, st, i, half, x);
    if (s->has_head) x = head_forward(s, arena, st, x);
    st->has_acts = 1;
    return x;
}

/* The tokens' embedding plus each position's, the same table added to every sequence of the micro-batch. */
static pp_tensor *embed_forward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st) {
    int n = st->rows, h = s->d.hidden, T = s->d.seq;
    /* with blocks after it the embedding output is internal, else it is the stage output */
    pp_tensor *x = (s->nblocks || s->has_head) ? pp__stash_own(st, s->be, n, h) : pp__tensor_new_output(s->be, arena, n, h, -1);
    s->be->ops->embedding_fwd(s->be->ctx, x->data, pp__w(&s->params[E_TOKENS]), st->tokens->data, n, h);
    for (int b = 0; b < n / T; b++)
        s->be->ops->axpy(s->be->ctx, (float *)x->data + (size_t)b * T * h, 1.0f, pp__w(&s->params[E_POSITIONS]), T * h);
    return x;
}

/* The embeddings' weight half: each token's row and each position's gather the gradient of where they were used. */
static void embed_weight(pp_stage_model *s, pp_model_stash *st, const pp_tensor *dy) {
    int n = st->rows, h = s->d.hidden, T = s->d.seq;
    s->be->ops->embedding_bwd(s->be->ctx, pp__g(&s->params[E_TOKENS]), dy->data, st->tokens->data, n, h);
    for (int b = 0; b < n / T; b++)
        s->be->ops->axpy(s->be->ctx, pp__g(&s->params[E_POSITIONS]), 1.0f, (const float *)dy->data + (size_t)b * T * h, T * h);
}

static pp_tensor *head_forward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *x) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, V = s->d.vocab;
    st->hx = x;
    st->hmean = pp__stash_own(st, s->be, n, 1);
    st->hrstd = pp__stash_own(st, s->be, n, 1);
    st->hln = pp__stash_own(st, s->be, n, h);
    pp_tensor *logits = pp__stash_own(st, s->be, n, V);
    st->probs = pp__stash_own(st, s->be, n, V);
    o->layernorm_fwd(c, st->hln->data, st->hmean->data, st->hrstd->data, x->data, pp__w(pp__head_param(s, H_LN_G)),
                     pp__w(pp__head_param(s, H_LN_B)), n, h);
    o->gemm(c, 0, 0, n, V, h, 1.0f, st->hln->data, h, pp__w(pp__head_param(s, H_W)), V, 0.0f, logits->data, V);
    o->bias_add(c, logits->data, pp__w(pp__head_param(s, H_B)), n, V);
    pp_tensor *loss = pp__tensor_new_output(s->be, arena, 1, 1, -1);
    o->xent_fwd(c, loss->data, st->probs->data, logits->data, st->targets->data, n, V);
    return loss;
}

static pp_model_stash *stash_open(const pp_stage_model *s, int rows, pp_tensor *x, pp_tensor *tokens, pp_tensor *targets) {
    pp_model_stash *st = pp__xcalloc(1, sizeof *st);
    st->rows = rows;
    st->input = x;
    st->tokens = tokens;
    st->targets = targets;
    st->blocks = pp__xcalloc((size_t)(s->nblocks ? s->nblocks : 1), sizeof *st->blocks);
    return st;
}

pp_tensor *pp__model_forward(pp_stage_model *s, pp_arena *arena, int rows, pp_tensor *x, pp_tensor *tokens,
                             pp_tensor *targets, pp_model_stash **stash) {
    pp_model_stash *st = stash_open(s, rows, x, tokens, targets);
    /* handed over first: a shard's sum may leave the forward by a jump (its partner failed), and the caller must
     * still be able to free what the forward made */
    *stash = st;
    return forward_acts(s, arena, st);
}

const pp_tensor *pp__stash_probs(const pp_model_stash *st) { return st->has_acts ? st->probs : NULL; }

/* ---- backward ------------------------------------------------------------------------------------------ */

/* A half of block i whole on this rank, from dy: returns dx, keeping what the weight half reads. The half's input
 * gradient is a new stage output on the attention half of block 0 of a stage without the embedding. */
static pp_tensor *half_backward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, int half, pp_tensor *dy) {
    int to_arena = half == HALF_ATTN && i == 0 && !s->has_embed;
    pp_tensor *dact = pp__half_out_input(s, st, i, half, dy, 0), *dpre = pp__half_act_input(s, st, i, half, dact);
    pp__tensor_free(dact);
    pp_tensor *dx = pp__half_ln_input(s, arena, st, i, half, pp__half_in_input(s, st, i, half, dpre), to_arena);
    s->be->ops->axpy(s->be->ctx, dx->data, 1.0f, dy->data, st->rows * s->d.hidden); /* the residual path */
    return dx;
}

/* A half of block i on a tensor-parallel shard, as the steps of the library's own block say (answers.h). */
static pp_tensor *half_backward_shard(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, int half,
                                      pp_tensor *dy, const pp_block_recipe *rc) {
    int to_arena = half == HALF_ATTN && i == 0 && !s->has_embed;
    pp_tensor *cur = dy, *scratch = NULL;
    for (int k = 0; k < rc->nbwd; k++) {
        switch (rc->bwd[k]) {
        case PP_BLOCK_OUT: cur = scratch = pp__half_out_input(s, st, i, half, cur, 0); break;
        case PP_BLOCK_ACT: cur = pp__half_act_input(s, st, i, half, cur); break;
        case PP_BLOCK_IN: cur = pp__half_in_input(s, st, i, half, cur); break;
        case PP_BLOCK_SUM: tp_allreduce(s, cur); break;
        case PP_BLOCK_LN: cur = pp__half_ln_input(s, arena, st, i, half, cur, to_arena); break;
        case PP_BLOCK_RESIDUAL: s->be->ops->axpy(s->be->ctx, cur->data, 1.0f, dy->data, st->rows * s->d.hidden); break;
        case PP_BLOCK_BIAS: break; /* the bias's gradient is all the weight half's */
        }
        if (scratch && cur != scratch) pp__tensor_free(scratch), scratch = NULL;
    }
    return cur;
}

pp_tensor *pp__model_backward_input(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy) {
    if (!st->has_acts) {
        /* recomputation: the rebuilt activations stay in the stash; the stage output is not needed again */
        pp_arena scratch = {0};
        (void)forward_acts(s, &scratch, st);
        pp__arena_clear(&scratch);
    }
    const pp_block_recipe *rc = s->tp.size > 1 ? pp__answers_tp_block() : NULL;
    if (s->has_head) dy = head_backward(s, arena, st, dy, s->nblocks || s->has_embed);
    for (int i = s->nblocks - 1; i >= 0; i--)
        for (int half = HALVES - 1; half >= 0; half--)
            dy = rc ? half_backward_shard(s, arena, st, i, half, dy, rc) : half_backward(s, arena, st, i, half, dy);
    st->input_done = 1;
    if (s->has_embed) {
        st->emb_dy = dy;
        return NULL;
    }
    return dy;
}

void pp__model_backward_weight(pp_stage_model *s, pp_model_stash *st) {
    PP_ASSERT(st->input_done);
    if (s->has_head) head_weight(s, st);
    for (int i = s->nblocks - 1; i >= 0; i--)
        for (int half = HALVES - 1; half >= 0; half--) {
            pp__model_bias_backward(s, i, half_layer(half, 3), st->blocks[i].h[half].dy);
            for (int kind = PP_HALF_LAYERS - 1; kind >= 0; kind--) pp__layer_weight(s, st, i, half_layer(half, kind));
        }
    if (s->has_embed) embed_weight(s, st, st->emb_dy);
}

static pp_tensor *head_backward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy, int inner) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, V = s->d.vocab;
    st->dloss = dy;
    st->dlogits = pp__stash_own(st, s->be, n, V);
    st->dhln = pp__stash_own(st, s->be, n, h);
    o->xent_bwd(c, st->dlogits->data, st->probs->data, st->targets->data, dy->data, n, V);
    o->gemm(c, 0, 1, n, h, V, 1.0f, st->dlogits->data, V, pp__w(pp__head_param(s, H_W)), V, 0.0f, st->dhln->data, h);
    pp_tensor *dx = inner ? pp__stash_own(st, s->be, n, h) : pp__tensor_new_output(s->be, arena, n, h, -1);
    o->layernorm_bwd(c, dx->data, NULL, NULL, st->dhln->data, st->hx->data, st->hmean->data, st->hrstd->data,
                     pp__w(pp__head_param(s, H_LN_G)), n, h);
    return dx;
}

static void head_weight(pp_stage_model *s, pp_model_stash *st) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, V = s->d.vocab;
    o->gemm(c, 1, 0, h, V, n, 1.0f, st->hln->data, h, st->dlogits->data, V, 1.0f, pp__g(pp__head_param(s, H_W)), V);
    o->bias_grad(c, pp__g(pp__head_param(s, H_B)), st->dlogits->data, n, V);
    o->layernorm_bwd(c, NULL, pp__g(pp__head_param(s, H_LN_G)), pp__g(pp__head_param(s, H_LN_B)), st->dhln->data, st->hx->data,
                     st->hmean->data, st->hrstd->data, pp__w(pp__head_param(s, H_LN_G)), n, h);
}

/* ---- the stage layer by layer: a schedule that writes its own blocks (lab 08) --------------------------- */

pp_tensor *pp__model_open(pp_stage_model *s, pp_arena *arena, int rows, pp_tensor *x, pp_tensor *tokens,
                          pp_tensor *targets, pp_model_stash **stash) {
    pp_model_stash *st = stash_open(s, rows, x, tokens, targets);
    *stash = st;
    st->has_acts = 1;
    return s->has_embed ? embed_forward(s, arena, st) : x;
}

pp_tensor *pp__model_close(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *x) {
    if (s->has_head) return head_forward(s, arena, st, x);
    pp_tensor *out = pp__tensor_new_output(s->be, arena, x->rows, x->cols, -1);
    s->be->ops->copy(s->be->ctx, out->data, x->data, x->bytes);
    return out;
}

pp_tensor *pp__model_back_open(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy) {
    if (!s->has_head) return dy;
    pp_tensor *dx = head_backward(s, arena, st, dy, 1);
    head_weight(s, st);
    return dx;
}

pp_tensor *pp__model_back_close(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy) {
    st->input_done = 1;
    if (s->has_embed) {
        embed_weight(s, st, dy);
        return NULL;
    }
    pp_tensor *dx = pp__tensor_new_output(s->be, arena, dy->rows, dy->cols, -1);
    s->be->ops->copy(s->be->ctx, dx->data, dy->data, dy->bytes);
    return dx;
}

