/* warmup_partition.c: the warm-up part that cuts a model's layers into stages of the least slowest cost. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedules.h"
#include "warmup_parts.h"

/* ---- partition ----------------------------------------------------------------------------------------- */

#define PART_LAYERS 64
#define PART_P 4
#define PART_MAX_LAYERS 80
#define PART_MAX_P 8

typedef struct cost_model {
    char name[100];
    int n, P;
    double cost[PART_MAX_LAYERS];
} cost_model;

/* The three cost vectors, in units of one transformer block's forward, each cut into P = 4 stages:
 *  "64-layer LM": embedding 3.0 (layer 0), 62 blocks 1.0, LM head 5.0 (layer 63); best slowest stage 18.
 *  "uneven blocks": embedding 2.5, blocks 0.5 + ((7i + 3) mod 11) / 4 (deterministic, between 0.5 and 3.0),
 *      head 9.0 (a large vocabulary).
 *  "deepening": blocks growing with depth, 0.5 + i / 32, embedding 1.0, head 4.0.
 * Equal layer counts (16 per stage) are not optimal for any of them. */
static void cost_models(cost_model m[3]) {
    snprintf(m[0].name, sizeof m[0].name, "64-layer LM (embedding 3.0, 62 blocks 1.0, head 5.0)");
    snprintf(m[1].name, sizeof m[1].name, "uneven blocks (embedding 2.5, blocks 0.5..3.0, head 9.0)");
    snprintf(m[2].name, sizeof m[2].name, "deepening (embedding 1.0, blocks 0.5 + i/32, head 4.0)");
    for (int k = 0; k < 3; k++) m[k].n = PART_LAYERS, m[k].P = PART_P;
    for (int i = 1; i < PART_LAYERS - 1; i++) {
        m[0].cost[i] = 1.0;
        m[1].cost[i] = 0.5 + ((7 * i + 3) % 11) / 4.0;
        m[2].cost[i] = 0.5 + i / 32.0;
    }
    m[0].cost[0] = 3.0, m[0].cost[PART_LAYERS - 1] = 5.0;
    m[1].cost[0] = 2.5, m[1].cost[PART_LAYERS - 1] = 9.0;
    m[2].cost[0] = 1.0, m[2].cost[PART_LAYERS - 1] = 4.0;
}

/* Drawn cost models of the same three kinds, each on its own P in 3..8, costs in 1/64ths so that every sum is
 * exact: the 64-layer LM with another embedding and head; 40..80 uneven blocks of 0.5..3.0 (drawn one by one)
 * between an embedding and a large head; 40..80 blocks growing by 1/64..4/64 per layer. */
static void draw_cost_models(pp_warmup_draw *d, cost_model m[3]) {
    double emb, head;
    do {
        m[0].n = PART_LAYERS, m[0].P = pp__warmup_draw_int(d, 3, PART_MAX_P);
        emb = 0.5 * pp__warmup_draw_int(d, 2, 12), head = 0.5 * pp__warmup_draw_int(d, 2, 20);
    } while (m[0].P == PART_P && emb == 3.0 && head == 5.0);
    for (int i = 1; i < PART_LAYERS - 1; i++) m[0].cost[i] = 1.0;
    m[0].cost[0] = emb, m[0].cost[PART_LAYERS - 1] = head;
    snprintf(m[0].name, sizeof m[0].name, "64-layer LM (embedding %.1f, 62 blocks 1.0, head %.1f)", emb, head);

    m[1].n = pp__warmup_draw_int(d, 40, PART_MAX_LAYERS), m[1].P = pp__warmup_draw_int(d, 3, PART_MAX_P);
    emb = 0.25 * pp__warmup_draw_int(d, 4, 16), head = 0.5 * pp__warmup_draw_int(d, 6, 24);
    for (int i = 1; i < m[1].n - 1; i++) m[1].cost[i] = 0.25 * pp__warmup_draw_int(d, 2, 12);
    m[1].cost[0] = emb, m[1].cost[m[1].n - 1] = head;
    snprintf(m[1].name, sizeof m[1].name, "uneven blocks (%d layers: embedding %.2f, blocks 0.5..3.0, head %.1f)",
             m[1].n, emb, head);

    m[2].n = pp__warmup_draw_int(d, 40, PART_MAX_LAYERS), m[2].P = pp__warmup_draw_int(d, 3, PART_MAX_P);
    double base = 0.25 * pp__warmup_draw_int(d, 1, 4);
    double step = pp__warmup_draw_int(d, 1, 4) / 64.0;
    emb = 0.5 * pp__warmup_draw_int(d, 1, 6), head = 0.5 * pp__warmup_draw_int(d, 4, 12);
    for (int i = 1; i < m[2].n - 1; i++) m[2].cost[i] = base + i * step;
    m[2].cost[0] = emb, m[2].cost[m[2].n - 1] = head;
    snprintf(m[2].name, sizeof m[2].name, "deepening (%d layers: embedding %.1f, blocks %g + i x %g, head %.1f)",
             m[2].n, emb, base, step, head);
}

static double span_cost(const double *cost, int a, int b) {
    double s = 0;
    for (int i = a; i < b; i++) s += cost[i];
    return s;
}

static void first_str(const int *first, int P, char *s, size_t len) {
    size_t used = 0;
    for (int i = 0; i <= P && used < len; i++)
        used += (size_t)snprintf(s + used, len - used, "%s%d%s", i ? ", " : "{", first[i], i == P ? "}" : "");
}

/* Returns 1 when first[] (returned rc) is a valid cut of n layers into P stages, else 0 with the reason. */
static int partition_valid(int rc, const int *first, int guard_ok, int n, int P, char *msg, size_t len) {
    char fs[200];
    first_str(first, P, fs, sizeof fs);
    if (rc != 0) return snprintf(msg, len, "returned %d for a cut that exists (expected 0)", rc), 0;
    if (!guard_ok) return snprintf(msg, len, "wrote past first[%d] (first has P+1 = %d entries)", P, P + 1), 0;
    if (first[0] != 0) return snprintf(msg, len, "first[0] must be 0, got first = %s", fs), 0;
    if (first[P] != n) return snprintf(msg, len, "first[%d] must be %d (every layer placed), got first = %s", P, n, fs), 0;
    for (int s = 0; s < P; s++) {
        if (first[s + 1] == first[s])
            return snprintf(msg, len, "stage %d is empty (first[%d] = first[%d] = %d): first = %s; every stage needs "
                            "at least one layer", s, s, s + 1, first[s], fs), 0;
        if (first[s + 1] < first[s])
            return snprintf(msg, len, "stages overlap (first[%d] = %d < first[%d] = %d): first = %s; first[] must "
                            "increase, stage s holding layers first[s]..first[s+1]-1", s + 1, first[s + 1], s,
                            first[s], fs), 0;
    }
    return 1;
}

/* Asks the cut of each of the three cost models into first[k]; valid[k] says whether it is a cut. Returns 1 when
 * all three are, else 0 with the first reason in why. */
static int ask_cuts(pp_warmup_io *io, const cost_model m[3], int first[3][PART_MAX_P + 1 + 4], int valid[3],
                    char *why, size_t whylen) {
    int all_valid = 1;
    for (int k = 0; k < 3; k++) {
        int P = m[k].P, nf = P + 1 + 4;
        for (int i = 0; i < nf; i++) first[k][i] = -7777;
        double copy[PART_MAX_LAYERS];
        memcpy(copy, m[k].cost, sizeof copy);
        int rc = pp__warmup_ask_partition(io, m[k].n, copy, P, first[k], nf);
        int guard = 1;
        for (int i = P + 1; i < nf; i++) guard &= first[k][i] == -7777;
        char msg[300];
        valid[k] = partition_valid(rc, first[k], guard, m[k].n, P, msg, sizeof msg);
        if (!valid[k] && all_valid) snprintf(why, whylen, "%s, P=%d: %s", m[k].name, P, msg);
        all_valid &= valid[k];
    }
    return all_valid;
}

/* The check that every cut is one (pc: "partition valid"). */
static void grade_valid(const pp_warmup_draw *draw, int all_valid, const char *why, const pp_warmup_check *pc,
                        pp_test_result *out) {
    if (all_valid && draw)
        pp__check_add(out, pc->name, pc->points, 1,
                      "3 cost models: every cut is contiguous, non-empty and covers its layers");
    else if (all_valid)
        pp__check_add(out, pc->name, pc->points, 1,
                      "3 cost models: every cut is contiguous, non-empty and covers the %d layers", PART_LAYERS);
    else if (draw)
        pp__check_add(out, pc->name, pc->points, 0, "invalid partition: %s; HINT: a "
                      "cut is first[0] = 0 < first[1] < ... < first[P] = nlayers, every stage contiguous and "
                      "non-empty", why);
    else
        pp__check_add(out, pc->name, pc->points, 0, "invalid partition: %s", why);
}

/* The check that model m's cut (first, a valid cut when valid) has the least slowest stage (pc: "partition
 * optimal: ..."). */
static void grade_optimal(pp_warmup_io *io, const pp_warmup_draw *draw, const cost_model *m, const int *first,
                          int valid, const pp_warmup_check *pc, pp_test_result *out) {
    int P = m->P;
    char costs[PART_MAX_LAYERS * 26] = "";
    for (int i = 0; i < m->n; i++) snprintf(costs + strlen(costs), sizeof costs - strlen(costs), " %.17g", m->cost[i]);
    double opt = PP_WARMUP_KEY_NUM(io, "partition %d %d%s", m->n, P, costs);
    if (!valid && draw) {
        pp__check_add(out, pc->name, pc->points, 0, "%s, P=%d: not graded, the partition is invalid", m->name, P);
        return;
    } else if (!valid) {
        pp__check_add(out, pc->name, pc->points, 0, "%s: not graded, the partition is invalid (best slowest "
                      "stage: %.6g)", m->name, opt);
        return;
    }
    char stages[200] = "";
    double worst = 0;
    for (int s = 0; s < P; s++) {
        double c = span_cost(m->cost, first[s], first[s + 1]);
        size_t len = strlen(stages);
        snprintf(stages + len, sizeof stages - len, "%s%.6g", s ? " " : "", c);
        if (c > worst) worst = c;
    }
    /* the costs are multiples of 1/64, so every sum here is exact; 1e-9 relative only covers a student's
     * prefix-sum differences on other inputs */
    int ok = fabs(worst - opt) <= 1e-9 * (1.0 + opt);
    char fs[200];
    first_str(first, P, fs, sizeof fs);
    if (ok && draw)
        pp__check_add(out, pc->name, pc->points, 1, "%s, P=%d: the cut is optimal (first = %s)", m->name, P, fs);
    else if (ok)
        pp__check_add(out, pc->name, pc->points, 1, "%s: slowest stage %.6g is optimal (first = %s, stage costs %s)",
                      m->name, worst, fs, stages);
    else if (draw)
        pp__check_add(out, pc->name, pc->points, 0,
                      "%s, P=%d: the slowest stage costs %.6g, more than the best cut's (first = %s, stage costs "
                      "%s); HINT: equal layer counts are not enough when the embedding and the head add cost: "
                      "search the cuts exactly",
                      m->name, P, worst, fs, stages);
    else
        pp__check_add(out, pc->name, pc->points, 0,
                      "%s: expected the slowest stage to cost %.6g (the optimum), got %.6g (first = %s, stage "
                      "costs %s); HINT: equal layer counts are not enough when the embedding and the head add "
                      "cost: search the cuts exactly",
                      m->name, opt, worst, fs, stages);
}

/* Fewer layers than stages, few_n on few_P (3 on P=4 in the public case; pc: "partition impossible"). Gated on
 * valid cuts, so a stub that always returns -1 earns nothing. */
static void grade_impossible(pp_warmup_io *io, const pp_warmup_draw *draw, int few_n, int few_P, int all_valid,
                             const pp_warmup_check *pc, pp_test_result *out) {
    int few[PART_MAX_P + 1] = {0};
    double ones[PART_MAX_P] = {1, 1, 1, 1, 1, 1, 1, 1};
    int rc = pp__warmup_ask_partition(io, few_n, ones, few_P, few, few_P + 1);
    if (!all_valid)
        pp__check_add(out, pc->name, pc->points, 0, "not graded until the partitions above are valid");
    else if (!draw)
        pp__check_add(out, pc->name, pc->points, rc == -1,
                      "3 layers on P=4 (a stage would be empty): expected -1, got %d", rc);
    else if (rc == -1)
        pp__check_add(out, pc->name, pc->points, 1, "%d layers on P=%d (a stage would be empty): returned -1", few_n,
                      few_P);
    else
        pp__check_add(out, pc->name, pc->points, 0,
                      "%d layers on P=%d (a stage would be empty): got %d; HINT: with fewer layers than stages no "
                      "cut exists: return -1", few_n, few_P, rc);
}

void pp__warmup_grade_partition(pp_warmup_io *io, pp_warmup_draw *draw,
                                const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    (void)nchecks; /* the checks are taken by their place in the table */
    cost_model m[3];
    memset(m, 0, sizeof m);
    if (draw) draw_cost_models(draw, m);
    else cost_models(m);
    /* the impossible case: fewer layers than stages */
    int few_P = draw ? pp__warmup_draw_int(draw, 3, PART_MAX_P) : PART_P;
    int few_n = draw ? pp__warmup_draw_int(draw, 1, few_P - 1) : 3;
    int valid[3], first[3][PART_MAX_P + 1 + 4];
    char why[400] = "";
    int all_valid = ask_cuts(io, m, first, valid, why, sizeof why);
    grade_valid(draw, all_valid, why, &checks[0], out);
    for (int k = 0; k < 3; k++) grade_optimal(io, draw, &m[k], first[k], valid[k], &checks[1 + k], out);
    grade_impossible(io, draw, few_n, few_P, all_valid, &checks[4], out);
}
