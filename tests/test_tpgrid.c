/* test_tpgrid.c: lab 08, part 2 (tpgrid): the submission maps global ranks to (t, p, d) and builds the groups, and
 * the run sits on the nodes where its mapping puts each rank. The reference gets full marks on every default
 * configuration; a mapping whose shards of a stage land on different nodes keeps every other point and loses the
 * step on the topology, the report naming the group and the link; groups listed out of order, and two ranks on
 * one place, stop the run naming the rank; another mapping that keeps the same nodes keeps full marks; a mapping
 * whose replicas sit on different links loses the step alone. A mapping placed by the submission measures the step
 * that the same placement named by --placement measures. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "checks.h"
#include "checks_dp.h"
#include "checks_tp.h"
#include "grid.h"
#include "pp.h"
#include "runner.h"
#include "testset.h"
#include "schedules.h"
#include "testutil.h"

TestSuite(tpgrid, .timeout = 240);

static const pp_check *check_named(const pp_test_result *r, const char *name) {
    for (int i = 0; i < r->nchecks; i++)
        if (!strcmp(r->checks[i].name, name)) return &r->checks[i];
    cr_assert_fail("no check named '%s' in %s", name, r->name);
    return NULL;
}

static void grade(const char *impl, int T, int P, int D, int G, pp_test_result *out) {
    pp_test_config c = {.P = P, .M = 4, .v = 1, .T = T, .D = D, .node_size = G, .steps = 2, .seed = 11,
                        .time_limit_s = 30, .alpha = -1, .beta = -1};
    snprintf(c.lab, sizeof c.lab, "tpgrid");
    test_grade_config(impl, &c, out);
}

Test(tpgrid, the_reference_gets_full_marks_on_every_default_configuration) {
    int n;
    const pp_test_config *set = pp__testset("tpgrid", &n);
    cr_assert_geq(n, 4);
    for (int i = 0; i < n; i++) {
        pp_test_config c = set[i];
        snprintf(c.lab, sizeof c.lab, "tpgrid");
        c.time_limit_s = 30, c.alpha = c.beta = -1;
        pp_test_result r;
        test_grade_config("solutions", &c, &r);
        cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
        cr_expect(check_named(&r, "step on the topology")->passed, "%s", r.name);
    }
    /* the grids: (T, P, D) = (2, 1, 1), (2, 2, 1), (2, 2, 2), (4, 2, 1) */
    static const int grid[][4] = {{2, 1, 1, 2}, {2, 2, 1, 2}, {2, 2, 2, 4}, {4, 2, 1, 4}};
    for (size_t i = 0; i < sizeof grid / sizeof *grid; i++) {
        pp_test_result r;
        grade("solutions", grid[i][0], grid[i][1], grid[i][2], grid[i][3], &r);
        cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
        cr_expect_eq(r.max, PP_PTS_GRADS + PP_PTS_WEIGHTS + PP_PTS_ONE_F_ONE_B + PP_PTS_BUBBLE + PP_PTS_PEAK +
                     PP_PTS_MESSAGES + PP_PTS_REDUCE + PP_PTS_EXPOSED + PP_PTS_GRID_STEP, "%s", r.name);
    }
}

Test(tpgrid, the_untouched_stub_is_refused_at_its_mapping) {
    char dir[256];
    cr_assert_eq(test_pristine_labs(dir, sizeof dir), 0);
    pp_test_result r;
    grade(dir, 2, 2, 1, 2, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "pp_tpgrid_place(0): t = -1 is out of range: t is 0..1, p 0..1, d 0..0");
    test_rm_tree(dir);
}

/* Shards spread over nodes: the same numbers, bubble and reduces, a longer step, the group and the link named. */
Test(tpgrid, a_stage_whose_shards_span_nodes_loses_the_step_and_is_named) {
    pp_test_result r;
    grade("tests/broken/tpgrid-stages-fastest", 2, 2, 2, 4, &r);
    const pp_check *s = check_named(&r, "step on the topology");
    cr_expect(!s->passed && strstr(s->msg, "the tensor-parallel group of stage 0 in replica 0 spans nodes 0 and 1: "
                                           "its 4 x 1 all-reduces per micro-batch (2 per block each way)"), "%s",
              s->msg);
    cr_expect_eq(r.score, r.max - PP_PTS_GRID_STEP, "%s: %g/%g", r.name, r.score, r.max);
    grade("tests/broken/tpgrid-stages-fastest", 2, 2, 1, 2, &r);
    cr_expect(!check_named(&r, "step on the topology")->passed, "%s", r.name);
}

Test(tpgrid, a_mapping_that_is_not_one_grid_is_refused_naming_the_rank) {
    pp_test_result r;
    grade("tests/broken/tpgrid-group-unordered", 2, 2, 2, 4, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "pp_tpgrid_group('t', 0): member 0 is rank 1, whose t is 1 by "
                                             "pp_tpgrid_place: the members come in the order of t");
    grade("tests/broken/tpgrid-place-twice", 2, 2, 2, 4, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "pp_tpgrid_place: ranks 0 and 4 both play (t 0, p 0, d 0)");
}

Test(tpgrid, another_mapping_on_the_same_nodes_keeps_full_marks) {
    static const int grid[][4] = {{2, 2, 2, 4}, {2, 2, 2, 2}, {4, 2, 1, 4}};
    for (size_t i = 0; i < sizeof grid / sizeof *grid; i++) {
        pp_test_result r;
        grade("tests/valid/tpgrid-shards-reversed", grid[i][0], grid[i][1], grid[i][2], grid[i][3], &r);
        cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
    }
}

/* Replica 0's tensor-parallel groups across nodes, replica 1's in one: the replicas' ops cost different times. The
 * reference order on that placement keeps the bubble (the theory replays each replica on its own links) and loses
 * only the step, whose message names the group; an order that idles more still loses the bubble, naming its
 * warm-up. */
Test(tpgrid, a_placement_costs_the_step_alone_and_a_worse_order_still_loses_the_bubble) {
    pp_test_result r;
    grade("tests/broken/tpgrid-mixed-nodes", 2, 2, 2, 4, &r);
    const pp_check *b = check_named(&r, "bubble"), *s = check_named(&r, "step on the topology");
    cr_expect(b->passed, "%s", b->msg);
    cr_expect(!s->passed && strstr(s->msg, "the tensor-parallel group of stage 0 in replica 0 spans nodes 0 and 1"),
              "%s", s->msg);
    cr_expect(!strstr(s->msg, "the schedule adds"), "the canonical order on its placement is blamed: %s", s->msg);
    cr_expect_eq(r.score, r.max - PP_PTS_GRID_STEP, "%s: %g/%g", r.name, r.score, r.max);
    grade("tests/broken/tpgrid-mixed-no-warmup", 2, 2, 2, 4, &r);
    b = check_named(&r, "bubble"), s = check_named(&r, "step on the topology");
    cr_expect(!b->passed && strstr(b->msg, "rank 0 runs 1 forward before its first backward"), "%s", b->msg);
    cr_expect(!s->passed && strstr(s->msg, "so the schedule adds"), "%s", s->msg);
}

/* Megatron's mapping shifted by one rank: the order is the canonical one on that placement, so the bubble holds
 * and the step, the only check lost, names the group that spans nodes. */
Test(tpgrid, a_shifted_mapping_leads_with_the_group_it_splits) {
    pp_test_result r;
    grade("tests/broken/tpgrid-shifted-by-one", 2, 2, 2, 4, &r);
    cr_expect(check_named(&r, "bubble")->passed, "%s", check_named(&r, "bubble")->msg);
    const pp_check *s = check_named(&r, "step on the topology");
    cr_expect(!s->passed && !strncmp(s->msg, "the tensor-parallel group of stage 0 in replica 0 spans nodes 1 and 0",
                                     69), "%s", s->msg);
    cr_expect_eq(r.score, r.max - PP_PTS_GRID_STEP, "%s: %g/%g", r.name, r.score, r.max);
}

/* The mapping "stages fastest, then replicas, then shards" is --placement pdt: the same links, the same step. */
Test(tpgrid, a_mapping_measures_what_the_same_placement_named_by_flag_measures) {
    char bin[PATH_MAX], cmd[2 * PATH_MAX + 256], a[8192], b[8192];
    test_build_dir(bin, sizeof bin);
    const char *args = "--tp 2 --stages 2 --dp 2 --microbatches 4 --node-size 2";
    snprintf(cmd, sizeof cmd, "'%s/pplab' run --schedule tpgrid --impl tests/broken/tpgrid-stages-fastest %s 2>&1",
             bin, args);
    cr_assert_eq(test_capture(cmd, a, sizeof a), 0, "%s", a);
    snprintf(cmd, sizeof cmd, "'%s/pplab' run --schedule dp1f1b --impl solutions --placement pdt %s 2>&1", bin, args);
    cr_assert_eq(test_capture(cmd, b, sizeof b), 0, "%s", b);
    const char *sa = strstr(a, "virtual step: "), *sb = strstr(b, "virtual step: ");
    cr_assert(sa && sb, "%s\n%s", a, b);
    cr_expect_eq(strcspn(sa, " ("), strcspn(sb, " ("));
    cr_expect(!strncmp(sa, sb, strcspn(sa, "(")), "the grid's step %.40s, --placement pdt's %.40s", sa, sb);
}

/* The answer is the submission's bytes: any value is read and held to the grid, never taken on trust. */
static void place_huge(int rank, int T, int P, int D, int *t, int *p, int *d) {
    (void)T, (void)P, (void)D;
    *t = rank ? 0 : 1 << 30, *p = 0, *d = 0;
}
static int group_none(char axis, int rank, int T, int P, int D, int *members) {
    (void)axis, (void)rank, (void)T, (void)P, (void)D, (void)members;
    return 0;
}

Test(tpgrid, any_answer_is_read_and_held_to_the_grid) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def("tpgrid"), c.T = 2, c.P = 2, c.D = 1;
    static unsigned char buf[1 << 16];
    pp_wire w;
    pp__wire_init_fixed(&w, buf, sizeof buf);
    pp__grid_ask(2, 2, 1, place_huge, group_none, &w);
    cr_assert(!w.bad);
    pp_wire_in in;
    pp__wire_in_init(&in, buf, w.len);
    int place[PP_GRID_MAX];
    char err[512];
    cr_expect_eq(pp__grid_read(&c, &in, place, err, sizeof err), -1);
    cr_expect(strstr(err, "pp_tpgrid_place(0): t = 1073741824 is out of range: t is 0..1"), "%s", err);
    pp__wire_in_init(&in, buf, w.len / 2); /* cut short */
    cr_expect_eq(pp__grid_read(&c, &in, place, err, sizeof err), -1);
}

/* A group is checked member by member against the submission's own mapping (Megatron's: t fastest, then d, then p),
 * each refusal naming the first member that breaks it: one of another place, one out of the grid, too few, too
 * many. The messages never list the group the mapping makes. */
static void place_megatron(int rank, int T, int P, int D, int *t, int *p, int *d) {
    *t = rank % T, *d = rank / T % D, *p = rank / (T * D);
}
static int group_other_stage(char axis, int rank, int T, int P, int D, int *members) {
    (void)rank, (void)P, (void)D;
    /* rank 0's shards listed as ranks 0 and 3: rank 3 plays stage 1 */
    if (axis == 't') return members[0] = 0, members[1] = 3, T;
    int x[3], n = 0, a = axis == 'p' ? 1 : 2, size = a == 1 ? P : D;
    place_megatron(rank, T, P, D, &x[0], &x[1], &x[2]);
    for (int k = 0; k < size; k++) {
        int y[3] = {x[0], x[1], x[2]};
        y[a] = k;
        members[n++] = y[0] + T * (y[2] + D * y[1]);
    }
    return n;
}
static int group_outside(char axis, int rank, int T, int P, int D, int *members) {
    (void)axis, (void)rank, (void)P, (void)D;
    return members[0] = 0, members[1] = 99, T;
}
static int group_short(char axis, int rank, int T, int P, int D, int *members) {
    (void)axis, (void)rank, (void)T, (void)P, (void)D;
    return members[0] = 0, 1;
}
static int group_long(char axis, int rank, int T, int P, int D, int *members) {
    (void)axis, (void)rank, (void)T, (void)P, (void)D;
    return members[0] = 0, members[1] = 1, members[2] = 0, 3;
}

Test(tpgrid, every_member_of_a_group_is_held_to_the_submissions_own_mapping) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def("tpgrid"), c.T = 2, c.P = 2, c.D = 1;
    static const struct {
        pp_grid_group_fn *group;
        const char *want;
    } cases[] = {
        {group_other_stage, "pp_tpgrid_group('t', 0): member 1 is rank 3, which plays (t 1, p 1, d 0) by "
                            "pp_tpgrid_place, and rank 0 plays (t 0, p 0, d 0): a tensor-parallel group's ranks "
                            "share their other two coordinates"},
        {group_outside, "pp_tpgrid_group('t', 0): member 1 is 99, which is no rank of the grid (0..3)"},
        {group_short, "pp_tpgrid_group('t', 0) returned 1 rank: a tensor-parallel group holds one rank per value of "
                      "t, 2 in all"},
        {group_long, "pp_tpgrid_group('t', 0) returned 3 ranks: a tensor-parallel group holds one rank per value of "
                     "t, 2 in all"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        static unsigned char buf[1 << 16];
        pp_wire w;
        pp__wire_init_fixed(&w, buf, sizeof buf);
        pp__grid_ask(2, 2, 1, place_megatron, cases[i].group, &w);
        cr_assert(!w.bad);
        pp_wire_in in;
        pp__wire_in_init(&in, buf, w.len);
        int place[PP_GRID_MAX];
        char err[512];
        cr_expect_eq(pp__grid_read(&c, &in, place, err, sizeof err), -1, "case %zu accepted", i);
        cr_expect(strstr(err, cases[i].want), "case %zu: %s", i, err);
        cr_expect(!strstr(err, "group is {"), "case %zu lists the group the mapping makes: %s", i, err);
    }
}
