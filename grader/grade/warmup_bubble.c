/* warmup_bubble.c: the warm-up parts that read the canonical timeline: the bubble, each rank's stash peak, the
 * ranks idle at an instant, the bubble of uneven stages, and the chunks that pay for their messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedules.h"
#include "warmup_parts.h"

/* ---- bubble -------------------------------------------------------------------------------------------- */

static const pp_warmup_case bubble_cases[] = {
    {"naive", 4, 1, 1},        {"naive", 8, 1, 1},        {"naive", 4, 8, 1},
    {"gpipe", 4, 6, 1},        {"gpipe", 4, 24, 1},       {"gpipe", 8, 32, 1},      {"gpipe", 2, 1, 1},
    {"1f1b", 4, 8, 1},         {"1f1b", 4, 6, 1},         {"1f1b", 8, 16, 1},
    {"interleaved", 4, 8, 2},  {"interleaved", 4, 16, 4}, {"interleaved", 2, 4, 2}, {"interleaved", 8, 16, 2},
    {"zbh1", 4, 8, 1},         {"zbh1", 4, 16, 1},        {"zbh1", 8, 8, 1},        {"zbh2", 4, 8, 1},
    {"zbh2", 3, 9, 1},
};

void pp__warmup_grade_bubble(pp_warmup_io *io, pp_warmup_draw *draw,
                             const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    const int ncases = PP_WARMUP_COUNT(bubble_cases);
    pp_warmup_case drawn[PP_WARMUP_COUNT(bubble_cases)];
    const pp_warmup_case *cases = bubble_cases;
    if (draw) pp__warmup_draw_siblings(draw, bubble_cases, ncases, drawn), cases = drawn;
    for (int k = 0; k < nchecks; k++) {
        const char *sched = checks[k].name + strlen("bubble ");
        int n = 0, bad = 0;
        char first_bad[200] = "", example[120] = "";
        for (int i = 0; i < ncases; i++) {
            const pp_warmup_case *bc = &cases[i];
            if (strcmp(bc->schedule, sched)) continue;
            double want = PP_WARMUP_KEY_NUM(io, "bubble %s %d %d %d", bc->schedule, bc->P, bc->M, bc->v);
            double got = pp__warmup_ask_bubble(io, bc->schedule, bc->P, bc->M, bc->v);
            n++;
            if (!example[0]) snprintf(example, sizeof example, "P=%d M=%d v=%d: %.4f", bc->P, bc->M, bc->v, want);
            if (!(fabs(got - want) <= 1e-9)) {
                if (!bad && draw)
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d: got %.6f", sched, bc->P, bc->M,
                             bc->v, got);
                else if (!bad)
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d: expected %.6f, got %.6f", sched,
                             bc->P, bc->M, bc->v, want, got);
                bad++;
            }
        }
        /* the rows that split backwards (the zero-bubble ones) get the floor's hint */
        pp__warmup_verdict(out, &checks[k], bad, n, "cases", ", tolerance 1e-9", first_bad,
                           pp__schedule_def(sched)->weight_halves
                               ? "with the backward split, F = B = W = 1: when can the last rank start at the earliest, "
                                 "and how much work does it have? (docs/05-zerobubble.md, the floor)"
                               : "count the idle slots of each rank on the staircase with F=1, B=2 and divide by P times "
                                 "the length of the step",
                           draw ? NULL : example);
    }
}

/* ---- peaks --------------------------------------------------------------------------------------------- */

static const pp_warmup_case peak_cases[] = {
    {"gpipe", 4, 8, 1},       {"gpipe", 4, 6, 1},       {"gpipe", 2, 3, 1},
    {"1f1b", 4, 8, 1},        {"1f1b", 4, 2, 1},        {"1f1b", 8, 16, 1},
    {"interleaved", 4, 8, 2}, {"interleaved", 4, 4, 2}, {"interleaved", 2, 4, 3},
    {"zbh1", 4, 8, 1},        {"zbh1", 4, 2, 1},        {"zbh2", 4, 8, 1},        {"zbh2", 4, 4, 1},
};

void pp__warmup_grade_peaks(pp_warmup_io *io, pp_warmup_draw *draw,
                            const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    const int ncases = PP_WARMUP_COUNT(peak_cases);
    pp_warmup_case drawn[PP_WARMUP_COUNT(peak_cases)];
    const pp_warmup_case *cases = peak_cases;
    if (draw) pp__warmup_draw_siblings(draw, peak_cases, ncases, drawn), cases = drawn;
    for (int k = 0; k < nchecks; k++) {
        const char *sched = checks[k].name + strlen("peaks ");
        int n = 0, bad = 0;
        char first_bad[200] = "", example[120] = "";
        for (int i = 0; i < ncases; i++) {
            const pp_warmup_case *pc = &cases[i];
            if (strcmp(pc->schedule, sched)) continue;
            char list[80] = "";
            for (int r = 0; r < pc->P; r++) {
                int want = PP_WARMUP_KEY_INT(io, "peak %s %d %d %d %d", pc->schedule, pc->P, pc->M, pc->v, r);
                int got = pp__warmup_ask_peak(io, pc->schedule, pc->P, pc->M, pc->v, r);
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s%d", r ? " " : "", want);
                n++;
                if (got != want) {
                    if (!bad && draw)
                        snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d rank %d: got %d", sched, pc->P,
                                 pc->M, pc->v, r, got);
                    else if (!bad)
                        snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d rank %d: expected %d, got %d",
                                 sched, pc->P, pc->M, pc->v, r, want, got);
                    bad++;
                }
            }
            if (!example[0]) snprintf(example, sizeof example, "P=%d M=%d v=%d: %s", pc->P, pc->M, pc->v, list);
        }
        pp__warmup_verdict(out, &checks[k], bad, n, "ranks", "", first_bad,
                           pp__schedule_def(sched)->weight_halves
                               ? "a forward makes a stash, and only its weight half frees it: count the weight halves a "
                                 "rank holds back besides the forwards of its warm-up"
                               : "a forward makes a stash, its backward frees it: count the forwards the rank has run "
                                 "before its first backward",
                           draw ? NULL : example);
    }
}

/* ---- idle ranks: where the bubble is ------------------------------------------------------------------- */

typedef struct idle_case {
    const char *schedule;
    int P, M, v, t;
} idle_case;

/* instants in the fill, the steady state, the drain and after the end */
static const idle_case idle_cases[] = {
    {"gpipe", 4, 6, 1, 0},        {"gpipe", 4, 6, 1, 4},        {"gpipe", 4, 6, 1, 10},
    {"gpipe", 4, 6, 1, 24},       {"gpipe", 4, 6, 1, 40},       {"1f1b", 4, 8, 1, 2},
    {"1f1b", 4, 8, 1, 6},         {"1f1b", 4, 8, 1, 15},        {"1f1b", 4, 8, 1, 27},
    {"1f1b", 4, 8, 1, 30},        {"interleaved", 4, 8, 2, 1},  {"interleaved", 4, 8, 2, 11},
    {"interleaved", 4, 8, 2, 30}, {"interleaved", 4, 8, 2, 50}, {"interleaved", 2, 4, 2, 5},
};

/* Drawn instants: for each configuration of the public table a drawn one of its schedule (P up to 6, interleaved
 * M a multiple of P), and as many instants in it, in turn in the fill, the steady state, the drain, after the
 * end and anywhere in the step. */
static void draw_idle(pp_warmup_io *io, pp_warmup_draw *d, idle_case *out) {
    int P = 0, M = 0, v = 1, span = 0, kind = 0;
    for (int i = 0; i < PP_WARMUP_COUNT(idle_cases); i++) {
        const idle_case *pub = &idle_cases[i];
        if (i == 0 || strcmp(pub->schedule, pub[-1].schedule) || pub->P != pub[-1].P || pub->M != pub[-1].M) {
            do {
                const pp_schedule_def *def = pp__schedule_def(pub->schedule);
                int inter = def->chunked && !def->vshape; /* chunks looped round the ranks */
                P = pp__warmup_draw_int(d, 2, inter ? 4 : 6), v = inter ? pp__warmup_draw_int(d, 2, 3) : 1;
                M = inter ? P * pp__warmup_draw_int(d, 1, 3) : pp__warmup_draw_int(d, 2, 12);
            } while (P == pub->P && M == pub->M && v == pub->v);
            span = (int)PP_WARMUP_KEY_NUM(io, "span %s %d %d %d", pub->schedule, P, M, v);
            kind = 0;
        }
        int t = kind == 0 ? pp__warmup_draw_int(d, 0, P - 2)                                      /* the fill */
                : kind == 1 ? pp__warmup_draw_int(d, P - 1, span - P > P - 1 ? span - P : P - 1) /* the steady state */
                : kind == 2 ? pp__warmup_draw_int(d, span - P + 1, span - 1)                      /* the drain */
                : kind == 3 ? pp__warmup_draw_int(d, span, span + 4)                              /* after the end */
                            : pp__warmup_draw_int(d, 0, span - 1);
        out[i] = (idle_case){pub->schedule, P, M, v, t};
        kind++;
    }
}

void pp__warmup_grade_idle(pp_warmup_io *io, pp_warmup_draw *draw,
                           const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    const int ncases = PP_WARMUP_COUNT(idle_cases);
    idle_case drawn[PP_WARMUP_COUNT(idle_cases)];
    const idle_case *cases = idle_cases;
    if (draw) draw_idle(io, draw, drawn), cases = drawn;
    for (int k = 0; k < nchecks; k++) {
        const char *sched = checks[k].name + strlen("idle ");
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const idle_case *ic = &cases[i];
            if (strcmp(ic->schedule, sched)) continue;
            /* per rank 1 when idle on the canonical timeline, one block per virtual stage (what --canonical
             * --timeline draws) */
            const char *key = pp__warmup_io_key(io, "idle %s %d %d %d %d", ic->schedule, ic->P, ic->M, ic->v, ic->t);
            int want[PP_MAX_RANKS], got[PP_MAX_RANKS + 4], nwant = 0;
            char wl[80] = "", gl[80] = "", *end;
            for (int r = 0; r < ic->P; r++, key = end) {
                want[r] = (int)strtol(key, &end, 10) != 0, nwant += want[r];
                if (want[r]) snprintf(wl + strlen(wl), sizeof wl - strlen(wl), "%s%d", nwant > 1 ? " " : "", r);
            }
            for (int r = 0; r < ic->P + 4; r++) got[r] = -7;
            int ret = pp__warmup_ask_idle(io, ic->schedule, ic->P, ic->M, ic->v, ic->t, got, ic->P + 4);
            int same = ret == nwant, ngot = 0;
            for (int r = 0; r < ic->P; r++) {
                same &= (got[r] != 0) == want[r] && (got[r] == 0 || got[r] == 1);
                if (got[r] == 1) snprintf(gl + strlen(gl), sizeof gl - strlen(gl), "%s%d", ngot++ ? " " : "", r);
            }
            for (int r = ic->P; r < ic->P + 4; r++) same &= got[r] == -7;
            n++;
            if (!same && !bad++) {
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d, time unit %d..%d: got ranks {%s} idle "
                             "(returned %d)", sched, ic->P, ic->M, ic->v, ic->t, ic->t + 1, gl, ret);
                else
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d, time unit %d..%d: ranks {%s} idle (%d), "
                             "got {%s} (returned %d)", sched, ic->P, ic->M, ic->v, ic->t, ic->t + 1, wl, nwant, gl,
                             ret);
            }
        }
        pp__warmup_verdict(out, &checks[k], bad, n, "instants", "", first_bad,
                           "a rank idles while its next op waits for an input that another rank has not produced yet (the "
                           "fill at the start, the drain at the end): replay the order, each op starting when its rank is "
                           "free and its input exists",
                           NULL);
    }
}

/* ---- uneven stages: the slowest one sets the pace ------------------------------------------------------- */

#define UNEVEN_MAX_P 6

typedef struct uneven_case {
    const char *what;
    int P, M;
    double f[UNEVEN_MAX_P];
} uneven_case;

static const uneven_case uneven_cases[] = {
    {"a faster first stage", 4, 8, {0.5, 1, 1, 1}}, {"a faster first stage", 4, 2, {0.25, 1, 1, 1}},
    {"a slower last stage", 4, 8, {1, 1, 1, 2}},    {"a slower last stage", 3, 4, {1, 1, 3}},
    {"mixed stages", 4, 8, {1, 1.5, 0.5, 1}},       {"mixed stages", 2, 6, {2, 1}},
};

/* Drawn stages, one per public case of its kind: P in 2..6, M in 1..12, costs in quarters (exact sums): a first
 * stage at 1/4..3/4 of the others, a last one 5/4..4 times as slow, or every stage anywhere in 1/4..3. */
static void draw_uneven(pp_warmup_draw *d, uneven_case *out) {
    for (int i = 0; i < PP_WARMUP_COUNT(uneven_cases); i++) {
        const uneven_case *pub = &uneven_cases[i];
        uneven_case c;
        do {
            memset(&c, 0, sizeof c);
            c.what = pub->what, c.P = pp__warmup_draw_int(d, 2, UNEVEN_MAX_P), c.M = pp__warmup_draw_int(d, 1, 12);
            for (int s = 0; s < c.P; s++) c.f[s] = 1;
            if (pub->f[0] < 1) c.f[0] = 0.25 * pp__warmup_draw_int(d, 1, 3);
            else if (pub->f[pub->P - 1] > 1) c.f[c.P - 1] = 0.25 * pp__warmup_draw_int(d, 5, 16);
            else
                for (int s = 0; s < c.P; s++) c.f[s] = 0.25 * pp__warmup_draw_int(d, 1, 12);
        } while (c.P == pub->P && c.M == pub->M && !memcmp(c.f, pub->f, sizeof c.f));
        out[i] = c;
    }
}

void pp__warmup_grade_uneven(pp_warmup_io *io, pp_warmup_draw *draw,
                             const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    const int ncases = PP_WARMUP_COUNT(uneven_cases);
    uneven_case drawn[PP_WARMUP_COUNT(uneven_cases)];
    const uneven_case *cases = uneven_cases;
    if (draw) draw_uneven(draw, drawn), cases = drawn;
    for (int k = 0; k < nchecks; k++) {
        const char *what = checks[k].name + strlen("uneven: ");
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const uneven_case *uc = &cases[i];
            if (strcmp(uc->what, what)) continue;
            /* GPipe's canonical order replayed with these forward costs (backward twice each) */
            char costs[UNEVEN_MAX_P * 26] = "";
            for (int r = 0; r < uc->P; r++) snprintf(costs + strlen(costs), sizeof costs - strlen(costs), " %.17g", uc->f[r]);
            double want = PP_WARMUP_KEY_NUM(io, "uneven %d %d%s", uc->P, uc->M, costs), copy[UNEVEN_MAX_P];
            memcpy(copy, uc->f, sizeof copy);
            double got = pp__warmup_ask_uneven(io, uc->P, uc->M, copy);
            n++;
            if (!(fabs(got - want) <= 1e-9) && !bad++) {
                char fs[64] = "";
                for (int r = 0; r < uc->P; r++) snprintf(fs + strlen(fs), sizeof fs - strlen(fs), "%s%g", r ? ", " : "", uc->f[r]);
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "gpipe P=%d M=%d, forward costs {%s}: got %.6f", uc->P,
                             uc->M, fs, got);
                else
                    snprintf(first_bad, sizeof first_bad, "gpipe P=%d M=%d, forward costs {%s}: expected %.6f, got "
                             "%.6f", uc->P, uc->M, fs, want, got);
            }
        }
        pp__warmup_verdict(out, &checks[k], bad, n, "cases", ", tolerance 1e-9", first_bad,
                           "every micro-batch passes every stage, so in the steady state all ranks wait for the slowest "
                           "one; a change to any other stage only moves the fill and the drain",
                           NULL);
    }
}

/* ---- chunks: interleaving's messages against its bubble -------------------------------------------------- */

typedef struct chunks_case {
    int P, M, blocks;
    double latency;
} chunks_case;

static const chunks_case chunks_cases[] = {
    {4, 8, 4, 0},   {2, 4, 6, 0},    {8, 8, 2, 0},    {4, 8, 4, 0.25}, {4, 8, 4, 1},
    {4, 8, 4, 8},   {2, 4, 6, 0.25}, {2, 4, 6, 1.5},  {8, 16, 4, 0.5}, {4, 4, 8, 3},
};

static int chunks_in(const chunks_case *c, const chunks_case *list, int n) {
    for (int i = 0; i < n; i++)
        if (c->P == list[i].P && c->M == list[i].M && c->blocks == list[i].blocks && c->latency == list[i].latency)
            return 1;
    return 0;
}

/* Drawn choices, one per public case, without latency where it has none: P in 2..8, M a multiple of P, blocks
 * 2, 3, 4, 6 or 8 with at most 128 chunk-forwards per rank and 64 virtual stages (the most chunks a replay of
 * the handout's size holds), a latency in quarters up to 8, so that ties between two v are exact ties. */
static void draw_chunks(pp_warmup_draw *d, chunks_case *out) {
    static const int blocks[] = {2, 3, 4, 6, 8};
    for (int i = 0; i < PP_WARMUP_COUNT(chunks_cases); i++) {
        chunks_case c;
        do {
            c.P = pp__warmup_draw_int(d, 2, 8), c.M = c.P * pp__warmup_draw_int(d, 1, 4), c.blocks = blocks[pp__warmup_draw_int(d, 0, 4)];
            c.latency = chunks_cases[i].latency > 0 ? 0.25 * pp__warmup_draw_int(d, 1, 32) : 0;
        } while (c.blocks * c.M > 128 || c.P * c.blocks > 64 || chunks_in(&c, chunks_cases, PP_WARMUP_COUNT(chunks_cases)) ||
                 chunks_in(&c, out, i));
        out[i] = c;
    }
}

void pp__warmup_grade_chunks(pp_warmup_io *io, pp_warmup_draw *draw,
                             const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    const int ncases = PP_WARMUP_COUNT(chunks_cases);
    chunks_case drawn[PP_WARMUP_COUNT(chunks_cases)];
    const chunks_case *cases = chunks_cases;
    if (draw) draw_chunks(draw, drawn), cases = drawn;
    for (int k = 0; k < nchecks; k++) {
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const chunks_case *cc = &cases[i];
            if ((cc->latency > 0) != k) continue;
            double bb;
            int want;
            sscanf(pp__warmup_io_key(io, "chunks %d %d %d %.17g", cc->P, cc->M, cc->blocks, cc->latency), "%d %lf", &want, &bb);
            int got = pp__warmup_ask_chunks(io, cc->P, cc->M, cc->blocks, cc->latency);
            n++;
            if (got != want && !bad++) {
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "P=%d M=%d, %d blocks per rank, latency %g: got v = %d",
                             cc->P, cc->M, cc->blocks, cc->latency, got);
                else
                    snprintf(first_bad, sizeof first_bad, "P=%d M=%d, %d blocks per rank, latency %g: expected v = %d "
                             "(bubble %.4f), got %d", cc->P, cc->M, cc->blocks, cc->latency, want, bb, got);
            }
        }
        pp__warmup_verdict(out, &checks[k], bad, n, "cases", "", first_bad,
                           k ? "more chunks shrink the fill and the drain but multiply the boundaries each micro-batch "
                               "crosses, each costing the latency: replay each v with its latency and compare"
                             : "without latency messages are free: what do more chunks do to the fill and the drain?",
                           NULL);
    }
}
