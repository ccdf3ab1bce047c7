/* model.c: the model's parameters, made the same on every cut of the model (any partition, any tensor-parallel
 * shard) from the seed and each parameter's name, their optimizer update, and the synthetic data the graded runs
 * train on. The passes over a stage are passes.c's, a block's layers layers.c's. */
#include "model.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "hash.h"

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


long pp__model_param_count(const pp_model_dims *d, int nblocks, int has_embed, int has_head, int shards) {
    long h = d->hidden, f = d->ffn, V = d->vocab, T = d->seq, S = shards > 1 ? shards : 1;
    /* the cut ones: Wq, Wk, Wv, bq, bv and Wo; W1, b1 and W2 */
    long attn = 2 * h + (3 * h * h + 2 * h + h * h) / S + h, mlp = 2 * h + (h * f + f + f * h) / S + h;
    return (has_embed ? V * h + T * h : 0) + nblocks * (attn + mlp) + (has_head ? 2 * h + h * V + V : 0);
}

void pp__model_init(pp_stage_model *s, const pp_model_dims *d, int first_block, int nblocks, int has_embed,
                    int has_head, pp_backend *be) {
    pp__model_init_shard(s, d, first_block, nblocks, has_embed, has_head, be, NULL);
}

/* Block b's parameters, in the order of model_priv.h. The residual halves' last linears are scaled down with depth so
 * that the stack stays well conditioned at any L (GPT-2's rule); the biases are drawn, not zero, so that their
 * gradients are checked like every other. */
static void block_params(pp_stage_model *s, int b) {
    int h = s->d.hidden, f = s->d.ffn;
    float deep = 1.0f / sqrtf((float)(2 * s->d.layers)), wh = 1.0f / sqrtf((float)h);
    char name[32];
    snprintf(name, sizeof name, "block%d.ln1.g", b), param_add(s, name, 1, h, INIT_ONE, 0);
    snprintf(name, sizeof name, "block%d.ln1.b", b), param_add(s, name, 1, h, INIT_ZERO, 0);
    snprintf(name, sizeof name, "block%d.wq", b), param_split(s, name, h, h, INIT_UNIFORM, wh, PP_SPLIT_COLS);
    snprintf(name, sizeof name, "block%d.bq", b), param_split(s, name, 1, h, INIT_UNIFORM, 0.1f, PP_SPLIT_COLS);
    snprintf(name, sizeof name, "block%d.wk", b), param_split(s, name, h, h, INIT_UNIFORM, wh, PP_SPLIT_COLS);
    snprintf(name, sizeof name, "block%d.wv", b), param_split(s, name, h, h, INIT_UNIFORM, wh, PP_SPLIT_COLS);
    snprintf(name, sizeof name, "block%d.bv", b), param_split(s, name, 1, h, INIT_UNIFORM, 0.1f, PP_SPLIT_COLS);
    snprintf(name, sizeof name, "block%d.wo", b), param_split(s, name, h, h, INIT_UNIFORM, wh * deep, PP_SPLIT_ROWS);
    snprintf(name, sizeof name, "block%d.bo", b), param_add(s, name, 1, h, INIT_UNIFORM, 0.1f);
    snprintf(name, sizeof name, "block%d.ln2.g", b), param_add(s, name, 1, h, INIT_ONE, 0);
    snprintf(name, sizeof name, "block%d.ln2.b", b), param_add(s, name, 1, h, INIT_ZERO, 0);
    snprintf(name, sizeof name, "block%d.w1", b), param_split(s, name, h, f, INIT_UNIFORM, wh, PP_SPLIT_COLS);
    snprintf(name, sizeof name, "block%d.b1", b), param_split(s, name, 1, f, INIT_UNIFORM, 0.1f, PP_SPLIT_COLS);
    snprintf(name, sizeof name, "block%d.w2", b);
    param_split(s, name, f, h, INIT_UNIFORM, 1.0f / sqrtf((float)f) * deep, PP_SPLIT_ROWS);
    snprintf(name, sizeof name, "block%d.b2", b), param_add(s, name, 1, h, INIT_UNIFORM, 0.1f);
}

void pp__model_init_shard(pp_stage_model *s, const pp_model_dims *d, int first_block, int nblocks, int has_embed,
                          int has_head, pp_backend *be, const pp_tp_shard *tp) {
    memset(s, 0, sizeof *s);
    s->tp = tp && tp->size > 1 ? *tp : (pp_tp_shard){.size = 1};
    PP_ASSERT(d->heads > 0 && d->hidden % d->heads == 0);
    PP_ASSERT(d->ffn % s->tp.size == 0 && d->heads % s->tp.size == 0 && s->tp.rank >= 0 && s->tp.rank < s->tp.size);
    s->ffn_local = d->ffn / s->tp.size;
    s->heads_local = d->heads / s->tp.size;
    s->d = *d;
    s->first_block = first_block;
    s->nblocks = nblocks;
    s->has_embed = has_embed;
    s->has_head = has_head;
    s->be = be;
    int h = d->hidden, V = d->vocab;
    if (has_embed) {
        param_add(s, "embed.w", V, h, INIT_UNIFORM, 1.0f);
        param_add(s, "pos.w", d->seq, h, INIT_UNIFORM, 0.1f);
    }
    for (int i = 0; i < nblocks; i++) block_params(s, first_block + i);
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
