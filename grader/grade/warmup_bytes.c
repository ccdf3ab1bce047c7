/* warmup_bytes.c: the warm-up parts that count bytes: the messages of a step, the stashes recomputation keeps,
 * and a TP x PP x DP grid's GPUs, traffic and links. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedules.h"
#include "warmup_parts.h"

/* ---- sizes of an activation: b sequences x s tokens x h hidden values ------------------------------------ */

typedef struct act_size {
    int b, s, h;
} act_size;

static const act_size public_size = {4, 16, 64};

/* A drawn size, one per part: b up to 16, s up to 512, h up to 1024. */
static act_size draw_size(pp_warmup_draw *d) {
    act_size z;
    do z.b = pp__warmup_draw_int(d, 1, 16), z.s = 16 * pp__warmup_draw_int(d, 1, 32), z.h = 32 * pp__warmup_draw_int(d, 1, 32);
    while (z.b == public_size.b && z.s == public_size.s && z.h == public_size.h);
    return z;
}

/* ---- traffic: the messages of a step ------------------------------------------------------------------- */

static const pp_warmup_case traffic_cases[] = {
    {"gpipe", 4, 8, 1},       {"1f1b", 8, 16, 1}, {"naive", 4, 4, 1}, {"zbh1", 4, 8, 1}, /* naive: M is one */
    {"interleaved", 4, 8, 2}, {"interleaved", 2, 4, 3}, {"zbv", 4, 8, 2}, {"zbv", 2, 6, 2},
};

void pp__warmup_grade_traffic(pp_warmup_io *io, pp_warmup_draw *draw,
                              const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    const int ncases = PP_WARMUP_COUNT(traffic_cases);
    pp_warmup_case drawn[PP_WARMUP_COUNT(traffic_cases)];
    const pp_warmup_case *cases = traffic_cases;
    act_size z = public_size;
    if (draw) pp__warmup_draw_siblings(draw, traffic_cases, ncases, drawn), cases = drawn, z = draw_size(draw);
    const int b = z.b, s = z.s, h = z.h;
    for (int k = 0; k < nchecks; k++) {
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const pp_warmup_case *tc = &cases[i];
            const pp_schedule_def *def = pp__schedule_def(tc->schedule);
            int kind = def->vshape ? 2 : def->chunked ? 1 : 0; /* the checks: one chunk, looped chunks, a V */
            if (kind != k) continue;
            double want;
            int messages;
            sscanf(pp__warmup_io_key(io, "traffic %s %d %d %d %d %d %d", tc->schedule, tc->P, tc->M, tc->v, b, s, h), "%lf %d",
                   &want, &messages);
            double got = pp__warmup_ask_traffic(io, tc->schedule, tc->P, tc->M, tc->v, b, s, h);
            n++;
            if (!(fabs(got - want) <= 1e-9 * want) && !bad++) {
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d, b=%d s=%d h=%d: got %.0f bytes",
                             tc->schedule, tc->P, tc->M, tc->v, b, s, h, got);
                else
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d, b=%d s=%d h=%d: expected %.0f bytes "
                             "(%d messages), got %.0f", tc->schedule, tc->P, tc->M, tc->v, b, s, h, want,
                             messages, got);
            }
        }
        pp__warmup_verdict(out, &checks[k], bad, n, "cases", "", first_bad,
                           "per micro-batch one activation crosses each boundary between two ranks forward and one gradient "
                           "back, each b x s x h fp32 values (4 bytes); count the boundaries between virtual stages that "
                           "live on different ranks",
                           NULL);
    }
}

/* ---- memory: the bytes recomputation keeps -------------------------------------------------------------- */

static const pp_warmup_case memory_cases[] = {
    {"gpipe", 4, 8, 1}, {"1f1b", 4, 8, 1}, {"1f1b", 4, 2, 1}, {"interleaved", 4, 8, 2}, {"interleaved", 2, 4, 3},
};

void pp__warmup_grade_memory(pp_warmup_io *io, pp_warmup_draw *draw,
                             const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    const int ncases = PP_WARMUP_COUNT(memory_cases);
    pp_warmup_case drawn[PP_WARMUP_COUNT(memory_cases)];
    const pp_warmup_case *cases = memory_cases;
    act_size z = public_size;
    if (draw) pp__warmup_draw_siblings(draw, memory_cases, ncases, drawn), cases = drawn, z = draw_size(draw);
    const int b = z.b, s = z.s, h = z.h;
    for (int k = 0; k < nchecks; k++) {
        const char *sched = checks[k].name + strlen("memory ");
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const pp_warmup_case *mc = &cases[i];
            if (strcmp(mc->schedule, sched)) continue;
            for (int r = 0; r < mc->P; r++) {
                double want;
                int stashes;
                sscanf(pp__warmup_io_key(io, "memory %s %d %d %d %d %d %d %d", mc->schedule, mc->P, mc->M, mc->v, r, b, s, h),
                       "%lf %d", &want, &stashes);
                double got = pp__warmup_ask_memory(io, mc->schedule, mc->P, mc->M, mc->v, r, b, s, h);
                n++;
                if (!(fabs(got - want) <= 1e-9 * want) && !bad++) {
                    if (draw)
                        snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d rank %d, b=%d s=%d h=%d: got %.0f "
                                 "bytes", sched, mc->P, mc->M, mc->v, r, b, s, h, got);
                    else
                        snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d rank %d, b=%d s=%d h=%d: expected "
                                 "%.0f bytes (%d stashes), got %.0f", sched, mc->P, mc->M, mc->v, r, b, s, h, want,
                                 stashes, got);
                }
            }
        }
        pp__warmup_verdict(out, &checks[k], bad, n, "ranks", "", first_bad,
                           "a checkpointed stash keeps only its input, one activation of b x s x h fp32 values, whatever "
                           "part of the model its stage or chunk holds; the peak counts the stashes alive at once",
                           NULL);
    }
}

/* ---- grid: a pipeline among tensor and data parallelism -------------------------------------------------- */

/* Llama 3 405B's grid (the Llama 3 paper: TP 8 inside each 8-GPU server, 16 pipeline stages, 128 replicas) with
 * its hidden size (16384) and pre-training sequence length (8192), and smaller grids. Ranks are
 * placed tensor-parallel index innermost, then the stage, then the replica: rank = t + T (p + P d), and server
 * = rank / G. */
typedef struct grid_case {
    int G, T, P, D;          /* GPUs per server, tensor-parallel ways, stages, replicas */
    int M, v, b, s, h, elem; /* pipeline traffic: micro-batches, chunks, activation sizes, bytes per value */
    double params;           /* data-parallel traffic: the model's parameters (elem bytes per gradient) */
    const char *traffic;     /* links: "tp", "pp" or "dp" */
} grid_case;

static const grid_case grid_gpus_cases[] = {
    {8, 8, 16, 128, 0, 0, 0, 0, 0, 0, 0, NULL}, {8, 8, 16, 64, 0, 0, 0, 0, 0, 0, 0, NULL},
    {8, 4, 4, 2, 0, 0, 0, 0, 0, 0, 0, NULL},    {8, 1, 8, 1, 0, 0, 0, 0, 0, 0, 0, NULL},
    {8, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0, NULL},
};

/* v = 1: one chunk per rank (1F1B); v > 1: interleaved, M a multiple of P */
static const grid_case grid_pp_cases[] = {
    {8, 8, 16, 128, 16, 1, 1, 8192, 16384, 2, 0, NULL}, {8, 4, 4, 2, 8, 1, 4, 16, 64, 4, 0, NULL},
    {8, 1, 2, 1, 4, 1, 2, 32, 128, 4, 0, NULL},         {8, 8, 16, 128, 16, 2, 1, 8192, 16384, 2, 0, NULL},
    {8, 4, 4, 2, 8, 2, 4, 16, 64, 4, 0, NULL},          {8, 2, 2, 3, 4, 3, 2, 32, 128, 2, 0, NULL},
};

static const grid_case grid_dp_cases[] = {
    {8, 8, 16, 128, 0, 0, 0, 0, 0, 4, 405e9, NULL}, {8, 8, 16, 64, 0, 0, 0, 0, 0, 2, 405e9, NULL},
    {8, 2, 4, 1, 0, 0, 0, 0, 0, 4, 1e6, NULL},      {8, 1, 1, 2, 0, 0, 0, 0, 0, 4, 1e6, NULL},
    {8, 4, 2, 3, 0, 0, 0, 0, 0, 2, 12e6, NULL},
};

/* the first three: Llama 3's placement (T = G); then placements where a pipeline or a replica group shares a
 * server, and one whose tensor-parallel group spans two servers */
static const grid_case grid_link_cases[] = {
    {8, 8, 16, 128, 0, 0, 0, 0, 0, 0, 0, "tp"}, {8, 8, 16, 128, 0, 0, 0, 0, 0, 0, 0, "pp"},
    {8, 8, 16, 128, 0, 0, 0, 0, 0, 0, 0, "dp"}, {8, 4, 4, 2, 0, 0, 0, 0, 0, 0, 0, "pp"},
    {8, 4, 4, 2, 0, 0, 0, 0, 0, 0, 0, "dp"},    {8, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, "pp"},
    {8, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, "dp"},    {8, 1, 2, 4, 0, 0, 0, 0, 0, 0, 0, "tp"},
    {8, 1, 2, 4, 0, 0, 0, 0, 0, 0, 0, "dp"},    {8, 16, 2, 1, 0, 0, 0, 0, 0, 0, 0, "tp"},
    {8, 16, 2, 1, 0, 0, 0, 0, 0, 0, 0, "dp"},   {4, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, "pp"},
};
#define GRID_LLAMA_LINKS 3

static int grid_same(const grid_case *a, const grid_case *b) {
    return a->G == b->G && a->T == b->T && a->P == b->P && a->D == b->D && a->M == b->M && a->v == b->v &&
           a->b == b->b && a->s == b->s && a->h == b->h && a->elem == b->elem && a->params == b->params &&
           (a->traffic == b->traffic || (a->traffic && b->traffic && !strcmp(a->traffic, b->traffic)));
}

static int grid_in(const grid_case *c, const grid_case *list, int n) {
    for (int i = 0; i < n; i++)
        if (grid_same(c, &list[i])) return 1;
    return 0;
}

/* A drawn sibling of public case pub, of the same kind: tensor parallelism 1, 2, 4, 8 or 16 ways on servers of 4
 * or 8 GPUs (T = G = 8 where pub is Llama 3's placement), up to 32 stages and 128 replicas; activations up to 8
 * sequences of 4096 tokens of hidden size 8192, in bf16 or fp32; up to 10^12 parameters. */
static grid_case grid_draw_like(pp_warmup_draw *d, const grid_case *pub, int llama) {
    static const int ways[] = {1, 2, 4, 8, 16};
    grid_case c = *pub;
    c.G = llama ? 8 : 4 * pp__warmup_draw_int(d, 1, 2);
    c.T = llama ? 8 : ways[pp__warmup_draw_int(d, 0, 4)];
    c.P = pp__warmup_draw_int(d, pub->P > 1 ? 2 : 1, 32), c.D = pp__warmup_draw_int(d, pub->D > 1 ? 2 : 1, 128);
    if (pub->M) {
        c.v = pub->v > 1 ? pp__warmup_draw_int(d, 2, 4) : 1;
        c.P = pp__warmup_draw_int(d, 2, 16);
        c.M = pub->v > 1 ? c.P * pp__warmup_draw_int(d, 1, 4) : pp__warmup_draw_int(d, 1, 64);
        c.b = pp__warmup_draw_int(d, 1, 8), c.s = 256 * pp__warmup_draw_int(d, 1, 16), c.h = 512 * pp__warmup_draw_int(d, 1, 16);
        c.elem = 2 * pp__warmup_draw_int(d, 1, 2);
    }
    if (pub->params > 0) c.params = 1e9 * pp__warmup_draw_int(d, 1, 1000), c.elem = 2 * pp__warmup_draw_int(d, 1, 2);
    return c;
}

static void grid_draw(pp_warmup_draw *d, const grid_case *pub, int n, int nllama, grid_case *out) {
    for (int i = 0; i < n; i++)
        do out[i] = grid_draw_like(d, &pub[i], i < nllama);
        while (grid_in(&out[i], pub, n) || grid_in(&out[i], out, i));
}

static const char *link_name(int k) {
    static const char *const names[] = {"0 (no such traffic)", "1 (within servers)", "2 (between servers)",
                                        "3 (both)"};
    return k >= 0 && k <= 3 ? names[k] : "a value other than 0..3";
}

/* The number of GPUs of a grid: checks[0]. */
static void grade_grid_gpus(pp_warmup_io *io, const pp_warmup_draw *draw, const grid_case *cases, int ncases,
                            const pp_warmup_check *checks, pp_test_result *out) {
    int bad = 0;
    char first_bad[300] = "";
    for (int i = 0; i < ncases; i++) {
        const grid_case *g = &cases[i];
        int want = PP_WARMUP_KEY_INT(io, "grid-gpus %d %d %d", g->T, g->P, g->D);
        int got = pp__warmup_ask_grid_gpus(io, g->T, g->P, g->D);
        if (got != want && !bad++) {
            if (draw) snprintf(first_bad, sizeof first_bad, "T=%d P=%d D=%d: got %d", g->T, g->P, g->D, got);
            else snprintf(first_bad, sizeof first_bad, "T=%d P=%d D=%d: expected %d GPUs, got %d", g->T, g->P, g->D,
                          want, got);
        }
    }
    pp__warmup_verdict(out, &checks[0], bad, ncases, "cases", "", first_bad,
                       "how many GPUs does one stage take, how many stages does one replica have, and how many "
                       "replicas are there?", NULL);
}

/* The pipeline's bytes, one chunk per rank and interleaved: checks[1] and [2]. */
static void grade_grid_pipeline(pp_warmup_io *io, const pp_warmup_draw *draw, const grid_case *cases, int ncases,
                                const pp_warmup_check *checks, pp_test_result *out) {
    for (int k = 0; k < 2; k++) {
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const grid_case *g = &cases[i];
            if ((g->v > 1) != k) continue;
            double want = PP_WARMUP_KEY_NUM(io, "grid-pp %d %d %d %d %d %d %d %d", g->P, g->D, g->M, g->v, g->b, g->s,
                                     g->h, g->elem);
            double got = pp__warmup_ask_grid_pp(io, g->P, g->D, g->M, g->v, g->b, g->s, g->h, g->elem);
            n++;
            if (!(fabs(got - want) <= 1e-9 * want) && !bad++) {
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "P=%d D=%d M=%d v=%d, b=%d s=%d h=%d, %d bytes a value: got "
                             "%.0f bytes", g->P, g->D, g->M, g->v, g->b, g->s, g->h, g->elem, got);
                else
                    snprintf(first_bad, sizeof first_bad, "P=%d D=%d M=%d v=%d, b=%d s=%d h=%d, %d bytes a value: "
                             "expected %.0f bytes, got %.0f", g->P, g->D, g->M, g->v, g->b, g->s, g->h, g->elem, want,
                             got);
            }
        }
        pp__warmup_verdict(out, &checks[1 + k], bad, n, "cases", "", first_bad,
                           k ? "with v chunks per rank, how many virtual stages does a micro-batch pass through, and how "
                               "many of the boundaries between them join two different ranks? Every replica has its own "
                               "pipeline"
                             : "what crosses one stage boundary per micro-batch, in which directions, and how large is it? "
                               "How many boundaries has one replica's pipeline, and how many replicas send?",
                           NULL);
    }
}

/* The data-parallel bytes: checks[3]. */
static void grade_grid_dp(pp_warmup_io *io, const pp_warmup_draw *draw, const grid_case *cases, int ncases,
                          const pp_warmup_check *checks, pp_test_result *out) {
    int bad = 0;
    char first_bad[300] = "";
    for (int i = 0; i < ncases; i++) {
        const grid_case *g = &cases[i];
        double want = PP_WARMUP_KEY_NUM(io, "grid-dp %d %d %d %.17g %d", g->T, g->P, g->D, g->params, g->elem);
        double got = pp__warmup_ask_grid_dp(io, g->T, g->P, g->D, g->params, g->elem);
        if (!(fabs(got - want) <= 1e-9 * want) && !bad++) {
            if (draw)
                snprintf(first_bad, sizeof first_bad, "T=%d P=%d D=%d, %.6g parameters, %d bytes a gradient: got %.0f "
                         "bytes", g->T, g->P, g->D, g->params, g->elem, got);
            else
                snprintf(first_bad, sizeof first_bad, "T=%d P=%d D=%d, %.6g parameters, %d bytes a gradient: expected "
                         "%.0f bytes, got %.0f", g->T, g->P, g->D, g->params, g->elem, want, got);
        }
    }
    pp__warmup_verdict(out, &checks[3], bad, ncases, "cases", "", first_bad,
                       "how many bytes of gradients does one rank hold, and how many does it send in a ring all-reduce "
                       "over D ranks (a reduce-scatter, then an all-gather)? How many ranks do that? And with one "
                       "replica, what is there to reduce?", NULL);
}

/* Which links a traffic crosses, on Llama 3's placement and on others: checks[4] and [5]. */
static void grade_grid_links(pp_warmup_io *io, const pp_warmup_draw *draw, const grid_case *cases, int ncases,
                             const pp_warmup_check *checks, pp_test_result *out) {
    for (int k = 0; k < 2; k++) {
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const grid_case *g = &cases[i];
            if ((i >= GRID_LLAMA_LINKS) != k) continue;
            int want = PP_WARMUP_KEY_INT(io, "grid-link %s %d %d %d %d", g->traffic, g->G, g->T, g->P, g->D);
            int got = pp__warmup_ask_grid_link(io, g->traffic, g->G, g->T, g->P, g->D);
            n++;
            if (got != want && !bad++) {
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "%s traffic, G=%d T=%d P=%d D=%d: got %s", g->traffic, g->G,
                             g->T, g->P, g->D, link_name(got));
                else
                    snprintf(first_bad, sizeof first_bad, "%s traffic, G=%d T=%d P=%d D=%d: expected %s, got %s",
                             g->traffic, g->G, g->T, g->P, g->D, link_name(want), link_name(got));
            }
        }
        pp__warmup_verdict(out, &checks[4 + k], bad, n, "cases", "", first_bad,
                           "number the ranks tensor-parallel index first, then the stage, then the replica, and put G "
                           "consecutive ranks in a server: do two neighbours of the traffic's group sit in one server, in "
                           "two, or both?", NULL);
    }
}

void pp__warmup_grade_grid(pp_warmup_io *io, pp_warmup_draw *draw,
                           const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    (void)nchecks; /* the checks are taken by their place in the table */
    grid_case gpus[PP_WARMUP_COUNT(grid_gpus_cases)], pp[PP_WARMUP_COUNT(grid_pp_cases)],
        dp[PP_WARMUP_COUNT(grid_dp_cases)], link[PP_WARMUP_COUNT(grid_link_cases)];
    memcpy(gpus, grid_gpus_cases, sizeof gpus), memcpy(pp, grid_pp_cases, sizeof pp);
    memcpy(dp, grid_dp_cases, sizeof dp), memcpy(link, grid_link_cases, sizeof link);
    if (draw) {
        grid_draw(draw, grid_gpus_cases, PP_WARMUP_COUNT(grid_gpus_cases), 2, gpus);
        grid_draw(draw, grid_pp_cases, PP_WARMUP_COUNT(grid_pp_cases), 0, pp);
        grid_draw(draw, grid_dp_cases, PP_WARMUP_COUNT(grid_dp_cases), 2, dp);
        grid_draw(draw, grid_link_cases, PP_WARMUP_COUNT(grid_link_cases), GRID_LLAMA_LINKS, link);
    }
    grade_grid_gpus(io, draw, gpus, PP_WARMUP_COUNT(gpus), checks, out);
    grade_grid_pipeline(io, draw, pp, PP_WARMUP_COUNT(pp), checks, out);
    grade_grid_dp(io, draw, dp, PP_WARMUP_COUNT(dp), checks, out);
    grade_grid_links(io, draw, link, PP_WARMUP_COUNT(link), checks, out);
}
