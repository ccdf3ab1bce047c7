/* test_sched_opt.c: lab 09's optimum (grader/theory/sched_ilp.c) against an exhaustive search on the smallest
 * problems: the integer program's proved makespan is the least of every valid order's, its order replays to it and
 * holds the cap; a time limit too short to prove anything still returns a valid order or none. Skipped where the
 * build has no GLPK. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "replay.h"
#include "sched_kit.h"
#include "testutil.h"

/* pb's replay costs: f, b = i + w, bi = i, its latency (what sched_problem.h's pp__sched_costs gives). */
static void costs_of(const pp_sched_problem *pb, pp_costs *k) {
    int S = pb->P * pb->v;
    memset(k, 0, sizeof *k);
    k->f = calloc((size_t)S, sizeof *k->f), k->b = calloc((size_t)S, sizeof *k->b);
    k->bi = calloc((size_t)S, sizeof *k->bi);
    for (int s = 0; s < S; s++) k->f[s] = pb->f[s], k->b[s] = pb->i[s] + pb->w[s], k->bi[s] = pb->i[s];
    k->latency = pb->latency;
}

/* ---- the exhaustive search ------------------------------------------------------------------------------------
 * Every combination of per-rank orders (each rank's F, I and W of its stages in any order) that completes has one
 * replay, and listing all its ops by (start, rank) gives one sequence in which each op's inputs come before it.
 * The search builds exactly those sequences: it appends to any rank an op whose inputs are placed, at the start the
 * replay would give it, and only where (start, rank) comes after the last op placed. So it meets each completing
 * combination once, and none that deadlocks. It cuts a branch only where the rank's stashes pass the cap (an order
 * can only grow its count) or where it cannot beat the best found (each rank's clock plus its work left). */
enum { K_F, K_I, K_W };

typedef struct search {
    const pp_sched_problem *pb;
    int P, M, S, vshape, N;
    double *end;  /* per op ((vs * M + mb) * 3 + kind): its end, -1 while unplaced */
    double clock[PP_SCHED_MAX_P], left[PP_SCHED_MAX_P];
    int live[PP_SCHED_MAX_P];
    int *seq, n;  /* the ops placed, in order */
    double last_start;
    int last_rank;
    double best;
    int prune;    /* 1: cut what cannot beat the best found (0 completes every valid order) */
    int leaves;
    pp_costs k;
} search;

static int rank_of(const search *x, int vs) { return pp__place_rank(x->P, x->vshape, vs); }

static double dur(const search *x, int op) {
    int vs = op / 3 / x->M, kind = op % 3;
    return kind == K_F ? x->pb->f[vs] : kind == K_I ? x->pb->i[vs] : x->pb->w[vs];
}

/* The replay's start of op on its rank now, or -1 when an input is unplaced. */
static double start_of(const search *x, int op) {
    int vs = op / 3 / x->M, mb = op / 3 % x->M, kind = op % 3, r = rank_of(x, vs);
    double ready = 0;
    if (kind == K_F) {
        int prev = pp__place_prev(x->P, 0, vs);
        if (prev >= 0) {
            double e = x->end[(prev * x->M + mb) * 3 + K_F];
            if (e < 0) return -1;
            ready = e + (rank_of(x, prev) == r ? 0 : x->pb->latency);
        }
    } else if (kind == K_I) {
        int next = pp__place_next(x->P, x->pb->v, 0, vs);
        double e = x->end[(vs * x->M + mb) * 3 + K_F];
        if (e < 0) return -1;
        ready = e;
        if (next >= 0) {
            double u = x->end[(next * x->M + mb) * 3 + K_I];
            if (u < 0) return -1;
            u += rank_of(x, next) == r ? 0 : x->pb->latency;
            ready = u > ready ? u : ready;
        }
    } else {
        ready = x->end[(vs * x->M + mb) * 3 + K_I];
        if (ready < 0) return -1;
    }
    return ready > x->clock[r] ? ready : x->clock[r];
}

/* The placed sequence as a pp_schedule (each rank's ops in sequence order). */
static void to_schedule(const search *x, pp_schedule *s) {
    memset(s, 0, sizeof *s);
    s->P = x->P, s->M = x->M, s->v = x->pb->v, s->vshape = x->vshape;
    s->ops = calloc((size_t)x->P, sizeof *s->ops);
    s->n = calloc((size_t)x->P, sizeof *s->n);
    for (int r = 0; r < x->P; r++) s->ops[r] = calloc((size_t)PP_SCHED_ROOM(x->M, x->pb->v), sizeof **s->ops);
    for (int t = 0; t < x->n; t++) {
        int op = x->seq[t], vs = op / 3 / x->M, r = rank_of(x, vs);
        pp_sched_op *o = &s->ops[r][s->n[r]++];
        o->kind = "FBW"[op % 3], o->split = op % 3 == K_I, o->mb = op / 3 % x->M;
        o->chunk = pp__place_chunk(x->P, x->vshape, vs);
    }
}

static void dfs(search *x) {
    if (x->n == x->N) {
        double span = 0;
        for (int r = 0; r < x->P; r++) span = x->clock[r] > span ? x->clock[r] : span;
        /* each order the search completes replays as the search placed it, under the cap */
        pp_schedule s;
        to_schedule(x, &s);
        double replayed = pp__schedule_replay(&s, &x->k, NULL);
        cr_assert_float_eq(replayed, span, 1e-9, "the search's order replays to %g, not its %g", replayed, span);
        for (int r = 0; r < x->P; r++) cr_assert_leq(pp__schedule_peak(&s, r), x->pb->cap);
        pp__schedule_free(&s);
        x->leaves++;
        if (span < x->best) x->best = span;
        return;
    }
    for (int r = 0; x->prune && r < x->P; r++)
        if (x->clock[r] + x->left[r] >= x->best) return;
    for (int op = 0; op < x->N; op++) {
        if (x->end[op] >= 0) continue;
        int vs = op / 3 / x->M, kind = op % 3, r = rank_of(x, vs);
        double t = start_of(x, op);
        if (t < 0 || t < x->last_start || (t == x->last_start && r <= x->last_rank)) continue;
        if (kind == K_F && x->live[r] + 1 > x->pb->cap) continue;
        double d = dur(x, op), saved_clock = x->clock[r], saved_start = x->last_start;
        int saved_rank = x->last_rank;
        x->end[op] = t + d, x->clock[r] = t + d, x->left[r] -= d, x->seq[x->n++] = op;
        x->live[r] += kind == K_F ? 1 : kind == K_W ? -1 : 0;
        x->last_start = t, x->last_rank = r;
        dfs(x);
        x->live[r] -= kind == K_F ? 1 : kind == K_W ? -1 : 0;
        x->end[op] = -1, x->clock[r] = saved_clock, x->left[r] += d, x->n--;
        x->last_start = saved_start, x->last_rank = saved_rank;
    }
}

/* The least makespan of any valid order of pb, -1 when none exists; *leaves: the orders it completed (every valid
 * one when prune is 0). */
static double brute_force(const pp_sched_problem *pb, int prune, int *leaves) {
    search x = {.pb = pb, .P = pb->P, .M = pb->M, .S = pb->P * pb->v, .vshape = pb->v == 2, .prune = prune};
    x.N = 3 * x.S * x.M;
    x.end = malloc((size_t)x.N * sizeof *x.end);
    x.seq = malloc((size_t)x.N * sizeof *x.seq);
    for (int a = 0; a < x.N; a++) x.end[a] = -1, x.left[rank_of(&x, a / 3 / x.M)] += dur(&x, a);
    x.last_start = -1, x.last_rank = -1, x.best = INFINITY;
    costs_of(pb, &x.k);
    dfs(&x);
    pp__costs_free(&x.k);
    free(x.end), free(x.seq);
    *leaves = x.leaves;
    return isinf(x.best) ? -1 : x.best;
}

/* ---- the search against the plain enumeration -----------------------------------------------------------------
 * Where the combinations are few enough, every per-rank order (a rank's ops in any order that keeps each stage and
 * micro-batch's F before its I before its W), every combination of them replayed: the search must complete exactly
 * the combinations that complete and hold the cap, and find their least makespan. */

/* Appends to list (n of them, room ops each) every order of rank r's ops that keeps each F, I, W chain. */
static void rank_orders(const search *x, int r, pp_sched_op *cur, int depth, int *next_kind, int nops, int *ids,
                        pp_sched_op **list, int *n) {
    if (depth == nops) {
        *list = realloc(*list, (size_t)(*n + 1) * (size_t)nops * sizeof **list);
        memcpy(*list + (size_t)*n * nops, cur, (size_t)nops * sizeof *cur);
        (*n)++;
        return;
    }
    for (int c = 0; c < nops / 3; c++) {
        if (next_kind[c] == 3) continue;
        int vs = ids[c] / x->M, mb = ids[c] % x->M;
        pp_sched_op *o = &cur[depth];
        memset(o, 0, sizeof *o);
        o->kind = "FBW"[next_kind[c]], o->split = next_kind[c] == K_I, o->mb = mb;
        o->chunk = pp__place_chunk(x->P, x->vshape, vs);
        next_kind[c]++;
        rank_orders(x, r, cur, depth + 1, next_kind, nops, ids, list, n);
        next_kind[c]--;
    }
    (void)r;
}

/* The plain enumeration's least makespan (-1: none) and its count of valid combinations. */
static double enumerate(const pp_sched_problem *pb, int *valid) {
    search x = {.pb = pb, .P = pb->P, .M = pb->M, .S = pb->P * pb->v, .vshape = pb->v == 2};
    int nops = 3 * pb->M * pb->v, ids[64], next_kind[64], norders[PP_SCHED_MAX_P];
    pp_sched_op cur[192], *lists[PP_SCHED_MAX_P];
    for (int r = 0; r < x.P; r++) {
        int c = 0;
        for (int vs = 0; vs < x.S; vs++)
            for (int mb = 0; mb < x.M && rank_of(&x, vs) == r; mb++) next_kind[c] = 0, ids[c++] = vs * x.M + mb;
        lists[r] = NULL, norders[r] = 0;
        rank_orders(&x, r, cur, 0, next_kind, nops, ids, &lists[r], &norders[r]);
    }
    pp_costs k;
    costs_of(pb, &k);
    pp_schedule s = {.P = x.P, .M = x.M, .v = pb->v, .vshape = x.vshape};
    int pick[PP_SCHED_MAX_P] = {0}, n[PP_SCHED_MAX_P];
    pp_sched_op *ops[PP_SCHED_MAX_P];
    s.ops = ops, s.n = n;
    double best = INFINITY;
    *valid = 0;
    for (;;) {
        for (int r = 0; r < x.P; r++) ops[r] = lists[r] + (size_t)pick[r] * nops, n[r] = nops;
        double span = pp__schedule_replay(&s, &k, NULL);
        int ok = span >= 0;
        for (int r = 0; ok && r < x.P; r++) ok = pp__schedule_peak(&s, r) <= pb->cap;
        if (ok) (*valid)++, best = span < best ? span : best;
        int r = 0;
        while (r < x.P && ++pick[r] == norders[r]) pick[r++] = 0;
        if (r == x.P) break;
    }
    pp__costs_free(&k);
    for (int r = 0; r < x.P; r++) free(lists[r]);
    return isinf(best) ? -1 : best;
}

Test(sched_opt, search_is_exhaustive) {
    static const int shapes[][3] = {{2, 2, 1}, {3, 2, 1}};
    for (size_t t = 0; t < sizeof shapes / sizeof *shapes; t++)
        for (int cap = 1; cap <= 3; cap++) {
            pp_sched_problem pb = {.P = shapes[t][0], .M = shapes[t][1], .v = shapes[t][2], .cap = cap,
                                   .latency = 0.5 * (cap == 3)};
            for (int s = 0; s < pb.P * pb.v; s++) pb.f[s] = 1 + 0.5 * s, pb.i[s] = 2 - 0.5 * s, pb.w[s] = 1;
            int valid, leaves;
            double plain = enumerate(&pb, &valid), searched = brute_force(&pb, 0, &leaves);
            cr_log_info("P=%d M=%d cap=%d: %d valid combinations, least %g", pb.P, pb.M, cap, valid, plain);
            cr_expect_eq(leaves, valid, "P=%d M=%d cap=%d: the search completes %d orders, the plain enumeration "
                         "finds %d valid", pb.P, pb.M, cap, leaves, valid);
            cr_expect_float_eq(searched, plain, 1e-12, "P=%d M=%d cap=%d: least %g by search, %g by enumeration",
                               pb.P, pb.M, cap, searched, plain);
        }
}

/* ---- the program against it ---------------------------------------------------------------------------------- */

/* A problem with every cost 1, latency 0. */
static pp_sched_problem uniform(int P, int M, int v, int cap) {
    pp_sched_problem pb = {.P = P, .M = M, .v = v, .cap = cap};
    for (int s = 0; s < P * v; s++) pb.f[s] = pb.i[s] = pb.w[s] = 1;
    return pb;
}

/* s is a valid order of pb that replays to span and holds the cap on every rank. */
static void expect_valid(const pp_sched_problem *pb, const pp_schedule *s, double span, const char *what) {
    pp_costs k;
    costs_of(pb, &k);
    cr_assert(s->P == pb->P && s->M == pb->M && s->v == pb->v && s->vshape == (pb->v == 2), "%s: shape", what);
    for (int r = 0; r < pb->P; r++)
        cr_expect_eq(s->n[r], 3 * pb->M * pb->v, "%s: rank %d has %d ops", what, r, s->n[r]);
    double replayed = pp__schedule_replay(s, &k, NULL);
    cr_expect_float_eq(replayed, span, 1e-9, "%s: the order replays to %g, the solver says %g", what, replayed, span);
    for (int r = 0; r < pb->P; r++)
        cr_expect_leq(pp__schedule_peak(s, r), pb->cap, "%s: rank %d holds %d stashes over the cap %d", what, r,
                      pp__schedule_peak(s, r), pb->cap);
    pp__costs_free(&k);
}

/* The program proves the exhaustive search's optimum for pb, with the heuristic's bound and without it, and
 * its order is valid; where no order exists it refuses the problem. */
static void check_optimum(const pp_sched_problem *pb, const char *what) {
    int leaves;
    double want = brute_force(pb, 1, &leaves);
    for (int bare = 0; bare < 2; bare++) {
        pp_schedule s;
        double span;
        int ret = bare ? pp__sched_optimum_bounded(pb, 60, 0, &s, &span) : pp__sched_optimum(pb, 60, &s, &span);
        cr_log_info("%s%s: exhaustive %g (%d orders completed), solver %g (%d)", what, bare ? " (bare)" : "", want,
                    leaves, span, ret);
        if (want < 0) {
            cr_expect_eq(ret, -1, "%s: no order exists, the solver returned %d", what, ret);
            cr_expect_eq(span, -1);
            continue;
        }
        cr_assert_eq(ret, 1, "%s%s: not proved optimal (%d)", what, bare ? " (bare)" : "", ret);
        cr_expect_float_eq(span, want, 1e-9, "%s%s: the solver's optimum %g, the exhaustive search's %g", what,
                           bare ? " (bare)" : "", span, want);
        expect_valid(pb, &s, span, what);
        pp__schedule_free(&s);
    }
}

static void need_solver(void) {
    if (!pp__sched_ilp_built) test_skip("this build has no GLPK (libglpk-dev): no integer program to test");
}

Test(sched_opt, uniform_costs) {
    need_solver();
    static const int shapes[][3] = {{2, 2, 1}, {2, 3, 1}, {3, 2, 1}, {2, 2, 2}};
    static const int caps[] = {1, 2, 99};
    for (size_t t = 0; t < sizeof shapes / sizeof *shapes; t++)
        for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
            pp_sched_problem pb = uniform(shapes[t][0], shapes[t][1], shapes[t][2], caps[c]);
            char what[64];
            snprintf(what, sizeof what, "P=%d M=%d v=%d cap=%d", pb.P, pb.M, pb.v, pb.cap);
            check_optimum(&pb, what);
        }
    /* the V's turn: a cap of 3 is between the least (2) and none binding */
    pp_sched_problem pb = uniform(2, 2, 2, 3);
    check_optimum(&pb, "P=2 M=2 v=2 cap=3");
}

Test(sched_opt, uneven_costs_and_latency) {
    need_solver();
    pp_sched_problem pb = {.P = 3, .M = 2, .v = 1, .latency = 0.5, .f = {1, 2, 1}, .i = {2, 1, 1.5}, .w = {0.5, 1, 1}};
    for (int cap = 1; cap <= 3; cap++) {
        pb.cap = cap;
        char what[64];
        snprintf(what, sizeof what, "uneven P=3 M=2 latency 0.5 cap=%d", cap);
        check_optimum(&pb, what);
    }
    pp_sched_problem v2 = {.P = 2, .M = 2, .v = 2, .latency = 0.5, .cap = 3, .f = {1, 1.5, 1, 0.5},
                           .i = {1, 2, 1, 1}, .w = {1, 0.5, 2, 1}};
    check_optimum(&v2, "uneven P=2 M=2 v=2 latency 0.5 cap=3");
}

/* A limit too short to prove anything: the answer is still a valid order (the best found) or none. */
Test(sched_opt, time_limit) {
    need_solver();
    pp_sched_problem pb = uniform(4, 8, 1, 3);
    pb.latency = 0.25;
    pp_schedule s;
    double span;
    int ret = pp__sched_optimum(&pb, 0.001, &s, &span);
    cr_assert(ret == 0 || ret == 1, "returned %d", ret);
    if (span < 0) cr_expect(ret == 0 && s.ops == NULL, "no order, yet returned %d", ret);
    else expect_valid(&pb, &s, span, "P=4 M=8 cap=3, 1 ms");
    pp__schedule_free(&s);
}

Test(sched_opt, refusals) {
    need_solver();
    pp_schedule s;
    double span;
    pp_sched_problem pb = uniform(2, 2, 1, 0);
    cr_expect_eq(pp__sched_optimum(&pb, 1, &s, &span), -1, "cap 0 is no problem");
    cr_expect_eq(span, -1);
    pb = uniform(2, 2, 3, 2);
    cr_expect_eq(pp__sched_optimum(&pb, 1, &s, &span), -1, "v = 3 is no problem");
    pb = uniform(2, 2, 1, 2);
    pb.f[1] = 0;
    cr_expect_eq(pp__sched_optimum(&pb, 1, &s, &span), -1, "a cost of 0 is no problem");
}
