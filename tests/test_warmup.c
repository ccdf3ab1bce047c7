/* test_warmup.c: the warm-up lab's grader. The reference solution earns every point, the untouched handout
 * earns none and returns at once, and deliberately wrong answers lose exactly the checks they should, with a
 * message that says what was expected and what was seen. Also checks the answer keys themselves against the
 * canonical orders (replayed bubble, stash count walked op by op). On cases drawn from a hidden configuration's
 * seed, the solution still earns every point, a table of the public answers earns none, the same seed gives
 * the same report, and a failure shows the hint but never the expected value. Runs with the project root as
 * cwd. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "grade.h"
#include "impl_build.h"
#include "runner.h"
#include "replay.h"
#include "suite.h"
#include "testutil.h"


/* Makes an implementation folder holding text as its 00-warmup/warmup.c (after the #define lines in defs);
 * dir receives its path. Graded like any submission: built in the sandbox, run in a driver. */
static void impl_from_text(const char *text, const char *defs, char *dir, size_t len) {
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, len, "%s/pp-warmup-XXXXXX", tmp);
    cr_assert(mkdtemp(dir), "cannot create a temporary folder under %s", tmp);
    char path[700];
    snprintf(path, sizeof path, "%s/00-warmup", dir);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/00-warmup/warmup.c", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(defs, f);
    fputs(text, f);
    fclose(f);
}

/* The same from a file. */
static void impl_from_file(const char *src, char *dir, size_t len) {
    FILE *f = fopen(src, "r");
    cr_assert(f, "cannot read %s (run from the project root)", src);
    static char text[1 << 18];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    impl_from_text(text, "", dir, len);
}

/* Grades one part of implementation folder dir: on the public cases, or on those drawn from seed when drawn. */
static void grade_drawn(const char *dir, const char *part, int drawn, unsigned seed, pp_test_result *r) {
    pp_test_config cfg;
    memset(&cfg, 0, sizeof cfg);
    snprintf(cfg.lab, sizeof cfg.lab, "warmup");
    snprintf(cfg.part, sizeof cfg.part, "%s", part);
    cfg.time_limit_s = 20;
    cfg.drawn = drawn, cfg.seed = seed;
    test_grade_config(dir, &cfg, r);
}

static void grade(const char *dir, const char *part, pp_test_result *r) { grade_drawn(dir, part, 0, 0, r); }

static const pp_check *find(const pp_test_result *r, const char *name) {
    for (int i = 0; i < r->nchecks; i++)
        if (!strcmp(r->checks[i].name, name)) return &r->checks[i];
    cr_assert_fail("no check named '%s' in part %s", name, r->cfg.part);
    return NULL;
}

static void expect_check(const pp_test_result *r, const char *name, int passed, const char *needle) {
    const pp_check *c = find(r, name);
    cr_expect_eq(c->passed, passed, "check '%s' should %s: %s", name, passed ? "pass" : "fail", c->msg);
    cr_expect_eq(c->points, passed ? c->max : 0.0, "check '%s' earned %g of %g", name, c->points, c->max);
    if (needle) cr_expect(strstr(c->msg, needle), "check '%s': message should contain \"%s\", got: %s", name, needle, c->msg);
}

Test(warmup, solution_full_marks, .timeout = 60) {
    char so[600];
    cr_expect_eq(system("cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -Ilib solutions/00-warmup/warmup.c"), 0,
                 "the warm-up solution compiles without warnings");
    impl_from_file("solutions/00-warmup/warmup.c", so, sizeof so);
    double total = 0;
    for (int p = 0; p < pp__warmup_nparts(); p++) {
        pp_test_result r;
        grade(so, pp__warmup_part(p), &r);
        cr_expect_eq(r.status, PP_OK, "part %s: status %d (%s)", pp__warmup_part(p), r.status, r.error);
        cr_expect_gt(r.max, 0, "part %s has no points", pp__warmup_part(p));
        cr_expect_eq(r.score, r.max, "part %s: %g of %g", pp__warmup_part(p), r.score, r.max);
        for (int i = 0; i < r.nchecks; i++) cr_expect(r.checks[i].passed, "%s: %s", r.checks[i].name, r.checks[i].msg);
        total += r.max;
    }
    cr_expect_eq(total, 50.0, "the warm-up is worth 50 points (labs/00-warmup/README.md), got %g", total);
    pp_test_result r;
    grade(so, "partition", &r);
    expect_check(&r, "partition optimal: 64-layer LM", 1, "slowest stage 18 is optimal");
    test_rm_tree(so);
}

/* The handout is the solution with its marked blocks removed: it must compile and score nothing, quickly. */
Test(warmup, handout_scores_zero, .timeout = 60) {
    char so[600], pristine[64], src[128];
    cr_assert_eq(test_pristine_labs(pristine, sizeof pristine), 0);
    snprintf(src, sizeof src, "%s/00-warmup/warmup.c", pristine);
    impl_from_file(src, so, sizeof so);
    test_rm_tree(pristine);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int p = 0; p < pp__warmup_nparts(); p++) {
        pp_test_result r;
        grade(so, pp__warmup_part(p), &r);
        cr_expect_gt(r.max, 0, "part %s has no points", pp__warmup_part(p));
        cr_expect_eq(r.score, 0, "the untouched handout earns %g points in part %s", r.score, pp__warmup_part(p));
        for (int i = 0; i < r.nchecks; i++)
            cr_expect(!r.checks[i].passed, "untouched handout passes %s: %s", r.checks[i].name, r.checks[i].msg);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    cr_expect_lt(s, 5.0, "grading the untouched handout took %.2f s", s);
    test_rm_tree(so);
}

/* Wrong on purpose: the bubble misses the -1 in the denominator, 1F1B's order is GPipe's, 1F1B's peak ignores
 * the rank, and the partition gives every stage 16 layers (valid, not optimal) or, with -DOVERLAP, overlaps. */
static const char *wrong_src =
    "#include <stdio.h>\n#include <string.h>\n"
    "double pp_warmup_bubble(const char *s, int P, int M, int v) {\n"
    "    if (!strcmp(s, \"naive\")) M = 1;\n"
    "    if (strcmp(s, \"interleaved\")) v = 1;\n"
    "    return (double)(P - 1) / (v * M + P);\n}\n"
    "int pp_warmup_peak_stashes(const char *s, int P, int M, int v, int r) {\n"
    "    if (!strcmp(s, \"gpipe\")) return M;\n"
    "    if (!strcmp(s, \"1f1b\")) return P < M ? P : M;\n"
    "    int w = 2 * (P - r - 1) + (v - 1) * P + 1;\n"
    "    return w < v * M ? w : v * M;\n}\n"
    "int pp_warmup_order(const char *s, int P, int M, int r, char *out, int cap) {\n"
    "    int len = 0, n = 0;\n"
    "    out[0] = 0;\n"
    "    for (int k = 0; k < 2 * M; k++) {\n"
    "        int w = snprintf(out + len, (size_t)(cap - len), \"%s%c%d\", k ? \" \" : \"\", k < M ? 'F' : 'B', k % M);\n"
    "        if (w >= cap - len) { out[len] = 0; return -1; }\n"
    "        len += w, n++;\n    }\n"
    "    return n;\n}\n"
    "int pp_warmup_partition(int n, const double *c, int P, int *first) {\n"
    "    if (n < P) return -1;\n"
    "    for (int s = 0; s <= P; s++) first[s] = s * n / P;\n"
    "#ifdef OVERLAP\n"
    "    first[2] = first[1] - 6;\n"
    "#endif\n"
    "    return 0;\n}\n";

Test(warmup, wrong_bubble_fails_with_values, .timeout = 60) {
    char so[600];
    impl_from_text(wrong_src, "", so, sizeof so);
    pp_test_result r;
    grade(so, "bubble", &r);
    cr_expect_eq(r.score, 0, "a wrong bubble formula earned %g", r.score);
    expect_check(&r, "bubble gpipe", 0, "gpipe P=4 M=6 v=1: expected 0.333333, got 0.300000");
    expect_check(&r, "bubble naive", 0, "expected 0.750000, got 0.600000");
    expect_check(&r, "bubble interleaved", 0, "P=4 M=8 v=2: expected 0.157895");
    test_rm_tree(so);
}

Test(warmup, wrong_peaks_lose_only_1f1b, .timeout = 60) {
    char so[600];
    impl_from_text(wrong_src, "", so, sizeof so);
    pp_test_result r;
    grade(so, "peaks", &r);
    expect_check(&r, "peaks gpipe", 1, NULL);
    expect_check(&r, "peaks 1f1b", 0, "1f1b P=4 M=8 v=1 rank 1: expected 3, got 4");
    expect_check(&r, "peaks interleaved", 1, "11 9 7 5");
    test_rm_tree(so);
}

Test(warmup, gpipe_order_for_1f1b_fails_at_first_difference, .timeout = 60) {
    char so[600];
    impl_from_text(wrong_src, "", so, sizeof so);
    pp_test_result r;
    grade(so, "orders", &r);
    expect_check(&r, "orders gpipe P=4 M=8", 1, NULL);
    expect_check(&r, "orders 1f1b P=4 M=8", 0, "rank 0 op 4: expected B0, got F4");
    expect_check(&r, "orders 1f1b P=4 M=2", 0, "rank 3 op 1: expected B0, got F1");
    expect_check(&r, "orders short buffer", 1, NULL);
    cr_expect_eq(r.score, 2.0, "got %g", r.score);
    test_rm_tree(so);
}

Test(warmup, equal_layer_counts_are_valid_not_optimal, .timeout = 60) {
    char so[600];
    impl_from_text(wrong_src, "", so, sizeof so);
    pp_test_result r;
    grade(so, "partition", &r);
    expect_check(&r, "partition valid", 1, NULL);
    expect_check(&r, "partition optimal: 64-layer LM", 0,
                 "expected the slowest stage to cost 18 (the optimum), got 20 (first = {0, 16, 32, 48, 64}");
    expect_check(&r, "partition optimal: uneven", 0, "expected the slowest stage");
    expect_check(&r, "partition optimal: deepening", 0, "expected the slowest stage");
    expect_check(&r, "partition impossible", 1, NULL);
    test_rm_tree(so);
}

Test(warmup, overlapping_partition_is_invalid, .timeout = 60) {
    char so[600];
    impl_from_text(wrong_src, "#define OVERLAP\n", so, sizeof so);
    pp_test_result r;
    grade(so, "partition", &r);
    cr_expect_eq(r.score, 0, "an invalid partition earned %g", r.score);
    expect_check(&r, "partition valid", 0, "invalid partition: 64-layer LM");
    expect_check(&r, "partition valid", 0, "stages overlap (first[2] = 10 < first[1] = 16)");
    expect_check(&r, "partition optimal: 64-layer LM", 0, "not graded, the partition is invalid");
    expect_check(&r, "partition impossible", 0, "not graded");
    test_rm_tree(so);
}

Test(warmup, missing_function_is_named, .timeout = 60) {
    char so[600];
    impl_from_text("double pp_warmup_bubble(const char *s, int P, int M, int v) { return 0; }\n", "", so, sizeof so);
    pp_test_result r;
    grade(so, "orders", &r);
    cr_expect_eq(r.nchecks, 4, "every check of the part is reported, got %d", r.nchecks);
    cr_expect_eq(r.max, 5.0, "the part keeps its max, got %g", r.max);
    expect_check(&r, "orders 1f1b P=4 M=8", 0, "does not define pp_warmup_order");
    test_rm_tree(so);
}

/* Wrong on purpose, one concept each: the zero-bubble bubble taken from 1F1B's formula; interleaved's order with
 * 1F1B's warm-up; the idle instant read one unit late; the uneven bubble paced by the average stage instead of the
 * slowest; the most chunks whatever the latency; every boundary counted, the V's turn included; a chunk's input
 * taken as 1/v of an activation. */
static const char *wrong_src2 =
    "#include <stdio.h>\n#include <string.h>\n"
    "double pp_warmup_bubble(const char *s, int P, int M, int v) { return (double)(P - 1) / (M + P - 1); }\n"
    "int pp_warmup_chunk_order(const char *s, int P, int M, int v, int r, char *out, int cap) {\n"
    "    int total = v * M, w = P - r - 1 < total ? P - r - 1 : total, len = 0, n = 0, f = 0, b = 0;\n"
    "    out[0] = 0;\n"
    "    while (n < 2 * total) {\n"
    "        int fw = f < w || (f < total && n % 2 == w % 2) || b >= f, k = fw ? f++ : b++;\n"
    "        int c = (k % (P * v)) / P, mb = (k / (P * v)) * P + k % P;\n"
    "        int x = snprintf(out + len, (size_t)(cap - len), \"%s%c%d.%d\", n ? \" \" : \"\", fw ? 'F' : 'B', mb,\n"
    "                         fw ? c : v - 1 - c);\n"
    "        if (x >= cap - len) { out[len] = 0; return -1; }\n"
    "        len += x, n++;\n    }\n"
    "    return n;\n}\n"
    "int pp_warmup_idle_ranks(const char *s, int P, int M, int v, int t, int *idle) {\n"
    "    int n = 0;\n"
    "    for (int r = 0; r < P; r++) idle[r] = t - 1 < r, n += idle[r];\n"
    "    return n;\n}\n"
    "double pp_warmup_uneven_bubble(int P, int M, const double *f) {\n"
    "    double sum = 0;\n"
    "    for (int s = 0; s < P; s++) sum += f[s];\n"
    "    return 1 - (double)M * sum / (P * (sum + (M - 1) * sum / P));\n}\n"
    "int pp_warmup_best_chunks(int P, int M, int blocks, double latency) { return blocks; }\n"
    "double pp_warmup_traffic(const char *s, int P, int M, int v, int b, int sq, int h) {\n"
    "    int S = strcmp(s, \"interleaved\") && strcmp(s, \"zbv\") ? P : P * v;\n"
    "    return 2.0 * M * (S - 1) * b * sq * h * 4;\n}\n"
    "double pp_warmup_checkpoint_bytes(const char *s, int P, int M, int v, int r, int b, int sq, int h) {\n"
    "    int peak = !strcmp(s, \"gpipe\") ? M : !strcmp(s, \"1f1b\") ? (P - r < M ? P - r : M)\n"
    "             : (2 * (P - r - 1) + (v - 1) * P + 1 < v * M ? 2 * (P - r - 1) + (v - 1) * P + 1 : v * M);\n"
    "    return (double)peak * b * sq * h * 4 / (strcmp(s, \"interleaved\") ? 1 : v);\n}\n";

/* Wrong on purpose, one idea each: the grid's GPUs without its replicas; interleaving's boundaries counted as v
 * per stage boundary, which misses the v - 1 between one rank's chunks; the ring's bytes without the 1/D of a
 * reduce-scatter's pieces; every pipeline and replica link taken to go between servers. */
static const char *wrong_grid_src =
    "#include <string.h>\n"
    "int pp_warmup_grid_gpus(int T, int P, int D) { return T * P; }\n"
    "double pp_warmup_grid_pp_bytes(int P, int D, int M, int v, int b, int s, int h, int elem) {\n"
    "    return 2.0 * D * M * v * (P - 1) * b * s * h * elem;\n}\n"
    "double pp_warmup_grid_dp_bytes(int T, int P, int D, double params, int elem) {\n"
    "    return (double)T * P * D * 2.0 * (D - 1) * (params / (T * P) * elem);\n}\n"
    "int pp_warmup_grid_link(const char *traffic, int G, int T, int P, int D) {\n"
    "    return !strcmp(traffic, \"tp\") ? 1 : 2;\n}\n";

Test(warmup, wrong_grid_answers_lose_their_checks_with_a_question, .timeout = 60) {
    char so[600];
    impl_from_text(wrong_grid_src, "", so, sizeof so);
    pp_test_result r;
    grade(so, "grid", &r);
    cr_expect_eq(r.max, 6.0, "the grid part is worth 6 points, got %g", r.max);
    expect_check(&r, "grid gpus", 0, "T=8 P=16 D=128: expected 16384 GPUs, got 128");
    expect_check(&r, "grid gpus", 0, "HINT: how many GPUs does one stage take");
    expect_check(&r, "grid pipeline bytes: one chunk", 1, NULL);
    expect_check(&r, "grid pipeline bytes: interleaved", 0,
                 "P=16 D=128 M=16 v=2, b=1 s=8192 h=16384, 2 bytes a value: expected 34084860461056 bytes, got "
                 "32985348833280");
    expect_check(&r, "grid pipeline bytes: interleaved", 0, "join two different ranks?");
    expect_check(&r, "grid data-parallel bytes", 0,
                 "T=8 P=16 D=128, 4.05e+11 parameters, 4 bytes a gradient: expected 411480000000000 bytes");
    expect_check(&r, "grid data-parallel bytes", 0, "ring all-reduce over D ranks");
    expect_check(&r, "grid links: Llama 3's placement", 1, NULL);
    expect_check(&r, "grid links: other placements", 0,
                 "pp traffic, G=8 T=4 P=4 D=2: expected 3 (both), got 2 (between servers)");
    cr_expect_eq(r.score, 2.0, "only the one-chunk bytes and Llama 3's links are right, got %g", r.score);
    /* on drawn cases the same answers fail without showing the key */
    grade_drawn(so, "grid", 1, 4242, &r);
    cr_expect_leq(r.score, 2.0, "seed 4242: the wrong functions earned %g", r.score);
    expect_check(&r, "grid gpus", 0, "HINT: how many GPUs does one stage take");
    expect_check(&r, "grid pipeline bytes: interleaved", 0, "join two different ranks?");
    expect_check(&r, "grid data-parallel bytes", 0, "ring all-reduce over D ranks");
    for (int i = 0; i < r.nchecks; i++)
        cr_expect(!strstr(r.checks[i].msg, "expected"), "%s shows an expected value: %s", r.checks[i].name,
                  r.checks[i].msg);
    test_rm_tree(so);

    /* a part of several functions names the one that is missing */
    impl_from_text("int pp_warmup_grid_gpus(int T, int P, int D) { return T * P * D; }\n", "", so, sizeof so);
    grade(so, "grid", &r);
    cr_expect_eq(r.score, 0, "a part with missing functions earned %g", r.score);
    cr_expect_eq(r.max, 6.0, "the part keeps its max, got %g", r.max);
    expect_check(&r, "grid links: other placements", 0, "does not define pp_warmup_grid_pp_bytes");
    test_rm_tree(so);
}

Test(warmup, new_parts_lose_points_with_a_hint_at_the_concept, .timeout = 60) {
    char so[600];
    impl_from_text(wrong_src2, "", so, sizeof so);
    pp_test_result r;
    grade(so, "bubble", &r);
    expect_check(&r, "bubble gpipe", 1, NULL);
    expect_check(&r, "bubble zbh1", 0, "zbh1 P=4 M=8 v=1: expected 0.111111, got 0.272727");
    expect_check(&r, "bubble zbh1", 0, "with the backward split, F = B = W = 1");
    grade(so, "chunk-orders", &r);
    expect_check(&r, "chunk-orders interleaved P=4 M=8 v=2", 0, "rank 0 op 4: expected F0.1");
    expect_check(&r, "chunk-orders interleaved P=4 M=8 v=2", 0, "HINT: the k-th chunk-forward");
    grade(so, "idle", &r);
    cr_expect_eq(r.score, 0, "a late idle reading earned %g", r.score);
    expect_check(&r, "idle gpipe", 0, "time unit 0..1: ranks {1 2 3} idle (3)");
    expect_check(&r, "idle 1f1b", 0, "HINT: a rank idles while its next op waits for an input");
    grade(so, "uneven", &r);
    expect_check(&r, "uneven: a slower last stage", 0, "forward costs {1, 1, 1, 2}: expected");
    expect_check(&r, "uneven: a slower last stage", 0, "all ranks wait for the slowest one");
    grade(so, "chunks", &r);
    expect_check(&r, "chunks without latency", 1, NULL);
    expect_check(&r, "chunks with latency", 0, "P=4 M=8, 4 blocks per rank, latency 1: expected v = 2");
    expect_check(&r, "chunks with latency", 0, "multiply the boundaries each micro-batch crosses");
    grade(so, "traffic", &r);
    expect_check(&r, "traffic: one chunk per rank", 0, "naive P=4 M=4 v=1");
    expect_check(&r, "traffic: interleaved", 1, NULL);
    expect_check(&r, "traffic: V-shaped", 0, "zbv P=4 M=8 v=2, b=4 s=16 h=64: expected 1572864 bytes (96 messages)");
    grade(so, "memory", &r);
    expect_check(&r, "memory gpipe", 1, NULL);
    expect_check(&r, "memory interleaved", 0, "interleaved P=4 M=8 v=2 rank 0, b=4 s=16 h=64: expected 180224 bytes (11 "
                                             "stashes), got 90112");
    expect_check(&r, "memory interleaved", 0, "whatever part of the model its stage or chunk holds");
    test_rm_tree(so);
}

/* The answer keys: the closed-form bubble and peaks agree with the canonical orders replayed with F=1, B=2. */
Test(warmup, answer_keys_match_canonical_orders) {
    const struct { const char *s; int P, M, v; } cases[] = {
        {"gpipe", 4, 6, 1}, {"gpipe", 4, 24, 1}, {"1f1b", 4, 8, 1}, {"1f1b", 8, 16, 1}, {"1f1b", 4, 2, 1},
        {"interleaved", 4, 8, 2}, {"interleaved", 4, 16, 4}, {"interleaved", 2, 4, 3}, {"interleaved", 8, 16, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_run_config c;
        pp__config_defaults(&c);
        c.schedule = pp__schedule_def(cases[i].s), c.P = cases[i].P, c.M = cases[i].M, c.v = cases[i].v;
        c.comm_latency = 0, c.edge_cost = 0;
        pp_schedule s;
        cr_assert_eq(pp__schedule_build(&s, c.schedule->name, c.P, c.M, c.v), 0);
        pp_costs k = {0};
        double f[64], b[64];
        for (int j = 0; j < c.P * c.v; j++) f[j] = 1, b[j] = 2;
        k.f = f, k.b = b, k.latency = 0;
        double replay = pp__schedule_bubble(&s, &k), theory = pp__theory_bubble(&c, NULL);
        cr_expect(replay >= 0 && fabs(replay - theory) <= 1e-12, "%s P=%d M=%d v=%d: replay %.6f, formula %.6f",
                  c.schedule->name, c.P, c.M, c.v, replay, theory);
        for (int r = 0; r < c.P; r++) {
            int live = 0, peak = 0;
            for (int j = 0; j < s.n[r]; j++) {
                live += s.ops[r][j].kind == 'F' ? 1 : -1;
                if (live > peak) peak = live;
            }
            cr_expect_eq(peak, pp__theory_peak(&c, r), "%s P=%d M=%d v=%d rank %d: walked %d, bound %d", c.schedule->name,
                         c.P, c.M, c.v, r, peak, pp__theory_peak(&c, r));
        }
        pp__schedule_free(&s);
    }
}

/* ---- graded runs: cases drawn from a hidden configuration's seed ------------------------------------------ */

/* The whole warm-up of dir on seed (drawn) or on the public cases: its score into *score, its max into *max. */
static void grade_all(const char *dir, int drawn, unsigned seed, double *score, double *max) {
    *score = *max = 0;
    for (int p = 0; p < pp__warmup_nparts(); p++) {
        pp_test_result r;
        grade_drawn(dir, pp__warmup_part(p), drawn, seed, &r);
        cr_expect_eq(r.status, PP_OK, "part %s, seed %u: status %d (%s)", pp__warmup_part(p), seed, r.status, r.error);
        for (int i = 0; i < r.nchecks; i++)
            cr_log_info("seed %u %s: %s (%g/%g): %s", seed, r.name, r.checks[i].name, r.checks[i].points,
                        r.checks[i].max, r.checks[i].msg);
        *score += r.score, *max += r.max;
    }
}

static const unsigned seeds[] = {1, 7, 12345, 987654321, 2147483647, 0};

Test(warmup_seed, solution_full_marks_on_drawn_cases, .timeout = 120) {
    char so[600];
    impl_from_file("solutions/00-warmup/warmup.c", so, sizeof so);
    for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
        for (int p = 0; p < pp__warmup_nparts(); p++) {
            pp_test_result r;
            grade_drawn(so, pp__warmup_part(p), 1, seeds[k], &r);
            cr_expect_eq(r.status, PP_OK, "seed %u part %s: status %d (%s)", seeds[k], pp__warmup_part(p), r.status,
                         r.error);
            cr_expect_eq(r.score, r.max, "seed %u part %s: %g of %g", seeds[k], pp__warmup_part(p), r.score, r.max);
            for (int i = 0; i < r.nchecks; i++)
                cr_expect(r.checks[i].passed, "seed %u %s: %s", seeds[k], r.checks[i].name, r.checks[i].msg);
        }
        double score, max;
        grade_all(so, 1, seeds[k], &score, &max);
        cr_expect_eq(max, 50.0, "seed %u: the drawn warm-up is worth the public one's 50 points, got %g", seeds[k], max);
    }
    test_rm_tree(so);
}

/* tests/hostile/warmup-table answers the public cases from a table and computes nothing: full marks on a
 * practice run, (almost) nothing on a graded one. */
Test(warmup_seed, a_table_of_the_public_answers_earns_nothing_on_drawn_cases, .timeout = 120) {
    double score, max;
    grade_all("tests/hostile/warmup-table", 0, 0, &score, &max);
    cr_expect_eq(score, 50.0, "the table answers every public case: %g of %g", score, max);
    cr_expect_eq(max, 50.0, "got max %g", max);
    for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
        grade_all("tests/hostile/warmup-table", 1, seeds[k], &score, &max);
        cr_log_info("seed %u: the table of public answers scores %g of %g", seeds[k], score, max);
        cr_expect_lt(score, 0.1 * max, "seed %u: a table of the public answers earned %g of %g", seeds[k], score, max);
        cr_expect_eq(max, 50.0, "seed %u: got max %g", seeds[k], max);
    }
}

static void expect_absent(const pp_test_result *r, const char *needle, const char *what);

static void expect_same_result(const pp_test_result *a, const pp_test_result *b) {
    cr_expect_str_eq(a->name, b->name);
    cr_expect_eq(a->score, b->score, "%s: %g, then %g", a->name, a->score, b->score);
    cr_expect_eq(a->nchecks, b->nchecks, "%s: %d checks, then %d", a->name, a->nchecks, b->nchecks);
    for (int i = 0; i < a->nchecks && i < b->nchecks; i++) {
        cr_expect_str_eq(a->checks[i].name, b->checks[i].name);
        cr_expect_str_eq(a->checks[i].msg, b->checks[i].msg);
        cr_expect_eq(a->checks[i].points, b->checks[i].points, "%s", a->checks[i].name);
    }
}

/* Every check of the table fails on drawn cases and names its first wrong case: the messages show which cases a
 * seed drew. One seed draws the same ones every time; another seed draws others, in every part. */
Test(warmup_seed, one_seed_one_report_two_seeds_two_sets_of_cases, .timeout = 120) {
    for (int p = 0; p < pp__warmup_nparts(); p++) {
        pp_test_result a, b, c;
        grade_drawn("tests/hostile/warmup-table", pp__warmup_part(p), 1, 12345, &a);
        grade_drawn("tests/hostile/warmup-table", pp__warmup_part(p), 1, 12345, &b);
        grade_drawn("tests/hostile/warmup-table", pp__warmup_part(p), 1, 54321, &c);
        expect_same_result(&a, &b);
        char want[64];
        snprintf(want, sizeof want, "warmup %s", pp__warmup_part(p));
        cr_expect_str_eq(a.name, want, "a drawn part is named by its part alone, never its seed");
        char seed[16];
        snprintf(seed, sizeof seed, "%u", 12345u);
        expect_absent(&a, seed, "the seed");
        int differ = 0;
        for (int i = 0; i < a.nchecks && i < c.nchecks; i++) differ |= strcmp(a.checks[i].msg, c.checks[i].msg) != 0;
        cr_expect(differ, "part %s: seeds 12345 and 54321 drew the same first cases: %s", pp__warmup_part(p),
                  a.checks[0].msg);
    }
}

/* The draw is keyed by the graded file as well as the seed: the table attack's file with one line more (as a
 * file that added the answers its first graded run asked for would be) is asked other cases in every part, and
 * the same file twice the same ones. */
Test(warmup_seed, each_file_is_asked_its_own_cases, .timeout = 120) {
    static char text[1 << 18];
    FILE *f = fopen("tests/hostile/warmup-table/00-warmup/warmup.c", "r");
    cr_assert(f, "run from the project root");
    text[fread(text, 1, sizeof text - 2, f)] = 0;
    fclose(f);
    char one[600], two[600];
    impl_from_text(text, "", one, sizeof one);
    impl_from_text(text, "/* the answers the first graded run asked for would go here */\n", two, sizeof two);
    for (int p = 0; p < pp__warmup_nparts(); p++) {
        pp_test_result a, again, b;
        grade_drawn(one, pp__warmup_part(p), 1, 12345, &a);
        grade_drawn(one, pp__warmup_part(p), 1, 12345, &again);
        grade_drawn(two, pp__warmup_part(p), 1, 12345, &b);
        expect_same_result(&a, &again);
        int differ = 0;
        for (int i = 0; i < a.nchecks && i < b.nchecks; i++) differ |= strcmp(a.checks[i].msg, b.checks[i].msg) != 0;
        cr_expect(differ, "part %s: two files drew the same first cases from one seed: %s", pp__warmup_part(p),
                  a.checks[0].msg);
    }
    test_rm_tree(one);
    test_rm_tree(two);
}

/* No check message of r holds needle. */
static void expect_absent(const pp_test_result *r, const char *needle, const char *what) {
    for (int i = 0; i < r->nchecks; i++)
        cr_expect(!strstr(r->checks[i].msg, needle), "%s: the message of '%s' shows %s (%s): %s", r->name,
                  r->checks[i].name, what, needle, r->checks[i].msg);
}

/* A drawn case that fails names the case, what the function returned and the hint; the expected value, computed
 * here from the case the message names, appears in no message (and no example gives one away). */
Test(warmup_seed, a_drawn_failure_shows_the_hint_not_the_expected_value, .timeout = 60) {
    char so[600];
    impl_from_text(wrong_src, "", so, sizeof so);
    pp_test_result r;
    grade_drawn(so, "bubble", 1, 4242, &r);
    const pp_check *c = find(&r, "bubble gpipe");
    cr_assert(!c->passed, "the wrong bubble formula passes a drawn case: %s", c->msg);
    int P, M, v;
    double got;
    cr_assert_eq(sscanf(c->msg, "gpipe P=%d M=%d v=%d: got %lf", &P, &M, &v, &got), 4,
                 "the message names the case and what was returned: %s", c->msg);
    cr_expect(strstr(c->msg, "; HINT: count the idle slots of each rank on the staircase"), "no hint: %s", c->msg);
    pp_run_config rc;
    pp__config_defaults(&rc);
    rc.schedule = pp__schedule_def("gpipe"), rc.P = P, rc.M = M, rc.v = v, rc.comm_latency = 0, rc.edge_cost = 0;
    double want = pp__theory_bubble(&rc, NULL);
    cr_expect_gt(fabs(got - want), 1e-9, "the case the message names is not the failing one (%g vs %g)", got, want);
    char needle[32];
    snprintf(needle, sizeof needle, "%.6f", want);
    expect_absent(&r, needle, "the expected bubble");
    snprintf(needle, sizeof needle, "%.4f", want);
    expect_absent(&r, needle, "the expected bubble");
    expect_absent(&r, "expected", "an expected value");
    expect_absent(&r, "e.g.", "an example");
    /* the public case still shows what it expected */
    grade(so, "bubble", &r);
    expect_check(&r, "bubble gpipe", 0, "gpipe P=4 M=6 v=1: expected 0.333333, got 0.300000");

    /* a count of bytes: the V's turn counted as a message */
    impl_from_text(wrong_src2, "", so, sizeof so);
    grade_drawn(so, "traffic", 1, 4242, &r);
    c = find(&r, "traffic: V-shaped");
    cr_assert(!c->passed, "%s", c->msg);
    int b, s, h;
    cr_assert_eq(sscanf(c->msg, "zbv P=%d M=%d v=%d, b=%d s=%d h=%d: got %lf bytes", &P, &M, &v, &b, &s, &h, &got), 7,
                 "%s", c->msg);
    cr_expect(strstr(c->msg, "; HINT: per micro-batch one activation crosses each boundary"), "no hint: %s", c->msg);
    rc.schedule = pp__schedule_def("zbv"), rc.P = P, rc.M = M, rc.v = v;
    snprintf(needle, sizeof needle, "%.0f", (double)pp__theory_messages(&rc) * b * s * h * 4);
    cr_expect_neq(atof(needle), got, "the case the message names is not the failing one");
    expect_absent(&r, needle, "the expected bytes");
    expect_absent(&r, "expected", "an expected value");
    test_rm_tree(so);
}

/* Writes text into a fresh temporary file, whose name goes into path. */
static void config_file(char *path, size_t len, const char *text) {
    snprintf(path, len, "/tmp/pplab-cfg-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

/* A warmup-seed line seeds every warm-up test of the run, the default set's and the file's. */
Test(warmup_seed, the_config_file_seeds_every_warmup_part) {
    char path[64], name[96];
    config_file(path, sizeof path, "# graded run\nwarmup part=partition\nwarmup-seed=12345   # the seed\n"
                                   "gpipe P=4 M=8 seed=3\n");
    pp_test_config *cfgs = NULL;
    char err[512];
    int n = pp__suite_default("all", 0, &cfgs), warmups = 0;
    cr_assert_eq(pp__suite_load(path, "all", &cfgs, &n, err, sizeof err), 0, "%s", err);
    for (int i = 0; i < n; i++) {
        if (strcmp(cfgs[i].lab, "warmup")) {
            cr_expect_eq(cfgs[i].drawn, 0, "%s is not a warm-up part", cfgs[i].lab);
            continue;
        }
        warmups++;
        cr_expect_eq(cfgs[i].drawn, 1, "warm-up part %s is not drawn", cfgs[i].part);
        cr_expect_eq(cfgs[i].seed, 12345u, "warm-up part %s: seed %u", cfgs[i].part, cfgs[i].seed);
    }
    cr_expect_eq(warmups, pp__warmup_nparts() + 1, "the eleven parts and the file's one, got %d", warmups);
    pp__test_name(&cfgs[0], name, sizeof name);
    cr_expect_str_eq(name, "warmup bubble");
    pp__test_name(&cfgs[n - 2], name, sizeof name);
    cr_expect_str_eq(name, "hidden: warmup partition");
    free(cfgs);
    unlink(path);

    /* without the line, the public cases */
    config_file(path, sizeof path, "warmup part=partition\n");
    cfgs = NULL;
    n = pp__suite_default("warmup", 0, &cfgs);
    cr_assert_eq(pp__suite_load(path, "warmup", &cfgs, &n, err, sizeof err), 0, "%s", err);
    for (int i = 0; i < n; i++) cr_expect(!cfgs[i].drawn && !cfgs[i].seed, "%s is drawn", cfgs[i].part);
    pp__test_name(&cfgs[n - 1], name, sizeof name);
    cr_expect_str_eq(name, "hidden: warmup partition");
    free(cfgs);
    unlink(path);
}

/* A bad seed, or one in the wrong place, is refused with one line naming the file's line. */
Test(warmup_seed, a_bad_seed_is_refused_naming_the_line) {
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"warmup-seed=abc\n", ":1: cannot use 'warmup-seed=abc': write warmup-seed=N with N a whole number 0..2^31-1"},
        {"\nwarmup-seed=-4\n", ":2: cannot use 'warmup-seed=-4'"},
        {"warmup-seed=2147483648\n", ":1: cannot use 'warmup-seed=2147483648'"},
        {"warmup-seed=12.5\n", ":1: cannot use 'warmup-seed=12.5'"},
        {"warmup-seed=\n", ":1: cannot use 'warmup-seed='"},
        {"warmup-seed=7 part=bubble\n", ":1: cannot use 'part=bubble' after warmup-seed"},
        {"warmup-seed=7\nwarmup-seed=8\n", ":2: a second warmup-seed (the first is on line 1)"},
        {"warmup part=bubble warmup-seed=7\n", ":1: cannot use 'warmup-seed=7' here: warmup-seed=N goes on a line"},
        {"warmup part=bubble seed=7\n", ":1: cannot use 'seed=7' on a warm-up line: the warm-up's cases are drawn "
                                        "from the file's warmup-seed=N line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char path[64], err[512] = "";
        config_file(path, sizeof path, bad[i].text);
        pp_test_config *cfgs = NULL;
        int n = 0;
        cr_expect_eq(pp__suite_load(path, "all", &cfgs, &n, err, sizeof err), -1, "accepted: %s", bad[i].text);
        cr_expect(!strncmp(err, path, strlen(path)) && strstr(err, bad[i].want), "%s: got \"%s\", want \"%s\"",
                  bad[i].text, err, bad[i].want);
        cr_expect(!strchr(err, '\n'), "one line: %s", err);
        free(cfgs);
        unlink(path);
    }
}

/* End to end: pplab grade with a seeded configuration names the seed in the instructor's JSON report alone, with
 * the SHA-256 of the file whose bytes keyed the draw (what a regrade needs); the terminal, JUnit and Gradescope
 * reports, which students see, never hold it. A bad seed stops it with exit status 2 before anything is graded. */
Test(warmup_seed, only_the_instructors_json_carries_the_seed, .timeout = 60) {
    char dir[PATH_MAX], cmd[4 * PATH_MAX], out[1 << 16], cfg[64], tmp[] = "/tmp/pplab-seed-XXXXXX";
    test_build_dir(dir, sizeof dir);
    cr_assert(mkdtemp(tmp));
    config_file(cfg, sizeof cfg, "warmup-seed=31337\n");
    snprintf(cmd, sizeof cmd, "NO_COLOR=1 '%s/pplab' grade --impl solutions --lab warmup --config %s --json %s/r.json "
             "--junit %s/r.xml --gradescope %s/gs.json 2>&1", dir, cfg, tmp, tmp, tmp);
    cr_expect_eq(test_capture(cmd, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "warmup bubble ") && strstr(out, "warmup memory "), "%s", out);
    cr_expect(!strstr(out, "31337"), "the terminal report shows the seed: %s", out);
    cr_expect(strstr(out, "FULL MARKS"), "%s", out);
    static const char *const files[] = {"r.xml", "gs.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "cat %s/%s", tmp, files[i]);
        test_capture(cmd, out, sizeof out);
        cr_expect(strstr(out, "warmup partition"), "%s does not name the part: %.2000s", files[i], out);
        cr_expect(!strstr(out, "31337"), "%s shows the seed: %.2000s", files[i], out);
    }
    char sha[80] = "";
    test_capture("sha256sum solutions/00-warmup/warmup.c | cut -c1-64", sha, sizeof sha);
    sha[strcspn(sha, "\n")] = 0;
    snprintf(cmd, sizeof cmd, "cat %s/r.json", tmp);
    test_capture(cmd, out, sizeof out);
    cJSON *j = cJSON_Parse(out);
    cr_assert(j, "r.json does not parse");
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "tests"), 0), *c = cJSON_GetObjectItem(t, "config");
    cr_expect_eq(cJSON_GetObjectItem(c, "warmup_seed")->valuedouble, 31337, "config.warmup_seed");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(c, "file_sha256")), sha, "config.file_sha256");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(c, "drawn_cases")), "config.drawn_cases");
    cJSON_Delete(j);
    unlink(cfg);

    config_file(cfg, sizeof cfg, "warmup part=bubble\nwarmup-seed=twelve\n");
    snprintf(cmd, sizeof cmd, "NO_COLOR=1 '%s/pplab' grade --impl solutions --lab warmup --config %s 2>&1", dir, cfg);
    cr_expect_eq(test_capture(cmd, out, sizeof out), 2, "%s", out);
    char want[200];
    snprintf(want, sizeof want, "pplab grade: %s:2: cannot use 'warmup-seed=twelve'", cfg);
    cr_expect(!strncmp(out, want, strlen(want)) && strchr(out, '\n') == out + strlen(out) - 1, "got: %s", out);
    unlink(cfg);
    test_rm_tree(tmp);
}
