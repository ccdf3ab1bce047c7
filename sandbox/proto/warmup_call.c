/* warmup_call.c: one warm-up call. Which function, its arguments and its buffers' initial contents come in;
 * the return value and the buffers, whole, go out, and the grader decides what is right. One answerer per
 * function, in a table by the function's number. No answer key is here. */
#include "warmup_call.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chan.h"
#include "rpc.h"

static int get_int(pp_wire_in *r) { return (int)pp__wire_get_i64(r, INT32_MIN, INT32_MAX); }

/* An array of n elements of size bytes each, as a malloc'd copy (a little larger, so that a NULL check is never
 * needed for n = 0). */
static void *get_array(pp_wire_in *r, size_t size, uint32_t *n) {
    *n = pp__wire_get_u32(r, 0, PP_CHAN_MSG);
    void *p = calloc((size_t)*n + 1, size);
    if (p) pp__wire_get(r, p, (size_t)*n * size);
    return p;
}

/* One answerer per warm-up function: it reads the call's numbers from r (the schedule, or the kind of traffic, is
 * read already when the call names one), calls the student's function when the file defines it, and writes
 * whether it did, then the answer, to w. */
typedef void answer_fn(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w);

static void answer_bubble(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int P = get_int(r), M = get_int(r), v = get_int(r);
    pp__wire_u32(w, f->bubble != NULL);
    if (!f->bubble) return;
    double b = f->bubble(sched, P, M, v);
    pp__wire_put(w, &b, sizeof b); /* raw: a NaN answer is an answer */
}

static void answer_peak(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int P = get_int(r), M = get_int(r), v = get_int(r), rank = get_int(r);
    pp__wire_u32(w, f->peak != NULL);
    if (f->peak) pp__wire_i64(w, f->peak(sched, P, M, v, rank));
}

static void answer_order(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int P = get_int(r), M = get_int(r), rank = get_int(r), cap = get_int(r);
    uint32_t n;
    char *buf = get_array(r, 1, &n);
    pp__wire_u32(w, f->order != NULL && buf);
    if (!f->order || !buf) return free(buf);
    pp__wire_i64(w, f->order(sched, P, M, rank, buf, cap));
    pp__wire_u32(w, n);
    pp__wire_put(w, buf, n);
    free(buf);
}

static void answer_partition(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int nlayers = get_int(r);
    uint32_t ncost, nfirst;
    double *cost = get_array(r, sizeof(double), &ncost);
    int P = get_int(r);
    int32_t *first = get_array(r, sizeof(int32_t), &nfirst);
    pp__wire_u32(w, f->partition != NULL && cost && first);
    if (f->partition && cost && first) {
        pp__wire_i64(w, f->partition(nlayers, cost, P, first));
        pp__wire_u32(w, nfirst);
        pp__wire_put(w, first, (size_t)nfirst * sizeof *first);
    }
    free(cost);
    free(first);
}

static void answer_chunk_order(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int P = get_int(r), M = get_int(r), v = get_int(r), rank = get_int(r), cap = get_int(r);
    uint32_t n;
    char *buf = get_array(r, 1, &n);
    pp__wire_u32(w, f->chunk_order != NULL && buf);
    if (!f->chunk_order || !buf) return free(buf);
    pp__wire_i64(w, f->chunk_order(sched, P, M, v, rank, buf, cap));
    pp__wire_u32(w, n);
    pp__wire_put(w, buf, n);
    free(buf);
}

static void answer_idle(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int P = get_int(r), M = get_int(r), v = get_int(r), t = get_int(r);
    uint32_t n;
    int32_t *idle = get_array(r, sizeof(int32_t), &n);
    pp__wire_u32(w, f->idle != NULL && idle);
    if (f->idle && idle) {
        pp__wire_i64(w, f->idle(sched, P, M, v, t, idle));
        pp__wire_u32(w, n);
        pp__wire_put(w, idle, (size_t)n * sizeof *idle);
    }
    free(idle);
}

static void answer_uneven(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int P = get_int(r), M = get_int(r);
    uint32_t n;
    double *cost = get_array(r, sizeof(double), &n);
    pp__wire_u32(w, f->uneven != NULL && cost);
    if (f->uneven && cost) {
        double b = f->uneven(P, M, cost);
        pp__wire_put(w, &b, sizeof b);
    }
    free(cost);
}

static void answer_chunks(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int P = get_int(r), M = get_int(r), blocks = get_int(r);
    double lat;
    pp__wire_get(r, &lat, sizeof lat);
    pp__wire_u32(w, f->chunks != NULL);
    if (f->chunks) pp__wire_i64(w, f->chunks(P, M, blocks, lat));
}

static void answer_traffic(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int P = get_int(r), M = get_int(r), v = get_int(r), b = get_int(r), s = get_int(r), h = get_int(r);
    pp__wire_u32(w, f->traffic != NULL);
    if (f->traffic) {
        double x = f->traffic(sched, P, M, v, b, s, h);
        pp__wire_put(w, &x, sizeof x);
    }
}

static void answer_memory(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int P = get_int(r), M = get_int(r), v = get_int(r), rank = get_int(r), b = get_int(r), s = get_int(r),
        h = get_int(r);
    pp__wire_u32(w, f->memory != NULL);
    if (f->memory) {
        double x = f->memory(sched, P, M, v, rank, b, s, h);
        pp__wire_put(w, &x, sizeof x);
    }
}

static void answer_grid_gpus(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int T = get_int(r), P = get_int(r), D = get_int(r);
    pp__wire_u32(w, f->grid_gpus != NULL);
    if (f->grid_gpus) pp__wire_i64(w, f->grid_gpus(T, P, D));
}

static void answer_grid_pp(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int P = get_int(r), D = get_int(r), M = get_int(r), v = get_int(r), b = get_int(r), s = get_int(r),
        h = get_int(r), elem = get_int(r);
    pp__wire_u32(w, f->grid_pp != NULL);
    if (f->grid_pp) {
        double x = f->grid_pp(P, D, M, v, b, s, h, elem);
        pp__wire_put(w, &x, sizeof x);
    }
}

static void answer_grid_dp(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int T = get_int(r), P = get_int(r), D = get_int(r);
    double params;
    pp__wire_get(r, &params, sizeof params);
    int elem = get_int(r);
    pp__wire_u32(w, f->grid_dp != NULL);
    if (f->grid_dp) {
        double x = f->grid_dp(T, P, D, params, elem);
        pp__wire_put(w, &x, sizeof x);
    }
}

static void answer_grid_link(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    int G = get_int(r), T = get_int(r), P = get_int(r), D = get_int(r);
    pp__wire_u32(w, f->grid_link != NULL);
    if (f->grid_link) pp__wire_i64(w, f->grid_link(sched, G, T, P, D));
}

static void answer_scheduler(const pp_warmup_fns *f, const char *sched, pp_wire_in *r, pp_wire *w) {
    (void)sched;
    int P = get_int(r), M = get_int(r), v = get_int(r);
    uint32_t nf, ni, nw, n;
    double *fc = get_array(r, sizeof(double), &nf), *ic = get_array(r, sizeof(double), &ni);
    double *wc = get_array(r, sizeof(double), &nw), latency = 0;
    pp__wire_get(r, &latency, sizeof latency);
    int cap = get_int(r), outcap = get_int(r);
    char *buf = get_array(r, 1, &n);
    int ok = f->scheduler != NULL && fc && ic && wc && buf;
    pp__wire_u32(w, ok);
    if (ok) {
        pp__wire_i64(w, f->scheduler(P, M, v, fc, ic, wc, latency, cap, buf, outcap));
        pp__wire_u32(w, n);
        pp__wire_put(w, buf, n);
    }
    free(fc), free(ic), free(wc), free(buf);
}

/* Each function's answerer, and whether its call names a schedule (grid_link: a kind of traffic) before its
 * numbers. */
static const struct {
    int named;
    answer_fn *answer;
} answerers[] = {
    [PP_WARMUP_BUBBLE] = {1, answer_bubble},
    [PP_WARMUP_PEAK] = {1, answer_peak},
    [PP_WARMUP_ORDER] = {1, answer_order},
    [PP_WARMUP_PARTITION] = {0, answer_partition},
    [PP_WARMUP_CHUNK_ORDER] = {1, answer_chunk_order},
    [PP_WARMUP_IDLE] = {1, answer_idle},
    [PP_WARMUP_UNEVEN] = {0, answer_uneven},
    [PP_WARMUP_CHUNKS] = {0, answer_chunks},
    [PP_WARMUP_TRAFFIC] = {1, answer_traffic},
    [PP_WARMUP_MEMORY] = {1, answer_memory},
    [PP_WARMUP_GRID_GPUS] = {0, answer_grid_gpus},
    [PP_WARMUP_GRID_PP] = {0, answer_grid_pp},
    [PP_WARMUP_GRID_DP] = {0, answer_grid_dp},
    [PP_WARMUP_GRID_LINK] = {1, answer_grid_link},
    [PP_WARMUP_SCHEDULER] = {0, answer_scheduler},
};
_Static_assert(sizeof answerers / sizeof *answerers == PP_WARMUP_SCHEDULER + 1, "an answerer per warm-up function");

void pp__warmup_call(const pp_warmup_fns *f, pp_wire_in *r, pp_wire *w) {
    uint32_t fn = pp__wire_get_u32(r, PP_WARMUP_BUBBLE, PP_WARMUP_SCHEDULER); /* a bad one reads as the first */
    char sched[32] = "";
    if (answerers[fn].named) pp__wire_get_str(r, sched, sizeof sched);
    answerers[fn].answer(f, sched, r, w);
}
