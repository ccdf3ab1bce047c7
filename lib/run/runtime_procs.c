/* runtime_procs.c: what a run does differently when every rank is its own process (the mpi transport): each
 * process collects its own rank's results as with threads, then rank 0 gathers the others' (traces, counters,
 * gradients and weights, encoded by result.h) so that its pp_run_result is the one a threads run gives. No MPI
 * call here: the collectives are the transport's (transport.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hash.h"
#include "result.h"
#include "runtime.h"
#include "transport.h"

int pp__run_procs_agree(pp_world *w, int ok) {
    double bad = ok ? 0 : 1;
    pp__transport_sum(w, &bad, 1);
    return bad == 0;
}

void pp__run_procs_loss(pp_world *w, double *loss_sum, int *count) {
    /* only the last stage has a loss: the sum adds zeros */
    double v[2] = {*loss_sum, (double)*count};
    pp__transport_sum(w, v, 2);
    *loss_sum = v[0];
    *count = (int)v[1];
}

/* Rank 0: each of the result's R ranks' counters and trace of step 1, from that rank's own part. */
static void merge_figures(pp_run_result *res, pp_run_result *part, int R) {
    res->dloss_calls_total = res->loss_count = 0;
    for (int q = 0; q < R; q++) {
        res->opt_calls[q] = part[q].opt_calls[q];
        res->peak_stashes[q] = part[q].peak_stashes[q];
        res->sent_msgs[q] = part[q].sent_msgs[q];
        res->unfreed_stashes[q] = part[q].unfreed_stashes[q];
        res->zero_scales[q] = part[q].zero_scales[q];
        res->late_grad_zero[q] = part[q].late_grad_zero[q];
        res->tp_sums[q] = part[q].tp_sums[q];
        res->tp_bytes[q] = part[q].tp_bytes[q];
        res->peak_bytes[q] = part[q].peak_bytes[q];
        res->peak_single[q] = part[q].peak_single[q];
        res->dloss_calls_total += part[q].dloss_calls_total;
        res->loss_count += part[q].loss_count;
        pp__trace_clear(&res->traces[q]);
        res->traces[q] = part[q].traces[q];
        part[q].traces[q] = (pp_trace){0};
    }
}

/* A cut parameter p of virtual stage s put together from its T shards' slices: shard t's comes from the process of
 * shard t of the same rank (parameter i of its part). */
static void merge_shards(const pp_world *w, pp_run_result *part, int R, int T, int s, int i, pp_param_result *p) {
    int n = p->count;
    size_t whole = (size_t)n * T * sizeof(float);
    float *weight = pp__xmalloc(whole), *grad = pp__xmalloc(whole);
    for (int t = 0; t < T; t++) {
        const pp_param_result *sl = t ? &part[t * R + pp__config_vstage_rank(w->cfg, s)].params[i] : p;
        PP_ASSERT(sl->count == n && !strcmp(sl->name, p->name));
        pp__shard_into(weight, sl->weight, p->rows, p->cols, (pp_split)p->split, T, t);
        pp__shard_into(grad, sl->grad, p->rows, p->cols, (pp_split)p->split, T, t);
    }
    free(p->weight), free(p->grad);
    p->weight = weight, p->grad = grad, p->count = n * T;
}

/* Rank 0: the parameters in the model's order, virtual stage by virtual stage, each from the rank that owns it
 * (replica 0's virtual stages: the parameters a result holds), total of them. */
static void merge_params(const pp_world *w, pp_run_result *res, pp_run_result *part, int R, int total) {
    int T = w->cfg->T > 1 ? w->cfg->T : 1, S = w->cfg->P * w->cfg->v, k = 0;
    for (int i = 0; i < res->nparams; i++) free(res->params[i].grad), free(res->params[i].weight);
    free(res->params);
    res->params = pp__xcalloc((size_t)total + 1, sizeof *res->params);
    for (int s = 0; s < S; s++) {
        pp_run_result *pq = &part[pp__config_vstage_rank(w->cfg, s)];
        for (int i = 0; i < pq->nparams; i++)
            if (pq->params[i].vstage == s) {
                pp_param_result *p = &res->params[k++];
                *p = pq->params[i];
                pq->params[i].grad = pq->params[i].weight = NULL;
                if (T > 1 && p->split != PP_SPLIT_NONE) merge_shards(w, part, R, T, s, i, p);
            }
    }
    PP_ASSERT(k == total);
    res->nparams = total;
}

void pp__run_procs_merge(pp_world *w, pp_run_result *res) {
    /* every process sends its part; a result describes shard 0's R ranks, the other shards' processes adding the
     * slices of the parameters they cut */
    int me = w->local_rank, P = w->P, R = res->P;
    pp_wire b;
    pp__wire_init(&b);
    pp__result_encode(&b, res, 0); /* the losses were summed over the processes already */
    PP_ASSERT(!b.bad);
    size_t *lens = pp__xcalloc((size_t)P, sizeof *lens);
    unsigned char *all = pp__transport_gather(w, b.p, b.len, lens);
    pp__wire_free(&b);
    if (me != 0 || !all) {
        free(lens);
        free(all);
        return;
    }
    /* rank 0: every process's part, its own included, in rank order; each holds its rank's figures */
    pp_run_result *part = pp__xcalloc((size_t)P, sizeof *part);
    size_t off = 0;
    int total = 0;
    for (int q = 0; q < P; q++) {
        pp_wire_in in;
        pp__wire_in_init(&in, all + off, lens[q]);
        off += lens[q];
        PP_ASSERT(pp__result_decode(&in, R, w->cfg->v, 0, &part[q]) == 0);
        if (q < R) total += part[q].nparams;
    }
    merge_params(w, res, part, R, total);
    merge_figures(res, part, R);
    /* the other shards' traces, each from its own process */
    for (int q = R; q < P && res->tp_traces && q - R < res->tp_ranks; q++)
        if (part[q].tp_traces && q - R < part[q].tp_ranks) {
            pp__trace_clear(&res->tp_traces[q - R]);
            res->tp_traces[q - R] = part[q].tp_traces[q - R];
            part[q].tp_traces[q - R] = (pp_trace){0};
        }
    res->bubble = pp__trace_bubble(res->traces, R);
    res->makespan = pp__trace_makespan(res->traces, R);
    res->step_time = pp__trace_step_time(res->traces, R);
    for (int q = 0; q < P; q++) pp__result_free(&part[q]);
    free(part);
    free(lens);
    free(all);
}

/* What a rank says of its weights: per chunk and parameter, in order, its name and its bytes' fingerprint. */
typedef struct weight_print {
    char name[32];
    uint64_t hash;
    int64_t chunk;
    int64_t split;           /* pp_split: a cut parameter differs across shards by design */
    int64_t has_grad;        /* 1 when the rank kept its gradient of step 1 (grad_snapshot) */
    uint64_t grad_hash;      /* ... its bytes' fingerprint */
    double grad_norm2;       /* ... its squared norm */
} weight_print;

/* Rank 0: every rank's gradients of step 1 against the ones the result carries, by fingerprint, in the order and
 * with the figures a threads run gives (runtime.c's compare_grads). all + off[q]: rank q's prints. */
static void compare_grad_prints(const pp_run_config *c, const unsigned char *all, const size_t *off,
                                const size_t *lens, pp_run_result *res) {
    res->grad_differs = 0;
    for (int q = 0; q < pp__config_world(c) && !res->grad_differs; q++) {
        int t = pp__config_rank_tp(c, q), p = pp__config_rank_pipe(c, q);
        const weight_print *b = (const weight_print *)(all + off[q]);
        size_t nb = lens[q] / sizeof *b;
        for (size_t j = 0; j < nb && !res->grad_differs; j++) {
            int src = pp__config_rank_of(c, b[j].split == PP_SPLIT_NONE ? 0 : t, 0, p);
            const weight_print *a = (const weight_print *)(all + off[src]);
            if (src == q || j >= lens[src] / sizeof *a || !a[j].has_grad || !b[j].has_grad ||
                a[j].grad_hash == b[j].grad_hash)
                continue;
            res->grad_differs = 1, res->grad_rank = q;
            res->grad_ratio = a[j].grad_norm2 > 0 ? sqrt(b[j].grad_norm2 / a[j].grad_norm2) : 0;
            snprintf(res->grad_param, sizeof res->grad_param, "%s", b[j].name);
        }
    }
}

void pp__run_procs_replicas(pp_world *w, pp_run_result *res) {
    const pp_run_config *c = w->cfg;
    pp_rank *r = &w->ranks[w->local_rank];
    int n = pp__rank_nparams(r), k = 0;
    weight_print *mine = pp__xcalloc((size_t)n + 1, sizeof *mine);
    for (int ch = 0; ch < c->v; ch++)
        for (int i = 0; i < r->chunks[ch].nparams; i++, k++) {
            pp_tensor *t = r->chunks[ch].params[i].w;
            float *h = pp__xmalloc(t->bytes + 1);
            pp__tensor_to_host(t, h);
            snprintf(mine[k].name, sizeof mine[k].name, "%s", r->chunks[ch].params[i].name);
            mine[k].hash = pp__hash_bytes(PP_HASH_INIT, h, t->bytes);
            mine[k].chunk = ch;
            mine[k].split = r->chunks[ch].params[i].split;
            free(h);
            const float *g = r->grad_snapshot ? r->grad_snapshot[k] : NULL;
            size_t ng = r->chunks[ch].params[i].g->bytes / sizeof(float);
            mine[k].has_grad = g != NULL;
            mine[k].grad_hash = g ? pp__hash_bytes(PP_HASH_INIT, g, ng * sizeof(float)) : 0;
            for (size_t e = 0; g && e < ng; e++) mine[k].grad_norm2 += (double)g[e] * g[e];
        }
    size_t *lens = pp__xcalloc((size_t)w->P, sizeof *lens);
    unsigned char *all = pp__transport_gather(w, mine, (size_t)n * sizeof *mine, lens);
    free(mine);
    if (w->local_rank == 0 && all) {
        size_t *off = pp__xcalloc((size_t)w->P, sizeof *off);
        for (int q = 1; q < w->P; q++) off[q] = off[q - 1] + lens[q - 1];
        res->replica_differs = res->copy_differs = 0;
        /* DualPipe: rank s's chunk 0 against rank P-1-s's chunk 1, parameter by parameter */
        for (int s = 0; pp__config_dual(c) && s < c->P && !res->copy_differs; s++) {
            const weight_print *a = (const weight_print *)(all + off[s]),
                               *b = (const weight_print *)(all + off[c->P - 1 - s]);
            size_t na = lens[s] / sizeof *a, nb = lens[c->P - 1 - s] / sizeof *b, j = 0;
            while (j < nb && b[j].chunk != 1) j++;
            for (size_t i = 0; i < na && a[i].chunk == 0 && j < nb; i++, j++)
                if (a[i].hash != b[j].hash) {
                    res->copy_differs = 1, res->copy_stage = s;
                    snprintf(res->copy_param, sizeof res->copy_param, "%s", a[i].name);
                    break;
                }
        }
        /* the same order as with threads: replica, then stage, then the stage's parameters */
        for (int d = 1; d < c->D && !res->replica_differs; d++)
            for (int p = 0; p < c->P && !res->replica_differs; p++) {
                const weight_print *a = (const weight_print *)(all + off[p]),
                                   *b = (const weight_print *)(all + off[d * c->P + p]);
                size_t na = lens[p] / sizeof *a, nb = lens[d * c->P + p] / sizeof *b;
                for (size_t i = 0; i < na && i < nb; i++)
                    if (a[i].hash != b[i].hash) {
                        res->replica_differs = d;
                        res->replica_rank = p;
                        snprintf(res->replica_param, sizeof res->replica_param, "%s", a[i].name);
                        break;
                    }
            }
        /* under --tp: each shard's uncut parameters against shard 0's, as with threads */
        int R = c->D * c->P;
        res->shard_differs = 0;
        for (int t = 1; t < c->T && !res->shard_differs; t++)
            for (int i = 0; i < R && !res->shard_differs; i++) {
                const weight_print *a = (const weight_print *)(all + off[i]),
                                   *b = (const weight_print *)(all + off[t * R + i]);
                size_t na = lens[i] / sizeof *a, nb = lens[t * R + i] / sizeof *b;
                for (size_t j = 0; j < na && j < nb; j++)
                    if (a[j].split == PP_SPLIT_NONE && a[j].hash != b[j].hash) {
                        res->shard_differs = t, res->shard_rank = i;
                        snprintf(res->shard_param, sizeof res->shard_param, "%s", a[j].name);
                        break;
                    }
            }
        compare_grad_prints(c, all, off, lens, res);
        free(off);
    }
    free(lens);
    free(all);
}

/* A process's weights on the wire: per parameter its virtual stage, name, shape and floats. */
static void weights_encode(pp_wire *b, const pp_param_result *p, int n) {
    pp__wire_i64(b, n);
    for (int i = 0; i < n; i++) {
        pp__wire_i64(b, p[i].vstage), pp__wire_i64(b, p[i].rank);
        pp__wire_str(b, p[i].name, sizeof p[i].name - 1);
        pp__wire_i64(b, p[i].rows), pp__wire_i64(b, p[i].cols);
        pp__wire_put(b, p[i].weight, (size_t)p[i].count * sizeof(float));
    }
}

/* The parameters of one process's part, appended to out[*k..]; -1 on bad bytes (a bug: the bytes are ours). */
static int weights_decode(pp_wire_in *in, int stages, pp_param_result **out, int *k, int *cap) {
    int n = (int)pp__wire_get_i64(in, 0, (int64_t)pp__wire_left(in));
    for (int i = 0; i < n && !in->bad; i++) {
        if (*k == *cap) *cap = 2 * *cap + 16, *out = realloc(*out, (size_t)*cap * sizeof **out);
        PP_ASSERT(*out);
        pp_param_result *p = &(*out)[(*k)++];
        memset(p, 0, sizeof *p);
        p->vstage = (int)pp__wire_get_i64(in, 0, stages - 1);
        p->rank = (int)pp__wire_get_i64(in, 0, INT32_MAX);
        pp__wire_get_str(in, p->name, sizeof p->name);
        p->rows = (int)pp__wire_get_i64(in, 0, INT32_MAX), p->cols = (int)pp__wire_get_i64(in, 0, INT32_MAX);
        int64_t count = (int64_t)p->rows * p->cols;
        if (in->bad || count > (int64_t)pp__wire_left(in) / (int64_t)sizeof(float)) return -1;
        p->count = (int)count;
        p->weight = pp__xmalloc((size_t)count * sizeof(float) + 1);
        pp__wire_get(in, p->weight, (size_t)count * sizeof(float));
    }
    return in->bad ? -1 : 0;
}

pp_param_result *pp__run_procs_weights(pp_world *w, const pp_param_result *mine, int n, int *total) {
    pp_wire b;
    pp__wire_init(&b);
    weights_encode(&b, mine, n);
    PP_ASSERT(!b.bad);
    size_t *lens = pp__xcalloc((size_t)w->P, sizeof *lens);
    unsigned char *all = pp__transport_gather(w, b.p, b.len, lens);
    pp__wire_free(&b);
    *total = 0;
    if (w->local_rank != 0 || !all) {
        free(lens);
        free(all);
        return NULL;
    }
    /* every process's part in rank order, then the parameters in the model's order: each stage's are one part's */
    int stages = pp__config_model_stages(w->cfg), k = 0, cap = 0;
    pp_param_result *got = NULL, *out;
    size_t off = 0;
    for (int q = 0; q < w->P; q++) {
        pp_wire_in in;
        pp__wire_in_init(&in, all + off, lens[q]);
        off += lens[q];
        PP_ASSERT(weights_decode(&in, stages, &got, &k, &cap) == 0);
    }
    out = pp__xcalloc((size_t)k + 1, sizeof *out);
    for (int s = 0; s < stages; s++)
        for (int i = 0; i < k; i++)
            if (got[i].vstage == s) out[(*total)++] = got[i];
    free(got);
    free(lens);
    free(all);
    return out;
}
