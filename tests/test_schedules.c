/* test_schedules.c: properties every row of the schedule table (lib/schedule/schedules.c) must have, checked for every row
 * at every configuration its own rules allow up to P = 8, M = 4P, v = 4: each rank's canonical order runs one
 * forward and one backward per micro-batch and chunk, each backward after its forward, a weight half after its
 * input half exactly where the row says the order splits its backwards, the stash bound the row states is the
 * peak its own order reaches, and the row's closed bubble formula is its order's replayed bubble. A new row is
 * held to them without a test of its own. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "answers.h"
#include "canonical.h"
#include "config.h"
#include "placement.h"
#include "replay.h"
#include "schedules.h"
#include "testset.h"

/* 0 when (P, M, v) is a configuration the row allows (config.c's check, which reads the same row). */
static int allowed(const pp_schedule_def *d, int P, int M, int v) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def(d->name), c.P = P, c.M = M, c.v = v;
    char err[256];
    return pp__config_check(&c, err, sizeof err);
}

static void check_order(const pp_schedule_def *d, int P, int M, int v) {
    pp_sched_op *ops = calloc((size_t)PP_SCHED_ROOM(M, v), sizeof *ops);
    char *fwd = calloc((size_t)(M * v), 1), *bwd = calloc((size_t)(M * v), 1), *wgt = calloc((size_t)(M * v), 1);
    for (int r = 0; r < P; r++) {
        /* an F and a B per micro-batch each chunk carries: every one, or its own pipeline's half in DualPipe */
        int want_n = 0; /* and one more per W */
        for (int ch = 0; ch < v; ch++)
            for (int mb = 0; mb < M; mb++)
                want_n += 2 * pp__place_carries(P, M, d->dual, pp__place_vstage(P, d->vshape, r, ch), mb);
        memset(fwd, 0, (size_t)(M * v));
        memset(bwd, 0, (size_t)(M * v));
        memset(wgt, 0, (size_t)(M * v));
        int n = pp__answers_order(d, P, M, v, r, ops), live = 0, peak = 0, nw = 0;
        for (int i = 0; i < n; i++) nw += ops[i].kind == 'W';
        cr_expect_eq(n, want_n + nw, "%s P=%d M=%d v=%d rank %d: %d ops, expected an F and a B per micro-batch and "
                     "chunk (%d) and %d W", d->name, P, M, v, r, n, want_n, nw);
        for (int i = 0; i < n; i++)
            cr_expect(pp__place_carries(P, M, d->dual, pp__place_vstage(P, d->vshape, r, ops[i].chunk), ops[i].mb),
                      "%s P=%d M=%d rank %d op %d: micro-batch %d on chunk %d, of the other pipeline", d->name, P, M,
                      r, i, ops[i].mb, ops[i].chunk);
        /* a split backward keeps its stash until its W */
        char *split = calloc((size_t)(M * v), 1);
        for (int i = 0; i < n; i++)
            if (ops[i].kind == 'W' && ops[i].mb >= 0 && ops[i].mb < M && ops[i].chunk >= 0 && ops[i].chunk < v)
                split[ops[i].chunk * M + ops[i].mb] = 1;
        for (int i = 0; i < n; i++) {
            const pp_sched_op *o = &ops[i];
            cr_assert(o->mb >= 0 && o->mb < M && o->chunk >= 0 && o->chunk < v, "%s P=%d M=%d v=%d rank %d op %d: "
                      "micro-batch %d chunk %d out of range", d->name, P, M, v, r, i, o->mb, o->chunk);
            int k = o->chunk * M + o->mb;
            if (o->kind == 'F') {
                cr_expect(!fwd[k]++, "%s P=%d M=%d v=%d rank %d: F mb%d chunk %d twice", d->name, P, M, v, r, o->mb,
                          o->chunk);
                peak = ++live > peak ? live : peak;
            } else if (o->kind == 'B') {
                cr_expect(fwd[k], "%s P=%d M=%d v=%d rank %d: B mb%d chunk %d before its F", d->name, P, M, v, r,
                          o->mb, o->chunk);
                cr_expect(!bwd[k]++, "%s P=%d M=%d v=%d rank %d: B mb%d chunk %d twice", d->name, P, M, v, r, o->mb,
                          o->chunk);
                live -= !split[k];
            } else {
                cr_expect_eq(o->kind, 'W', "%s: op kind '%c'", d->name, o->kind);
                cr_expect(d->weight_halves, "%s: a W in an order whose row does not split its backwards", d->name);
                cr_expect(bwd[k], "%s P=%d M=%d v=%d rank %d: W mb%d chunk %d before its B", d->name, P, M, v, r,
                          o->mb, o->chunk);
                cr_expect(!wgt[k]++, "%s P=%d M=%d v=%d rank %d: W mb%d chunk %d twice", d->name, P, M, v, r, o->mb,
                          o->chunk);
                live--;
            }
        }
        cr_expect_eq(peak, pp__answers_peak(d, P, M, v, r), "%s P=%d M=%d v=%d rank %d: the order peaks at %d "
                     "stashes, the row says %d", d->name, P, M, v, r, peak, pp__answers_peak(d, P, M, v, r));
        free(split);
    }
    free(ops);
    free(fwd);
    free(bwd);
    free(wgt);
}

/* Where the row has a closed formula, the replay of its own order under the plain costs gives the same bubble
 * (and every order completes: no op waits on one that never runs). */
static void check_bubble(const pp_schedule_def *d, int P, int M, int v) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def(d->name), c.P = P, c.M = M, c.v = v;
    pp_schedule s;
    pp_costs k;
    cr_assert_eq(pp__schedule_build(&s, d->name, P, M, v), 0);
    pp__costs_from_config(&k, &c);
    double replayed = pp__schedule_bubble(&s, &k), closed = pp__answers_bubble(d, P, M, v);
    cr_expect_geq(replayed, 0, "%s P=%d M=%d v=%d: the canonical order cannot complete", d->name, P, M, v);
    if (closed >= 0)
        cr_expect(fabs(replayed - closed) < 1e-12, "%s P=%d M=%d v=%d: the formula says %.6f, the order replays to "
                  "%.6f", d->name, P, M, v, closed, replayed);
    pp__costs_free(&k);
    pp__schedule_free(&s);
}

Test(schedules, every_row_runs_each_op_once_and_reaches_its_bound) {
    cr_assert_gt(pp__nschedules, 0);
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *d = &pp__schedules[i];
        int tried = 0;
        cr_assert(pp__canonical(d->name), "%s has no generators in lib/schedule/canonical.c", d->name);
        for (int P = 1; P <= 8; P++)
            for (int v = 1; v <= 4; v++)
                for (int M = 1; M <= 4 * P; M++)
                    if (allowed(d, P, M, v) == 0) check_order(d, P, M, v), check_bubble(d, P, M, v), tried++;
        cr_expect_gt(tried, 0, "%s: no configuration its rules allow", d->name);
        cr_expect(pp__schedule_def(d->name) == d, "%s: found under its own name", d->name);
    }
}

/* The names helper lists every row, in order, with the separators asked for. */
Test(schedules, names_list_every_row) {
    char buf[256];
    pp__schedule_names(buf, sizeof buf, "|", "|");
    char want[256] = "";
    for (int i = 0; i < pp__nschedules; i++) {
        if (i) strcat(want, "|");
        strcat(want, pp__schedules[i].name);
    }
    cr_expect_str_eq(buf, want);
    cr_expect_null(pp__schedule_def("no-such-schedule"));
    cr_expect_null(pp__schedule_def(NULL));
}

/* Every configuration of a row's part of the default grading set is one its own rules accept, and a CUDA run
 * keeps at least one test of every row. */
Test(schedules, default_tests_fit_their_rules) {
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *d = &pp__schedules[i];
        int gpu = 0;
        int ntests;
        const pp_test_config *tests = pp__testset(d->name, &ntests);
        cr_expect_gt(ntests, 0, "%s has no default tests (grader/grade/testset.c)", d->name);
        for (int k = 0; k < ntests; k++) {
            const pp_test_config *t = &tests[k];
            cr_expect_eq(allowed(d, t->P, t->M, t->v), 0, "%s test %d (P=%d M=%d v=%d) breaks the row's rules",
                         d->name, k, t->P, t->M, t->v);
            gpu += t->on_gpu;
        }
        cr_expect_gt(gpu, 0, "%s: no test marked on_gpu", d->name);
    }
}

static double bubble_of(const char *name, int P, int M, double latency) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def(name), c.P = P, c.M = M, c.v = 1, c.comm_latency = latency;
    return pp__theory_bubble(&c, NULL);
}

/* The zero-bubble paper's numbers on pplab's clock (F = B = W = 1): with P = 4, M = 8 both orders reach the floor
 * (P-1)/(3M+P-1) = 3/27, where 1F1B idles 3/11; with a message latency ZB-H2's longer warm-up hides the messages
 * and beats ZB-H1. */
Test(schedules, zero_bubble_orders_reach_the_floor_and_zbh2_hides_latency) {
    cr_expect(fabs(bubble_of("zbh1", 4, 8, 0) - 3.0 / 27) < 1e-12, "zbh1 %.6f", bubble_of("zbh1", 4, 8, 0));
    cr_expect(fabs(bubble_of("zbh2", 4, 8, 0) - 3.0 / 27) < 1e-12, "zbh2 %.6f", bubble_of("zbh2", 4, 8, 0));
    cr_expect(fabs(bubble_of("1f1b", 4, 8, 0) - 3.0 / 11) < 1e-12, "1f1b %.6f", bubble_of("1f1b", 4, 8, 0));
    for (int P = 2; P <= 8; P += 2)
        for (double L = 0.5; L <= 2; L += 0.5) {
            double h1 = bubble_of("zbh1", P, 4 * P, L), h2 = bubble_of("zbh2", P, 4 * P, L);
            cr_expect_lt(h2, h1, "P=%d M=%d latency %g: zbh2 %.4f is not below zbh1 %.4f", P, 4 * P, L, h2, h1);
        }
}

/* Holds the kit's order ops[0..n) to a fixture's tokens (cut up in place), op for op. A token is Km.sS: "F" a
 * forward, "I" an input half (a B whose W comes later), "W" a weight half, "B" a whole backward, of micro-batch m on
 * virtual stage S: on the V (two chunks, stage r and 2P-1-r) when vshape, else looped (chunk S div P of rank S mod
 * P). what names the order in messages. */
static void compare_ops(const char *what, char *tokens, const pp_sched_op *ops, int n, int P, int vshape, int r) {
    int k = 0;
    for (char *tok = strtok(tokens, " \n"); tok; tok = strtok(NULL, " \n"), k++) {
        char kind;
        int mb, stage;
        cr_assert_eq(sscanf(tok, "%c%d.s%d", &kind, &mb, &stage), 3, "bad token %s", tok);
        int chunk = vshape ? stage >= P : stage / P;
        cr_assert(vshape ? (stage == r || stage == 2 * P - 1 - r) : stage % P == r, "%s: the fixture places stage %d "
                  "on this rank", what, stage);
        cr_assert_lt(k, n, "%s: the fixture has op %d (%s), the kit's order ends at %d", what, k, tok, n);
        const pp_sched_op *o = &ops[k];
        int later_w = 0;
        for (int j = k + 1; j < n; j++) later_w |= ops[j].kind == 'W' && ops[j].mb == o->mb && ops[j].chunk == o->chunk;
        char mine = o->kind == 'B' ? (later_w ? 'I' : 'B') : o->kind;
        cr_expect(mine == kind && o->mb == mb && o->chunk == chunk, "%s op %d: the fixture %s, the kit %c%d chunk %d",
                  what, k, tok, mine, o->mb, o->chunk);
        if (mine != kind || o->mb != mb || o->chunk != chunk) return;
    }
    cr_expect_eq(k, n, "%s: the fixture has %d ops, the kit %d", what, k, n);
}

/* Compares every order of a fixture dumped from torch 2.15 with the kit's rows, op for op, and returns how many
 * it compared. A line is "NAME P=.. M=.. [v=..] rank=..: TOKENS" (compare_ops). The V files name no v; the looped
 * ones do. */
static int compare_fixture(const char *path, const char *const *names, int *seen) {
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s is missing", path);
    char line[16384], name[32], what[96];
    int lines = 0;
    while (fgets(line, sizeof line, f)) {
        int P, M, v = 2, r, at = 0, vshape = 1;
        if (line[0] == '#') continue;
        if (sscanf(line, "%31s P=%d M=%d v=%d rank=%d: %n", name, &P, &M, &v, &r, &at) == 5) vshape = 0;
        else if (sscanf(line, "%31s P=%d M=%d rank=%d: %n", name, &P, &M, &r, &at) != 4) continue;
        const pp_schedule_def *d = pp__schedule_def(name);
        cr_assert(d, "%s: no row %s", path, name);
        cr_assert_eq(d->vshape, vshape, "%s: %s's placement is not the fixture's", path, name);
        cr_assert_eq(allowed(d, P, M, v), 0, "%s: the kit's rules refuse %s P=%d M=%d v=%d, which torch runs", path,
                     name, P, M, v);
        for (int k = 0; names[k]; k++) seen[k] |= !strcmp(name, names[k]);
        pp_sched_op *ops = calloc((size_t)PP_SCHED_ROOM(M, v), sizeof *ops);
        snprintf(what, sizeof what, "%s P=%d M=%d v=%d rank %d", name, P, M, v, r);
        compare_ops(what, line + at, ops, pp__answers_order(d, P, M, v, r, ops), P, vshape, r);
        free(ops);
        lines++;
    }
    fclose(f);
    return lines;
}

/* Full DualPipe's order is DeepSeek's, op for op: tests/fixtures/deepseek-dualpipe-orders.txt holds what
 * deepseek-ai/DualPipe's own DualPipe.step runs on every rank (tests/fixtures/dump-deepseek-dualpipe-orders.py
 * replays it), for P up to 8 and M from 2P to 5P. Every micro-batch also runs once forward and once backward on
 * each stage of its direction, and only there. */
Test(schedules, dualpipe_order_equals_deepseeks) {
    const char *path = "tests/fixtures/deepseek-dualpipe-orders.txt";
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s is missing", path);
    char line[16384], what[96];
    int lines = 0, P, M, r, at;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || sscanf(line, "dualpipe P=%d M=%d rank=%d: %n", &P, &M, &r, &at) != 3) continue;
        pp_sched_op *ops = calloc((size_t)3 * M, sizeof *ops);
        int n = pp__schedule_dualpipe_order(P, M, r, ops), f_of[64] = {0}, b_of[64] = {0}, w_of[64] = {0};
        cr_assert_leq(M, 64);
        for (int i = 0; i < n; i++) {
            const pp_sched_op *o = &ops[i];
            cr_expect_eq(o->chunk, o->mb >= M / 2, "P=%d M=%d rank %d op %d: micro-batch %d on chunk %d", P, M, r, i,
                         o->mb, o->chunk);
            if (o->kind == 'W')
                cr_expect(b_of[o->mb] == 1 && !w_of[o->mb]++, "P=%d M=%d rank %d op %d: a weight half of micro-batch "
                          "%d without its backward before it, or twice", P, M, r, i, o->mb);
            (o->kind == 'F' ? f_of : o->kind == 'B' ? b_of : w_of)[o->mb] += o->kind != 'W';
        }
        for (int mb = 0; mb < M; mb++)
            cr_expect(f_of[mb] == 1 && b_of[mb] == 1, "P=%d M=%d rank %d: micro-batch %d runs %d forwards and %d "
                      "backwards", P, M, r, mb, f_of[mb], b_of[mb]);
        snprintf(what, sizeof what, "dualpipe P=%d M=%d rank %d", P, M, r);
        compare_ops(what, line + at, ops, n, P, 1, r);
        free(ops);
        lines++;
    }
    fclose(f);
    cr_expect_geq(lines, 90, "the fixture holds %d orders", lines);
}

/* Replays s with every op of a stage costing the same, F = 1 and B = 2 (input and weight halves 1 each), and a
 * message latency; returns the bubble. */
static double unit_bubble(pp_schedule *s, double latency) {
    int S = s->P * s->v;
    double *f = calloc((size_t)S, sizeof *f), *b = calloc((size_t)S, sizeof *b);
    for (int i = 0; i < S; i++) f[i] = 1, b[i] = 2;
    pp_costs k = {.f = f, .b = b, .latency = latency};
    double bubble = pp__schedule_bubble(s, &k);
    free(f), free(b);
    return bubble;
}

/* Full DualPipe on the clock: its order completes, and with no latency its bubble is DualPipeV's at half the
 * ranks and half the micro-batches, (P/2-1)/(3M+P/2-1): each half of the ranks runs DualPipeV's order, the other
 * half its mirror image. So it lies below DualPipeV's (P-1)/(6M+P-1) and ZB-H1's (P-1)/(3M+P-1) at the same P and M
 * (each rank does the same work in all three when the model is the same: DualPipe's stages are twice as deep, and
 * there are two of them). With a latency, the step across the middle, which DualPipeV takes without leaving its
 * last rank, costs DualPipe a message more. */
Test(schedules, dualpipe_bubble_is_dualpipev_at_half_the_ranks) {
    for (int P = 2; P <= 8; P += 2)
        for (int M = 2 * P; M <= 6 * P; M += 2) {
            pp_schedule dp, dpv, zb;
            cr_assert_eq(pp__schedule_build(&dp, "dualpipe", P, M, 2), 0);
            double b = unit_bubble(&dp, 0), want = (P / 2 - 1.0) / (3.0 * M + P / 2 - 1);
            cr_expect(fabs(b - want) < 1e-12, "DualPipe P=%d M=%d: bubble %.6f, formula %.6f", P, M, b, want);
            if (P >= 4) {
                cr_assert_eq(pp__schedule_build(&dpv, "dualpipev", P / 2, M / 2, 2), 0);
                double half = unit_bubble(&dpv, 0);
                cr_expect(fabs(b - half) < 1e-12, "DualPipe P=%d M=%d: %.6f, DualPipeV P=%d M=%d: %.6f", P, M, b,
                          P / 2, M / 2, half);
                for (double L = 0.5; L <= 2; L += 0.5)
                    cr_expect_gt(unit_bubble(&dp, L), unit_bubble(&dpv, L), "P=%d M=%d latency %g: the middle's step "
                                 "costs DualPipe nothing", P, M, L);
                pp__schedule_free(&dpv);
            }
            cr_assert_eq(pp__schedule_build(&dpv, "dualpipev", P, M, 2), 0);
            cr_assert_eq(pp__schedule_build(&zb, "zbh1", P, M, 1), 0);
            cr_expect_lt(b, unit_bubble(&dpv, 0), "P=%d M=%d: DualPipe %.4f, not below DualPipeV", P, M, b);
            cr_expect_lt(b, unit_bubble(&zb, 0), "P=%d M=%d: DualPipe %.4f, not below ZB-H1", P, M, b);
            pp__schedule_free(&zb), pp__schedule_free(&dpv), pp__schedule_free(&dp);
        }
    /* a micro-batch on the other pipeline's stages cannot run: the replay refuses it */
    pp_schedule dp;
    cr_assert_eq(pp__schedule_build(&dp, "dualpipe", 4, 8, 2), 0);
    dp.ops[0][0].mb = 4 + dp.ops[0][0].mb % 4;
    cr_expect_lt(unit_bubble(&dp, 0), 0, "the replay ran micro-batch %d on the pipeline of 0..3", dp.ops[0][0].mb);
    pp__schedule_free(&dp);
}

/* The V rows reproduce PyTorch's classes op for op: tests/fixtures/torch-v-orders.txt holds torch 2.15's
 * pipeline_order of ScheduleZBVZeroBubble and ScheduleDualPipeV (tests/fixtures/dump-torch-v-orders.py wrote
 * it) for several P and M. */
Test(schedules, v_orders_equal_pytorchs) {
    static const char *const names[] = {"zbv", "dualpipev", NULL};
    int seen[2] = {0, 0}, lines = compare_fixture("tests/fixtures/torch-v-orders.txt", names, seen);
    cr_expect(seen[0] && seen[1] && lines > 50, "the fixture holds %d orders", lines);
}

/* The looped rows too: tests/fixtures/torch-looped-orders.txt holds ScheduleLoopedBFS's orders and
 * ScheduleInterleaved1F1B's and ScheduleInterleavedZeroBubble's at every M they take from 1 to 4P (below P, between
 * P and 2P, multiples of P, and rounds of P + 1), for P up to 8 and v up to 4
 * (tests/fixtures/dump-torch-looped-orders.py). */
Test(schedules, looped_orders_equal_pytorchs) {
    static const char *const names[] = {"loopedbfs", "interleaved", "zbinterleaved", NULL};
    int seen[3] = {0, 0, 0}, lines = compare_fixture("tests/fixtures/torch-looped-orders.txt", names, seen);
    cr_expect(seen[0] && seen[1] && seen[2] && lines > 900, "the fixture holds %d orders", lines);
}

/* Interleaved takes the micro-batch counts torch 2.15's ScheduleInterleaved1F1B takes and refuses the others, in
 * one line: torch runs M micro-batches in max(1, M div P) rounds and raises where they do not divide M. Its own
 * docstring's examples (P = 4: M = 10 in two rounds of 5, M = 3 in one) run; at P = 4 it refuses exactly 9, 11, 13
 * and 14 of 1..16, at P = 3 exactly 7, 10 and 11 of 1..12, at P = 8 exactly 17, 19, 21, 23, 25, 26, 28, 29, 31 of
 * 1..32 (worked out from that rule by hand). */
Test(schedules, interleaved_takes_the_counts_torch_takes) {
    static const struct { int P; int refused[10]; } cases[] = {
        {4, {9, 11, 13, 14}}, {3, {7, 10, 11}}, {8, {17, 19, 21, 23, 25, 26, 28, 29, 31}}, {1, {0}}, {2, {5, 7}}};
    const pp_schedule_def *d = pp__schedule_def("interleaved");
    cr_assert(d);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int P = cases[i].P;
        for (int M = 1; M <= 4 * P; M++) {
            int refused = 0;
            for (int k = 0; k < 10 && cases[i].refused[k]; k++) refused |= cases[i].refused[k] == M;
            for (int v = 1; v <= 4; v++) {
                pp_run_config c;
                pp__config_defaults(&c);
                c.schedule = pp__schedule_def("interleaved"), c.P = P, c.M = M, c.v = v;
                char err[256] = "";
                int rc = pp__config_check(&c, err, sizeof err);
                cr_expect_eq(rc != 0, refused, "interleaved P=%d M=%d v=%d: torch %s it, the kit %s it (%s)", P, M, v,
                             refused ? "refuses" : "takes", rc ? "refuses" : "takes", err);
                if (rc)
                    cr_expect(strstr(err, "rounds") && !strchr(err, '\n'), "interleaved P=%d M=%d: the refusal "
                              "names no rounds, or takes more than a line: %s", P, M, err);
            }
        }
    }
    cr_expect_eq(allowed(d, 4, 10, 2), 0, "torch's example P = 4, M = 10");
    cr_expect_eq(allowed(d, 4, 3, 2), 0, "torch's example P = 4, M = 3");
}
