/* test_grader.c: proves the grader. Each deliberately broken implementation under tests/broken/ must lose the
 * right points with the right message; the reference solutions must keep them; the gradient threshold must sit
 * between fp32 noise and the smallest real mistake. Tests run from the project root. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"
#include "checks_dp.h"
#include "impl_build.h"
#include "runner.h"
#include "suite.h"
#include "testutil.h"

/* Grades one configuration of `lab` from implementation folder `impl`, as pplab grade does. */
static void grade(const char *impl, const char *lab, int P, int M, int v, pp_test_result *out) {
    pp_test_config c = {.P = P, .M = M, .v = v, .steps = 2, .seed = 7, .time_limit_s = 20};
    snprintf(c.lab, sizeof c.lab, "%s", lab);
    test_grade_config(impl, &c, out);
}

static const pp_check *check_named(const pp_test_result *r, const char *name) {
    for (int i = 0; i < r->nchecks; i++)
        if (!strcmp(r->checks[i].name, name)) return &r->checks[i];
    cr_assert_fail("no check named '%s' in %s", name, r->name);
    return NULL;
}

/* The check failed and its message contains `needle`. */
static void expect_failed_with(const pp_test_result *r, const char *check, const char *needle) {
    const pp_check *c = check_named(r, check);
    cr_expect(!c->passed, "%s: check '%s' should fail", r->name, check);
    cr_expect(c->points == 0, "%s: check '%s' should score 0, scored %g", r->name, check, c->points);
    cr_expect(strstr(c->msg, needle) != NULL, "%s: '%s' message lacks '%s': %s", r->name, check, needle, c->msg);
}

TestSuite(grader, .timeout = 120);

Test(grader, solutions_full_marks_on_each_lab) {
    static const struct { const char *lab; int P, M, v; } cases[] = {
        {"naive", 4, 1, 1}, {"gpipe", 4, 8, 1}, {"1f1b", 4, 8, 1}, {"interleaved", 4, 8, 2},
        {"zbh1", 4, 8, 1},  {"zbh2", 4, 8, 1},        {"zbv", 4, 8, 2},         {"dualpipev", 4, 8, 2},
        {"loopedbfs", 4, 6, 2}, {"zbinterleaved", 4, 6, 2}, {"dualpipe", 4, 8, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_test_result r;
        grade("solutions", cases[i].lab, cases[i].P, cases[i].M, cases[i].v, &r);
        cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
        cr_expect_eq(r.status, PP_OK);
    }
}

/* Interleaved runs at every micro-batch count PyTorch's ScheduleInterleaved1F1B takes, in rounds of M / max(1,
 * M div P) micro-batches: the reference keeps full marks where P does not divide M, below P, in rounds of more
 * than P, and with a latency, bubble and peaks included. */
Test(grader, interleaved_solution_full_marks_where_p_does_not_divide_m) {
    static const struct { int P, M, v; double latency; } cases[] = {
        {4, 3, 2, 0}, {4, 6, 2, 0}, {4, 10, 3, 0}, {3, 8, 2, 1}, {5, 7, 2, 0.5}, {2, 3, 4, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_test_config c = {.P = cases[i].P, .M = cases[i].M, .v = cases[i].v, .steps = 2, .seed = 13,
                            .latency = cases[i].latency, .time_limit_s = 20};
        snprintf(c.lab, sizeof c.lab, "interleaved");
        pp_test_result r;
        test_grade_config("solutions", &c, &r);
        cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
        cr_expect_eq(r.status, PP_OK, "%s", r.name);
    }
}

/* The same order written for rounds of P only runs past the last micro-batch where P does not divide M: the report
 * names the micro-batch that does not exist. */
Test(grader, interleaved_in_rounds_of_p_names_the_missing_microbatch) {
    pp_test_result r;
    grade("tests/broken/interleaved-rounds-of-p", "interleaved", 4, 6, 2, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "pp_stage_forward: micro-batch 6 does not exist (M = 6)");
    grade("tests/broken/interleaved-rounds-of-p", "interleaved", 4, 8, 2, &r);
    cr_expect_eq(r.score, r.max, "where P divides M it is the canonical order: %g/%g (%s)", r.score, r.max, r.error);
}

/* Llama 3's layout (first and last stage one block fewer, the embedding and the head costing one each) and other
 * uneven ones grade as the even ones do: the reference is the whole model, the theory the replay. */
Test(grader, solutions_keep_full_marks_on_uneven_layouts) {
    static const struct { const char *lab, *layout; int P, M, v, layers; double edge, latency; } cases[] = {
        {"1f1b", "first:3,last:3", 4, 8, 1, 14, 1, 0}, {"interleaved", "1,2,2,1", 2, 4, 2, 0, 0, 0},
        {"gpipe", "", 4, 6, 1, 10, 0, 0.5},              {"zbh2", "last:1", 3, 6, 1, 7, 0.5, 1},
        {"dualpipe", "first:2,last:1", 4, 8, 2, 7, 0.5, 0.5}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_test_config c = {.P = cases[i].P, .M = cases[i].M, .v = cases[i].v, .steps = 2, .seed = 31,
                            .layers = cases[i].layers, .edge = cases[i].edge, .latency = cases[i].latency,
                            .time_limit_s = 20};
        snprintf(c.lab, sizeof c.lab, "%s", cases[i].lab);
        snprintf(c.layout, sizeof c.layout, "%s", cases[i].layout);
        pp_test_result r;
        test_grade_config("solutions", &c, &r);
        cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
    }
}

Test(grader, untouched_lab_scores_zero) {
    char pristine[64];
    cr_assert_eq(test_pristine_labs(pristine, sizeof pristine), 0);
    static const struct { const char *lab; int v; } labs[] = {
        {"1f1b", 1}, {"loopedbfs", 2}, {"zbh1", 1}, {"zbh2", 1}, {"zbinterleaved", 2}, {"zbv", 2}, {"dualpipev", 2}, {"dualpipe", 2}};
    for (size_t i = 0; i < sizeof labs / sizeof *labs; i++) {
        pp_test_result r;
        grade(pristine, labs[i].lab, 4, 8, labs[i].v, &r);
        cr_expect_eq(r.score, 0, "the untouched %s handout scored %g", labs[i].lab, r.score);
        cr_expect_lt(r.seconds, 5, "the untouched %s handout took %.1f s", labs[i].lab, r.seconds);
        expect_failed_with(&r, "gradients", "all-zero gradients on every rank");
    }
    test_rm_tree(pristine);
}

Test(grader, missing_loss_scaling_is_diagnosed_as_mx) {
    pp_test_result r;
    grade("tests/broken/no-scale", "gpipe", 4, 4, 1, &r);
    expect_failed_with(&r, "gradients", "4.00x the reference");
    expect_failed_with(&r, "gradients", "1/M");
    expect_failed_with(&r, "bubble", "not graded");
    cr_expect_eq(r.score, 0);
}

Test(grader, skipped_last_microbatch_is_named) {
    pp_test_result r;
    grade("tests/broken/skip-last", "gpipe", 4, 6, 1, &r);
    expect_failed_with(&r, "gradients", "micro-batch 5 is missing");
    cr_expect_eq(r.score, 0);
}

Test(grader, microbatch_run_twice_is_named) {
    pp_test_result r;
    grade("tests/broken/twice", "gpipe", 3, 4, 1, &r);
    expect_failed_with(&r, "gradients", "micro-batch 0 counted 2.00 times");
}

Test(grader, gradients_zeroed_between_microbatches) {
    pp_test_result r;
    grade("tests/broken/zero-between", "gpipe", 2, 4, 1, &r);
    expect_failed_with(&r, "gradients", "zeroed between micro-batches");
}

Test(grader, stash_freed_before_backward) {
    pp_test_result r;
    grade("tests/broken/stash-freed-early", "gpipe", 4, 4, 1, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "freed before its backward");
}

Test(grader, recv_from_wrong_peer_is_refused_naming_the_right_one) {
    pp_test_result r;
    grade("tests/broken/wrong-peer", "gpipe", 4, 4, 1, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "pp_recv(src=0, tag F mb0 vs2): virtual stage 2 (rank 2) gets this activation "
                                       "from virtual stage 1 on rank 1");
}

Test(grader, blocking_1f1b_deadlock_shows_the_cycle) {
    pp_test_result r;
    grade("tests/broken/blocking-1f1b", "1f1b", 4, 8, 1, &r);
    test_expect_failed_run(&r, PP_ERR_DEADLOCK, "cycle: rank 2 -> rank 3 -> rank 2");
    cr_expect(strstr(r.error, "HINT:") != NULL, "%s", r.error);
    cr_expect_lt(r.seconds, 5, "a deadlock must be reported at once, took %.1f s", r.seconds);
}

Test(grader, gpipe_sized_warmup_in_1f1b_loses_the_memory_points) {
    pp_test_result r;
    grade("tests/broken/gpipe-warmup-1f1b", "1f1b", 4, 8, 1, &r);
    cr_expect(check_named(&r, "gradients")->passed, "the gradients are right: %s", check_named(&r, "gradients")->msg);
    expect_failed_with(&r, "stash peak", "rank 0 held 8 stashes at once, the 1f1b bound is 4");
    cr_expect_eq(r.score, r.max - PP_PTS_PEAK);
}

Test(grader, wrong_interleaved_chunk_order) {
    pp_test_result r;
    grade("tests/broken/chunk-order", "interleaved", 4, 8, 2, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    /* breadth-first happens to keep the bubble at P=4, M=8, v=2; the memory gives it away, with the order */
    /* the cause (the order) first, then what it did to the memory */
    expect_failed_with(&r, "stash peak", "rank 0 op 4 is F mb4 chunk 0; the canonical order runs F mb0 chunk 1 there; "
                                         "so rank 0 held 16 stashes at once, the interleaved bound is 11");
}

Test(grader, optimizer_stepped_per_microbatch) {
    pp_test_result r;
    grade("tests/broken/optimizer-per-mb", "gpipe", 2, 4, 1, &r);
    expect_failed_with(&r, "gradients", "called pp_optimizer_step 4 times");
}

Test(grader, stage_never_updated) {
    pp_test_result r;
    grade("tests/broken/no-optimizer", "gpipe", 4, 4, 1, &r);
    cr_expect(check_named(&r, "gradients")->passed);
    expect_failed_with(&r, "weights and loss after K steps", "rank 3 called pp_optimizer_step 0 times");
}

Test(grader, stashes_never_freed_lose_the_memory_points) {
    pp_test_result r;
    grade("tests/broken/no-free", "gpipe", 4, 6, 1, &r);
    cr_expect(check_named(&r, "gradients")->passed);
    expect_failed_with(&r, "stash peak", "rank 0 never freed 6 stashes");
    cr_expect_eq(r.score, r.max - PP_PTS_PEAK);
}

Test(grader, fake_score_on_stdout_is_ignored_and_captured) {
    pp_test_result r;
    grade("tests/broken/fake-score", "gpipe", 2, 2, 1, &r);
    cr_expect_eq(r.score, 0, "a printed score must not count, got %g", r.score);
    cr_expect(strstr(r.output_tail, "FULL MARKS") != NULL, "the student's output is captured: %s", r.output_tail);
}

/* It looks for the grader's files with glob(): the build stops it at the header, which no lab file needs. */
Test(grader, forged_result_file_is_stopped_at_its_first_forbidden_call) {
    pp_test_result r;
    grade("tests/hostile/forge-result", "gpipe", 2, 2, 1, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "refused: 02-gpipe/gpipe.c:4: #include <glob.h> is not allowed");
}

Test(grader, segfault_is_a_reported_crash) {
    pp_test_result r;
    grade("tests/broken/segfault", "gpipe", 2, 2, 1, &r);
    cr_expect(r.crashed);
    test_expect_failed_run(&r, PP_ERR_CRASH, "crashed");
    cr_expect(strstr(r.output_tail, "rank 1 crashed with SIGSEGV") != NULL, "%s", r.output_tail);
}

Test(grader, endless_loop_hits_the_time_limit) {
    pp_test_config c = {.lab = "gpipe", .P = 2, .M = 2, .v = 1, .steps = 1, .seed = 1, .time_limit_s = 1.5};
    pp_test_result r;
    test_grade_config("tests/broken/endless-loop", &c, &r);
    cr_expect(r.timed_out);
    cr_expect_lt(r.seconds, 4, "killed after %.1f s", r.seconds);
    test_expect_failed_run(&r, PP_ERR_TIMEOUT, "no result after 2 s");
}

Test(grader, compile_error_is_reported_with_the_compiler_message) {
    pp_test_result r;
    grade("tests/broken/compile-error", "gpipe", 2, 2, 1, &r);
    test_expect_failed_run(&r, PP_ERR_COMPILE, "compile error");
    cr_expect(strstr(r.error, "error:") != NULL, "the compiler's own message is shown: %s", r.error);
}

/* The threshold separates fp32 noise (solutions at the largest M of the default set) from the smallest real
 * mistake (one micro-batch skipped at that M) with at least 10x margin on each side. */
Test(grader, gradient_threshold_separates_noise_from_the_smallest_mistake) {
    pp_test_result good, bad;
    grade("solutions", "gpipe", 8, 32, 1, &good);
    grade("tests/broken/skip-last", "gpipe", 8, 32, 1, &bad);
    cr_log_info("fp32 noise %.2e, one skipped micro-batch of 32: %.2e, threshold %.0e", good.grad_err,
                bad.grad_err, PP_GRAD_RTOL);
    cr_expect_lt(good.grad_err * 10, PP_GRAD_RTOL, "noise %.2e too close to the threshold", good.grad_err);
    cr_expect_gt(bad.grad_err, PP_GRAD_RTOL * 10, "a skipped micro-batch (%.2e) too close to the threshold",
                 bad.grad_err);
}

Test(grader, config_file_errors_name_the_line) {
    char path[] = "/tmp/pplab-cfg-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# hidden tests\ngpipe P=4 M=8 seed=3\ninterleaved P=4 M=9 v=2\n");
    fclose(f);
    pp_test_config *cfgs = NULL;
    int n = 0;
    char err[512];
    cr_expect_eq(pp__suite_load(path, "all", &cfgs, &n, err, sizeof err), -1);
    cr_expect(strstr(err, ":3: interleaved 1F1B runs the micro-batches in max(1, M div P) equal rounds: 9 "
                          "micro-batches make 2 rounds") != NULL, "%s", err);
    unlink(path);
    free(cfgs);
}

/* The raw results cross in a file without any cap but the configuration's own size: a model of 9.5M
 * parameters (76 MB of gradients and weights) grades like a small one. */
Test(grader, a_model_of_any_size_reaches_the_grader) {
    pp_test_config c = {.lab = "gpipe", .P = 2, .M = 2, .v = 1, .steps = 1, .seed = 5, .layers = 2, .hidden = 768,
                        .time_limit_s = 120};
    pp_test_result r;
    test_grade_config("solutions", &c, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect_eq(r.score, r.max, "%g/%g: %s", r.score, r.max, r.error);
}

/* A failed assert prints its line (captured) and aborts: a crash with SIGABRT, named as such. */
Test(grader, failed_assert_is_a_crash_with_its_message) {
    pp_test_result r;
    grade("tests/broken/assert-fails", "gpipe", 2, 2, 1, &r);
    cr_expect(r.crashed);
    test_expect_failed_run(&r, PP_ERR_CRASH, "rank 1: the schedule crashed with SIGABRT (abort: a failed assert?)");
    cr_expect(strstr(r.output_tail, "rank 1 is not expected here"), "the assert's message is captured: %s",
              r.output_tail);
}

/* A rank whose process crashed while it waited is gone, not blocked: the report names the crash, not the
 * deadlock the other ranks then fall into. */
Test(grader, a_crash_behind_a_wait_is_reported_as_the_crash) {
    pp_test_result r;
    grade("tests/broken/thread-crash", "gpipe", 2, 2, 1, &r);
    test_expect_failed_run(&r, PP_ERR_CRASH, "rank 0: the schedule crashed with SIGSEGV (segmentation fault)");
    cr_expect(!strstr(r.error, "deadlock"), "%s", r.error);
}

/* Grades broken variant `variant` (lab gpipe, P = M) ten times, since what a driver reaches past a call depends
 * on how far it got: each run fails with st and an error naming `cause`, its output holds `shown`, and neither
 * its error nor its output holds `after`, what the schedule does past the call (NULL-terminated). */
static void expect_stops_at_the_call(const char *variant, int P, pp_status st, const char *cause, const char *shown,
                                     const char *const *after) {
    for (int k = 0; k < 10; k++) {
        pp_test_result r;
        grade(variant, "gpipe", P, P, 1, &r);
        test_expect_failed_run(&r, st, cause);
        cr_expect(strstr(r.output_tail, shown) != NULL, "%s", r.output_tail);
        for (const char *const *a = after; *a; a++)
            cr_expect(!strstr(r.error, *a) && !strstr(r.output_tail, *a), "run %d shows '%s', which follows the call: "
                      "%s\n%s", k + 1, *a, r.error, r.output_tail);
    }
}

/* A driver posts every call and goes on before pplab has checked it; nothing it does past a refused call shows:
 * the report names the call, the output ends before it, no crash follows. */
Test(grader, nothing_past_a_refused_call_shows) {
    const char *after[] = {"past the refused call", "crashed", NULL};
    expect_stops_at_the_call("tests/broken/past-refused-call", 2, PP_ERR_USAGE,
                             "rank 0: pp_stage_forward: chunk 7 does not exist", "rank 0 before the call", after);
}

/* A driver does not wait at pp_recv either, yet a schedule that prints, crashes and exits past receives that
 * never match gets the deadlock it gets in-process: its output, its crash and its exit wait for its receive as
 * if it had blocked. */
Test(grader, what_follows_a_blocked_wait_waits_for_it) {
    const char *after[] = {"exited", "past its wait", "crashed", NULL};
    expect_stops_at_the_call("tests/broken/crash-after-wait", 3, PP_ERR_DEADLOCK, "cycle: rank 0 -> rank 1 -> rank 0",
                             "rank 1 before its wait", after);
}

/* The report says which costs the bubble's theory took: a split-backward 1F1B is compared with the canonical
 * order replayed with split backwards. */
Test(grader, the_bubble_names_the_costs_it_replayed) {
    pp_test_result r;
    grade("tests/valid/split-backward", "1f1b", 4, 8, 1, &r);
    const pp_check *b = check_named(&r, "bubble");
    cr_expect(b->passed && strstr(b->msg, "0.2000 measured, 0.2000 in theory (replay of the canonical schedule "
                                           "with split backwards)"), "%s", b->msg);
}

/* In 1F1B the weight half follows its input half at once; deferring it is the zero-bubble lab's subject. */
Test(grader, a_deferred_weight_half_is_named) {
    pp_test_result r;
    grade("tests/broken/deferred-weight", "1f1b", 4, 8, 1, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    expect_failed_with(&r, "stash peak", "defers the weight half of micro-batch 0 (chunk 0): in the 1f1b lab "
                                         "pp_stage_backward_weight follows its pp_stage_backward_input at once");
}

/* 1F1B without its warm-up: right gradients, the naive bubble, led by the warm-up that is too short. */
Test(grader, a_missing_warmup_is_named_by_its_length) {
    pp_test_result r;
    grade("tests/broken/no-warmup-1f1b", "1f1b", 4, 8, 1, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    expect_failed_with(&r, "bubble", "rank 0 runs 1 forward before its first backward, the canonical 1F1B order 4: "
                                     "its warm-up is 3 forwards too short (bubble 0.7500 measured, 0.2727 in theory, "
                                     "formula)");
}

/* One warm-up forward too many: the peak leads with the warm-up's length. */
Test(grader, a_long_warmup_is_named_by_its_length) {
    pp_test_result r;
    grade("tests/broken/long-warmup-1f1b", "1f1b", 4, 8, 1, &r);
    cr_expect(check_named(&r, "bubble")->passed, "without latency the bubble is right: %s", check_named(&r, "bubble")->msg);
    expect_failed_with(&r, "stash peak", "rank 0 runs 5 forwards before its first backward, the canonical 1F1B order "
                                         "4: its warm-up is 1 forward too long; so rank 0 held 5 stashes at once, the "
                                         "1f1b bound is 4");
}

/* ZB-H1 with each weight half run right after its input half: 1F1B's bubble with a split backward, led by the
 * first weight half that runs before the order holds it back to. */
Test(grader, a_weight_half_not_held_back_is_named) {
    pp_test_result r;
    grade("tests/broken/zb-no-defer", "zbh1", 4, 8, 1, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    cr_expect(check_named(&r, "stash peak")->passed, "%s", check_named(&r, "stash peak")->msg);
    expect_failed_with(&r, "bubble", "rank 1 runs the weight half of micro-batch 0 (chunk 0) too early, as its op 4: "
                                     "the canonical order runs F mb3 chunk 0 there and holds that weight half back "
                                     "until its op 6");
    expect_failed_with(&r, "bubble", "(bubble 0.2000 measured, 0.1111 in theory, formula)");
}

/* ZB-H1 with whole backwards: the schedule needs split ones where a weight half waits, and the report names the
 * first rank where it does (rank 1: rank 0 holds none back, so its whole backwards cost nothing). */
Test(grader, a_whole_backward_in_a_zero_bubble_lab_is_named) {
    pp_test_result r;
    grade("tests/broken/zb-whole-backward", "zbh1", 4, 8, 1, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    expect_failed_with(&r, "bubble", "rank 1 runs the backward of micro-batch 0 (chunk 0) whole, where the canonical "
                                     "ZB-H1 order splits it: pp_stage_backward_input at once and "
                                     "pp_stage_backward_weight where the order places it");
}

/* An order with a smaller bubble than the canonical one at the same peaks keeps every point, and the report says
 * by how much and where: ZBV written for the two micro-batches it has, not for 2P-1 cut down. */
Test(grader, a_better_order_keeps_full_marks_and_says_so) {
    pp_test_result r;
    grade("tests/valid/zbv-fewer-microbatches", "zbv", 2, 2, 2, &r);
    cr_expect_eq(r.score, r.max, "%g/%g", r.score, r.max);
    const pp_check *b = check_named(&r, "bubble");
    cr_expect(b->passed && b->better, "%s", b->msg);
    cr_expect(strstr(b->msg, "0.0769 measured, below the canonical order's 0.1429 (replay of the canonical "
                             "schedule) by 0.0659: the step ends at 13, the canonical order's at 14; rank 0 finishes "
                             "1 sooner"), "%s", b->msg);
    cr_expect(!check_named(&r, "stash peak")->better, "%s", check_named(&r, "stash peak")->msg);
}

/* A hidden test never shows the canonical order's ops or the numbers it is held to: the grader is no oracle. */
Test(grader, hidden_tests_show_the_hint_never_the_answer) {
    pp_test_config c = {.lab = "zbh1", .P = 4, .M = 8, .v = 1, .steps = 2, .seed = 7, .time_limit_s = 20,
                        .secret = 1};
    pp_test_result r;
    test_grade_config("tests/broken/zb-no-defer", &c, &r);
    const pp_check *b = check_named(&r, "bubble");
    cr_expect(!b->passed, "%s", b->msg);
    cr_expect(strstr(b->msg, "0.2000 measured") && !strstr(b->msg, "0.1111") && !strstr(b->msg, "canonical order runs"),
              "%s", b->msg);
    c.lab[0] = 0;
    snprintf(c.lab, sizeof c.lab, "1f1b");
    test_grade_config("tests/broken/long-warmup-1f1b", &c, &r);
    const pp_check *k = check_named(&r, "stash peak");
    cr_expect(!k->passed && strstr(k->msg, "rank 0 held 5 stashes at once, more than the canonical order holds "
                                           "there") && !strstr(k->msg, "bound is") && !strstr(k->msg, "order 4"),
              "%s", k->msg);
    cr_expect(!strstr(check_named(&r, "boundary messages")->msg, "expected"), "%s",
              check_named(&r, "boundary messages")->msg);
}

/* ZB-H1's order handed in for ZB-H2: without latency the two tie (full marks there), with latency the short
 * warm-up cannot hide the messages and the report names the warm-up's length. */
Test(grader, zbh2_with_zbh1s_warmup_loses_the_latency_bubble) {
    pp_test_config c = {.lab = "zbh2", .P = 4, .M = 8, .v = 1, .steps = 2, .seed = 9, .time_limit_s = 20};
    pp_test_result r;
    test_grade_config("tests/broken/zbh2-short-warmup", &c, &r);
    cr_expect_eq(r.score, r.max, "without latency ZB-H1's order measures ZB-H2's bubble: %g/%g", r.score, r.max);
    c.latency = 1;
    test_grade_config("tests/broken/zbh2-short-warmup", &c, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    expect_failed_with(&r, "bubble", "rank 0 runs 4 forwards before its first backward, the canonical ZB-H2 order 7: "
                                     "its warm-up is 3 forwards too short (bubble 0.4146 measured, 0.2727 in theory");
}

/* The depth-first order handed in for the breadth-first lab keeps full marks where messages are free and M is a
 * multiple of P (the same bubble with fewer stashes: a better order); a message latency shows what breadth-first
 * hides, and M not a multiple of P sends its groups past the last micro-batch. */
Test(grader, depth_first_in_the_breadth_first_lab_loses_where_breadth_first_wins) {
    pp_test_config c = {.lab = "loopedbfs", .P = 4, .M = 8, .v = 2, .steps = 2, .seed = 9, .time_limit_s = 20};
    pp_test_result r;
    test_grade_config("tests/broken/bfs-depth-first", &c, &r);
    cr_expect_eq(r.score, r.max, "without latency the depth-first order measures the same bubble: %g/%g", r.score,
                 r.max);
    cr_expect(check_named(&r, "bubble")->passed && check_named(&r, "stash peak")->better, "%s / %s",
              check_named(&r, "bubble")->msg, check_named(&r, "stash peak")->msg);
    c.latency = 1;
    test_grade_config("tests/broken/bfs-depth-first", &c, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    expect_failed_with(&r, "bubble", "rank 0 op 4 is F mb0 chunk 1; the canonical order runs F mb4 chunk 0 there "
                                     "(bubble 0.3239 measured, 0.2381 in theory");
    c.latency = 0, c.M = 6, c.v = 3;
    test_grade_config("tests/broken/bfs-depth-first", &c, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "pp_stage_forward: micro-batch 6 does not exist (M = 6)");
}

/* Breadth-first's deadlocks: blocking sends round the ring, each rank sending its first chunk's forwards while the
 * last one sends it its next chunk's first input; and backwards that visit the chunks in the forwards' order. */
Test(grader, breadth_first_deadlocks_show_their_cycles) {
    pp_test_result r;
    grade("tests/broken/bfs-blocking", "loopedbfs", 4, 8, 2, &r);
    test_expect_failed_run(&r, PP_ERR_DEADLOCK, "rank 3 blocked in pp_send(dst=0, tag F mb0 vs4)");
    cr_expect(strstr(r.error, "cycle: rank 0 -> rank 1 -> rank 2 -> rank 3 -> rank 0"), "%s", r.error);
    grade("tests/broken/bfs-chunks-forward", "loopedbfs", 4, 8, 2, &r);
    test_expect_failed_run(&r, PP_ERR_DEADLOCK, "rank 3 blocked in pp_recv(src=0, tag B mb7 vs3)");
    cr_expect(strstr(r.error, "waits to receive before it sends"), "%s", r.error);
}

/* Interleaved zero bubble with lab 04's warm-up: the bubble holds, the memory does not, and the report names the
 * warm-up's length before the peak it caused. With every weight half run at once, the bubble names the first one
 * that ran too early. */
/* A whole backward where the weight half follows at once is the same work, but its input gradient waits for the
 * weight half: named where another rank waits for it (rank 0's chunk 1 sends to rank 3), free on virtual stage 0
 * (tests/valid/zbi-whole-backward-where-free keeps full marks in the sweep). */
Test(grader, a_whole_backward_whose_gradient_another_rank_waits_for_is_named) {
    pp_test_config c = {.lab = "zbinterleaved", .P = 4, .M = 2, .v = 2, .steps = 2, .seed = 9, .time_limit_s = 20};
    pp_test_result r;
    test_grade_config("tests/broken/zbi-whole-backward", &c, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    expect_failed_with(&r, "bubble", "rank 0 runs the backward of micro-batch 0 (chunk 1) whole, where the canonical "
                                     "interleaved zero bubble order splits it: its input gradient leaves for rank 3 "
                                     "only once the weight half is done too");
    test_grade_config("tests/valid/zbi-whole-backward-where-free", &c, &r);
    cr_expect_eq(r.score, r.max, "stage 0's whole backwards cost nothing: %g/%g", r.score, r.max);
}

Test(grader, interleaved_zero_bubbles_warmup_and_held_weight_halves_are_named) {
    pp_test_result r;
    grade("tests/broken/zbi-long-warmup", "zbinterleaved", 4, 8, 2, &r);
    cr_expect(check_named(&r, "bubble")->passed, "%s", check_named(&r, "bubble")->msg);
    expect_failed_with(&r, "stash peak", "rank 0 runs 11 forwards before its first backward, the canonical interleaved "
                                         "zero bubble order 8: its warm-up is 3 forwards too long; so rank 0 held 11 "
                                         "stashes at once, the zbinterleaved bound is 8");
    cr_expect_eq(r.score, r.max - PP_PTS_PEAK);
    grade("tests/broken/zbi-weight-at-once", "zbinterleaved", 4, 8, 2, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    expect_failed_with(&r, "bubble", "rank 1 runs the weight half of micro-batch 0 (chunk 1) too early, as its op 8: "
                                     "the canonical order runs F mb3 chunk 1 there and holds that weight half back "
                                     "until its op 10");
}

/* Full DualPipe holds every stage twice. Copies that never sum their gradients step on half the batch each: the
 * gradient check names the chunk that was never reduced and both copies. Partners that reduce in chunk order meet
 * with copies of different stages: the run stops at the reduce, naming the partner. Part 2's V runner kept as it
 * is stops where the first pipeline's loss is. A run whose reduces start early, in stage order, keeps full marks. */
Test(grader, dualpipes_copies_must_sum_their_gradients) {
    pp_test_result r;
    grade("tests/broken/dualpipe-no-copy-reduce", "dualpipe", 4, 8, 2, &r);
    expect_failed_with(&r, "gradients", "rank 0 never reduced chunk 0 (pp_grad_reduce): its copy of stage 0 stepped "
                                        "on its own pipeline's micro-batches alone, and rank 3's copy on the other "
                                        "half");
    grade("tests/broken/dualpipe-reduce-chunk-order", "dualpipe", 4, 8, 2, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "pp_grad_reduce: chunk 0 is this rank's reduce 0 of the step, but "
                                             "rank 2's reduce 0, which holds the other copy, is its chunk 0, a copy "
                                             "of another stage");
    cr_expect(strstr(r.error, "rank r's chunk c and rank P-1-r's chunk 1-c hold the two copies of one stage"), "%s",
              r.error);
    grade("tests/broken/dualpipe-as-a-v", "dualpipe", 4, 8, 2, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "rank 3: pp_stage_backward_input: virtual stage 3 holds the loss: its "
                                             "backward starts from the loss gradient");
    grade("tests/valid/dualpipe-ireduce-early", "dualpipe", 4, 8, 2, &r);
    cr_expect_eq(r.score, r.max, "%g/%g (%s)", r.score, r.max, r.error);
}

/* The V's turn on rank P-1 sent as a message to itself: everything right but the message count, whose message
 * names the rank and what to do instead. */
Test(grader, a_message_across_the_turn_of_the_v_is_named) {
    pp_test_result r;
    grade("tests/broken/zbv-turn-message", "zbv", 4, 8, 2, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    cr_expect(check_named(&r, "bubble")->passed, "%s", check_named(&r, "bubble")->msg);
    expect_failed_with(&r, "boundary messages", "104 boundary messages sent, expected 96: rank 3 sent 8 to itself; two "
                                                "virtual stages on one rank need no message");
}

/* Interleaved 1F1B's placement assumed in a V: the call on a wrong rank earliest on the virtual clock stops the
 * run, with where the stages really live; at P = 2 the wrong send crosses the V's own turn, and the report says
 * that boundary needs no message rather than blaming the tag's direction or stage. */
Test(grader, the_looped_placement_in_a_v_is_named_at_the_call) {
    pp_test_result r;
    grade("tests/broken/zbv-looped-placement", "zbv", 4, 4, 2, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "rank 0: pp_recv(src=3, tag F mb0 vs7): virtual stage 7 (rank 0) gets "
                                             "this activation from virtual stage 6 on rank 1\nHINT: in a V rank r "
                                             "holds virtual stages r and 2P-1-r");
    /* rank 3 sends across its turn at time 4 too: the tie goes to the lower rank */
    cr_expect(strncmp(r.error, "rank 0: ", 8) == 0 && strstr(r.error, "then rank 3 failed too, at time 4: "
                                                                     "pp_isend(dst=0, tag F mb0 vs4)"), "%s", r.error);
    grade("tests/broken/zbv-looped-placement", "zbv", 4, 8, 2, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "rank 3: pp_isend(dst=0, tag F mb0 vs4): virtual stages 3 and 4 both "
                                             "live on rank 3: that boundary needs no message");
    grade("tests/broken/zbv-looped-placement", "zbv", 2, 4, 2, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "rank 1: pp_isend(dst=0, tag F mb0 vs2): virtual stages 1 and 2 both "
                                             "live on rank 1: that boundary needs no message");
    cr_expect(!strstr(r.error, "the sender's") && !strstr(r.error, "PP_BWD"), "%s", r.error);
}

/* The loss taken to be on rank P-1 in a V: two ranks fail (rank 0 receives a gradient past the last virtual
 * stage, rank P-1 asks for the loss gradient of a loss it does not hold). The report leads with the one earlier
 * on the virtual clock and names the other after it, the same on every run; a rank that only waited is named as
 * stopped, never as the cause. */
Test(grader, several_failures_lead_with_the_earliest_on_the_clock) {
    pp_test_result r;
    grade("tests/broken/zbv-loss-wrong-rank", "zbv", 4, 8, 2, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "rank 0: pp_recv: tag B mb0 vs7 names a boundary the model does not "
                                             "have (virtual stages 0..7)");
    cr_expect(strncmp(r.error, "rank 0: ", 8) == 0, "the earliest failure leads: %s", r.error);
    cr_expect(strstr(r.error, "so rank 1 stayed blocked in pp_recv(src=0, tag B mb0 vs6)") &&
                  strstr(r.error, "then rank 3 failed too, at time 11: pp_loss_grad: rank 3 holds no chunk of "
                                  "virtual stage 7, the one with the loss (rank 0 holds it)"),
              "%s", r.error);
}

/* ZBV with each weight half right after its input half: the bubble check names the first one that runs early. */
Test(grader, zbv_weight_halves_run_at_once_are_named) {
    pp_test_result r;
    grade("tests/broken/zbv-weight-at-once", "zbv", 4, 8, 2, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    expect_failed_with(&r, "bubble", "rank 1 runs the weight half of micro-batch 4 (chunk 0) too early");
}

/* In GPipe a weight half may wait (bubble and peak do not change, tests/valid/deferred-weight-gpipe), but with
 * recomputation it keeps its rebuilt stash whole: the memory check names the deferral, not a missing
 * checkpoint. */
Test(grader, a_deferred_weight_half_under_recomputation_is_named) {
    pp_test_config c = {.P = 4, .M = 8, .v = 1, .steps = 2, .seed = 7, .time_limit_s = 20, .recompute = 1};
    snprintf(c.lab, sizeof c.lab, "gpipe");
    pp_test_result r;
    test_grade_config("tests/broken/deferred-weight-recompute", &c, &r);
    cr_expect(check_named(&r, "bubble")->passed, "%s", check_named(&r, "bubble")->msg);
    cr_expect(check_named(&r, "stash peak")->passed, "%s", check_named(&r, "stash peak")->msg);
    expect_failed_with(&r, "recomputation memory", "rank 0 defers the weight half of micro-batch 0: a rebuilt stash "
                                                   "stays whole until its weight half runs");
    cr_expect(!strstr(check_named(&r, "recomputation memory")->msg, "call pp_stash_checkpoint"), "%s",
              check_named(&r, "recomputation memory")->msg);
}

/* A step function that fails only without recomputation loses the recomputation check, and its message is that
 * run's own failure, not a bare "failed". */
Test(grader, a_failure_without_recomputation_is_named) {
    pp_test_config c = {.lab = "gpipe", .P = 3, .M = 4, .v = 1, .steps = 1, .seed = 23, .recompute = 1,
                        .time_limit_s = 20};
    pp_test_result r;
    test_grade_config("tests/broken/plain-fails", &c, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    expect_failed_with(&r, "recomputation memory", "the run without recomputation failed: deadlock");
    cr_expect(strstr(check_named(&r, "recomputation memory")->msg, "rank 1"), "names the blocked rank: %s",
              check_named(&r, "recomputation memory")->msg);
}

/* Checkpointing when pp_rank_recompute() is 0 costs a forward per backward: with latency the bubble moves, and
 * the report names that cost, not an order. */
Test(grader, checkpointing_unasked_is_named_as_the_cost) {
    pp_test_config c = {.lab = "gpipe", .P = 4, .M = 8, .v = 1, .steps = 2, .seed = 19, .latency = 1,
                        .time_limit_s = 20};
    pp_test_result r;
    test_grade_config("tests/broken/checkpoint-always", &c, &r);
    cr_expect(check_named(&r, "gradients")->passed);
    expect_failed_with(&r, "bubble", "rank 0's backward of micro-batch 0 (chunk 0) rebuilt its stash, which "
                                     "pp_stash_checkpoint had dropped, although pp_rank_recompute(r) is 0");
}

/* ---- each diagnosis leads with its cause ------------------------------------------------------------- */

Test(grader, a_zero_loss_scale_is_named) {
    pp_test_result r;
    grade("tests/broken/integer-scale", "gpipe", 2, 4, 1, &r);
    expect_failed_with(&r, "gradients", "all-zero gradients: rank 1 passed a loss scale of 0 to pp_loss_grad 4 times "
                                        "(1 / M in integer arithmetic is 0: write 1.0f / M)");
}

Test(grader, gradients_zeroed_after_the_backwards_are_named) {
    pp_test_result r;
    grade("tests/broken/zero-after-backward", "gpipe", 2, 4, 1, &r);
    expect_failed_with(&r, "gradients", "rank 0 called pp_grad_zero after its backwards");
}

Test(grader, a_forward_run_twice_is_named_before_what_it_breaks) {
    pp_test_result r;
    grade("tests/broken/forward-twice", "gpipe", 2, 4, 1, &r);
    const char *cause = "micro-batch 0 ran its forward 2 times on virtual stage 1 (rank 1, its ops 0 and 1)";
    expect_failed_with(&r, "weights and loss after K steps", cause);
    const pp_check *w = check_named(&r, "weights and loss after K steps");
    cr_expect(strstr(w->msg, cause) == w->msg, "the cause comes first: %s", w->msg);
    expect_failed_with(&r, "one F and one B per micro-batch and stage", cause);
}

Test(grader, tags_naming_the_sender_or_the_wrong_direction_are_named) {
    pp_test_result r;
    grade("tests/broken/sender-tag", "gpipe", 4, 4, 1, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "pp_send(dst=1, tag F mb0 vs0): the tag names virtual stage 0, the "
                                             "sender's; tags name the stage that receives, pp_tag(PP_FWD, 0, 1)");
    grade("tests/broken/fwd-gradient", "gpipe", 4, 4, 1, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "pp_send(dst=2, tag F mb0 vs2): a gradient going back to virtual stage "
                                             "2 is tagged PP_FWD: use pp_tag(PP_BWD, 0, 2)");
}

/* The run deadlocks: it has no bubble or peak to fall short of, so the report names the program's own state (the
 * blocked calls, the near miss) and nothing of the canonical order, which a failing run could otherwise read off
 * the grader op by op. */
Test(grader, a_failed_run_names_no_canonical_op) {
    pp_test_result r;
    grade("tests/broken/chunk-mod-v", "interleaved", 2, 2, 2, &r);
    test_expect_failed_run(&r, PP_ERR_DEADLOCK, "near miss: rank 0 posted pp_recv(src=1, tag F mb1 vs2) but rank 1 "
                                                "posted pp_isend(dst=0, tag F mb0 vs2)");
    cr_expect(strncmp(r.error, "deadlock:", 9) == 0 && !strstr(r.error, "canonical"), "%s", r.error);
}

/* A zero-bubble order whose optimizer steps before the weight halves it holds back: every op ran once, but the
 * step took the gradients first; the diagnosis names the step's place, not a missing micro-batch. */
Test(grader, an_optimizer_step_before_held_weight_halves_is_named) {
    pp_test_result r;
    grade("tests/broken/zb-step-before-weights", "zbh1", 4, 8, 1, &r);
    const pp_check *g = check_named(&r, "gradients");
    cr_expect(!g->passed && !strncmp(g->msg, "rank ", 5) &&
              strstr(g->msg, "called pp_optimizer_step before its weight half of micro-batch "), "%s", g->msg);
    cr_expect(!strstr(g->msg, "is missing"), "%s", g->msg);
}

/* ---- lab 07: pipeline x data parallel ------------------------------------------------------------------ */

static void grade_dp(const char *impl, const char *lab, int D, int P, int M, int v, pp_test_result *out) {
    pp_test_config c = {.P = P, .M = M, .v = v, .steps = 2, .seed = 7, .time_limit_s = 20, .D = D, .alpha = -1,
                        .beta = -1};
    snprintf(c.lab, sizeof c.lab, "%s", lab);
    test_grade_config(impl, &c, out);
}

Test(grader, dp_solutions_full_marks_at_one_two_and_four_replicas) {
    static const struct { const char *lab; int D, P, M, v; } cases[] = {
        {"dp1f1b", 1, 4, 8, 1}, {"dp1f1b", 2, 4, 8, 1}, {"dp1f1b", 4, 2, 4, 1},
        {"dpinterleaved", 1, 4, 8, 2}, {"dpinterleaved", 2, 4, 8, 2}, {"dpinterleaved", 4, 2, 4, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_test_result r;
        grade_dp("solutions", cases[i].lab, cases[i].D, cases[i].P, cases[i].M, cases[i].v, &r);
        cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
    }
}

Test(grader, dp_missing_reduce_names_the_replica_that_differs) {
    pp_test_result r;
    grade_dp("tests/broken/dp-no-reduce", "dp1f1b", 2, 2, 4, 1, &r);
    expect_failed_with(&r, "gradients", "replica 1's weights differ from replica 0's");
    expect_failed_with(&r, "gradients", "never reduced chunk 0");
    expect_failed_with(&r, "gradient reduces", "not graded");
    /* at D = 1 the reduce is free and the gradients right, but the count still misses it */
    grade_dp("tests/broken/dp-no-reduce", "dp1f1b", 1, 2, 4, 1, &r);
    expect_failed_with(&r, "gradient reduces", "never reduced chunk 0");
    cr_expect(check_named(&r, "gradients")->passed);
}

/* Replica 0 steps on the full batch's gradient, replica 1 on zeros: every replica's gradients are graded. */
Test(grader, dp_a_replica_whose_gradient_differs_is_named) {
    pp_test_result r;
    grade_dp("tests/broken/dp-replica-grad-zero", "dp1f1b", 2, 2, 4, 1, &r);
    expect_failed_with(&r, "gradients", "rank 0 of replica 1's gradient of embed.w is all zero where replica 0's "
                                        "matches the full batch's");
    grade_dp("tests/broken/dp-replica-grad-zero", "dp1f1b", 1, 2, 4, 1, &r);
    cr_expect_eq(r.score, r.max, "one replica has no other to differ from: %g/%g", r.score, r.max);
}

Test(grader, dp_loss_scales_are_named) {
    pp_test_result r;
    grade_dp("tests/broken/dp-double-scale", "dp1f1b", 2, 2, 4, 1, &r);
    expect_failed_with(&r, "gradients", "scaled twice");
    grade_dp("tests/broken/dp-replica-scale", "dp1f1b", 4, 2, 4, 1, &r);
    expect_failed_with(&r, "gradients", "4 times the full batch's");
}

Test(grader, dp_reduce_before_the_last_backward_is_named_from_the_trace) {
    pp_test_result r;
    grade_dp("tests/broken/dp-early-reduce", "dpinterleaved", 2, 2, 4, 2, &r);
    expect_failed_with(&r, "gradients", "before its last backward");
    expect_failed_with(&r, "gradients", "micro-batch 3 ran after the reduce");
}

Test(grader, dp_reduce_count_is_one_per_chunk) {
    pp_test_result r;
    grade_dp("tests/broken/dp-reduce-count", "dpinterleaved", 2, 2, 4, 2, &r);
    expect_failed_with(&r, "gradients", "never reduced chunk 1");
    grade_dp("tests/broken/dp-reduce-count", "dpinterleaved", 1, 2, 4, 2, &r);
    expect_failed_with(&r, "gradient reduces", "never reduced chunk 1");
}

Test(grader, dp_send_to_another_replica_is_refused_naming_it) {
    pp_test_result r;
    grade_dp("tests/broken/dp-other-replica", "dp1f1b", 2, 2, 4, 1, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "it would be rank 0 of replica 1");
    /* the other replica's ranks wait in their reduce on the one that failed: reported as what followed, not
     * left to the time limit */
    cr_expect(!r.timed_out, "the run ran into its time limit: %s", r.error);
    cr_expect(strstr(r.error, "of replica 1 stayed blocked in pp_grad_reduce(chunk 0)") != NULL, "%s", r.error);
}

/* Reducing every chunk at the end keeps the weights and every other point, and loses only the exposed
 * communication, on the default (bandwidth-bound) costs where the overlap hides most of it. */
Test(grader, dp_reduces_at_the_end_lose_only_the_exposed_communication) {
    pp_test_result r;
    grade_dp("tests/broken/dp-reduce-at-end", "dpinterleaved", 2, 4, 8, 2, &r);
    expect_failed_with(&r, "exposed communication", "where a reduce is called matters");
    cr_expect_eq(r.score, r.max - PP_PTS_EXPOSED, "%s: %g/%g", r.name, r.score, r.max);
}
