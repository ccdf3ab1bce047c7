/* test_model.c: the model cut into stages. Stages 0..S-1 in sequence equal the whole model; M micro-batches
 * with 1/M loss scaling equal the full batch; the backward agrees with a finite difference of the loss; the
 * split backward (B then W) equals the combined one; recomputation changes nothing but memory; tensor-parallel
 * shards of a stage together compute the stage.
 *
 * Tolerance for accumulation vs full batch: per-tensor relative error norm ||a-b||/||b|| <= 1e-5. The two
 * differ only in summation order (M GEMMs of n rows accumulated, against one GEMM of M*n rows); the noise
 * measured here at M=8 is logged by the test (about 1e-7), two orders of magnitude below the limit, and far
 * below the grader's 1e-4 threshold (grader/grade/checks.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "model.h"
#include "runtime.h"

static pp_model_dims dims(int layers) {
    pp_model_dims d = {.vocab = 32, .hidden = 16, .ffn = 64, .heads = 4, .seq = 8, .layers = layers, .seed = 99};
    return d;
}

enum { MB = 2 }; /* samples per micro-batch */

static pp_backend *cpu(void) {
    char err[256];
    pp_backend *be = pp__backend_open("cpu", 0, 1, err, sizeof err);
    cr_assert(be, "%s", err);
    return be;
}

static pp_tensor *ints(pp_backend *be, pp_arena *a, const int *v, int n) {
    pp_tensor *t = pp__tensor_new(be, a, n, 1, PP_I32, -1);
    pp__tensor_from_host(t, v);
    return t;
}

/* Forward + backward of micro-batches [mb0, mb0+count) through `nst` stages (stage i holds blocks
 * [cuts[i], cuts[i+1])), seeding the loss gradient with `scale`. Returns the loss. */
static float run_stages(pp_stage_model *st, int nst, pp_backend *be, const pp_model_dims *d, int mb0, int count,
                        float scale) {
    int per = MB * d->seq, rows = per * count;
    int *tok = malloc(sizeof(int) * rows), *tgt = malloc(sizeof(int) * rows);
    for (int i = 0; i < count; i++) pp__data_microbatch(d, MB, 0, mb0 + i, tok + i * per, tgt + i * per);
    pp_arena a = {0};
    pp_tensor *tokens = ints(be, &a, tok, rows), *targets = ints(be, &a, tgt, rows);
    pp_model_stash **stash = calloc((size_t)nst, sizeof *stash);
    pp_tensor *x = NULL;
    for (int s = 0; s < nst; s++)
        x = pp__model_forward(&st[s], &a, rows, x, st[s].has_embed ? tokens : NULL, st[s].has_head ? targets : NULL,
                              &stash[s]);
    float loss;
    pp__tensor_to_host(x, &loss);
    pp_tensor *dy = pp__tensor_new(be, &a, 1, 1, PP_F32, -1);
    pp__tensor_from_host(dy, &scale);
    for (int s = nst - 1; s >= 0; s--) {
        dy = pp__model_backward_input(&st[s], &a, stash[s], dy);
        pp__model_backward_weight(&st[s], stash[s]);
        pp__stash_release(stash[s]);
    }
    pp__arena_clear(&a);
    free(stash), free(tok), free(tgt);
    return loss;
}

/* Concatenated host copy of the gradients (or weights) of stages. */
static float *flat(pp_stage_model *st, int nst, int grads, int *n) {
    int total = 0;
    for (int s = 0; s < nst; s++)
        for (int i = 0; i < st[s].nparams; i++) total += st[s].params[i].w->rows * st[s].params[i].w->cols;
    float *v = malloc(sizeof(float) * total);
    int k = 0;
    for (int s = 0; s < nst; s++)
        for (int i = 0; i < st[s].nparams; i++) {
            pp_tensor *t = grads ? st[s].params[i].g : st[s].params[i].w;
            pp__tensor_to_host(t, v + k);
            k += t->rows * t->cols;
        }
    *n = total;
    return v;
}

static double rel(const float *a, const float *b, int n) {
    double d = 0, r = 0;
    for (int i = 0; i < n; i++) d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]), r += (double)b[i] * b[i];
    return sqrt(d / (r > 0 ? r : 1));
}

static void cut(pp_stage_model *st, int nst, const pp_model_dims *d, pp_backend *be) {
    int per = d->layers / nst;
    for (int s = 0; s < nst; s++) pp__model_init(&st[s], d, s * per, per, s == 0, s == nst - 1, be);
}

Test(model, stages_in_sequence_equal_the_whole_model) {
    pp_backend *be = cpu();
    pp_model_dims d = dims(8);
    pp_stage_model whole;
    pp__model_init(&whole, &d, 0, 8, 1, 1, be);
    float lw = run_stages(&whole, 1, be, &d, 0, 1, 1.0f);
    int n1, n2;
    float *gw = flat(&whole, 1, 1, &n1), *ww = flat(&whole, 1, 0, &n1);
    for (int nst = 2; nst <= 8; nst *= 2) {
        pp_stage_model st[8];
        cut(st, nst, &d, be);
        float ls = run_stages(st, nst, be, &d, 0, 1, 1.0f);
        float *gs = flat(st, nst, 1, &n2), *ws = flat(st, nst, 0, &n2);
        cr_assert_eq(n1, n2, "the stages hold every parameter once");
        cr_expect_eq(memcmp(ws, ww, sizeof(float) * n1), 0, "%d stages: initial weights differ from the whole model's", nst);
        /* the same ops on the same rows: equal to the last bit */
        cr_expect_eq(ls, lw, "%d stages: loss %.9g vs %.9g", nst, ls, lw);
        cr_expect_eq(memcmp(gs, gw, sizeof(float) * n1), 0, "%d stages: gradients differ (rel %.2e)", nst, rel(gs, gw, n1));
        for (int s = 0; s < nst; s++) pp__model_free(&st[s]);
        free(gs), free(ws);
    }
    free(gw), free(ww);
    pp__model_free(&whole);
    pp__backend_close(be);
}

Test(model, microbatch_accumulation_equals_the_full_batch) {
    pp_backend *be = cpu();
    pp_model_dims d = dims(4);
    const int M = 8;
    pp_stage_model full, acc;
    pp__model_init(&full, &d, 0, 4, 1, 1, be);
    pp__model_init(&acc, &d, 0, 4, 1, 1, be);
    float lf = run_stages(&full, 1, be, &d, 0, M, 1.0f), lsum = 0;
    for (int m = 0; m < M; m++) lsum += run_stages(&acc, 1, be, &d, m, 1, 1.0f / M);
    int n;
    float *gf = flat(&full, 1, 1, &n), *ga = flat(&acc, 1, 1, &n);
    double worst = 0;
    for (int i = 0, k = 0; i < full.nparams; i++) {
        int c = full.params[i].w->rows * full.params[i].w->cols;
        double e = rel(ga + k, gf + k, c);
        cr_expect_leq(e, 1e-5, "%s: relative error %.2e", full.params[i].name, e);
        worst = e > worst ? e : worst;
        k += c;
    }
    cr_log_info("accumulation vs full batch, M=%d: worst per-tensor relative error %.2e", M, worst);
    cr_expect(fabsf(lsum / M - lf) <= 1e-6f * fabsf(lf), "mean of micro-batch losses %.9g vs full %.9g", lsum / M, lf);
    /* and a real mistake is far from it: dropping one micro-batch */
    pp__model_zero_grad(&acc);
    for (int m = 0; m < M - 1; m++) run_stages(&acc, 1, be, &d, m, 1, 1.0f / M);
    float *gm = flat(&acc, 1, 1, &n);
    cr_expect_gt(rel(gm, gf, n), 1e-2, "one micro-batch missing must show: %.2e", rel(gm, gf, n));
    free(gf), free(ga), free(gm);
    pp__model_free(&full), pp__model_free(&acc);
    pp__backend_close(be);
}

/* d(loss)/d(eps) along a random direction, central difference in fp32 with a large step, against <grad, dir>. */
Test(model, backward_matches_a_finite_difference_of_the_loss) {
    pp_backend *be = cpu();
    pp_model_dims d = dims(2);
    pp_stage_model m;
    pp__model_init(&m, &d, 0, 2, 1, 1, be);
    run_stages(&m, 1, be, &d, 0, 1, 1.0f);
    int n;
    float *g = flat(&m, 1, 1, &n), *w0 = flat(&m, 1, 0, &n);
    float *dir = malloc(sizeof(float) * n), *w = malloc(sizeof(float) * n);
    unsigned s = 12345;
    double gd = 0, dn = 0;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        dir[i] = ((float)((s >> 8) & 0xffff) / 65535.0f - 0.5f);
        gd += (double)g[i] * dir[i];
        dn += (double)dir[i] * dir[i];
    }
    double eps = 1e-2 / sqrt(dn), loss[2];
    for (int sign = 0; sign < 2; sign++) {
        for (int i = 0; i < n; i++) w[i] = w0[i] + (float)((sign ? -eps : eps) * dir[i]);
        for (int i = 0, k = 0; i < m.nparams; i++) {
            pp__tensor_from_host(m.params[i].w, w + k);
            k += m.params[i].w->rows * m.params[i].w->cols;
        }
        pp__model_zero_grad(&m);
        loss[sign] = run_stages(&m, 1, be, &d, 0, 1, 1.0f);
    }
    double fd = (loss[0] - loss[1]) / (2 * eps);
    cr_log_info("directional derivative: backward %.6g, finite difference %.6g", gd, fd);
    cr_expect(fabs(fd - gd) <= 2e-3 * fabs(gd) + 1e-4, "backward %.6g vs finite difference %.6g", gd, fd);
    free(g), free(w0), free(dir), free(w);
    pp__model_free(&m);
    pp__backend_close(be);
}

Test(model, split_backward_and_recomputation_change_nothing) {
    pp_backend *be = cpu();
    pp_model_dims d = dims(2);
    int per = MB * d.seq, n;
    int tok[64], tgt[64];
    pp__data_microbatch(&d, MB, 0, 3, tok, tgt);
    float *ref = NULL;
    for (int mode = 0; mode < 2; mode++) { /* 0: plain, 1: checkpointed (recomputed in the backward) */
        pp_stage_model m;
        pp__model_init(&m, &d, 0, 2, 1, 1, be);
        pp_arena a = {0};
        pp_model_stash *st;
        pp_tensor *out = pp__model_forward(&m, &a, per, NULL, ints(be, &a, tok, per), ints(be, &a, tgt, per), &st);
        size_t full = pp__stash_bytes(st);
        if (mode) {
            pp__stash_checkpoint(st);
            cr_expect_lt(pp__stash_bytes(st), full / 4, "a checkpoint keeps only the input: %zu of %zu bytes",
                         pp__stash_bytes(st), full);
            cr_expect(pp__stash_needs_recompute(st));
        }
        (void)out;
        float one = 1;
        pp_tensor *dy = pp__tensor_new(be, &a, 1, 1, PP_F32, -1);
        pp__tensor_from_host(dy, &one);
        cr_expect_null(pp__model_backward_input(&m, &a, st, dy), "the first stage has no input gradient");
        float *after_b = flat(&m, 1, 1, &n);
        for (int i = 0; i < n; i++) cr_assert_eq(after_b[i], 0, "the input half must not touch weight gradients");
        pp__model_backward_weight(&m, st);
        float *g = flat(&m, 1, 1, &n);
        if (!ref) ref = g;
        else {
            cr_expect_eq(memcmp(g, ref, sizeof(float) * n), 0, "recomputed backward differs (rel %.2e)", rel(g, ref, n));
            free(g);
        }
        free(after_b);
        pp__stash_release(st);
        pp__arena_clear(&a);
        pp__model_free(&m);
    }
    free(ref);
    pp__backend_close(be);
}

/* ---- tensor parallelism inside a stage ------------------------------------------------------------------ */

/* The group's meeting place for the test's shards, which are threads: each one's partial product, summed by
 * every shard in rank order (the contract of pp_tp_shard.allreduce). */
typedef struct tp_meet {
    pthread_barrier_t bar;
    float *part[4];
} tp_meet;

typedef struct tp_job {
    tp_meet *meet;
    int T, t, layers;
    pp_stage_model m;
    float loss;
    size_t stash_bytes;
} tp_job;

static void meet_allreduce(void *ctx, pp_tensor *t) {
    tp_job *j = ctx;
    float *data = t->data; /* the cpu backend's memory is the host's */
    int n = t->rows * t->cols;
    j->meet->part[j->t] = data;
    pthread_barrier_wait(&j->meet->bar);
    float *sum = malloc(sizeof(float) * (size_t)n);
    memcpy(sum, j->meet->part[0], sizeof(float) * (size_t)n);
    for (int t = 1; t < j->T; t++)
        for (int i = 0; i < n; i++) sum[i] += j->meet->part[t][i];
    pthread_barrier_wait(&j->meet->bar); /* every shard has read the parts: each may overwrite its own */
    memcpy(data, sum, sizeof(float) * (size_t)n);
    free(sum);
}

/* One micro-batch through a stage holding the whole model (T = 1) or one shard of it: the loss, the stash's bytes
 * after the forward, and the gradients in j->m. */
static void *tp_run(void *arg) {
    tp_job *j = arg;
    pp_model_dims d = dims(j->layers);
    pp_backend *be = cpu();
    pp_tp_shard tp = {.size = j->T, .rank = j->t, .allreduce = meet_allreduce, .ctx = j};
    pp__model_init_shard(&j->m, &d, 0, j->layers, 1, 1, be, &tp);
    int rows = MB * d.seq, tok[64], tgt[64];
    pp__data_microbatch(&d, MB, 0, 5, tok, tgt);
    pp_arena a = {0};
    pp_model_stash *st;
    pp_tensor *out = pp__model_forward(&j->m, &a, rows, NULL, ints(be, &a, tok, rows), ints(be, &a, tgt, rows), &st);
    j->stash_bytes = pp__stash_bytes(st);
    pp__tensor_to_host(out, &j->loss);
    float one = 1;
    pp_tensor *dy = pp__tensor_new(be, &a, 1, 1, PP_F32, -1);
    pp__tensor_from_host(dy, &one);
    pp__model_backward_input(&j->m, &a, st, dy);
    pp__model_backward_weight(&j->m, st);
    pp__stash_release(st);
    pp__arena_clear(&a);
    return be;
}

/* Megatron-LM's split: T shards of a stage, attention's Wq, bq, Wk, Wv, bv by columns (whole heads) and Wo by rows,
 * the MLP's W1 and b1 by columns and W2 by rows, the rest whole, with the all-reduces between them, compute what the
 * whole stage computes. Gathered (columns side by side, rows one
 * after the other), the shards' gradients are the whole model's within 1e-5 (only the order of the sums
 * differs); the parameters every shard holds whole get the same gradient bits on every shard; the loss is the
 * whole model's; and each shard stashes exactly 1/T of the activations it cuts (the FFN's h1 and a1; attention's q,
 * k, v, its probabilities and its output), the rest being the same. */
Test(model, tensor_parallel_shards_equal_the_whole_stage) {
    enum { L = 2 };
    tp_job whole = {.T = 1, .layers = L};
    pp_backend *be0 = tp_run(&whole);
    pp_model_dims d = dims(L);
    size_t n = (size_t)MB * d.seq, probs = (size_t)MB * d.heads * d.seq * d.seq;
    size_t ffn_acts = (size_t)L * (2 * n * d.ffn + 4 * n * d.hidden + probs) * sizeof(float);
    for (int T = 2; T <= 4; T *= 2) {
        tp_meet meet;
        pthread_barrier_init(&meet.bar, NULL, (unsigned)T);
        tp_job jobs[4];
        pthread_t th[4];
        for (int t = 0; t < T; t++) {
            jobs[t] = (tp_job){.meet = &meet, .T = T, .t = t, .layers = L};
            cr_assert_eq(pthread_create(&th[t], NULL, tp_run, &jobs[t]), 0);
        }
        pp_backend *bes[4];
        for (int t = 0; t < T; t++) pthread_join(th[t], (void **)&bes[t]);
        pthread_barrier_destroy(&meet.bar);
        for (int t = 0; t < T; t++) {
            cr_expect(fabsf(jobs[t].loss - whole.loss) <= 1e-6f * fabsf(whole.loss), "T=%d shard %d: loss %.9g, the "
                      "whole stage's %.9g", T, t, jobs[t].loss, whole.loss);
            cr_expect_eq(whole.stash_bytes - jobs[t].stash_bytes, ffn_acts - ffn_acts / T, "T=%d shard %d stashes %zu "
                         "bytes, the whole stage %zu: the difference should be (1 - 1/T) of the %zu bytes the shards cut", T, t,
                         jobs[t].stash_bytes, whole.stash_bytes, ffn_acts);
        }
        cr_assert_eq(jobs[0].m.nparams, whole.m.nparams);
        for (int i = 0; i < whole.m.nparams; i++) {
            const pp_param *p = &whole.m.params[i];
            int rows = p->g->rows, cols = p->g->cols, n = rows * cols;
            float *want = malloc(sizeof(float) * n), *got = malloc(sizeof(float) * n), *part = malloc(sizeof(float) * n);
            pp__tensor_to_host(p->g, want);
            for (int t = 0; t < T; t++) {
                const pp_param *q = &jobs[t].m.params[i];
                cr_assert_str_eq(q->name, p->name);
                pp__tensor_to_host(q->g, part);
                int nr = q->g->rows, nc = q->g->cols;
                cr_assert_eq(q->split == PP_SPLIT_COLS ? nc * T : nc, cols, "%s", p->name);
                cr_assert_eq(q->split == PP_SPLIT_ROWS ? nr * T : nr, rows, "%s", p->name);
                if (q->split == PP_SPLIT_NONE) {
                    if (t == 0) memcpy(got, part, sizeof(float) * n);
                    else cr_expect_eq(memcmp(got, part, sizeof(float) * n), 0, "T=%d: %s differs between shard 0 and "
                                      "shard %d, which both hold it whole", T, p->name, t);
                } else {
                    for (int r = 0; r < nr; r++)
                        for (int k = 0; k < nc; k++) {
                            int R = q->split == PP_SPLIT_ROWS ? t * nr + r : r, C = q->split == PP_SPLIT_COLS ? t * nc + k : k;
                            got[R * cols + C] = part[r * nc + k];
                        }
                }
            }
            cr_expect(rel(got, want, n) <= 1e-5, "T=%d: %s's gathered gradient is %.2e from the whole stage's", T,
                      p->name, rel(got, want, n));
            free(want), free(got), free(part);
        }
        for (int t = 0; t < T; t++) pp__model_free(&jobs[t].m), pp__backend_close(bes[t]);
    }
    pp__model_free(&whole.m);
    pp__backend_close(be0);
}
