/* test_lanes.c: the lanes every view draws, built from real runs of the reference solutions: one configuration of
 * every schedule, tpblock at T = 2 and 4, dp1f1b at D = 2. Properties of every run, not of an example: each op is
 * covered by its cells exactly, cells never overlap on a lane, the lanes' step is the run's, the sums add up to the
 * time the ops say they spent summing, every shard has a lane, and a split backward is drawn as I, never as B. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "impl_build.h"
#include "labs.h"
#include "lanes.h"
#include "pp.h"
#include "runtime.h"
#include "policy.h"
#include "schedules.h"
#include "testcfg.h"
#include "testset.h"
#include "testutil.h"

TestSuite(lanes, .timeout = 240);

/* One run of the reference solution of `schedule` on its first default test, T shards and D replicas where not 0,
 * the links' costs the kit's defaults (a test's own alpha and beta of 0 would make every sum and reduce free). */
static int run_of(const char *schedule, int T, int D, pp_run_config *c, pp_run_result *res) {
    int n;
    const pp_test_config *set = pp__testset(schedule, &n);
    cr_assert_gt(n, 0, "%s has no tests", schedule);
    pp_test_config t = set[0];
    snprintf(t.lab, sizeof t.lab, "%s", schedule);
    if (T) t.T = T;
    if (D) t.D = D;
    t.alpha = t.beta = -1;
    pp__test_to_run(&t, "cpu", c);
    c->steps = 1;
    char dir[4096], err[4096];
    pp_sandbox sb;
    pp_impl impl;
    pp_program prog = {0};
    const pp_lab_info *lab = pp__lab_for_schedule(schedule);
    pp__sandbox_defaults(&sb);
    cr_assert_eq(pp__impl_dir("solutions", dir, sizeof dir), 0);
    cr_assert_eq(pp__sandbox_probe(&sb, err, sizeof err), 0, "%s", err);
    cr_assert_eq(pp__impl_build(dir, lab, &sb, &impl, err, sizeof err), PP_OK, "%s: %s", schedule, err);
    cr_assert_eq(pp__impl_program(&impl, lab, &prog, err, sizeof err), 0, "%s: %s", schedule, err);
    return pp__run_program(c, &prog, res);
}

/* The properties every run's lanes have. */
static void check_lanes(const char *what, const pp_run_config *c, const pp_run_result *res) {
    pp_lanes_src src;
    pp__lanes_src_of(&src, res, c);
    pp_lanes L;
    pp__lanes_build(&L, &src);
    int T = c->T > 1 ? c->T : 1, compute = 0, reduce_lanes = 0, splits = 0;
    double sums = 0;
    for (int q = 0; q < res->P; q++)
        for (int i = 0; i < res->traces[q].n; i++) {
            sums += res->traces[q].ev[i].tp_time;
            splits += res->traces[q].ev[i].op == PP_OP_B && (res->traces[q].ev[i].flags & PP_EV_SPLIT);
        }
    cr_expect(fabs(L.step - res->step_time) <= 1e-9 * (1 + res->step_time), "%s: lanes end at %.9g, the step at %.9g",
              what, L.step, res->step_time);
    cr_expect(fabs(L.sums - sums) <= 1e-9 * (1 + sums), "%s: sum cells %.9g, the ops' sums %.9g", what, L.sums, sums);
    cr_expect_eq(L.has[PP_CELL_SUM], sums > 0, "%s", what);
    cr_expect_eq(L.has[PP_CELL_I], splits > 0, "%s", what);
    for (int k = 0; k < L.n; k++) {
        const pp_lane *l = &L.lane[k];
        compute += l->kind == PP_LANE_COMPUTE;
        reduce_lanes += l->kind == PP_LANE_REDUCE;
        const pp_trace *tr = l->shard ? &res->tp_traces[l->rank - res->P] : &res->traces[l->rank];
        for (int i = 1; i < l->n; i++)
            cr_expect(l->cells[i].s >= l->cells[i - 1].e - 1e-12, "%s: %s: cells %d and %d overlap", what, l->name,
                      i - 1, i);
        /* each op of the lane's trace is covered exactly by its cells, which lie inside it */
        for (int i = 0; i < tr->n; i++) {
            const pp_event *e = &tr->ev[i];
            int mine = l->kind == PP_LANE_COMPUTE ? pp__op_is_compute(e->op) : e->op == PP_OP_REDUCE;
            if (!mine) continue;
            double covered = 0;
            for (int j = 0; j < l->n; j++)
                if (l->cells[j].event == i) {
                    cr_expect(l->cells[j].s >= e->vstart - 1e-12 && l->cells[j].e <= e->vend + 1e-12, "%s: %s", what,
                              l->name);
                    covered += l->cells[j].e - l->cells[j].s;
                }
            cr_expect(fabs(covered - (e->vend - e->vstart)) <= 1e-9, "%s: %s op %d: cells cover %.9g of %.9g", what,
                      l->name, i, covered, e->vend - e->vstart);
        }
    }
    cr_expect_eq(compute, T * res->P, "%s: %d compute lanes for %d ranks of %d shards", what, compute, res->P, T);
    if (reduce_lanes) cr_expect_eq(reduce_lanes, res->P, "%s", what);
    pp__lanes_free(&L);
    pp__lanes_src_free(&src);
}

Test(lanes, every_schedule_drawn_exactly) {
    int n = 0;
    for (int i = 0; i < pp__nschedules; i++) {
        const char *name = pp__schedules[i].name;
        pp_run_config c;
        pp_run_result res;
        cr_assert_eq(run_of(name, 0, 0, &c, &res), PP_OK, "%s: %s", name, res.error);
        check_lanes(name, &c, &res);
        pp__result_free(&res);
        n++;
    }
    cr_expect_geq(n, 12, "only %d schedules", n);
}

Test(lanes, every_shard_has_a_lane_with_its_sums) {
    for (int T = 2; T <= 4; T *= 2) {
        pp_run_config c;
        pp_run_result res;
        cr_assert_eq(run_of("tpblock", T, 0, &c, &res), PP_OK, "%s", res.error);
        cr_assert_eq(res.tp_ranks, (T - 1) * res.P);
        check_lanes("tpblock", &c, &res);
        pp_lanes_src src;
        pp__lanes_src_of(&src, &res, &c);
        pp_lanes L;
        pp__lanes_build(&L, &src);
        /* every shard of a stage sums on the same ring: its lane's sums are shard 0's, cell for cell */
        for (int k = 0; k < L.n; k++) {
            const pp_lane *l = &L.lane[k], *l0 = &L.lane[k - l->shard];
            cr_assert_eq(l0->shard, 0);
            cr_expect_eq(l->n, l0->n, "%s: %d cells, shard 0 %d", l->name, l->n, l0->n);
            for (int j = 0; j < l->n && j < l0->n; j++)
                cr_expect(l->cells[j].kind == l0->cells[j].kind && fabs(l->cells[j].s - l0->cells[j].s) < 1e-12,
                          "%s cell %d", l->name, j);
        }
        pp__lanes_free(&L);
        pp__lanes_src_free(&src);
        pp__result_free(&res);
    }
}

Test(lanes, replicas_reduce_on_a_lane_of_their_own) {
    pp_run_config c;
    pp_run_result res;
    cr_assert_eq(run_of("dp1f1b", 0, 2, &c, &res), PP_OK, "%s", res.error);
    check_lanes("dp1f1b", &c, &res);
    pp_lanes_src src;
    pp__lanes_src_of(&src, &res, &c);
    pp_lanes L;
    pp__lanes_build(&L, &src);
    cr_expect(L.has[PP_CELL_REDUCE]);
    cr_expect_eq(L.D, 2);
    char last[64];
    snprintf(last, sizeof last, "replica 1, GPU %d", res.P / 2 - 1);
    cr_expect_str_eq(L.lane[L.n - 2].name, last); /* the last rank's compute lane, its reduce lane under it */
    pp__lanes_free(&L);
    pp__lanes_src_free(&src);
    pp__result_free(&res);
}
