/* layers.c: each layer of a block on its own, forward and backward, through the stage's backend. The whole-stage
 * passes (model.c) and lab 08's block calls (blocks.c) are both made of these, so a schedule that writes its own
 * blocks runs the very kernels a whole stage runs. The two halves of a block have one shape: LayerNorm, a linear
 * cut by columns, a step of their own that works column group by column group (attention head by head; GELU
 * element by element), a linear cut by rows. */
#include <math.h>

#include "error.h"
#include "model_priv.h"

int pp__half_pre_cols(const pp_stage_model *s, int half) {
    return half == HALF_ATTN ? 3 * s->heads_local * (s->d.hidden / s->d.heads) : s->ffn_local;
}
int pp__half_act_cols(const pp_stage_model *s, int half) {
    return half == HALF_ATTN ? s->heads_local * (s->d.hidden / s->d.heads) : s->ffn_local;
}

int pp__model_layer_cols(const pp_stage_model *s, pp_layer layer) {
    int half = layer / PP_HALF_LAYERS, kind = layer % PP_HALF_LAYERS;
    return kind == 2 ? pp__half_pre_cols(s, half) : kind == 3 ? pp__half_act_cols(s, half) : s->d.hidden;
}

/* The first linear's pieces: attention's q, k and v, the MLP's W1, each weight with its bias (none: -1). */
static int nin(int half) { return half == HALF_ATTN ? 3 : 1; }
static int win(int half, int j) {
    static const int w[HALVES][3] = {{A_WQ, A_WK, A_WV}, {M_W1}};
    return w[half][j];
}
static int bin(int half, int j) {
    static const int b[HALVES][3] = {{A_BQ, -1, A_BV}, {M_B1}};
    return b[half][j];
}
static int ln_g(int half) { return half == HALF_ATTN ? A_LN_G : M_LN_G; }
static int wout(int half) { return half == HALF_ATTN ? A_WO : M_W2; }

/* The first linear: piece j of nin(half) (q, k, v; or W1 alone) is in W_j + b_j, written n x c after the previous
 * pieces, so that each is a whole n x c matrix of its own for the attention kernel. */
static void in_forward(pp_stage_model *s, int i, int half, const float *in, float *out, int n) {
    const pp_backend_ops *o = s->be->ops;
    int h = s->d.hidden, c = pp__half_act_cols(s, half);
    for (int j = 0; j < nin(half); j++) {
        float *y = out + (size_t)j * n * c;
        o->gemm(s->be->ctx, 0, 0, n, c, h, 1.0f, in, h, pp__w(pp__block_param(s, i, win(half, j))), c, 0.0f, y, c);
        if (bin(half, j) >= 0) o->bias_add(s->be->ctx, y, pp__w(pp__block_param(s, i, bin(half, j))), n, c);
    }
}

/* The half's own step: causal attention over the shard's heads, or GELU. */
static void act_forward(pp_stage_model *s, half_acts *a, int half, pp_tensor *out, pp_model_stash *st) {
    int n = st->rows, c = pp__half_act_cols(s, half);
    if (half == HALF_MLP) {
        s->be->ops->gelu_fwd(s->be->ctx, out->data, a->pre->data, n * c);
        return;
    }
    int T = s->d.seq, B = n / T, nh = s->heads_local, hd = s->d.hidden / s->d.heads;
    const float *q = a->pre->data;
    a->att = pp__stash_own(st, s->be, B * nh * T, T);
    s->be->ops->attn_fwd(s->be->ctx, out->data, a->att->data, q, q + (size_t)n * c, q + 2 * (size_t)n * c, B, T, nh, hd);
}

pp_tensor *pp__model_layer_forward(pp_stage_model *s, pp_model_stash *st, int i, pp_layer layer, pp_tensor *in) {
    const pp_backend_ops *o = s->be->ops;
    int n = st->rows, h = s->d.hidden, half = layer / PP_HALF_LAYERS;
    half_acts *a = &st->blocks[i].h[half];
    pp_tensor *out = NULL;
    switch (layer % PP_HALF_LAYERS) {
    case 0: /* LayerNorm */
        a->x = in;
        a->mean = pp__stash_own(st, s->be, n, 1);
        a->rstd = pp__stash_own(st, s->be, n, 1);
        out = a->ln = pp__stash_own(st, s->be, n, h);
        o->layernorm_fwd(s->be->ctx, out->data, a->mean->data, a->rstd->data, in->data,
                         pp__w(pp__block_param(s, i, ln_g(half))), pp__w(pp__block_param(s, i, ln_g(half) + 1)), n, h);
        break;
    case 1: /* the first linear, cut by columns */
        a->ln = in;
        out = pp__stash_own(st, s->be, n, pp__half_pre_cols(s, half));
        in_forward(s, i, half, in->data, out->data, n);
        break;
    case 2: /* attention or GELU */
        a->pre = in;
        out = pp__stash_own(st, s->be, n, pp__half_act_cols(s, half));
        act_forward(s, a, half, out, st);
        break;
    default: /* the last linear, cut by rows: this shard's partial product */
        a->act = in;
        out = pp__stash_own(st, s->be, n, h);
        o->gemm(s->be->ctx, 0, 0, n, h, in->cols, 1.0f, in->data, in->cols, pp__w(pp__block_param(s, i, wout(half))),
                h, 0.0f, out->data, h);
        break;
    }
    return out;
}

static int bias_of(pp_layer layer) { return layer / PP_HALF_LAYERS == HALF_ATTN ? A_BO : M_B2; }

void pp__model_bias_forward(pp_stage_model *s, int i, pp_layer layer, pp_tensor *y) {
    s->be->ops->bias_add(s->be->ctx, y->data, pp__w(pp__block_param(s, i, bias_of(layer))), y->rows, y->cols);
}

void pp__model_bias_backward(pp_stage_model *s, int i, pp_layer layer, pp_tensor *dy) {
    s->be->ops->bias_grad(s->be->ctx, pp__g(pp__block_param(s, i, bias_of(layer))), dy->data, dy->rows, dy->cols);
}

int pp__model_layer_kept(const pp_model_stash *st, int i, pp_layer layer) {
    const half_acts *a = &st->blocks[i].h[layer / PP_HALF_LAYERS];
    const pp_tensor *kept[] = {a->x, a->ln, a->pre, a->act};
    return kept[layer % PP_HALF_LAYERS] != NULL;
}

/* ---- backward: input halves ---------------------------------------------------------------------------- */

pp_tensor *pp__half_out_input(pp_stage_model *s, pp_model_stash *st, int i, int half, pp_tensor *dy, int keep) {
    int n = st->rows, h = s->d.hidden, c = pp__half_act_cols(s, half);
    st->blocks[i].h[half].dy = dy;
    pp_tensor *dact = keep ? pp__stash_own(st, s->be, n, c) : pp__tensor_new_output(s->be, NULL, n, c, -1);
    s->be->ops->gemm(s->be->ctx, 0, 1, n, c, h, 1.0f, dy->data, h, pp__w(pp__block_param(s, i, wout(half))), h, 0.0f,
                     dact->data, c);
    return dact;
}

pp_tensor *pp__half_act_input(pp_stage_model *s, pp_model_stash *st, int i, int half, pp_tensor *dact) {
    half_acts *a = &st->blocks[i].h[half];
    int n = st->rows, c = pp__half_act_cols(s, half);
    pp_tensor *dpre = pp__stash_own(st, s->be, n, pp__half_pre_cols(s, half));
    if (half == HALF_MLP) {
        s->be->ops->gelu_bwd(s->be->ctx, dpre->data, a->pre->data, dact->data, n * c);
        return dpre;
    }
    int T = s->d.seq, B = n / T, nh = s->heads_local, hd = s->d.hidden / s->d.heads;
    pp_tensor *scratch = pp__tensor_new_output(s->be, NULL, B * nh * T, T, -1);
    const float *q = a->pre->data;
    float *dq = dpre->data;
    size_t nc = (size_t)n * c;
    s->be->ops->attn_bwd(s->be->ctx, dq, dq + nc, dq + 2 * nc, scratch->data, dact->data, q, q + nc, q + 2 * nc,
                         a->att->data, B, T, nh, hd);
    pp__tensor_free(scratch);
    return dpre;
}

pp_tensor *pp__half_in_input(pp_stage_model *s, pp_model_stash *st, int i, int half, pp_tensor *dpre) {
    int n = st->rows, h = s->d.hidden, c = pp__half_act_cols(s, half);
    st->blocks[i].h[half].dpre = dpre;
    pp_tensor *dln = pp__stash_own(st, s->be, n, h);
    for (int j = 0; j < nin(half); j++) /* the pieces' input gradients add up: LN's output fed all three */
        s->be->ops->gemm(s->be->ctx, 0, 1, n, h, c, 1.0f, (float *)dpre->data + (size_t)j * n * c, c,
                         pp__w(pp__block_param(s, i, win(half, j))), c, j ? 1.0f : 0.0f, dln->data, h);
    return dln;
}

pp_tensor *pp__half_ln_input(pp_stage_model *s, pp_arena *arena, pp_model_stash *st, int i, int half,
                             pp_tensor *dln, int to_arena) {
    int n = st->rows, h = s->d.hidden;
    half_acts *a = &st->blocks[i].h[half];
    a->dln = dln;
    pp_tensor *dx = to_arena ? pp__tensor_new_output(s->be, arena, n, h, -1) : pp__stash_own(st, s->be, n, h);
    s->be->ops->layernorm_bwd(s->be->ctx, dx->data, NULL, NULL, dln->data, a->x->data, a->mean->data, a->rstd->data,
                              pp__w(pp__block_param(s, i, ln_g(half))), n, h);
    return dx;
}

/* ---- backward: weight halves --------------------------------------------------------------------------- */

void pp__layer_weight(pp_stage_model *s, pp_model_stash *st, int i, pp_layer layer) {
    const pp_backend_ops *o = s->be->ops;
    void *c = s->be->ctx;
    int n = st->rows, h = s->d.hidden, half = layer / PP_HALF_LAYERS, ac = pp__half_act_cols(s, half);
    half_acts *a = &st->blocks[i].h[half];
    switch (layer % PP_HALF_LAYERS) {
    case 0:
        o->layernorm_bwd(c, NULL, pp__g(pp__block_param(s, i, ln_g(half))), pp__g(pp__block_param(s, i, ln_g(half) + 1)),
                         a->dln->data, a->x->data, a->mean->data, a->rstd->data,
                         pp__w(pp__block_param(s, i, ln_g(half))), n, h);
        break;
    case 1:
        for (int j = 0; j < nin(half); j++) {
            const float *dp = (const float *)a->dpre->data + (size_t)j * n * ac;
            o->gemm(c, 1, 0, h, ac, n, 1.0f, a->ln->data, h, dp, ac, 1.0f, pp__g(pp__block_param(s, i, win(half, j))), ac);
            if (bin(half, j) >= 0) o->bias_grad(c, pp__g(pp__block_param(s, i, bin(half, j))), dp, n, ac);
        }
        break;
    case 3:
        o->gemm(c, 1, 0, ac, h, n, 1.0f, a->act->data, ac, a->dy->data, h, 1.0f, pp__g(pp__block_param(s, i, wout(half))),
                h);
        break;
    default: /* attention and GELU hold no weights */
        break;
    }
}

pp_tensor *pp__model_layer_backward(pp_stage_model *s, pp_model_stash *st, int i, pp_layer layer, pp_tensor *dout) {
    pp_tensor *din = NULL;
    int half = layer / PP_HALF_LAYERS;
    switch (layer % PP_HALF_LAYERS) {
    case 0: din = pp__half_ln_input(s, NULL, st, i, half, dout, 0); break;
    case 1: din = pp__half_in_input(s, st, i, half, dout); break;
    case 2: din = pp__half_act_input(s, st, i, half, dout); break;
    default: din = pp__half_out_input(s, st, i, half, dout, 1); break;
    }
    pp__layer_weight(s, st, i, layer);
    return din;
}

size_t pp__model_layered_bytes(const pp_model_dims *d, int nblocks, int has_embed, int has_head, int shards,
                               int rows) {
    size_t n = (size_t)rows, h = (size_t)d->hidden, V = (size_t)d->vocab, T = (size_t)d->seq;
    size_t f = (size_t)d->ffn / (size_t)shards, c = h / (size_t)shards, heads = (size_t)d->heads / (size_t)shards;
    size_t floats = has_embed ? (nblocks || has_head ? n * h : 0) : n * h; /* the embedding's output, or x */
    size_t attn = 2 * n + n * h + 3 * n * c + (n / T) * heads * T * T + n * c + n * h;
    size_t mlp = 2 * n + n * h + 2 * n * f + n * h;
    floats += (size_t)nblocks * (attn + mlp);
    if (has_head) floats += 2 * n + n * h + 2 * n * V;
    return floats * sizeof(float);
}
