/* warmup_keys.c: the warm-up's answer keys as the kit computes them (warmup_keys.h), for the public cases and for
 * the cases drawn from a hidden configuration's seed alike: from the canonical schedules (answers.h) and their
 * replays under the virtual clock, an exact partition search and the grid's counts. A student handout has no copy
 * of this file; it builds warmup_recorded.c instead. */
#include "warmup_keys.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers.h"
#include "replay.h"

#define KEY_MAX_P 64

/* Writes the answer; -1 when it does not fit. */
static int put(char *val, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int put(char *val, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(val, len, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Appends to val at *used; -1 when it does not fit. */
static int append(char *val, size_t len, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int append(char *val, size_t len, size_t *used, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(val + *used, len - *used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len - *used) return -1;
    *used += (size_t)n;
    return 0;
}

/* A configuration of the warm-up's clock: every block's forward costs 1, no latency, no edge cost; a row of one
 * micro-batch (naive) runs one whatever M says. */
static void config_for(pp_run_config *c, const char *schedule, int P, int M, int v) {
    const pp_schedule_def *d = pp__schedule_def(schedule);
    pp__config_defaults(c);
    c->schedule = pp__schedule_def(schedule);
    c->P = P, c->M = d && d->one_microbatch ? 1 : M, c->v = v;
    c->comm_latency = 0, c->edge_cost = 0;
}

/* The canonical schedule of a case, refused where it is not one the rows admit. */
static int known(const char *sched, int P, int M, int v) {
    const pp_schedule_def *d = pp__schedule_def(sched);
    return d && P >= 1 && P <= KEY_MAX_P && M >= 1 && M <= 1024 && v >= 1 && v <= 16;
}

/* "bubble SCHED P M v": the canonical order's bubble, closed or replayed. */
static int key_bubble(const char *sched, int P, int M, int v, char *val, size_t len) {
    pp_run_config c;
    config_for(&c, sched, P, M, v);
    return put(val, len, "%.17g", pp__theory_bubble(&c, NULL));
}

/* "peak SCHED P M v r": rank r's stash peak in the canonical order. */
static int key_peak(const char *sched, int P, int M, int v, int r, char *val, size_t len) {
    pp_run_config c;
    config_for(&c, sched, P, M, v);
    return r < 0 || r >= P ? -1 : put(val, len, "%d", pp__theory_peak(&c, r));
}

/* "order SCHED P M V r": rank r's canonical ops as tokens, F<mb> (V = 0, one chunk) or F<mb>.<chunk> (V chunks). */
static int key_order(const char *sched, int P, int M, int V, int r, char *val, size_t len) {
    pp_schedule s;
    if (r < 0 || r >= P || pp__schedule_build(&s, sched, P, M, V ? V : 1)) return -1;
    size_t used = 0;
    int rc = put(val, len, "%s", "");
    for (int i = 0; i < s.n[r] && rc == 0; i++) {
        const pp_sched_op *o = &s.ops[r][i];
        rc = V ? append(val, len, &used, "%s%c%d.%d", i ? " " : "", o->kind, o->mb, o->chunk)
               : append(val, len, &used, "%s%c%d", i ? " " : "", o->kind, o->mb);
    }
    pp__schedule_free(&s);
    return rc;
}

/* The canonical timeline of a case, one block per virtual stage (what --canonical draws), into tr (P traces; NULL:
 * none); returns its length, or -1. */
static double timeline(const char *sched, int P, int M, int v, pp_trace *tr) {
    pp_run_config c;
    pp_schedule s;
    pp_costs cost;
    config_for(&c, sched, P, M, v);
    if (pp__schedule_build(&s, sched, P, M, v)) return -1;
    pp__costs_from_config(&cost, &c);
    double span = tr ? pp__schedule_trace(&s, &cost, tr) : pp__schedule_replay(&s, &cost, NULL);
    pp__costs_free(&cost);
    pp__schedule_free(&s);
    return span;
}

/* "idle SCHED P M v t": per rank 1 when it computes nothing in time unit t..t+1 of the canonical timeline, else 0. */
static int key_idle(const char *sched, int P, int M, int v, int t, char *val, size_t len) {
    pp_trace *tr = pp__xcalloc((size_t)P, sizeof *tr);
    int rc = timeline(sched, P, M, v, tr) < 0 ? -1 : put(val, len, "%s", "");
    size_t used = 0;
    for (int r = 0; r < P; r++) {
        int busy = 0;
        for (int j = 0; j < tr[r].n; j++) busy |= tr[r].ev[j].vstart < t + 1 && tr[r].ev[j].vend > t;
        if (rc == 0) rc = append(val, len, &used, "%s%d", r ? " " : "", !busy);
        pp__trace_clear(&tr[r]);
    }
    free(tr);
    return rc;
}

/* "span SCHED P M v": the canonical step's length on that timeline. */
static int key_span(const char *sched, int P, int M, int v, char *val, size_t len) {
    double span = timeline(sched, P, M, v, NULL);
    return span < 0 ? -1 : put(val, len, "%.17g", span);
}

/* "uneven P M f0 .. f(P-1)": GPipe's canonical order replayed with these forward costs, backward twice each. */
static int key_uneven(int P, int M, const double *f, char *val, size_t len) {
    pp_schedule s;
    if (pp__schedule_build(&s, "gpipe", P, M, 1)) return -1;
    double fc[KEY_MAX_P], bc[KEY_MAX_P];
    for (int r = 0; r < P; r++) fc[r] = f[r], bc[r] = 2 * f[r];
    pp_costs cost = {fc, bc, 0, NULL, NULL, NULL, NULL};
    double b = pp__schedule_bubble(&s, &cost);
    pp__schedule_free(&s);
    return put(val, len, "%.17g", b);
}

/* "chunks P M blocks latency": the v dividing blocks whose step is shortest (v = 1: 1F1B; ties: the smaller v),
 * and its bubble. Every v keeps each rank's work at 3 M blocks, so the shortest step is the smallest bubble. */
static int key_chunks(int P, int M, int blocks, double latency, char *val, size_t len) {
    int best = 1;
    double bb = 2;
    for (int v = 1; v <= blocks && v <= 16; v++) {
        if (blocks % v) continue;
        pp_run_config c;
        config_for(&c, v == 1 ? "1f1b" : "interleaved", P, M, v);
        c.layers = P * blocks, c.comm_latency = latency;
        double b = pp__theory_bubble(&c, NULL);
        if (b < bb - 1e-12) bb = b, best = v;
    }
    return put(val, len, "%d %.17g", best, bb);
}

/* "traffic SCHED P M v b s h": the bytes of a step's boundary messages, each b x s x h fp32 values, and their
 * count. */
static int key_traffic(const char *sched, int P, int M, int v, int b, int s, int h, char *val, size_t len) {
    pp_run_config c;
    config_for(&c, sched, P, M, v);
    int n = pp__theory_messages(&c);
    return put(val, len, "%.17g %d", (double)n * b * s * h * 4, n);
}

/* "memory SCHED P M v r b s h": the bytes of the checkpointed inputs rank r holds at its peak (each one activation
 * of b x s x h fp32 values, whatever part of the model its stage or chunk holds), and the stashes. */
static int key_memory(const char *sched, int P, int M, int v, int r, int b, int s, int h, char *val, size_t len) {
    pp_run_config c;
    config_for(&c, sched, P, M, v);
    if (r < 0 || r >= P) return -1;
    int peak = pp__theory_peak(&c, r);
    return put(val, len, "%.17g %d", (double)peak * b * s * h * 4, peak);
}

/* "grid-pp P D M v b s h elem": per micro-batch and boundary between two ranks one activation forward and one
 * gradient back, the T tensor-parallel slices of a boundary tensor making one tensor, in each of the D replicas. */
static int key_grid_pp(int P, int D, int M, int v, int b, int s, int h, int elem, char *val, size_t len) {
    pp_run_config c;
    config_for(&c, v > 1 ? "interleaved" : "1f1b", P, M, v);
    return put(val, len, "%.17g", (double)D * pp__theory_messages(&c) * b * s * h * elem);
}

/* "grid-dp T P D params elem": each of the T P D ranks holds the gradients of params / (T P) parameters, B bytes,
 * and a ring all-reduce over D ranks sends 2 (D - 1) / D B bytes from each. */
static int key_grid_dp(int T, int P, int D, double params, int elem, char *val, size_t len) {
    double ranks = (double)T * P * D, per_rank = params / ((double)T * P) * elem;
    return put(val, len, "%.17g", ranks * 2.0 * (D - 1) / D * per_rank);
}

/* "grid-link TRAFFIC G T P D": which links a kind of traffic uses when rank t + T (p + P d) sits in server
 * rank / G: every pair of neighbours in its groups shares a server (1) or not (2); 0 when the groups have one
 * member. */
static int key_grid_link(const char *traffic, int G, int T, int P, int D, char *val, size_t len) {
    int tp = !strcmp(traffic, "tp"), pp = !strcmp(traffic, "pp");
    if (!tp && !pp && strcmp(traffic, "dp")) return -1;
    long ranks = (long)T * P * D, stride = tp ? 1 : pp ? T : (long)T * P, members = tp ? T : pp ? P : D;
    int key = 0;
    for (long r = 0; r < ranks; r++) {
        long index = r / stride % members; /* r's place in its group */
        if (index + 1 < members) key |= r / G == (r + stride) / G ? 1 : 2;
    }
    return put(val, len, "%d", key);
}

static double span_cost(const double *cost, int a, int b) {
    double s = 0;
    for (int i = a; i < b; i++) s += cost[i];
    return s;
}

/* "partition n P c0 .. c(n-1)": the best slowest stage over all cuts of n layers into P non-empty stages. The
 * optimum is the cost of some contiguous span; a span cost T is achievable iff packing layers greedily under T
 * needs at most P stages (then n >= P lets us split further without raising the maximum). The smallest achievable
 * span is exact. */
static int key_partition(const double *cost, int n, int P, char *val, size_t len) {
    double best = -1;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b <= n; b++) {
            double T = span_cost(cost, a, b);
            if (best >= 0 && T >= best) continue;
            int stages = 1, ok = 1;
            double cur = 0;
            for (int i = 0; i < n && ok; i++) {
                if (cost[i] > T) ok = 0;
                else if (cur + cost[i] > T) stages++, cur = cost[i];
                else cur += cost[i];
            }
            if (ok && stages <= P) best = T;
        }
    return put(val, len, "%.17g", best);
}

/* Reads up to max numbers after *pos; returns how many. */
static int numbers(const char **pos, double *x, int max) {
    int n = 0;
    char *end;
    while (n < max) {
        double d = strtod(*pos, &end);
        if (end == *pos) break;
        x[n++] = d, *pos = end;
    }
    return n;
}

int pp__warmup_key(const char *key, char *val, size_t len) {
    char kind[16], sched[32];
    int P, M, v, r, b, s, h, D, T, G, elem, used = 0;
    double x, many[128];
    if (sscanf(key, "%15s%n", kind, &used) != 1) return -1;
    const char *rest = key + used;
    if (!strcmp(kind, "bubble") && sscanf(rest, "%31s %d %d %d", sched, &P, &M, &v) == 4 && known(sched, P, M, v))
        return key_bubble(sched, P, M, v, val, len);
    if (!strcmp(kind, "peak") && sscanf(rest, "%31s %d %d %d %d", sched, &P, &M, &v, &r) == 5 && known(sched, P, M, v))
        return key_peak(sched, P, M, v, r, val, len);
    if (!strcmp(kind, "order") && sscanf(rest, "%31s %d %d %d %d", sched, &P, &M, &v, &r) == 5 &&
        known(sched, P, M, v ? v : 1))
        return key_order(sched, P, M, v, r, val, len);
    if (!strcmp(kind, "idle") && sscanf(rest, "%31s %d %d %d %d", sched, &P, &M, &v, &r) == 5 && known(sched, P, M, v))
        return key_idle(sched, P, M, v, r, val, len);
    if (!strcmp(kind, "span") && sscanf(rest, "%31s %d %d %d", sched, &P, &M, &v) == 4 && known(sched, P, M, v))
        return key_span(sched, P, M, v, val, len);
    if (!strcmp(kind, "uneven") && sscanf(rest, "%d %d%n", &P, &M, &used) == 2 && P >= 1 && P <= KEY_MAX_P &&
        known("gpipe", P, M, 1)) {
        rest += used;
        return numbers(&rest, many, P) == P ? key_uneven(P, M, many, val, len) : -1;
    }
    if (!strcmp(kind, "chunks") && sscanf(rest, "%d %d %d %lf", &P, &M, &b, &x) == 4 && known("1f1b", P, M, 1) &&
        b >= 1 && b <= 64)
        return key_chunks(P, M, b, x, val, len);
    if (!strcmp(kind, "traffic") && sscanf(rest, "%31s %d %d %d %d %d %d", sched, &P, &M, &v, &b, &s, &h) == 7 &&
        known(sched, P, M, v))
        return key_traffic(sched, P, M, v, b, s, h, val, len);
    if (!strcmp(kind, "memory") && sscanf(rest, "%31s %d %d %d %d %d %d %d", sched, &P, &M, &v, &r, &b, &s, &h) == 8 &&
        known(sched, P, M, v))
        return key_memory(sched, P, M, v, r, b, s, h, val, len);
    if (!strcmp(kind, "grid-gpus") && sscanf(rest, "%d %d %d", &T, &P, &D) == 3)
        return put(val, len, "%lld", (long long)T * P * D);
    if (!strcmp(kind, "grid-pp") && sscanf(rest, "%d %d %d %d %d %d %d %d", &P, &D, &M, &v, &b, &s, &h, &elem) == 8 &&
        known(v > 1 ? "interleaved" : "1f1b", P, M, v))
        return key_grid_pp(P, D, M, v, b, s, h, elem, val, len);
    if (!strcmp(kind, "grid-dp") && sscanf(rest, "%d %d %d %lf %d", &T, &P, &D, &x, &elem) == 5 && T > 0 && P > 0 &&
        D > 0)
        return key_grid_dp(T, P, D, x, elem, val, len);
    if (!strcmp(kind, "grid-link") && sscanf(rest, "%31s %d %d %d %d", sched, &G, &T, &P, &D) == 5 && G > 0 && T > 0 &&
        P > 0 && D > 0)
        return key_grid_link(sched, G, T, P, D, val, len);
    if (!strcmp(kind, "partition") && sscanf(rest, "%d %d%n", &M, &P, &used) == 2 && M >= 1 && M <= 128 && P >= 1) {
        rest += used;
        return numbers(&rest, many, M) == M ? key_partition(many, M, P, val, len) : -1;
    }
    return -1;
}
