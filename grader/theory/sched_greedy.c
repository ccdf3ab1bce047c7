/* sched_greedy.c: the reference heuristic of sched_problem.h, a list scheduler in the manner of the zero-bubble paper's
 * automatic scheduler (Qi et al., "Zero Bubble Pipeline Parallelism"). It runs the virtual clock forward, one
 * rank at a time, always the rank whose clock is earliest: a rank that is free runs, in this order of priority,
 *   - an input half whose gradient has arrived (the critical path: another rank waits for it),
 *   - a forward whose input has arrived, when the rank holds fewer stashes than the cap (counting the new one)
 *     and its warm-up allows another micro-batch in flight,
 *   - a pending weight half, which nobody waits for: it fills time the rank would otherwise idle, and it is what
 *     frees a stash when the cap holds a forward back.
 * Like the paper it tries variants (warm-up depths, weight halves run at once or held while an input is
 * about to arrive, which of a V's two chunks goes first) and keeps the order whose replay is shortest.
 *
 * With two chunks in a V, rank r's forward of chunk 0 must leave room for the same micro-batch's forward of chunk
 * 1: the chunk-0 stash is only freed after the backward came through chunk 1 on the same rank. A chunk-0 forward
 * is therefore admitted only while the stashes that still wait for their chunk-1 forward stay below the cap,
 * which keeps one slot for chunk 1 and the list scheduler free of deadlocks. A V needs two stashes per rank; with
 * a cap of 1 no order holds it, and the order returned is the best under a cap of 2 (the check then reports the
 * cap broken). */
#include "sched_kit.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

#define GR_MB 64

/* One variant of the heuristic. */
typedef struct gr_variant {
    int depth, slope; /* micro-batches in flight (forward run, input half not yet) on rank r at most
                       * depth + slope * (P - 1 - r), chunk 0 only in a V; depth 0: the cap alone limits it */
    int hold_w;       /* 1: a weight half waits while a known input arrives before it would end */
    int deep_first;   /* V: a ready chunk-1 forward before a chunk-0 one (else the older micro-batch first) */
    int fwd_first;    /* 1: a ready forward before a ready input half (a latency can starve the last forwards) */
} gr_variant;

typedef struct gr_sim {
    const pp_sched_problem *pb;
    int P, M, v, S, cap;
    double fend[PP_SCHED_MAX_VS][GR_MB], iend[PP_SCHED_MAX_VS][GR_MB]; /* -1: not run */
    int nextf[PP_SCHED_MAX_VS];                                         /* the next micro-batch forward */
    double t[PP_SCHED_MAX_P];                                           /* each rank's clock */
    int live[PP_SCHED_MAX_P], inflight[PP_SCHED_MAX_P], await1[PP_SCHED_MAX_P], waiting[PP_SCHED_MAX_P];
    int left[PP_SCHED_MAX_P], fi_left[PP_SCHED_MAX_P]; /* ops still to run; F and I among them */
    int limit[PP_SCHED_MAX_P];
    int wq[PP_SCHED_MAX_P][2 * GR_MB], wvs[PP_SCHED_MAX_P][2 * GR_MB], wn[PP_SCHED_MAX_P], wh[PP_SCHED_MAX_P];
} gr_sim;

static int gr_rank(const gr_sim *g, int vs) { return pp__place_rank(g->P, g->v == 2, vs); }

static double gr_lat(const gr_sim *g, int from_vs, int r) { return gr_rank(g, from_vs) == r ? 0 : g->pb->latency; }

/* When the input of (vs, mb)'s forward is there, -1 when its producer has not run. */
static double gr_f_ready(const gr_sim *g, int vs, int mb, int r) {
    if (vs == 0) return 0;
    return g->fend[vs - 1][mb] < 0 ? -1 : g->fend[vs - 1][mb] + gr_lat(g, vs - 1, r);
}

/* When the gradient of (vs, mb)'s input half is there, -1 when it is not known yet. */
static double gr_i_ready(const gr_sim *g, int vs, int mb, int r) {
    if (g->fend[vs][mb] < 0) return -1;
    if (vs == g->S - 1) return g->fend[vs][mb];
    if (g->iend[vs + 1][mb] < 0) return -1;
    double up = g->iend[vs + 1][mb] + gr_lat(g, vs + 1, r);
    return up > g->fend[vs][mb] ? up : g->fend[vs][mb];
}

static void gr_emit(pp_schedule *s, int r, char kind, int mb, int chunk) {
    pp_sched_op *o = &s->ops[r][s->n[r]++];
    memset(o, 0, sizeof *o);
    o->kind = kind, o->mb = mb, o->chunk = chunk, o->split = kind == 'B';
}

/* The rank to act next: the unfinished one whose clock is earliest, not idle; when every rank with work idles,
 * the earliest with a weight half pending, which must run it (*forced). -1 when all are done, -2 when stuck. */
static int gr_next_rank(const gr_sim *g, int *forced) {
    int r = -1;
    *forced = 0;
    for (int q = 0; q < g->P; q++)
        if (g->left[q] > 0 && !g->waiting[q] && (r < 0 || g->t[q] < g->t[r])) r = q;
    if (r >= 0) return r;
    for (int q = 0; q < g->P; q++)
        if (g->left[q] > 0 && g->wn[q] > g->wh[q] && (r < 0 || g->t[q] < g->t[r])) r = q;
    if (r >= 0) return *forced = 1, r;
    for (int q = 0; q < g->P; q++)
        if (g->left[q] > 0) return -2;
    return -1;
}

/* An op chosen for a rank: its kind ('B' for an input half), virtual stage, micro-batch and input's arrival. */
typedef struct gr_pick {
    int kind, vs, mb;
    double ready;
} gr_pick;

/* Rank r's input half whose gradient has arrived by T: the oldest micro-batch, the later stage on a tie. Known
 * later arrivals lower *next. */
static gr_pick gr_choose_input(const gr_sim *g, int r, double T, double *next) {
    gr_pick p = {0, -1, -1, 0};
    for (int c = g->v - 1; c >= 0; c--) {
        int vs = pp__place_vstage(g->P, g->v == 2, r, c);
        for (int m = 0; m < g->M; m++) {
            if (g->iend[vs][m] >= 0) continue;
            double rd = gr_i_ready(g, vs, m, r);
            if (rd < 0) continue;
            if (rd > T) {
                if (rd < *next) *next = rd;
                continue;
            }
            if (!p.kind || m < p.mb) p = (gr_pick){'B', vs, m, rd};
            break;
        }
    }
    return p;
}

/* Rank r's forward whose input has arrived by T and which the cap and the warm-up admit. */
static gr_pick gr_choose_forward(const gr_sim *g, const gr_variant *var, int r, double T, double *next) {
    gr_pick p = {0, -1, -1, 0};
    for (int c = 0; c < g->v; c++) {
        int vs = pp__place_vstage(g->P, g->v == 2, r, c), m = g->nextf[vs];
        if (m >= g->M || g->live[r] + 1 > g->cap) continue;
        if (g->v == 2 && c == 0 && g->await1[r] + 1 > g->cap - 1) continue;
        if ((g->v == 1 || c == 0) && g->inflight[r] >= g->limit[r]) continue;
        double rd = gr_f_ready(g, vs, m, r);
        if (rd < 0) continue;
        if (rd > T) {
            if (rd < *next) *next = rd;
            continue;
        }
        int better = !p.kind || (var->deep_first ? c == 1 : m < p.mb || (m == p.mb && vs > p.vs));
        if (better) p = (gr_pick){'F', vs, m, rd};
    }
    return p;
}

/* What rank r runs at its clock; kind 0: nothing yet, *next then the earliest known arrival. */
static gr_pick gr_choose(const gr_sim *g, const gr_variant *var, int r, int forced, double *next) {
    double T = g->t[r];
    gr_pick p = {0, -1, -1, 0};
    if (!forced) {
        p = gr_choose_input(g, r, T, next);
        gr_pick f = gr_choose_forward(g, var, r, T, next);
        if (f.kind && (!p.kind || var->fwd_first)) p = f;
    }
    if (!p.kind && g->wn[r] > g->wh[r]) {
        int h = g->wh[r];
        double wc = g->pb->w[g->wvs[r][h]];
        if (forced || !var->hold_w || g->fi_left[r] == 0 || (*next < DBL_MAX && *next >= T + wc))
            p = (gr_pick){'W', g->wvs[r][h], g->wq[r][h], T};
    }
    return p;
}

/* Runs p on rank r: the clock, the stashes, the op appended to s. */
static void gr_apply(gr_sim *g, pp_schedule *s, int r, gr_pick p) {
    double start = p.ready > g->t[r] ? p.ready : g->t[r];
    int chunk = pp__place_chunk(g->P, g->v == 2, p.vs), entry = g->v == 1 || chunk == 0;
    if (p.kind == 'F') {
        g->t[r] = g->fend[p.vs][p.mb] = start + g->pb->f[p.vs];
        g->nextf[p.vs]++, g->live[r]++, g->fi_left[r]--;
        g->inflight[r] += entry;
        if (g->v == 2) g->await1[r] += chunk == 0 ? 1 : -1;
    } else if (p.kind == 'B') {
        g->t[r] = g->iend[p.vs][p.mb] = start + g->pb->i[p.vs];
        g->inflight[r] -= entry, g->fi_left[r]--;
        g->wq[r][g->wn[r]] = p.mb, g->wvs[r][g->wn[r]++] = p.vs;
    } else {
        g->t[r] = start + g->pb->w[p.vs];
        g->live[r]--, g->wh[r]++;
    }
    g->left[r]--;
    gr_emit(s, r, (char)p.kind, p.mb, chunk);
    for (int q = 0; q < g->P; q++) g->waiting[q] = 0;
}

/* Runs one variant into s (already allocated); 0, or -1 when it could not finish. */
static int gr_run(gr_sim *g, const gr_variant *var, pp_schedule *s) {
    int P = g->P, M = g->M, v = g->v;
    for (int a = 0; a < g->S; a++) {
        g->nextf[a] = 0;
        for (int m = 0; m < M; m++) g->fend[a][m] = g->iend[a][m] = -1;
    }
    for (int r = 0; r < P; r++) {
        g->t[r] = 0, g->live[r] = g->inflight[r] = g->await1[r] = g->waiting[r] = 0;
        g->left[r] = 3 * M * v, g->fi_left[r] = 2 * M * v, g->wn[r] = g->wh[r] = 0, s->n[r] = 0;
        g->limit[r] = var->depth > 0 ? var->depth + var->slope * (P - 1 - r) : 1 << 20;
    }
    for (;;) {
        int forced, r = gr_next_rank(g, &forced);
        if (r < 0) return r == -1 ? 0 : -1;
        double next = DBL_MAX;
        gr_pick p = gr_choose(g, var, r, forced, &next);
        if (p.kind) {
            gr_apply(g, s, r, p);
            continue;
        }
        /* idle until something may change: a known arrival or another rank's clock */
        for (int q = 0; q < P; q++)
            if (q != r && g->left[q] > 0 && !g->waiting[q] && g->t[q] > g->t[r] && g->t[q] < next) next = g->t[q];
        if (next < DBL_MAX) g->t[r] = next;
        else g->waiting[r] = 1;
    }
}

static void gr_copy(pp_schedule *dst, const pp_schedule *src) {
    for (int r = 0; r < src->P; r++) {
        memcpy(dst->ops[r], src->ops[r], (size_t)src->n[r] * sizeof **src->ops);
        dst->n[r] = src->n[r];
    }
}

void pp__sched_serial(const pp_sched_problem *pb, pp_schedule *s) {
    int P = pb->P, S = P * pb->v, vshape = pb->v == 2;
    pp__sched_alloc(pb, s);
    for (int mb = 0; mb < pb->M; mb++) {
        for (int vs = 0; vs < S; vs++) {
            int r = pp__place_rank(P, vshape, vs);
            s->ops[r][s->n[r]++] = (pp_sched_op){.kind = 'F', .mb = mb, .chunk = pp__place_chunk(P, vshape, vs)};
        }
        for (int vs = S - 1; vs >= 0; vs--) {
            int r = pp__place_rank(P, vshape, vs), c = pp__place_chunk(P, vshape, vs);
            s->ops[r][s->n[r]++] = (pp_sched_op){.kind = 'B', .mb = mb, .chunk = c, .split = 1};
            s->ops[r][s->n[r]++] = (pp_sched_op){.kind = 'W', .mb = mb, .chunk = c};
        }
    }
}

int pp__sched_greedy(const pp_sched_problem *pb, pp_schedule *s) {
    char err[256];
    if (pp__sched_problem_check(pb, err, sizeof err)) {
        memset(s, 0, sizeof *s);
        return -1;
    }
    int P = pb->P, v = pb->v, S = P * v;
    gr_sim *g = pp__xcalloc(1, sizeof *g);
    g->pb = pb, g->P = P, g->M = pb->M, g->v = v, g->S = S;
    g->cap = pb->cap;
    pp_costs k;
    pp__sched_costs(pb, &k);
    pp_schedule work;
    pp__sched_alloc(pb, &work);
    /* the fallback: always valid under the cap */
    pp__sched_serial(pb, s);
    double best = pp__schedule_replay(s, &k, NULL);
    /* depth 0 (the cap alone), then every depth up to 2P with a warm-up flat, as 1F1B's or as ZB-H2's slope */
    for (int depth = 0; depth <= 2 * P; depth++)
        for (int slope = depth ? 0 : 2; slope <= 2; slope++)
            for (int hold = 0; hold < 2; hold++)
                for (int deep = 0; deep < v; deep++)
                    for (int ff = 0; ff < 2; ff++) {
                        gr_variant var = {depth, slope, hold, deep, ff};
                        if (gr_run(g, &var, &work)) continue;
                        int ok = 1;
                        for (int r = 0; r < P && ok; r++) ok = pp__schedule_peak(&work, r) <= g->cap;
                        double span = ok ? pp__schedule_replay(&work, &k, NULL) : -1;
                        if (span >= 0 && span < best - 1e-9) best = span, gr_copy(s, &work);
                    }
    pp__schedule_free(&work);
    pp__costs_free(&k);
    free(g);
    return 0;
}
