/* result.c: a run's results, their memory and their bytes. Reading is defensive (bounds, ranges, the
 * configuration's shape), since a result file is read by a process other than the one that wrote it. */
#include "result.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

void pp__result_alloc_ranks(pp_run_result *res, int P) {
    res->traces = pp__xcalloc((size_t)P, sizeof *res->traces);
    res->opt_calls = pp__xcalloc((size_t)P, sizeof(int));
    res->peak_stashes = pp__xcalloc((size_t)P, sizeof(int));
    res->peak_bytes = pp__xcalloc((size_t)P, sizeof(size_t));
    res->peak_single = pp__xcalloc((size_t)P, sizeof(size_t));
    res->sent_msgs = pp__xcalloc((size_t)P, sizeof(int));
    res->unfreed_stashes = pp__xcalloc((size_t)P, sizeof(int));
    res->zero_scales = pp__xcalloc((size_t)P, sizeof(int));
    res->late_grad_zero = pp__xcalloc((size_t)P, sizeof(int));
    res->tp_sums = pp__xcalloc((size_t)P, sizeof(int));
    res->tp_bytes = pp__xcalloc((size_t)P, sizeof(double));
    res->waiting_tag = pp__xcalloc((size_t)P, sizeof(int));
    for (int i = 0; i < P; i++) res->waiting_tag[i] = -1;
}

void pp__result_free(pp_run_result *res) {
    for (int i = 0; i < res->nparams; i++) free(res->params[i].grad), free(res->params[i].weight);
    free(res->params);
    if (res->traces)
        for (int i = 0; i < res->P; i++) pp__trace_clear(&res->traces[i]);
    free(res->traces);
    for (int i = 0; res->tp_traces && i < res->tp_ranks; i++) pp__trace_clear(&res->tp_traces[i]);
    free(res->tp_traces);
    free(res->loss);
    free(res->step_s);
    free(res->opt_calls);
    free(res->peak_stashes);
    free(res->peak_bytes);
    free(res->peak_single);
    free(res->sent_msgs);
    free(res->unfreed_stashes);
    free(res->waiting_tag);
    free(res->zero_scales);
    free(res->late_grad_zero);
    free(res->tp_sums);
    free(res->tp_bytes);
    free(res->place);
    memset(res, 0, sizeof *res);
}

void pp__param_encode(pp_wire *w, const pp_param_result *p) {
    pp__wire_str(w, p->name, sizeof p->name - 1);
    pp__wire_i64(w, p->count);
    pp__wire_i64(w, p->rows), pp__wire_i64(w, p->cols), pp__wire_i64(w, p->split);
    pp__wire_put(w, p->grad, (size_t)p->count * sizeof(float));
    pp__wire_put(w, p->weight, (size_t)p->count * sizeof(float));
}

int pp__param_decode(pp_wire_in *r, pp_param_result *p) {
    pp__wire_get_str(r, p->name, sizeof p->name);
    p->count = (int)pp__wire_get_i64(r, 1, (int64_t)pp__wire_left(r) / (2 * (int64_t)sizeof(float)));
    p->rows = (int)pp__wire_get_i64(r, 0, p->count), p->cols = (int)pp__wire_get_i64(r, 0, p->count);
    p->split = (int)pp__wire_get_i64(r, PP_SPLIT_NONE, PP_SPLIT_ROWS);
    if (r->bad) return -1;
    p->grad = pp__xmalloc((size_t)p->count * sizeof(float));
    p->weight = pp__xmalloc((size_t)p->count * sizeof(float));
    pp__wire_get(r, p->grad, (size_t)p->count * sizeof(float));
    pp__wire_get(r, p->weight, (size_t)p->count * sizeof(float));
    return r->bad ? -1 : 0;
}

void pp__result_encode(pp_wire *w, const pp_run_result *res, int steps) {
    pp__wire_u32(w, (uint32_t)res->status);
    pp__wire_str(w, res->error, sizeof res->error - 1);
    pp__wire_i64(w, res->P), pp__wire_i64(w, res->v), pp__wire_i64(w, res->nparams);
    pp__wire_i64(w, res->D), pp__wire_i64(w, res->replica_differs), pp__wire_i64(w, res->replica_rank);
    pp__wire_str(w, res->replica_param, sizeof res->replica_param - 1);
    pp__wire_i64(w, res->copy_differs), pp__wire_i64(w, res->copy_stage);
    pp__wire_str(w, res->copy_param, sizeof res->copy_param - 1);
    pp__wire_i64(w, res->shard_differs), pp__wire_i64(w, res->shard_rank);
    pp__wire_str(w, res->shard_param, sizeof res->shard_param - 1);
    pp__wire_i64(w, res->grad_differs), pp__wire_i64(w, res->grad_rank);
    pp__wire_str(w, res->grad_param, sizeof res->grad_param - 1);
    pp__wire_f64(w, res->grad_ratio);
    pp__wire_i64(w, (int64_t)res->act_bytes);
    pp__wire_f64(w, res->wall_s);
    pp__wire_i64(w, res->dloss_calls_total), pp__wire_i64(w, res->loss_count);
    pp__wire_i64(w, res->nplace);
    for (int i = 0; i < res->nplace; i++) pp__wire_i64(w, res->place[i]);
    const pp_tp_note *t = &res->tp_note;
    int64_t note[] = {t->code, t->api, t->rank, t->shard, t->mb, t->chunk, t->block, t->half, t->backward, t->shards,
                      t->other};
    for (size_t i = 0; i < sizeof note / sizeof *note; i++) pp__wire_i64(w, note[i]);
    int ok = res->status == PP_OK;
    pp__wire_u32(w, (uint32_t)ok);
    if (!ok) {
        /* a failed run's ops so far, for the diagnosis */
        pp__wire_u32(w, res->traces != NULL);
        for (int q = 0; res->traces && q < res->P; q++) {
            pp__wire_i64(w, res->waiting_tag ? res->waiting_tag[q] : -1);
            pp__wire_i64(w, res->traces[q].n);
            pp__wire_put(w, res->traces[q].ev, (size_t)res->traces[q].n * sizeof(pp_event));
        }
        return;
    }
    pp__wire_put(w, res->loss, (size_t)steps * sizeof(float));
    pp__wire_put(w, res->step_s, (size_t)steps * sizeof(double));
    for (int i = 0; i < res->nparams; i++) {
        pp__wire_i64(w, res->params[i].vstage), pp__wire_i64(w, res->params[i].rank);
        pp__param_encode(w, &res->params[i]);
    }
    for (int q = 0; q < res->P; q++) {
        pp__wire_i64(w, res->opt_calls[q]), pp__wire_i64(w, res->peak_stashes[q]);
        pp__wire_i64(w, (int64_t)res->peak_bytes[q]), pp__wire_i64(w, (int64_t)res->peak_single[q]);
        pp__wire_i64(w, res->sent_msgs[q]), pp__wire_i64(w, res->unfreed_stashes[q]);
        pp__wire_i64(w, res->zero_scales[q]), pp__wire_i64(w, res->late_grad_zero[q]);
        pp__wire_i64(w, res->tp_sums[q]), pp__wire_f64(w, res->tp_bytes[q]);
        pp__wire_i64(w, res->traces[q].n);
        pp__wire_put(w, res->traces[q].ev, (size_t)res->traces[q].n * sizeof(pp_event));
    }
    pp__wire_i64(w, res->tp_traces ? res->tp_ranks : 0);
    for (int i = 0; res->tp_traces && i < res->tp_ranks; i++) {
        pp__wire_i64(w, res->tp_traces[i].n);
        pp__wire_put(w, res->tp_traces[i].ev, (size_t)res->tp_traces[i].n * sizeof(pp_event));
    }
}

/* The result's fixed part: status, error, shape and the comparisons' verdicts, each field within its range. Returns
 * the parameter count the bytes announce. */
static int decode_verdicts(pp_wire_in *r, int P, int v, pp_run_result *res) {
    res->status = (pp_status)pp__wire_get_u32(r, 0, PP_STATUS_COUNT - 1);
    pp__wire_get_str(r, res->error, sizeof res->error);
    /* the shape must be the configuration's: nothing else is graded */
    res->P = (int)pp__wire_get_i64(r, P, P);
    res->v = (int)pp__wire_get_i64(r, v, v);
    int nparams = (int)pp__wire_get_i64(r, 0, 1 << 20);
    res->D = (int)pp__wire_get_i64(r, 0, P); /* 0: a result no run filled in (a failure before the run) */
    if (res->D < 1) res->D = 1;
    res->replica_differs = (int)pp__wire_get_i64(r, 0, res->D - 1);
    res->replica_rank = (int)pp__wire_get_i64(r, 0, P > 0 ? P - 1 : 0);
    pp__wire_get_str(r, res->replica_param, sizeof res->replica_param);
    res->copy_differs = (int)pp__wire_get_i64(r, 0, 1);
    res->copy_stage = (int)pp__wire_get_i64(r, 0, P > 0 ? P - 1 : 0);
    pp__wire_get_str(r, res->copy_param, sizeof res->copy_param);
    res->shard_differs = (int)pp__wire_get_i64(r, 0, 8);
    res->shard_rank = (int)pp__wire_get_i64(r, 0, P > 0 ? P - 1 : 0);
    pp__wire_get_str(r, res->shard_param, sizeof res->shard_param);
    res->grad_differs = (int)pp__wire_get_i64(r, 0, 1);
    res->grad_rank = (int)pp__wire_get_i64(r, 0, 8 * (int64_t)(P > 0 ? P : 1) - 1); /* at most 8 shards of P ranks */
    pp__wire_get_str(r, res->grad_param, sizeof res->grad_param);
    res->grad_ratio = pp__wire_get_f64(r);
    if (!(res->grad_ratio >= 0 && res->grad_ratio < 1e30)) res->grad_ratio = 0; /* NaN or out of range: unsaid */
    res->act_bytes = (size_t)pp__wire_get_i64(r, 0, INT64_MAX);
    res->wall_s = pp__wire_get_f64(r);
    res->dloss_calls_total = (int)pp__wire_get_i64(r, 0, INT32_MAX);
    res->loss_count = (int)pp__wire_get_i64(r, 0, INT32_MAX);
    return nparams;
}

/* A grid's places: a permutation of the world's ranks (at most 8 shards of P ranks). */
static void decode_places(pp_wire_in *r, int P, pp_run_result *res) {
    res->nplace = (int)pp__wire_get_i64(r, 0, 8 * (int64_t)P);
    if (!res->nplace || r->bad) return;
    res->place = pp__xcalloc((size_t)res->nplace, sizeof *res->place);
    unsigned char seen[8 * 1024] = {0};
    for (int i = 0; i < res->nplace && !r->bad; i++) {
        res->place[i] = (int)pp__wire_get_i64(r, 0, res->nplace - 1);
        if (!r->bad && seen[res->place[i]]++) r->bad = 1;
    }
}

/* A note names a call, a place and a kind the grader's sentences know: each field within its range. */
static void decode_tp_note(pp_wire_in *r, int P, int v, pp_tp_note *t) {
    t->code = (int)pp__wire_get_i64(r, 0, PP_TPN_COUNT - 1);
    t->api = (int)pp__wire_get_i64(r, 0, PP_BAPI_COUNT - 1);
    t->rank = (int)pp__wire_get_i64(r, 0, 8 * (int64_t)P);
    t->shard = (int)pp__wire_get_i64(r, 0, 8);
    t->mb = (int)pp__wire_get_i64(r, 0, INT32_MAX);
    t->chunk = (int)pp__wire_get_i64(r, 0, v);
    t->block = (int)pp__wire_get_i64(r, -1, INT32_MAX);
    t->half = (int)pp__wire_get_i64(r, -1, 1);
    t->backward = (int)pp__wire_get_i64(r, 0, 1);
    t->shards = (int)pp__wire_get_i64(r, 0, 8);
    t->other = (int)pp__wire_get_i64(r, -1, INT32_MAX);
}

/* Rank q's trace: its length (no more events than the bytes left hold), then its events, each of rank q (a rank
 * reports its own ops only). -1 on bad bytes. */
static int decode_trace(pp_wire_in *r, int q, pp_trace *t) {
    int n = (int)pp__wire_get_i64(r, 0, (int64_t)pp__wire_left(r) / (int64_t)sizeof(pp_event));
    if (r->bad) return -1;
    t->n = t->cap = n;
    t->ev = pp__xcalloc((size_t)n + 1, sizeof(pp_event));
    pp__wire_get(r, t->ev, (size_t)n * sizeof(pp_event));
    for (int e = 0; e < n; e++) t->ev[e].rank = q;
    return 0;
}

/* A failed run's part: when it has them, what each rank ran of the step that failed and the tag it waited on. */
static int decode_failure(pp_wire_in *r, int P, pp_run_result *res) {
    if (!pp__wire_get_u32(r, 0, 1)) return r->bad ? -1 : 0;
    pp__result_alloc_ranks(res, P);
    for (int q = 0; q < P && !r->bad; q++) {
        res->waiting_tag[q] = (int)pp__wire_get_i64(r, -1, INT32_MAX);
        if (decode_trace(r, q, &res->traces[q])) break;
    }
    if (r->bad) {
        pp__result_free(res);
        return -1;
    }
    return 0;
}

/* A completed run's per-rank figures and traces. */
static void decode_ranks(pp_wire_in *r, int P, pp_run_result *res) {
    pp__result_alloc_ranks(res, P);
    for (int q = 0; q < P && !r->bad; q++) {
        res->opt_calls[q] = (int)pp__wire_get_i64(r, 0, INT32_MAX);
        res->peak_stashes[q] = (int)pp__wire_get_i64(r, 0, INT32_MAX);
        res->peak_bytes[q] = (size_t)pp__wire_get_i64(r, 0, INT64_MAX);
        res->peak_single[q] = (size_t)pp__wire_get_i64(r, 0, INT64_MAX);
        res->sent_msgs[q] = (int)pp__wire_get_i64(r, 0, INT32_MAX);
        res->unfreed_stashes[q] = (int)pp__wire_get_i64(r, 0, INT32_MAX);
        res->zero_scales[q] = (int)pp__wire_get_i64(r, 0, INT32_MAX);
        res->late_grad_zero[q] = (int)pp__wire_get_i64(r, 0, INT32_MAX);
        res->tp_sums[q] = (int)pp__wire_get_i64(r, 0, INT32_MAX);
        res->tp_bytes[q] = pp__wire_get_f64(r);
        if (decode_trace(r, q, &res->traces[q])) break;
    }
    /* the other shards' ranks: at most 7 more shards of the P ranks */
    int extra = (int)pp__wire_get_i64(r, 0, 7 * (int64_t)P);
    if (r->bad || !extra) return;
    res->tp_ranks = extra;
    res->tp_traces = pp__xcalloc((size_t)extra, sizeof *res->tp_traces);
    for (int i = 0; i < extra && !r->bad; i++)
        if (decode_trace(r, P + i, &res->tp_traces[i])) break;
}

int pp__result_decode(pp_wire_in *r, int P, int v, int steps, pp_run_result *res) {
    memset(res, 0, sizeof *res);
    int nparams = decode_verdicts(r, P, v, res);
    decode_places(r, P, res);
    decode_tp_note(r, P, v, &res->tp_note);
    int ok = (int)pp__wire_get_u32(r, 0, 1);
    if (r->bad || (!ok && res->status == PP_OK)) {
        free(res->place);
        memset(res, 0, sizeof *res);
        return -1;
    }
    if (!ok) return decode_failure(r, P, res);
    res->nparams = nparams;
    res->params = pp__xcalloc((size_t)nparams + 1, sizeof *res->params);
    res->loss = pp__xcalloc((size_t)steps, sizeof(float));
    pp__wire_get(r, res->loss, (size_t)steps * sizeof(float));
    res->step_s = pp__xcalloc((size_t)steps, sizeof(double));
    pp__wire_get(r, res->step_s, (size_t)steps * sizeof(double));
    for (int i = 0; i < nparams && !r->bad; i++) {
        pp_param_result *p = &res->params[i];
        p->vstage = (int)pp__wire_get_i64(r, 0, (int64_t)P * v - 1);
        p->rank = (int)pp__wire_get_i64(r, 0, P - 1);
        pp__param_decode(r, p);
    }
    decode_ranks(r, P, res);
    if (r->bad) {
        pp__result_free(res);
        return -1;
    }
    /* figures derived from the traces are recomputed here, not taken from the bytes */
    res->bubble = pp__trace_bubble(res->traces, P);
    res->makespan = pp__trace_makespan(res->traces, P);
    res->step_time = pp__trace_step_time(res->traces, P);
    return 0;
}

void pp__shard_into(float *all, const float *part, int rows, int cols, pp_split split, int T, int t) {
    if (split == PP_SPLIT_ROWS) {
        memcpy(all + (size_t)t * rows * cols, part, (size_t)rows * cols * sizeof *part);
        return;
    }
    for (int r = 0; r < rows; r++)
        memcpy(all + ((size_t)r * T + t) * cols, part + (size_t)r * cols, (size_t)cols * sizeof *part);
}
