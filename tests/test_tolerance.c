/* test_tolerance.c: the limits of checks.h against fp32 noise and against the smallest real mistake, at the
 * largest sizes the CLI accepts: M = 1024 micro-batches, a wide model (hidden 512), a deep one (64 layers).
 * For each size the reference solution stays at least 10x inside every limit, and each smallest mistake lands at
 * least 10x outside the limit it must trip:
 *   skip-last        one micro-batch of M left out of step 1: the gradients (PP_GRAD_RTOL)
 *   skip-later-step  one micro-batch left out of the backward of steps 2.. only: step 1's gradients are right,
 *                    so the weights after K steps (pp__weight_rtol) must tell
 * The figures are logged (run the suite with --verbose), as docs/design.md quotes them. */
#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>

#include "checks.h"
#include "impl_build.h"
#include "runner.h"
#include "suite.h"
#include "testutil.h"

typedef struct size_case {
    const char *what;
    int P, M, hidden, layers;
} size_case;

static const size_case sizes[] = {
    {"M = 1024", 2, 1024, 0, 0},
    {"hidden 512", 4, 16, 512, 0},
    {"64 layers", 4, 16, 0, 64},
};

static pp_test_config config_of(const size_case *s) {
    pp_test_config c = {.lab = "gpipe", .P = s->P, .M = s->M, .v = 1, .steps = 3, .seed = 77, .hidden = s->hidden,
                        .layers = s->layers, .time_limit_s = 300};
    return c;
}

static const pp_check *check_of(const pp_test_result *r, const char *name) {
    for (int i = 0; i < r->nchecks; i++)
        if (!strcmp(r->checks[i].name, name)) return &r->checks[i];
    cr_assert_fail("no check '%s' in %s", name, r->name);
    return NULL;
}

TestSuite(tolerance, .timeout = 600);

/* Every (size, implementation) pair graded as pplab grade does, two at a time (the machine's cores). */
static void grade_all(pp_test_result res[][3]) {
    static const char *impls[3] = {"solutions", "tests/broken/skip-last", "tests/broken/skip-later-step"};
    static pp_impl built[3];
    pp_sandbox sb;
    pp__sandbox_defaults(&sb);
    for (int k = 0; k < 3; k++) {
        char dir[PATH_MAX], err[4096];
        cr_assert_eq(pp__impl_dir(impls[k], dir, sizeof dir), 0);
        cr_assert_eq(pp__impl_build(dir, pp__lab_find("gpipe"), &sb, &built[k], err, sizeof err), PP_OK, "%s", err);
    }
    enum { N = (int)(sizeof sizes / sizeof *sizes) * 3 };
    pp_test_config cfg[N];
    pp_runner_job *job[N];
    for (int i = 0; i < N; i++) cfg[i] = config_of(&sizes[i / 3]);
    for (int i = 0, started = 0; i < N; i++) {
        for (; started < N && started < i + 2; started++)
            job[started] = pp__runner_start(&cfg[started], &built[started % 3], PP_OK, NULL, "cpu",
                                            &res[started / 3][started % 3]);
        pp__runner_finish(job[i], &res[i / 3][i % 3]);
    }
}

Test(tolerance, limits_sit_between_noise_and_the_smallest_mistake) {
    static pp_test_result res[sizeof sizes / sizeof *sizes][3];
    grade_all(res);
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        const size_case *s = &sizes[i];
        pp_run_config rc;
        pp__config_defaults(&rc);
        rc.M = s->M;
        double wtol = pp__weight_rtol(&rc);
        const pp_test_result *good = &res[i][0], *skip = &res[i][1], *later = &res[i][2];
        cr_log_info("%s: noise gradients %.2e weights %.2e loss %.2e | limits %.0e %.2e %.0e | skip-last gradients "
                    "%.2e | skip-later-step weights %.2e", s->what, good->grad_err, good->weight_err, good->loss_err,
                    PP_GRAD_RTOL, wtol, PP_LOSS_RTOL, skip->grad_err, later->weight_err);
        cr_expect_eq(good->score, good->max, "%s: the solution scored %g/%g: %s", s->what, good->score, good->max,
                     good->error);
        cr_expect_lt(good->grad_err * 10, PP_GRAD_RTOL, "%s: gradient noise %.2e within 10x of the limit", s->what,
                     good->grad_err);
        cr_expect(good->weight_err >= 0 && good->weight_err * 10 < wtol, "%s: weight noise %.2e within 10x of %.2e",
                  s->what, good->weight_err, wtol);
        cr_expect(good->loss_err >= 0 && good->loss_err * 10 < PP_LOSS_RTOL, "%s: loss noise %.2e within 10x of the "
                  "limit", s->what, good->loss_err);
        cr_expect(!check_of(skip, "gradients")->passed, "%s: a missing micro-batch passed the gradients", s->what);
        cr_expect_gt(skip->grad_err, 10 * PP_GRAD_RTOL, "%s: a missing micro-batch moves the gradients by only %.2e",
                     s->what, skip->grad_err);
        cr_expect(check_of(later, "gradients")->passed, "%s: step 1 of skip-later-step is right", s->what);
        cr_expect(!check_of(later, "weights and loss after K steps")->passed, "%s: a micro-batch missing from step 2 "
                  "passed the weights", s->what);
        cr_expect_gt(later->weight_err, 10 * wtol, "%s: a micro-batch missing from step 2 moves the weights by only "
                     "%.2e (limit %.2e)", s->what, later->weight_err, wtol);
    }
}
