/* model.c: parameters, forward and backward of one stage (a contiguous range of blocks, plus the embedding on
 * the first stage and the head + loss on the last), with the backward split into an input half (B) and a
 * weight half (W); and the same stage layer by layer, for a schedule that writes its own blocks (lab 08). Every op
 * goes through the stage's backend, so the same code runs on cpu and cuda. */
#include "model.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "answers.h"
#include "error.h"
#include "hash.h"

/* ---- layout of a stage and its stash -------------------------------------------------------------------- */

/* Parameter order inside a block; block_param(s, i, k) finds the k-th tensor of the stage's i-th block. */
enum { P_LN_G, P_LN_B, P_W1, P_B1, P_W2, P_B2, P_PER_BLOCK };
enum { H_LN_G, H_LN_B, H_W, H_B, P_PER_HEAD };

static pp_param *block_param(pp_stage_model *s, int i, int k) {
    return &s->params[s->has_embed + i * P_PER_BLOCK + k];
}
static pp_param *head_param(pp_stage_model *s, int k) {
    return &s->params[s->has_embed + s->nblocks * P_PER_BLOCK + k];
}
static float *W(pp_param *p) { return p->w->data; }
static float *G(pp_param *p) { return p->g->data; }

typedef struct block_acts {
    pp_tensor *x;                   /* block input (n x h): the stage input or the previous block's output */
    pp_tensor *mean, *rstd, *ln;    /* LayerNorm statistics and output */
    pp_tensor *h1, *a1;             /* pre- and post-GELU (n x f) */
    pp_tensor *dy, *dh1, *dln;      /* kept by the input half for the weight half */
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

/* A tensor the stash owns. Every one is the output of the op right after it, which writes it whole. */
static pp_tensor *own(pp_model_stash *st, pp_backend *be, int rows, int cols) {
    return pp__tensor_new_output(be, &st->own, rows, cols, -1);
}

/* The stage's edges and a new stash, shared by the whole-stage passes and the layered ones (below). */
static pp_model_stash *stash_open(const pp_stage_model *s, int rows, pp_tensor *x, pp_tensor *tokens,
                                  pp_tensor *targets);
static pp_tensor *embed_forward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st);
static pp_tensor *head_forward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *x);
static pp_tensor *head_backward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy, int inner);
static void head_weight(pp_stage_model *s, pp_model_stash *st);

/* ---- parameters ---------------------------------------------------------------------------------------- */

/* splitmix64: a tiny, well-mixed generator, seeded per parameter name so any partition sees the same values. */
static uint64_t mix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t name_seed(unsigned seed, const char *name) {
    return pp__hash_text(PP_HASH_INIT ^ seed, name, SIZE_MAX);
}

/* Uniform in [-a, a]. */
static void fill_uniform(float *x, int n, float a, uint64_t s) {
    for (int i = 0; i < n; i++) x[i] = a * (float)((double)(mix64(&s) >> 11) * 0x1.0p-53 * 2.0 - 1.0);
}

enum { INIT_ZERO, INIT_ONE, INIT_UNIFORM };

/* Adds parameter `name` (rows x cols in the whole model), or the shard's slice of it when split: the values are
 * the whole parameter's, drawn in one sequence from its name, so any cut of the model sees the same ones. */
static pp_param *param_split(pp_stage_model *s, const char *name, int rows, int cols, int init, float scale,
                             pp_split split) {
    s->params = pp__xrealloc(s->params, (size_t)(s->nparams + 1) * sizeof *s->params);
    pp_param *p = &s->params[s->nparams++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    int T = s->tp.size, t = s->tp.rank, n = rows * cols;
    if (T == 1) split = PP_SPLIT_NONE;
    p->split = split;
    int r0 = 0, nr = rows, c0 = 0, nc = cols;
    if (split == PP_SPLIT_COLS) nc = cols / T, c0 = t * nc;
    if (split == PP_SPLIT_ROWS) nr = rows / T, r0 = t * nr;
    p->w = pp__tensor_new(s->be, NULL, nr, nc, PP_F32, -1);
    p->g = pp__tensor_new(s->be, NULL, nr, nc, PP_F32, -1);
    float *host = pp__xmalloc((size_t)n * sizeof *host);
    for (int i = 0; i < n; i++) host[i] = init == INIT_ONE ? 1.0f : 0.0f;
    if (init == INIT_UNIFORM) fill_uniform(host, n, scale, name_seed(s->d.seed, name));
    /* the slice, packed row by row (the rows' slice is contiguous already) */
    for (int r = 0; r < nr; r++) memmove(host + (size_t)r * nc, host + (size_t)(r0 + r) * cols + c0, (size_t)nc * sizeof *host);
    pp__tensor_from_host(p->w, host);
    free(host);
    return p;
}

static pp_param *param_add(pp_stage_model *s, const char *name, int rows, int cols, int init, float scale) {
    return param_split(s, name, rows, cols, init, scale, PP_SPLIT_NONE);
}


long pp__model_param_count(const pp_model_dims *d, int nblocks, int has_embed, int has_head) {
    long h = d->hidden, f = d->ffn, V = d->vocab;
    return (has_embed ? V * h : 0) + nblocks * (3 * h + 2 * h * f + f) + (has_head ? 2 * h + h * V + V : 0);
}

void pp__model_init(pp_stage_model *s, const pp_model_dims *d, int first_block, int nblocks, int has_embed,
                    int has_head, pp_backend *be) {
    pp__model_init_shard(s, d, first_block, nblocks, has_embed, has_head, be, NULL);
}

void pp__model_init_shard(pp_stage_model *s, const pp_model_dims *d, int first_block, int nblocks, int has_embed,
                          int has_head, pp_backend *be, const pp_tp_shard *tp) {
    memset(s, 0, sizeof *s);
    s->tp = tp && tp->size > 1 ? *tp : (pp_tp_shard){.size = 1};
    PP_ASSERT(d->ffn % s->tp.size == 0 && s->tp.rank >= 0 && s->tp.rank < s->tp.size);
    s->ffn_local = d->ffn / s->tp.size;
    s->d = *d;
    s->first_block = first_block;
    s->nblocks = nblocks;
    s->has_embed = has_embed;
    s->has_head = has_head;
    s->be = be;
    int h = d->hidden, f = d->ffn, V = d->vocab;
    char name[32];
    if (has_embed) param_add(s, "embed.w", V, h, INIT_UNIFORM, 1.0f);
    for (int i = 0; i < nblocks; i++) {
        int b = first_block + i;
        /* residual branches are scaled down with depth so the stack stays well conditioned at any L */
        float w2scale = 1.0f / sqrtf((float)f) / sqrtf((float)(2 * d->layers));
        snprintf(name, sizeof name, "block%d.ln.g", b), param_add(s, name, 1, h, INIT_ONE, 0);
        snprintf(name, sizeof name, "block%d.ln.b", b), param_add(s, name, 1, h, INIT_ZERO, 0);
        snprintf(name, sizeof name, "block%d.w1", b);
        param_split(s, name, h, f, INIT_UNIFORM, 1.0f / sqrtf((float)h), PP_SPLIT_COLS);
        snprintf(name, sizeof name, "block%d.b1", b), param_split(s, name, 1, f, INIT_UNIFORM, 0.1f, PP_SPLIT_COLS);
        snprintf(name, sizeof name, "block%d.w2", b), param_split(s, name, f, h, INIT_UNIFORM, w2scale, PP_SPLIT_ROWS);
        snprintf(name, sizeof name, "block%d.b2", b), param_add(s, name, 1, h, INIT_UNIFORM, 0.1f);
    }
    if (has_head) {
        param_add(s, "final_ln.g", 1, h, INIT_ONE, 0);
        param_add(s, "final_ln.b", 1, h, INIT_ZERO, 0);
        param_add(s, "head.w", h, V, INIT_UNIFORM, 1.0f / sqrtf((float)h));
        param_add(s, "head.b", 1, V, INIT_ZERO, 0);
    }
}

void pp__model_free(pp_stage_model *s) {
    for (int i = 0; i < s->nparams; i++) {
        pp__tensor_free(s->params[i].w);
        pp__tensor_free(s->params[i].g);
        pp__tensor_free(s->params[i].m);
        pp__tensor_free(s->params[i].v);
    }
    free(s->params);
    memset(s, 0, sizeof *s);
}

void pp__model_zero_grad(pp_stage_model *s) {
    for (int i = 0; i < s->nparams; i++) s->be->ops->zero(s->be->ctx, s->params[i].g->data, s->params[i].g->bytes);
}

void pp__model_update(pp_stage_model *s, int adamw, float lr, float weight_decay, int t) {
    const pp_backend_ops *o = s->be->ops;
    for (int i = 0; i < s->nparams; i++) {
        pp_param *p = &s->params[i];
        int n = p->w->rows * p->w->cols;
        if (!adamw) {
            o->sgd(s->be->ctx, p->w->data, p->g->data, lr, weight_decay, n);
            continue;
        }
        if (!p->m) {
            p->m = pp__tensor_new(s->be, NULL, p->w->rows, p->w->cols, PP_F32, -1);
            p->v = pp__tensor_new(s->be, NULL, p->w->rows, p->w->cols, PP_F32, -1);
        }
        o->adamw(s->be->ctx, p->w->data, p->g->data, p->m->data, p->v->data, lr, 0.9f, 0.999f, 1e-8f, weight_decay, t, n);
    }
}


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

/* Where block i's output goes: a new stage output on the last block of a stage without the head, else the stash. */
static pp_tensor *block_output(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i) {
    int last = i == s->nblocks - 1 && !s->has_head;
    return last ? pp__tensor_new_output(s->be, arena, st->rows, s->d.hidden, -1) : own(st, s->be, st->rows, s->d.hidden);
}

/* Block i whole on this rank: y = x + a1 W2 + b2, x copied into y first so that the product adds onto it. */
static pp_tensor *block_forward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, pp_tensor *x) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, f = s->ffn_local;
    pp_tensor *ln = pp__model_layer_forward(s, st, i, PP_LAYER_LN, x);
    pp_tensor *h1 = pp__model_layer_forward(s, st, i, PP_LAYER_W1, ln);
    pp_tensor *a1 = st->blocks[i].a1 = pp__model_layer_forward(s, st, i, PP_LAYER_GELU, h1);
    pp_tensor *y = block_output(s, arena, st, i);
    o->copy(c, y->data, x->data, x->bytes);
    o->gemm(c, 0, 0, n, h, f, 1.0f, a1->data, f, W(block_param(s, i, P_W2)), h, 1.0f, y->data, h);
    pp__model_bias2_forward(s, i, y);
    return y;
}

/* Block i on a tensor-parallel shard, as the steps of the library's own block (answers.h) say, each on the running
 * tensor. */
static pp_tensor *block_forward_shard(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, pp_tensor *x,
                                      const pp_block_recipe *rc) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, f = s->ffn_local;
    pp_tensor *cur = x;
    for (int k = 0; k < rc->nfwd; k++) {
        switch (rc->fwd[k]) {
        case PP_BLOCK_LN: cur = pp__model_layer_forward(s, st, i, PP_LAYER_LN, cur); break;
        case PP_BLOCK_W1: cur = pp__model_layer_forward(s, st, i, PP_LAYER_W1, cur); break;
        case PP_BLOCK_GELU: cur = pp__model_layer_forward(s, st, i, PP_LAYER_GELU, cur); break;
        case PP_BLOCK_W2: { /* W2's input is the a1 the weight half reads, as the layered W2 keeps it */
            pp_tensor *y = block_output(s, arena, st, i);
            o->gemm(c, 0, 0, n, h, f, 1.0f, cur->data, f, W(block_param(s, i, P_W2)), h, 0.0f, y->data, h);
            st->blocks[i].a1 = cur, cur = y;
            break;
        }
        case PP_BLOCK_SUM: tp_allreduce(s, cur); break;
        case PP_BLOCK_RESIDUAL: o->axpy(c, cur->data, 1.0f, x->data, n * h); break;
        case PP_BLOCK_B2: pp__model_bias2_forward(s, i, cur); break;
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
        x = rc ? block_forward_shard(s, arena, st, i, x, rc) : block_forward(s, arena, st, i, x);
    if (s->has_head) x = head_forward(s, arena, st, x);
    st->has_acts = 1;
    return x;
}

static pp_tensor *embed_forward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st) {
    int n = st->rows, h = s->d.hidden;
    /* with blocks after it the embedding output is internal, else it is the stage output */
    pp_tensor *x = (s->nblocks || s->has_head) ? own(st, s->be, n, h) : pp__tensor_new_output(s->be, arena, n, h, -1);
    s->be->ops->embedding_fwd(s->be->ctx, x->data, W(&s->params[0]), st->tokens->data, n, h);
    return x;
}

static pp_tensor *head_forward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *x) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, V = s->d.vocab;
    st->hx = x;
    st->hmean = own(st, s->be, n, 1);
    st->hrstd = own(st, s->be, n, 1);
    st->hln = own(st, s->be, n, h);
    pp_tensor *logits = own(st, s->be, n, V);
    st->probs = own(st, s->be, n, V);
    o->layernorm_fwd(c, st->hln->data, st->hmean->data, st->hrstd->data, x->data, W(head_param(s, H_LN_G)),
                     W(head_param(s, H_LN_B)), n, h);
    o->gemm(c, 0, 0, n, V, h, 1.0f, st->hln->data, h, W(head_param(s, H_W)), V, 0.0f, logits->data, V);
    o->bias_add(c, logits->data, W(head_param(s, H_B)), n, V);
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

/* The input half of block i's layers, each from the gradient of its output. W2's (d a1) is scratch: the weight half
 * never reads it, so the stash does not keep it. */
static pp_tensor *w2_input(pp_stage_model *s, pp_model_stash *st, int i, pp_tensor *dy) {
    int n = st->rows, h = s->d.hidden, f = s->ffn_local;
    pp_tensor *da1 = pp__tensor_new_output(s->be, NULL, n, f, -1);
    s->be->ops->gemm(s->be->ctx, 0, 1, n, f, h, 1.0f, dy->data, h, W(block_param(s, i, P_W2)), h, 0.0f, da1->data, f);
    return da1;
}

static pp_tensor *gelu_input(pp_stage_model *s, pp_model_stash *st, int i, pp_tensor *da1) {
    block_acts *a = &st->blocks[i];
    a->dh1 = own(st, s->be, st->rows, s->ffn_local);
    s->be->ops->gelu_bwd(s->be->ctx, a->dh1->data, a->h1->data, da1->data, st->rows * s->ffn_local);
    return a->dh1;
}

static pp_tensor *w1_input(pp_stage_model *s, pp_model_stash *st, int i, pp_tensor *dh1) {
    int n = st->rows, h = s->d.hidden, f = s->ffn_local;
    pp_tensor *dln = own(st, s->be, n, h);
    s->be->ops->gemm(s->be->ctx, 0, 1, n, h, f, 1.0f, dh1->data, f, W(block_param(s, i, P_W1)), f, 0.0f, dln->data, h);
    return dln;
}

/* LayerNorm's input gradient, the block's dx: a new stage output on block 0 of a stage without the embedding. The
 * weight half reads the dln given here (a->dln) for LayerNorm's own gradients. */
static pp_tensor *ln_input(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, pp_tensor *dln) {
    int n = st->rows, h = s->d.hidden, inner = i > 0 || s->has_embed;
    block_acts *a = &st->blocks[i];
    a->dln = dln;
    pp_tensor *dx = inner ? own(st, s->be, n, h) : pp__tensor_new_output(s->be, arena, n, h, -1);
    s->be->ops->layernorm_bwd(s->be->ctx, dx->data, NULL, NULL, dln->data, a->x->data, a->mean->data, a->rstd->data,
                              W(block_param(s, i, P_LN_G)), n, h);
    return dx;
}

/* Block i whole on this rank, from dy: returns dx, keeping what the weight half reads. */
static pp_tensor *block_backward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, pp_tensor *dy) {
    st->blocks[i].dy = dy;
    pp_tensor *da1 = w2_input(s, st, i, dy), *dh1 = gelu_input(s, st, i, da1);
    pp__tensor_free(da1);
    pp_tensor *dx = ln_input(s, arena, st, i, w1_input(s, st, i, dh1));
    s->be->ops->axpy(s->be->ctx, dx->data, 1.0f, dy->data, st->rows * s->d.hidden); /* the residual path */
    return dx;
}

/* Block i on a tensor-parallel shard, as the steps of the library's own block say (answers.h). */
static pp_tensor *block_backward_shard(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, pp_tensor *dy,
                                       const pp_block_recipe *rc) {
    pp_tensor *cur = dy, *scratch = NULL;
    st->blocks[i].dy = dy;
    for (int k = 0; k < rc->nbwd; k++) {
        switch (rc->bwd[k]) {
        case PP_BLOCK_W2: cur = scratch = w2_input(s, st, i, cur); break;
        case PP_BLOCK_GELU: cur = gelu_input(s, st, i, cur); break;
        case PP_BLOCK_W1: cur = w1_input(s, st, i, cur); break;
        case PP_BLOCK_SUM: tp_allreduce(s, cur); break;
        case PP_BLOCK_LN: cur = ln_input(s, arena, st, i, cur); break;
        case PP_BLOCK_RESIDUAL: s->be->ops->axpy(s->be->ctx, cur->data, 1.0f, dy->data, st->rows * s->d.hidden); break;
        case PP_BLOCK_B2: break; /* b2's gradient is all the weight half's */
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
        dy = rc ? block_backward_shard(s, arena, st, i, dy, rc) : block_backward(s, arena, st, i, dy);
    st->input_done = 1;
    if (s->has_embed) {
        st->emb_dy = dy;
        return NULL;
    }
    return dy;
}

void pp__model_backward_weight(pp_stage_model *s, pp_model_stash *st) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, f = s->ffn_local;
    PP_ASSERT(st->input_done);
    if (s->has_head) head_weight(s, st);
    for (int i = s->nblocks - 1; i >= 0; i--) {
        block_acts *a = &st->blocks[i];
        o->gemm(c, 1, 0, f, h, n, 1.0f, a->a1->data, f, a->dy->data, h, 1.0f, G(block_param(s, i, P_W2)), h);
        o->bias_grad(c, G(block_param(s, i, P_B2)), a->dy->data, n, h);
        o->gemm(c, 1, 0, h, f, n, 1.0f, a->ln->data, h, a->dh1->data, f, 1.0f, G(block_param(s, i, P_W1)), f);
        o->bias_grad(c, G(block_param(s, i, P_B1)), a->dh1->data, n, f);
        o->layernorm_bwd(c, NULL, G(block_param(s, i, P_LN_G)), G(block_param(s, i, P_LN_B)), a->dln->data,
                         a->x->data, a->mean->data, a->rstd->data, W(block_param(s, i, P_LN_G)), n, h);
    }
    if (s->has_embed) o->embedding_bwd(c, G(&s->params[0]), st->emb_dy->data, st->tokens->data, n, h);
}

static pp_tensor *head_backward(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy, int inner) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, V = s->d.vocab;
    st->dloss = dy;
    st->dlogits = own(st, s->be, n, V);
    st->dhln = own(st, s->be, n, h);
    o->xent_bwd(c, st->dlogits->data, st->probs->data, st->targets->data, dy->data, n, V);
    o->gemm(c, 0, 1, n, h, V, 1.0f, st->dlogits->data, V, W(head_param(s, H_W)), V, 0.0f, st->dhln->data, h);
    pp_tensor *dx = inner ? own(st, s->be, n, h) : pp__tensor_new_output(s->be, arena, n, h, -1);
    o->layernorm_bwd(c, dx->data, NULL, NULL, st->dhln->data, st->hx->data, st->hmean->data, st->hrstd->data,
                     W(head_param(s, H_LN_G)), n, h);
    return dx;
}

static void head_weight(pp_stage_model *s, pp_model_stash *st) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, V = s->d.vocab;
    o->gemm(c, 1, 0, h, V, n, 1.0f, st->hln->data, h, st->dlogits->data, V, 1.0f, G(head_param(s, H_W)), V);
    o->bias_grad(c, G(head_param(s, H_B)), st->dlogits->data, n, V);
    o->layernorm_bwd(c, NULL, G(head_param(s, H_LN_G)), G(head_param(s, H_LN_B)), st->dhln->data, st->hx->data,
                     st->hmean->data, st->hrstd->data, W(head_param(s, H_LN_G)), n, h);
}

/* ---- the stage layer by layer: a schedule that writes its own blocks (lab 08) --------------------------- */

pp_tensor *pp__model_open(pp_stage_model *s, pp_arena *arena, int rows, pp_tensor *x, pp_tensor *tokens,
                          pp_tensor *targets, pp_model_stash **stash) {
    pp_model_stash *st = stash_open(s, rows, x, tokens, targets);
    *stash = st;
    st->has_acts = 1;
    return s->has_embed ? embed_forward(s, arena, st) : x;
}

pp_tensor *pp__model_layer_forward(pp_stage_model *s, pp_model_stash *st, int i, pp_layer layer, pp_tensor *in) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, f = s->ffn_local;
    block_acts *a = &st->blocks[i];
    pp_tensor *out = NULL;
    switch (layer) {
    case PP_LAYER_LN:
        a->x = in;
        a->mean = own(st, s->be, n, 1);
        a->rstd = own(st, s->be, n, 1);
        out = a->ln = own(st, s->be, n, h);
        o->layernorm_fwd(c, out->data, a->mean->data, a->rstd->data, in->data, W(block_param(s, i, P_LN_G)),
                         W(block_param(s, i, P_LN_B)), n, h);
        break;
    case PP_LAYER_W1:
        a->ln = in;
        out = own(st, s->be, n, f);
        o->gemm(c, 0, 0, n, f, h, 1.0f, in->data, h, W(block_param(s, i, P_W1)), f, 0.0f, out->data, f);
        o->bias_add(c, out->data, W(block_param(s, i, P_B1)), n, f);
        break;
    case PP_LAYER_GELU:
        a->h1 = in;
        out = own(st, s->be, n, f);
        o->gelu_fwd(c, out->data, in->data, n * f);
        break;
    case PP_LAYER_W2:
        a->a1 = in;
        out = own(st, s->be, n, h);
        o->gemm(c, 0, 0, n, h, f, 1.0f, in->data, f, W(block_param(s, i, P_W2)), h, 0.0f, out->data, h);
        break;
    default:
        PP_ASSERT(0);
    }
    return out;
}

void pp__model_bias2_forward(pp_stage_model *s, int i, pp_tensor *y) {
    s->be->ops->bias_add(s->be->ctx, y->data, W(block_param(s, i, P_B2)), y->rows, y->cols);
}

pp_tensor *pp__model_close(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *x) {
    if (s->has_head) return head_forward(s, arena, st, x);
    pp_tensor *out = pp__tensor_new_output(s->be, arena, x->rows, x->cols, -1);
    s->be->ops->copy(s->be->ctx, out->data, x->data, x->bytes);
    return out;
}

int pp__model_layer_kept(const pp_model_stash *st, int i, pp_layer layer) {
    const block_acts *a = &st->blocks[i];
    return layer == PP_LAYER_LN ? a->x != NULL : layer == PP_LAYER_W1 ? a->ln != NULL
         : layer == PP_LAYER_GELU ? a->h1 != NULL : a->a1 != NULL;
}

pp_tensor *pp__model_back_open(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy) {
    if (!s->has_head) return dy;
    pp_tensor *dx = head_backward(s, arena, st, dy, 1);
    head_weight(s, st);
    return dx;
}

pp_tensor *pp__model_layer_backward(pp_stage_model *s, pp_model_stash *st, int i, pp_layer layer, pp_tensor *dout) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, f = s->ffn_local;
    block_acts *a = &st->blocks[i];
    pp_tensor *din = NULL;
    switch (layer) {
    case PP_LAYER_W2:
        din = own(st, s->be, n, f);
        o->gemm(c, 0, 1, n, f, h, 1.0f, dout->data, h, W(block_param(s, i, P_W2)), h, 0.0f, din->data, f);
        o->gemm(c, 1, 0, f, h, n, 1.0f, a->a1->data, f, dout->data, h, 1.0f, G(block_param(s, i, P_W2)), h);
        break;
    case PP_LAYER_GELU:
        din = own(st, s->be, n, f);
        o->gelu_bwd(c, din->data, a->h1->data, dout->data, n * f);
        break;
    case PP_LAYER_W1:
        din = own(st, s->be, n, h);
        o->gemm(c, 0, 1, n, h, f, 1.0f, dout->data, f, W(block_param(s, i, P_W1)), f, 0.0f, din->data, h);
        o->gemm(c, 1, 0, h, f, n, 1.0f, a->ln->data, h, dout->data, f, 1.0f, G(block_param(s, i, P_W1)), f);
        o->bias_grad(c, G(block_param(s, i, P_B1)), dout->data, n, f);
        break;
    case PP_LAYER_LN:
        din = own(st, s->be, n, h);
        o->layernorm_bwd(c, din->data, G(block_param(s, i, P_LN_G)), G(block_param(s, i, P_LN_B)), dout->data,
                         a->x->data, a->mean->data, a->rstd->data, W(block_param(s, i, P_LN_G)), n, h);
        break;
    default:
        PP_ASSERT(0);
    }
    return din;
}

void pp__model_bias2_backward(pp_stage_model *s, int i, pp_tensor *dy) {
    s->be->ops->bias_grad(s->be->ctx, G(block_param(s, i, P_B2)), dy->data, dy->rows, dy->cols);
}

pp_tensor *pp__model_back_close(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, pp_tensor *dy) {
    st->input_done = 1;
    if (s->has_embed) {
        s->be->ops->embedding_bwd(s->be->ctx, G(&s->params[0]), dy->data, st->tokens->data, st->rows, s->d.hidden);
        return NULL;
    }
    pp_tensor *dx = pp__tensor_new_output(s->be, arena, dy->rows, dy->cols, -1);
    s->be->ops->copy(s->be->ctx, dx->data, dy->data, dy->bytes);
    return dx;
}

size_t pp__model_layered_bytes(const pp_model_dims *d, int nblocks, int has_embed, int has_head, int ffn_local,
                               int rows) {
    size_t n = (size_t)rows, h = (size_t)d->hidden, f = (size_t)ffn_local, V = (size_t)d->vocab;
    size_t floats = has_embed ? (nblocks || has_head ? n * h : 0) : n * h; /* the embedding's output, or x */
    floats += (size_t)nblocks * (2 * n + n * h + 2 * n * f + n * h);
    if (has_head) floats += 2 * n + n * h + 2 * n * V;
    return floats * sizeof(float);
}

/* ---- data ---------------------------------------------------------------------------------------------- */

void pp__data_microbatch(const pp_model_dims *d, int mb_size, int step, int mb, int *tokens, int *targets) {
    uint64_t s = name_seed(d->seed, "data") ^ ((uint64_t)(step + 1) << 32) ^ (uint64_t)(mb + 1) * 0x51ED27ull;
    int n = mb_size * d->seq;
    for (int i = 0; i < n; i++) {
        tokens[i] = (int)(mix64(&s) % (uint64_t)d->vocab);
        /* the learnable rule: an affine map of the token, so the loss can fall towards zero */
        targets[i] = (7 * tokens[i] + 3) % d->vocab;
    }
}
