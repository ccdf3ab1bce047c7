/* test_scheduler.c: lab 09, where the student writes the scheduler. The checks of an order hold on every canonical
 * order of the kit and catch each way an order can be wrong (a stash past the cap, a weight half before its input
 * half, a micro-batch missing, a deadlock, an op twice); the kit's heuristic always gives a valid order under the
 * cap; the grade credits an order by where its makespan stands (an order that beats a canonical one earns more than
 * the floor); broken, slow and valid files graded as pplab grade grades them; the leaderboard ranks lower bubbles
 * first. Tests run from the project root. */
#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>

#include "impl_build.h"
#include "order_csv.h"
#include "report.h"
#include "runner.h"
#include "scheduler_lab.h"
#include "sched_kit.h"
#include "schedules.h"
#include "testset.h"
#include "testutil.h"

TestSuite(scheduler, .timeout = 120);

/* Even costs: F = I = W = 1 on every virtual stage. */
static pp_sched_problem even(int P, int M, int v, int cap, double latency) {
    pp_sched_problem pb = {.P = P, .M = M, .v = v, .cap = cap, .latency = latency};
    for (int s = 0; s < P * v; s++) pb.f[s] = pb.i[s] = pb.w[s] = 1;
    return pb;
}

static pp_test_result *graded(const pp_test_config *c, const char *text, int ret) {
    static pp_test_result r;
    memset(&r, 0, sizeof r);
    pp__scheduler_grade_text(c, 0, ret, text, &r);
    return &r;
}

static const pp_check *check_named(const pp_test_result *r, const char *name) {
    for (int i = 0; i < r->nchecks; i++)
        if (!strcmp(r->checks[i].name, name)) return &r->checks[i];
    cr_assert_fail("no check named '%s' in %s", name, r->name);
    return NULL;
}

/* Every canonical order of one stage per rank and of the V is a valid order of its problem, holds its own peak as a
 * cap, and its measured makespan is its replay's. A property of the checks over every shape, not of one example. */
Test(scheduler, every_canonical_order_is_valid) {
    static const char *const names[] = {"gpipe", "1f1b", "zbh1", "zbh2", "zbv", "dualpipev"};
    int checked = 0;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        const pp_schedule_def *d = pp__schedule_def(names[k]);
        for (int P = 1; P <= 6; P++)
            for (int M = 1; M <= 12; M++) {
                int v = d->vshape ? 2 : 1;
                pp_schedule s;
                if (pp__schedule_build(&s, names[k], P, M, v)) continue;
                int peak = 0;
                for (int r = 0; r < P; r++) peak = pp__schedule_peak(&s, r) > peak ? pp__schedule_peak(&s, r) : peak;
                pp_sched_problem pb = even(P, M, v, peak < v ? v : peak, (P + M) % 3 * 0.5);
                pp_sched_measure m;
                char err[1024] = "";
                cr_expect_eq(pp__sched_verify(&pb, &s, &m, err, sizeof err), 0, "%s P=%d M=%d: %s", names[k], P, M, err);
                cr_expect_float_eq(m.makespan, pp__sched_makespan(&pb, &s), 1e-9);
                cr_expect(m.bubble >= 0 && m.bubble < 1, "%s P=%d M=%d: bubble %g", names[k], P, M, m.bubble);
                if (peak > v) {
                    pb.cap = peak - 1; /* one below its own peak: the cap check names the rank */
                    cr_expect_eq(pp__sched_verify(&pb, &s, NULL, err, sizeof err), 1, "%s P=%d M=%d", names[k], P, M);
                    cr_expect(strstr(err, "stashes when it starts") != NULL, "%s", err);
                }
                pp__schedule_free(&s);
                checked++;
            }
    }
    cr_expect_gt(checked, 200);
}

/* An order from text, for the broken cases below. */
static int verify_text(const pp_sched_problem *pb, const char *text, char *err, size_t len) {
    pp_schedule s;
    if (pp__order_csv_parse("t", text, strlen(text), pb->v == 2, &s, err, len)) return -2;
    int rc = pp__sched_verify(pb, &s, NULL, err, len);
    pp__schedule_free(&s);
    return rc;
}

Test(scheduler, broken_orders_are_named) {
    pp_sched_problem pb = even(2, 2, 1, 2, 0);
    char err[1024];
    static const struct {
        const char *text, *needle;
        int rc;
    } cases[] = {
        /* valid: 1F1B at P = 2, M = 2 */
        {"0F0,0F1,0I0,0W0,0I1,0W1\n1F0,1I0,1W0,1F1,1I1,1W1\n", "", 0},
        /* a whole backward is a valid backward too */
        {"0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", "", 0},
        {"0F0,0F1,0W0,0I0,0I1,0W1\n1F0,1I0,1W0,1F1,1I1,1W1\n", "before the input half", -1},
        {"0F0,0F1,0I0,0W0\n1F0,1I0,1W0,1F1,1I1,1W1\n", "micro-batch 1 has no I or B on virtual stage 0", -1},
        {"0F0,0F1,0I0,0I1,0W1\n1F0,1I0,1W0,1F1,1I1,1W1\n", "micro-batch 0 has no W on virtual stage 0", -1},
        {"0F0,0F0,0I0,0W0,0I1,0W1\n1F0,1I0,1W0,1F1,1I1,1W1\n", "runs 0F0 twice", -1},
        {"0F0,0I0,0W0,0F1,0I1,0W1\n1F0,1F1,1I0,1W0,1I1,1W1\n", "deadlocks", -1},
        {"0I0,0F0,0W0,0F1,0I1,0W1\n1F0,1I0,1W0,1F1,1I1,1W1\n", "before the forward 0F0", -1},
        {"0F0,0F1,0B0,0W0,0I1,0W1\n1F0,1I0,1W0,1F1,1I1,1W1\n", "after the whole backward", -1},
        {"0F0,0F1,0F2,0I0,0W0,0I1,0W1\n1F0,1I0,1W0,1F1,1I1,1W1\n", "outside M=2", -1},
        {"0F0,0F1,0I0,0W0,0I1,0W1\n", "one row per rank", -1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        err[0] = 0;
        int rc = verify_text(&pb, cases[k].text, err, sizeof err);
        cr_expect_eq(rc, cases[k].rc, "case %zu: %d (%s)", k, rc, err);
        cr_expect(strstr(err, cases[k].needle) != NULL, "case %zu lacks '%s': %s", k, cases[k].needle, err);
    }
    /* the cap: 1F1B's rank 0 holds two stashes, one more than a cap of 1 */
    pb.cap = 1;
    cr_expect_eq(verify_text(&pb, cases[0].text, err, sizeof err), 1);
    cr_expect(strstr(err, "rank 0 holds 2 stashes when it starts 0F1 (op 1), and the cap is 1") != NULL, "%s", err);
}

/* The kit's heuristic: a valid order under the cap for every problem of a spread (one stage per rank and the V,
 * caps from the least a placement allows to none binding, latency, heavier first and last stages), never slower
 * than the floor it is graded against. */
Test(scheduler, heuristic_orders_are_valid_under_every_cap) {
    int n = 0;
    for (int P = 1; P <= 6; P++)
        for (int M = 1; M <= 10; M += 3)
            for (int v = 1; v <= 2; v++)
                for (int cap = v; cap <= 2 * P + 1; cap += P > 2 ? 2 : 1)
                    for (int lat = 0; lat <= 2; lat++) {
                        pp_sched_problem pb = even(P, M, v, cap, lat * 0.5);
                        pb.f[0] = pb.i[0] = pb.w[0] = 1 + lat; /* the embedding's */
                        pb.f[P * v - 1] = 2, pb.w[P * v - 1] = 1.5; /* and the head's */
                        pp_schedule s;
                        char err[1024] = "";
                        cr_assert_eq(pp__sched_greedy(&pb, &s), 0);
                        int rc = pp__sched_verify(&pb, &s, NULL, err, sizeof err);
                        cr_expect_eq(rc, 0, "P=%d M=%d v=%d cap=%d latency=%g: %s", P, M, v, cap, pb.latency, err);
                        pp_sched_refs refs;
                        cr_assert_eq(pp__sched_refs(&pb, 0, &refs, err, sizeof err), 0, "%s", err);
                        cr_expect_leq(refs.greedy, refs.floor + 1e-9, "P=%d M=%d v=%d cap=%d: heuristic %g, floor %s %g",
                                      P, M, v, cap, refs.greedy, refs.floor_name, refs.floor);
                        pp__schedule_free(&s);
                        n++;
                    }
    cr_expect_gt(n, 300);
}

Test(scheduler, refs_round_trip_through_the_record) {
    pp_sched_problem pb = even(4, 8, 1, 4, 0.5);
    pp_sched_refs a, b;
    char err[512], text[1024];
    cr_assert_eq(pp__sched_refs(&pb, 0, &a, err, sizeof err), 0, "%s", err);
    pp__sched_refs_format(&a, text, sizeof text);
    cr_assert_eq(pp__sched_refs_parse(text, &b), 0, "%s", text);
    cr_expect_str_eq(a.floor_name, b.floor_name);
    cr_expect_eq(a.n, b.n);
    cr_expect_eq(a.floor, b.floor);
    cr_expect_eq(a.greedy, b.greedy);
    cr_expect_eq(a.optimum, b.optimum);
    cr_expect_eq(a.best, b.best, "%s: %g vs %g", text, a.best, b.best);
    cr_expect_neq(pp__sched_refs_parse("floor=1F1B:3 greedy=2", &b), 0);
    cr_expect_neq(pp__sched_refs_parse("floor=1F1B:3 greedy=2 optimum=-1 canon=- and more", &b), 0);
}

/* The grade of an order written out as a file's text: an order that beats a canonical one is credited above the
 * floor; the floor's own order earns the floor's share; an order slower than the floor earns no bubble point. */
Test(scheduler, an_order_beating_a_canonical_one_is_credited) {
    pp_test_config c = {.lab = "scheduler", .P = 4, .M = 8, .v = 1, .steps = 2, .seed = 3, .cap = 4};
    char text[32 * 1024];
    pp_schedule s;
    cr_assert_eq(pp__schedule_build(&s, "zbh1", 4, 8, 1), 0);
    cr_assert_gt(pp__sched_csv(&s, text, sizeof text), 0);
    pp__schedule_free(&s);
    const pp_test_result *r = graded(&c, text, (int)strlen(text));
    const pp_check *bubble = check_named(r, "bubble");
    cr_expect(check_named(r, "valid order")->passed && check_named(r, "memory cap")->passed, "%s", text);
    cr_expect_gt(bubble->points, 1.0, "ZB-H1 beats 1F1B: %g points (%s)", bubble->points, bubble->msg);
    cr_expect(strstr(bubble->msg, "1F1B 33") != NULL, "%s", bubble->msg);

    cr_assert_eq(pp__schedule_build(&s, "1f1b", 4, 8, 1), 0);
    pp__sched_csv(&s, text, sizeof text);
    pp__schedule_free(&s);
    r = graded(&c, text, (int)strlen(text));
    cr_expect_float_eq(check_named(r, "bubble")->points, 1.0, 1e-9, "1F1B is the floor: %s", check_named(r, "bubble")->msg);

    /* one micro-batch at a time: valid, and slower than 1F1B */
    size_t n = 0;
    for (int rank = 0; rank < 4; rank++) {
        for (int mb = 0; mb < 8; mb++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s%dF%d,%dI%d,%dW%d", mb ? "," : "", rank, mb, rank, mb,
                                  rank, mb);
        n += (size_t)snprintf(text + n, sizeof text - n, "\n");
    }
    r = graded(&c, text, (int)n);
    cr_expect(check_named(r, "memory cap")->passed, "%s", check_named(r, "memory cap")->msg);
    cr_expect_eq(check_named(r, "bubble")->points, 0, "slower than 1F1B: %s", check_named(r, "bubble")->msg);

    r = graded(&c, "", -1);
    cr_expect_eq(r->score, 0);
    cr_expect(strstr(check_named(r, "valid order")->msg, "returned -1") != NULL, "%s", check_named(r, "valid order")->msg);
}

/* Files graded as pplab grade grades them, in their jail: each broken one loses the right check with the right
 * words on every test of the default set, the slow one keeps every point but the bubble's, the stub gets 0 and the
 * reference full marks. */
Test(scheduler, files_graded_on_the_default_set) {
    static const struct {
        const char *impl, *check, *needle;
    } cases[] = {
        {"tests/broken/sched-cap-exceeded", "memory cap", "stashes when it starts"},
        {"tests/broken/sched-w-before-i", "valid order", "before the input half"},
        {"tests/broken/sched-missing-mb", "valid order", "has no F"},
        {"tests/broken/sched-deadlock", "valid order", "deadlocks"},
    };
    int n;
    const pp_test_config *set = pp__testset("scheduler", &n);
    cr_assert_gt(n, 3);
    for (int t = 0; t < n; t++) {
        pp_test_config c = set[t];
        snprintf(c.lab, sizeof c.lab, "scheduler");
        c.time_limit_s = 20;
        pp_test_result r;
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
            test_grade_config(cases[k].impl, &c, &r);
            const pp_check *ch = check_named(&r, cases[k].check);
            cr_expect(!ch->passed && strstr(ch->msg, cases[k].needle), "%s on %s: %s", cases[k].impl, r.name, ch->msg);
            cr_expect_lt(r.score, r.max);
        }
        test_grade_config("tests/broken/sched-serial-slow", &c, &r);
        cr_expect(check_named(&r, "valid order")->passed && check_named(&r, "memory cap")->passed, "%s", r.name);
        cr_expect_eq(r.score, r.max - check_named(&r, "bubble")->max + check_named(&r, "bubble")->points);
        char pristine[PATH_MAX];
        if (test_pristine_labs(pristine, sizeof pristine)) {
            test_grade_config(pristine, &c, &r);
            cr_expect_eq(r.score, 0, "the stub: %g on %s", r.score, r.name);
        }
        test_grade_config("solutions", &c, &r);
        cr_expect_eq(r.score, r.max, "the reference on %s: %g/%g: %s", r.name, r.score, r.max,
                     r.nchecks > 3 ? r.checks[3].msg : r.error);
    }
}

/* The leaderboard: over the hidden tests when there are any, an invalid order counted as the emptiest pipeline. */
Test(scheduler, leaderboard_ranks_lower_bubbles_first) {
    pp_test_result r[3];
    memset(r, 0, sizeof r);
    for (int k = 0; k < 3; k++) {
        snprintf(r[k].cfg.lab, sizeof r[k].cfg.lab, "scheduler");
        r[k].cfg.P = 2;
        r[k].peak[0] = 2, r[k].peak_bound[0] = 4, r[k].peak[1] = 1, r[k].peak_bound[1] = 4;
        pp__check_add(&r[k], "valid order", 3, 1, "ok");
        pp__check_add(&r[k], "memory cap", 2, k != 2, "ok");
        r[k].bubble = 0.1 * (k + 1);
    }
    r[1].cfg.secret = r[2].cfg.secret = 1;
    pp_leaderboard lb;
    cr_assert_eq(pp__report_leaderboard(r, 3, &lb), 2);
    cr_expect(lb.hidden);
    cr_expect_eq(lb.invalid, 1);
    cr_expect_float_eq(lb.bubble, (0.2 + 1.0) / 2, 1e-12);
    cr_expect_float_eq(lb.memory, (0.5 + 1.0) / 2, 1e-12);
    r[1].cfg.secret = r[2].cfg.secret = 0;
    cr_expect_eq(pp__report_leaderboard(r, 3, &lb), 3);
    cr_expect_not(lb.hidden);
    cr_expect_eq(pp__report_leaderboard(r, 0, &lb), 0);
}
