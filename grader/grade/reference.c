/* reference.c: full-batch training of the whole model on one device, for the grader's comparisons. */
#include "reference.h"

#include <stdint.h>
#include <string.h>

#include "data.h"
#include "result.h"

/* Forward + backward of micro-batches [mb0, mb0+count) of `step` as one batch; gradients accumulate. */
static void train_batch(pp_stage_model *m, const pp_run_config *c, int step, int mb0, int count, float *loss) {
    int per = c->mb_size * c->seq, rows = per * count;
    pp_arena arena = {0};
    int *tok = pp__xmalloc((size_t)rows * sizeof(int)), *tgt = pp__xmalloc((size_t)rows * sizeof(int));
    for (int i = 0; i < count; i++)
        pp__data_fill(c->corpus, &m->d, c->mb_size, step, mb0 + i, tok + i * per, tgt + i * per);
    pp_tensor *tokens = pp__tensor_new(m->be, &arena, rows, 1, PP_I32, -1);
    pp_tensor *targets = pp__tensor_new(m->be, &arena, rows, 1, PP_I32, -1);
    pp__tensor_from_host(tokens, tok);
    pp__tensor_from_host(targets, tgt);
    pp_model_stash *st;
    pp_tensor *out = pp__model_forward(m, &arena, rows, NULL, tokens, targets, &st);
    if (loss) pp__tensor_to_host(out, loss);
    pp_tensor *dloss = pp__tensor_new(m->be, &arena, 1, 1, PP_F32, -1);
    float one = 1.0f;
    pp__tensor_from_host(dloss, &one);
    pp__model_backward_input(m, &arena, st, dloss);
    pp__model_backward_weight(m, st);
    pp__stash_release(st);
    pp__arena_clear(&arena);
    free(tok);
    free(tgt);
}

static float *flatten_grads(pp_stage_model *m, size_t total) {
    float *g = pp__xmalloc(total * sizeof *g);
    size_t k = 0;
    for (int i = 0; i < m->nparams; i++) {
        pp__tensor_to_host(m->params[i].g, g + k);
        k += (size_t)m->params[i].g->rows * m->params[i].g->cols;
    }
    return g;
}

int pp__reference_run(const pp_run_config *c, int per_mb, pp_reference *ref, char *err, size_t errlen) {
    memset(ref, 0, sizeof *ref);
    pp_backend *be = pp__backend_open("cpu", 0, 1, err, errlen);
    if (!be) return -1;
    pp_model_dims d;
    pp__config_model_dims(c, &d);
    pp_stage_model m;
    pp__model_init(&m, &d, 0, d.layers, 1, 1, be);
    ref->nparams = m.nparams;
    /* the global batch: D replicas' M micro-batches each, replica d's being d*M..d*M+M-1 */
    int Mg = c->M * (c->D > 1 ? c->D : 1);
    ref->M = Mg;
    ref->params = pp__xcalloc((size_t)m.nparams, sizeof *ref->params);
    ref->loss = pp__xcalloc((size_t)c->steps, sizeof(float));
    for (int i = 0; i < m.nparams; i++) ref->total += (size_t)m.params[i].w->rows * m.params[i].w->cols;
    if (per_mb) {
        ref->mb_grad = pp__xcalloc((size_t)Mg, sizeof *ref->mb_grad);
        for (int mb = 0; mb < Mg; mb++) {
            pp__model_zero_grad(&m);
            train_batch(&m, c, 0, mb, 1, NULL);
            ref->mb_grad[mb] = flatten_grads(&m, ref->total);
        }
    }
    for (int step = 0; step < c->steps; step++) {
        pp__model_zero_grad(&m);
        train_batch(&m, c, step, 0, Mg, &ref->loss[step]);
        if (step == 0)
            for (int i = 0; i < m.nparams; i++) {
                pp_param_result *p = &ref->params[i];
                snprintf(p->name, sizeof p->name, "%s", m.params[i].name);
                p->count = m.params[i].w->rows * m.params[i].w->cols;
                p->grad = pp__xmalloc((size_t)p->count * sizeof(float));
                pp__tensor_to_host(m.params[i].g, p->grad);
            }
        pp__model_update(&m, c->optimizer == PP_OPT_ADAMW, c->lr, c->weight_decay, step + 1);
    }
    for (int i = 0; i < m.nparams; i++) {
        pp_param_result *p = &ref->params[i];
        p->weight = pp__xmalloc((size_t)p->count * sizeof(float));
        pp__tensor_to_host(m.params[i].w, p->weight);
    }
    pp__model_free(&m);
    pp__backend_close(be);
    return 0;
}

void pp__reference_free(pp_reference *ref) {
    for (int i = 0; i < ref->nparams; i++) free(ref->params[i].grad), free(ref->params[i].weight);
    free(ref->params);
    free(ref->loss);
    if (ref->mb_grad)
        for (int m = 0; m < ref->M; m++) free(ref->mb_grad[m]);
    free(ref->mb_grad);
    memset(ref, 0, sizeof *ref);
}

void pp__reference_encode(pp_wire *w, const pp_reference *ref, int steps) {
    pp__wire_i64(w, ref->nparams), pp__wire_i64(w, ref->M);
    pp__wire_put(w, ref->loss, (size_t)steps * sizeof(float));
    for (int i = 0; i < ref->nparams; i++) pp__param_encode(w, &ref->params[i]);
}

int pp__reference_decode(pp_wire_in *r, int steps, pp_reference *ref) {
    memset(ref, 0, sizeof *ref);
    int64_t left = (int64_t)pp__wire_left(r);
    ref->nparams = (int)pp__wire_get_i64(r, 0, left / 16);
    ref->M = (int)pp__wire_get_i64(r, 1, INT32_MAX);
    ref->loss = pp__xcalloc((size_t)steps, sizeof(float));
    pp__wire_get(r, ref->loss, (size_t)steps * sizeof(float));
    ref->params = pp__xcalloc((size_t)ref->nparams + 1, sizeof *ref->params);
    for (int i = 0; i < ref->nparams && !r->bad; i++)
        if (pp__param_decode(r, &ref->params[i]) == 0) ref->total += (size_t)ref->params[i].count;
    if (r->bad || pp__wire_left(r)) {
        pp__reference_free(ref);
        return -1;
    }
    return 0;
}

int pp__reference_losses(const pp_run_config *c, float *loss_per_step) {
    pp_reference ref;
    char err[256];
    if (pp__reference_run(c, 0, &ref, err, sizeof err)) return -1;
    memcpy(loss_per_step, ref.loss, (size_t)c->steps * sizeof(float));
    pp__reference_free(&ref);
    return 0;
}
