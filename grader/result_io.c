/* result_io.c: a run's raw results (pp_run_result) as bytes, so the process that ran the student's code only
 * reports what happened and the grader's own process, which never loads that code, computes the reference and
 * the checks. Reading is defensive: the bytes come from a process the student controlled. */
#include "result_io.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAGIC 0x70706c6162726573ull /* "pplabres" */

/* ---- writing ------------------------------------------------------------------------------------------- */

static void put(FILE *f, const void *p, size_t n) {
    if (n) fwrite(p, 1, n, f); /* an empty trace has no array at all */
}
static void put_i(FILE *f, int64_t x) { put(f, &x, sizeof x); }
static void put_d(FILE *f, double x) { put(f, &x, sizeof x); }

int pp__result_write(FILE *f, uint64_t token, int steps, const pp_run_result *res) {
    put_i(f, (int64_t)MAGIC);
    put_i(f, (int64_t)token);
    put_i(f, res->status);
    put(f, res->error, sizeof res->error);
    put_i(f, res->P), put_i(f, res->v), put_i(f, res->nparams), put_i(f, (int64_t)res->act_bytes);
    put_d(f, res->bubble), put_d(f, res->makespan), put_d(f, res->wall_s);
    put_i(f, res->dloss_calls_total), put_i(f, res->loss_count);
    int ok = res->status == PP_OK;
    put_i(f, ok);
    if (!ok) return ferror(f) ? -1 : 0;
    put(f, res->loss, (size_t)steps * sizeof(float));
    for (int i = 0; i < res->nparams; i++) {
        const pp_param_result *p = &res->params[i];
        put(f, p->name, sizeof p->name);
        put_i(f, p->vstage), put_i(f, p->rank), put_i(f, p->count);
        put(f, p->grad, (size_t)p->count * sizeof(float));
        put(f, p->weight, (size_t)p->count * sizeof(float));
    }
    for (int r = 0; r < res->P; r++) {
        put_i(f, res->opt_calls[r]), put_i(f, res->peak_stashes[r]), put_i(f, (int64_t)res->peak_bytes[r]);
        put_i(f, (int64_t)res->peak_single[r]), put_i(f, res->sent_msgs[r]), put_i(f, res->unfreed_stashes[r]);
        put_i(f, res->traces[r].n);
        put(f, res->traces[r].ev, (size_t)res->traces[r].n * sizeof(pp_event));
    }
    return ferror(f) ? -1 : 0;
}

/* ---- reading ------------------------------------------------------------------------------------------- */

typedef struct reader {
    const unsigned char *p, *end;
    int bad;
} reader;

static void get(reader *r, void *dst, size_t n) {
    if (!n) return;
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p, n);
    r->p += n;
}

static int64_t get_i(reader *r, int64_t lo, int64_t hi) {
    int64_t x;
    get(r, &x, sizeof x);
    if (x < lo || x > hi) r->bad = 1;
    return r->bad ? lo : x;
}

static double get_d(reader *r) {
    double x;
    get(r, &x, sizeof x);
    return x;
}

int pp__result_read(const void *buf, size_t len, uint64_t token, const pp_run_config *c, pp_run_result *res) {
    reader r = {buf, (const unsigned char *)buf + len, 0};
    memset(res, 0, sizeof *res);
    int64_t magic, tok;
    get(&r, &magic, sizeof magic);
    get(&r, &tok, sizeof tok);
    if (r.bad || (uint64_t)magic != MAGIC || (uint64_t)tok != token) return -1;
    res->status = (pp_status)get_i(&r, 0, PP_STATUS_COUNT - 1);
    get(&r, res->error, sizeof res->error);
    res->error[sizeof res->error - 1] = 0;
    /* the shape must be the configuration's: nothing else is graded */
    res->P = (int)get_i(&r, c->P, c->P);
    res->v = (int)get_i(&r, c->v, c->v);
    int nparams = (int)get_i(&r, 0, 1 << 16);
    res->act_bytes = (size_t)get_i(&r, 0, INT64_MAX);
    res->bubble = get_d(&r), res->makespan = get_d(&r), res->wall_s = get_d(&r);
    res->dloss_calls_total = (int)get_i(&r, 0, INT32_MAX);
    res->loss_count = (int)get_i(&r, 0, INT32_MAX);
    int ok = (int)get_i(&r, 0, 1);
    if (r.bad) return -1;
    if (!ok) return res->status == PP_OK ? -1 : 0;
    int P = res->P;
    res->nparams = nparams;
    res->params = pp__xcalloc((size_t)nparams + 1, sizeof *res->params);
    res->loss = pp__xcalloc((size_t)c->steps, sizeof(float));
    get(&r, res->loss, (size_t)c->steps * sizeof(float));
    for (int i = 0; i < nparams && !r.bad; i++) {
        pp_param_result *p = &res->params[i];
        get(&r, p->name, sizeof p->name);
        p->name[sizeof p->name - 1] = 0;
        p->vstage = (int)get_i(&r, 0, (int64_t)P * res->v - 1);
        p->rank = (int)get_i(&r, 0, P - 1);
        p->count = (int)get_i(&r, 1, (int64_t)(r.end - r.p) / (2 * (int64_t)sizeof(float)));
        if (r.bad) break;
        p->grad = pp__xmalloc((size_t)p->count * sizeof(float));
        p->weight = pp__xmalloc((size_t)p->count * sizeof(float));
        get(&r, p->grad, (size_t)p->count * sizeof(float));
        get(&r, p->weight, (size_t)p->count * sizeof(float));
    }
    pp__result_alloc_ranks(res, P);
    for (int q = 0; q < P && !r.bad; q++) {
        res->opt_calls[q] = (int)get_i(&r, 0, INT32_MAX);
        res->peak_stashes[q] = (int)get_i(&r, 0, INT32_MAX);
        res->peak_bytes[q] = (size_t)get_i(&r, 0, INT64_MAX);
        res->peak_single[q] = (size_t)get_i(&r, 0, INT64_MAX);
        res->sent_msgs[q] = (int)get_i(&r, 0, INT32_MAX);
        res->unfreed_stashes[q] = (int)get_i(&r, 0, INT32_MAX);
        int n = (int)get_i(&r, 0, (int64_t)(r.end - r.p) / (int64_t)sizeof(pp_event));
        if (r.bad) break;
        res->traces[q].n = res->traces[q].cap = n;
        res->traces[q].ev = pp__xcalloc((size_t)n + 1, sizeof(pp_event));
        get(&r, res->traces[q].ev, (size_t)n * sizeof(pp_event));
        for (int e = 0; e < n; e++) res->traces[q].ev[e].rank = q; /* a rank reports its own ops only */
    }
    if (r.bad || r.p != r.end) {
        pp__result_free(res);
        return -1;
    }
    /* figures derived from the traces are recomputed here, not taken from the report */
    res->bubble = pp__trace_bubble(res->traces, P);
    res->makespan = pp__trace_makespan(res->traces, P);
    return 0;
}
