/* warmup_call.c: one warm-up call. Which function, its arguments and its buffers' initial contents come in;
 * the return value and the buffers, whole, go out, and the grader decides what is right. No answer key is
 * here. */
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

void pp__warmup_call(const pp_warmup_fns *f, pp_wire_in *r, pp_wire *w) {
    uint32_t fn = pp__wire_get_u32(r, PP_WARMUP_BUBBLE, PP_WARMUP_GRID_LINK);
    char sched[32] = ""; /* the schedule, or for grid_link the kind of traffic */
    if (fn != PP_WARMUP_PARTITION && fn != PP_WARMUP_UNEVEN && fn != PP_WARMUP_CHUNKS && fn != PP_WARMUP_GRID_GPUS &&
        fn != PP_WARMUP_GRID_PP && fn != PP_WARMUP_GRID_DP)
        pp__wire_get_str(r, sched, sizeof sched);
    if (fn == PP_WARMUP_BUBBLE) {
        int P = get_int(r), M = get_int(r), v = get_int(r);
        pp__wire_u32(w, f->bubble != NULL);
        if (!f->bubble) return;
        double b = f->bubble(sched, P, M, v);
        pp__wire_put(w, &b, sizeof b); /* raw: a NaN answer is an answer */
    } else if (fn == PP_WARMUP_PEAK) {
        int P = get_int(r), M = get_int(r), v = get_int(r), rank = get_int(r);
        pp__wire_u32(w, f->peak != NULL);
        if (f->peak) pp__wire_i64(w, f->peak(sched, P, M, v, rank));
    } else if (fn == PP_WARMUP_ORDER) {
        int P = get_int(r), M = get_int(r), rank = get_int(r), cap = get_int(r);
        uint32_t n;
        char *buf = get_array(r, 1, &n);
        pp__wire_u32(w, f->order != NULL && buf);
        if (!f->order || !buf) return free(buf);
        pp__wire_i64(w, f->order(sched, P, M, rank, buf, cap));
        pp__wire_u32(w, n);
        pp__wire_put(w, buf, n);
        free(buf);
    } else if (fn == PP_WARMUP_PARTITION) {
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
    } else if (fn == PP_WARMUP_CHUNK_ORDER) {
        int P = get_int(r), M = get_int(r), v = get_int(r), rank = get_int(r), cap = get_int(r);
        uint32_t n;
        char *buf = get_array(r, 1, &n);
        pp__wire_u32(w, f->chunk_order != NULL && buf);
        if (!f->chunk_order || !buf) return free(buf);
        pp__wire_i64(w, f->chunk_order(sched, P, M, v, rank, buf, cap));
        pp__wire_u32(w, n);
        pp__wire_put(w, buf, n);
        free(buf);
    } else if (fn == PP_WARMUP_IDLE) {
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
    } else if (fn == PP_WARMUP_UNEVEN) {
        int P = get_int(r), M = get_int(r);
        uint32_t n;
        double *cost = get_array(r, sizeof(double), &n);
        pp__wire_u32(w, f->uneven != NULL && cost);
        if (f->uneven && cost) {
            double b = f->uneven(P, M, cost);
            pp__wire_put(w, &b, sizeof b);
        }
        free(cost);
    } else if (fn == PP_WARMUP_CHUNKS) {
        int P = get_int(r), M = get_int(r), blocks = get_int(r);
        double lat;
        pp__wire_get(r, &lat, sizeof lat);
        pp__wire_u32(w, f->chunks != NULL);
        if (f->chunks) pp__wire_i64(w, f->chunks(P, M, blocks, lat));
    } else if (fn == PP_WARMUP_TRAFFIC) {
        int P = get_int(r), M = get_int(r), v = get_int(r), b = get_int(r), s = get_int(r), h = get_int(r);
        pp__wire_u32(w, f->traffic != NULL);
        if (f->traffic) {
            double x = f->traffic(sched, P, M, v, b, s, h);
            pp__wire_put(w, &x, sizeof x);
        }
    } else if (fn == PP_WARMUP_MEMORY) {
        int P = get_int(r), M = get_int(r), v = get_int(r), rank = get_int(r), b = get_int(r), s = get_int(r),
            h = get_int(r);
        pp__wire_u32(w, f->memory != NULL);
        if (f->memory) {
            double x = f->memory(sched, P, M, v, rank, b, s, h);
            pp__wire_put(w, &x, sizeof x);
        }
    } else if (fn == PP_WARMUP_GRID_GPUS) {
        int T = get_int(r), P = get_int(r), D = get_int(r);
        pp__wire_u32(w, f->grid_gpus != NULL);
        if (f->grid_gpus) pp__wire_i64(w, f->grid_gpus(T, P, D));
    } else if (fn == PP_WARMUP_GRID_PP) {
        int P = get_int(r), D = get_int(r), M = get_int(r), v = get_int(r), b = get_int(r), s = get_int(r),
            h = get_int(r), elem = get_int(r);
        pp__wire_u32(w, f->grid_pp != NULL);
        if (f->grid_pp) {
            double x = f->grid_pp(P, D, M, v, b, s, h, elem);
            pp__wire_put(w, &x, sizeof x);
        }
    } else if (fn == PP_WARMUP_GRID_DP) {
        int T = get_int(r), P = get_int(r), D = get_int(r);
        double params;
        pp__wire_get(r, &params, sizeof params);
        int elem = get_int(r);
        pp__wire_u32(w, f->grid_dp != NULL);
        if (f->grid_dp) {
            double x = f->grid_dp(T, P, D, params, elem);
            pp__wire_put(w, &x, sizeof x);
        }
    } else if (fn == PP_WARMUP_GRID_LINK) {
        int G = get_int(r), T = get_int(r), P = get_int(r), D = get_int(r);
        pp__wire_u32(w, f->grid_link != NULL);
        if (f->grid_link) pp__wire_i64(w, f->grid_link(sched, G, T, P, D));
    }
}
