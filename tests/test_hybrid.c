/* test_hybrid.c: pipeline x data parallel (lab 07). The reduce's closed formula against the replay of the canonical
 * orders over a grid of (D, P, M, v, alpha, beta); the replay against live runs of the reference solutions; the
 * claims the chapter makes (part 2 hides the reduce on a bandwidth-bound grid, v reduces in a row cost more where
 * latency dominates); and the refusals of the grid's misuses. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "impl_build.h"
#include "exposed.h"
#include "runtime.h"

static pp_step_fn solution(const char *lab) {
    char err[4096];
    pp_step_fn fn = (pp_step_fn)pp__impl_load("solutions", pp__lab_find(lab), err, sizeof err);
    cr_assert(fn, "%s", err);
    return fn;
}

static pp_run_config config(const char *lab, int D, int P, int M, int v, double alpha, double beta) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def(lab), c.D = D, c.P = P, c.M = M, c.v = v, c.reduce_alpha = alpha, c.reduce_beta = beta;
    return c;
}

TestSuite(hybrid, .timeout = 120);

Test(hybrid, formula_equals_replay_over_a_grid) {
    static const double alphas[] = {0, 0.05, 1, 6}, betas[] = {0, 1.5e-5, 1e-4};
    static const char *const labs[] = {"dp1f1b", "dpinterleaved"};
    int tried = 0;
    for (int l = 0; l < 2; l++)
        for (int D = 1; D <= 4; D *= 2)
            for (int P = 1; P <= 4; P++)
                for (int v = 1; v <= (l ? 3 : 1); v++)
                    for (int M = P; M <= 3 * P; M += P)
                        for (int a = 0; a < 4; a++)
                            for (int b = 0; b < 3; b++) {
                                pp_run_config c = config(labs[l], D, P, M, v, alphas[a], betas[b]);
                                char err[256];
                                if (pp__config_check(&c, err, sizeof err)) continue;
                                double step, span, replay = pp__theory_exposed_replay(&c, &step, &span);
                                double formula = pp__theory_exposed_formula(&c);
                                cr_assert_geq(formula, 0, "%s: no formula at D=%d P=%d M=%d v=%d", labs[l], D, P, M, v);
                                cr_expect(fabs(formula - replay) < 1e-9, "%s D=%d P=%d M=%d v=%d alpha=%g beta=%g: "
                                          "formula %.9g, replay %.9g", labs[l], D, P, M, v, alphas[a], betas[b],
                                          formula, replay);
                                if (D == 1) cr_expect_eq(replay, 0, "a reduce over one replica is free");
                                tried++;
                            }
    cr_expect_gt(tried, 100);
}

/* A live run of a reference solution ends where the replay of the canonical order with its reduces ends, its
 * replicas agree bit for bit, and its bubble is the pipeline's. */
static void live_matches_replay(const char *lab, int D, int P, int M, int v, double lat) {
    pp_run_config c = config(lab, D, P, M, v, PP_REDUCE_ALPHA_DEFAULT, PP_REDUCE_BETA_DEFAULT);
    c.comm_latency = lat;
    c.steps = 2;
    pp_run_result res;
    cr_assert_eq(pp__run(&c, solution(lab), &res), PP_OK, "%s", res.error);
    double step, span;
    cr_assert_geq(pp__theory_exposed_replay(&c, &step, &span), 0);
    cr_expect(fabs(res.step_time - step) < 1e-9, "%s D=%d P=%d M=%d v=%d: live step %.6f, replay %.6f", lab, D, P, M, v,
              res.step_time, step);
    cr_expect(fabs(res.makespan - span) < 1e-9, "%s: live compute %.6f, replay %.6f", lab, res.makespan, span);
    cr_expect(fabs(pp__run_free_span(&c, res.traces) - span) < 1e-9, "%s: the run's own order replays to its span", lab);
    cr_expect_eq(res.replica_differs, 0, "%s D=%d: replica %d's %s differs from replica 0's", lab, D,
                 res.replica_differs, res.replica_param);
    int reduces = 0;
    for (int q = 0; q < res.P; q++)
        for (int i = 0; i < res.traces[q].n; i++) reduces += res.traces[q].ev[i].op == PP_OP_REDUCE;
    cr_expect_eq(reduces, D * P * v, "%s: one reduce per chunk per rank", lab);
    pp__result_free(&res);
}

Test(hybrid, live_runs_follow_the_replay) {
    live_matches_replay("dp1f1b", 1, 2, 4, 1, 0);
    live_matches_replay("dp1f1b", 2, 3, 6, 1, 0);
    live_matches_replay("dp1f1b", 4, 2, 3, 1, 0.5);
    live_matches_replay("dpinterleaved", 2, 2, 4, 2, 0);
    live_matches_replay("dpinterleaved", 2, 4, 8, 2, 0.5);
    live_matches_replay("dpinterleaved", 4, 2, 4, 3, 0);
}

/* The same model (8 blocks over 4 ranks) on a bandwidth-bound grid: part 2's reduces of half a stage each hide
 * behind the cool-down, part 1's one reduce of the whole stage does not. By the formula and by a live run. */
Test(hybrid, overlap_hides_the_reduce_when_bandwidth_bound) {
    pp_run_config a = config("dp1f1b", 2, 4, 8, 1, 0.05, 1e-4), b = config("dpinterleaved", 2, 4, 8, 2, 0.05, 1e-4);
    a.layers = b.layers = 8;
    double ea = pp__theory_exposed_formula(&a), eb = pp__theory_exposed_formula(&b);
    cr_expect_gt(ea, 0);
    cr_expect_lt(eb, ea, "part 2 exposes %.3f, part 1 %.3f", eb, ea);
    pp_run_result ra, rb;
    cr_assert_eq(pp__run(&a, solution("dp1f1b"), &ra), PP_OK, "%s", ra.error);
    cr_assert_eq(pp__run(&b, solution("dpinterleaved"), &rb), PP_OK, "%s", rb.error);
    cr_expect_lt(rb.step_time - rb.makespan, ra.step_time - ra.makespan);
    pp__result_free(&ra);
    pp__result_free(&rb);
}

/* Where latency dominates (alpha large, beta 0), v reduces queued in a row cost v times the latency term. */
Test(hybrid, v_reduces_in_a_row_cost_more_when_latency_bound) {
    pp_run_config a = config("dp1f1b", 4, 2, 4, 1, 6, 0), b = config("dpinterleaved", 4, 2, 4, 4, 6, 0);
    a.layers = b.layers = 8;
    cr_expect_gt(pp__theory_exposed_formula(&b), pp__theory_exposed_formula(&a));
}

/* Ranks are addressed within the replica: a number past P-1 is refused naming the replica. */
static void send_to_other_replica(pp_rank *r) {
    if (pp_rank_replica(r) == 0 && pp_rank_id(r) == 0) pp_send(r, NULL, pp_rank_stages(r), 0);
}

Test(hybrid, a_rank_outside_the_replica_is_refused) {
    pp_run_config c = config("dp1f1b", 2, 2, 2, 1, 0, 0);
    pp_run_result res;
    cr_assert_neq(pp__run(&c, send_to_other_replica, &res), PP_OK);
    cr_expect(strstr(res.error, "does not exist in replica 0"), "%s", res.error);
    cr_expect(strstr(res.error, "rank 0 of replica 1"), "%s", res.error);
    pp__result_free(&res);
}

/* A reduce the other replica never joins stops the run naming the replica, instead of hanging. */
static void only_replica_zero_reduces(pp_rank *r) {
    if (pp_rank_replica(r) == 0) pp_grad_reduce(r, 0);
}

Test(hybrid, a_reduce_nobody_joins_is_named) {
    pp_run_config c = config("dp1f1b", 2, 1, 1, 1, 0, 0);
    pp_run_result res;
    cr_assert_neq(pp__run(&c, only_replica_zero_reduces, &res), PP_OK);
    cr_expect(strstr(res.error, "replica 1's rank 0 ended its step without joining this reduce"), "%s", res.error);
    pp__result_free(&res);
}
