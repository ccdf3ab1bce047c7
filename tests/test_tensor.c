/* test_tensor.c: stages cut over tensor-parallel shards (--tp T, Megatron-LM's split inside every stage). Every
 * schedule's reference solution keeps full marks with its stages cut over 2 and 4 shards: the shards' gradients,
 * put together, are full-batch training's, and the uncut parameters stay equal on every shard. A shard that fails
 * stops the partners waiting for it in a sum, and the run reports that shard's failure; shards whose programs part
 * ways are named; a shards' sum costs its ring inside the op that makes it, in the live timeline and in the
 * canonical one; the configurations --tp cannot run are refused with the reason. (The model's split itself is
 * held to the whole stage in test_model.c.) */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "impl_build.h"
#include "pp.h"
#include "rank.h"
#include "runner.h"
#include "replay.h"
#include "schedules.h"
#include "testset.h"
#include "testutil.h"

TestSuite(tensor, .timeout = 240);

/* Every schedule of the table, on the first configuration of its default tests, with each stage cut over T
 * shards: full marks, as without shards. */
Test(tensor, every_schedule_keeps_full_marks_with_its_stages_cut_over_shards) {
    int graded = 0;
    for (int i = 0; i < pp__nschedules; i++)
        for (int T = 2; T <= 4; T *= 2) {
            const pp_schedule_def *d = &pp__schedules[i];
            int n;
            const pp_test_config *set = pp__testset(d->name, &n);
            cr_assert_gt(n, 0);
            pp_test_config c = set[0];
            snprintf(c.lab, sizeof c.lab, "%s", d->name);
            c.T = T, c.time_limit_s = 30, c.alpha = c.beta = -1;
            pp_test_result r;
            test_grade_config("solutions", &c, &r);
            cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
            for (int k = 0; k < r.nchecks; k++)
                cr_expect(r.checks[k].passed, "%s: %s: %s", r.name, r.checks[k].name, r.checks[k].msg);
            graded++;
        }
    cr_expect_geq(graded, 2 * 12, "only %d configurations", graded);
}

static pp_run_config config(const char *schedule, int T, int P, int M) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def(schedule), c.T = T, c.P = P, c.M = M;
    return c;
}

/* GPipe on P ranks, whole backwards; shard 1 of rank 0 stops after `stop_after` forwards, by pp_fail or by
 * returning. */
static int g_stop_after = -1, g_stop_by_returning;

static void step_gpipe_shard_stops(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash *st[8];
    for (int mb = 0; mb < M; mb++) {
        if (r->tp == 1 && me == 0 && mb == g_stop_after) {
            if (g_stop_by_returning) return;
            pp_fail(r, "shard 1 gives up at micro-batch %d", mb);
        }
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &st[mb]);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, st[mb], dy);
        pp_stash_free(r, st[mb]);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
    }
    pp_optimizer_step(r);
}

/* A shard that fails mid-step: its partner, waiting in the sum of the forward the failed one never ran, stops
 * instead of hanging, and the run reports the failure, naming the shard. The same every time. */
Test(tensor, a_shard_that_fails_stops_its_partners_and_is_named) {
    for (int run = 0; run < 5; run++) {
        pp_run_config c = config("gpipe", 2, 2, 4);
        g_stop_after = 1, g_stop_by_returning = 0;
        pp_run_result res;
        cr_expect_eq(pp__run(&c, step_gpipe_shard_stops, &res), PP_ERR_STUDENT, "%s", res.error);
        const char *want = "rank 0, shard 1: the schedule stopped the run with pp_fail, saying:\n| shard 1 gives up at "
                           "micro-batch 1";
        cr_expect(strncmp(res.error, want, strlen(want)) == 0, "%s", res.error);
        pp__result_free(&res);
    }
}

/* Shards whose programs part ways (here one returns early, as a program that reads the time or races its own
 * threads might): the shard left waiting in a sum the other never joins fails, naming it (the third forward's
 * first sum: each forward of a one-block stage sums twice, once per half). */
Test(tensor, shards_whose_programs_part_ways_are_named) {
    pp_run_config c = config("gpipe", 2, 2, 4);
    g_stop_after = 2, g_stop_by_returning = 1;
    pp_run_result res;
    cr_expect_eq(pp__run(&c, step_gpipe_shard_stops, &res), PP_ERR_USAGE, "%s", res.error);
    cr_expect(strstr(res.error, "rank 0, shard 0: pp_stage_forward: shard 1 of this stage had returned from its step "
                                "where this one made its tensor-parallel sum 4 of the step") != NULL, "%s", res.error);
    cr_expect(strstr(res.error, "HINT: every shard of a stage runs the same program on the same data") != NULL, "%s",
              res.error);
    pp__result_free(&res);
}

/* A topology in a test configuration: the references keep full marks, each bubble held to the canonical order
 * replayed on the same links (shards kept in a node or spread, a pipeline across nodes or in one). */
Test(tensor, a_topology_keeps_full_marks_on_its_own_links) {
    static const struct { const char *lab; int P, M, v, T, D, G; const char *placement; } cases[] = {
        {"gpipe", 2, 4, 1, 2, 1, 2, "ptd"}, {"1f1b", 4, 8, 1, 2, 1, 4, ""},    {"dp1f1b", 2, 4, 1, 1, 2, 2, ""},
        {"zbh1", 4, 8, 1, 1, 1, 2, "pdt"},   {"interleaved", 2, 4, 2, 2, 1, 2, "pdt"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_test_config c = {.P = cases[i].P, .M = cases[i].M, .v = cases[i].v, .T = cases[i].T, .D = cases[i].D,
                            .node_size = cases[i].G, .steps = 2, .seed = 17, .time_limit_s = 30, .alpha = -1,
                            .beta = -1};
        snprintf(c.lab, sizeof c.lab, "%s", cases[i].lab);
        snprintf(c.placement, sizeof c.placement, "%s", cases[i].placement);
        pp_test_result r;
        test_grade_config("solutions", &c, &r);
        cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
    }
}

/* What --tp cannot run is refused before anything starts, with what to do. */
Test(tensor, what_tp_cannot_run_is_refused_with_the_reason) {
    char err[512];
    pp_run_config c = config("1f1b", 3, 2, 4);
    cr_expect_eq(pp__config_check(&c, err, sizeof err), -1);
    cr_expect(strstr(err, "--tp 3 cuts each block's attention by whole heads: use --heads H with H a multiple of it "
                          "that divides --width 64"), "%s", err);
    c = config("1f1b", 2, 2, 4);
    c.transport = "ucx";
    cr_expect_eq(pp__config_check(&c, err, sizeof err), -1);
    cr_expect(strstr(err, "--tp 2 runs on the threads, mpi and nccl transports, not on ucx"), "%s", err);
    c = config("tpgrid", 2, 2, 4);
    c.transport = "nccl";
    cr_expect_eq(pp__config_check(&c, err, sizeof err), -1);
    cr_expect(strstr(err, "runs on the threads and mpi transports, not on nccl: its placement is read from the "
                          "submission"), "%s", err);
    c = config("1f1b", 9, 2, 4);
    cr_expect_eq(pp__config_check(&c, err, sizeof err), -1);
    cr_expect(strstr(err, "--tp 9 is out of range"), "%s", err);
    c = config("1f1b", 2, 2, 4);
    c.node_size = 4, c.comm_latency = 1;
    cr_expect_eq(pp__config_check(&c, err, sizeof err), -1);
    cr_expect(strstr(err, "--comm-latency 1 and --node-size 4 both price a message"), "%s", err);
    c.comm_latency = 0, c.placement = "tpd";
    cr_expect_eq(pp__config_check(&c, err, sizeof err), 0, "%s", err);
    c.placement = "tdd";
    cr_expect_eq(pp__config_check(&c, err, sizeof err), -1);
    cr_expect(strstr(err, "--placement tdd: name the axes t (shard), d (replica) and p (stage) once each"), "%s", err);
}

/* GPipe's canonical step, whole backwards, as a reference solution would run it. */
static void step_gpipe(pp_rank *r) {
    g_stop_after = -1;
    step_gpipe_shard_stops(r);
}

/* A shards' sum is a ring on the shards' link, 2(T-1) alpha + 2(T-1)/T bytes beta for the bytes of a block's
 * activation, made twice per block (once per half) in a forward and in a backward's input half, and charged inside
 * the op that makes it: a forward of k blocks lasts k (1 + 2 sum), a whole backward k (2 + 2 sum). Free links make
 * the run's clock the one without shards. */
Test(tensor, a_shards_sum_is_charged_in_the_op_that_makes_it) {
    for (int T = 2; T <= 4; T *= 2) {
        pp_run_config c = config("gpipe", T, 2, 2);
        c.layers = 4, c.tp_alpha = 0.25, c.tp_beta = 1e-5;
        double bytes = (double)c.mb_size * c.seq * c.hidden * 4, sum = 2.0 * (T - 1) * 0.25 + 2.0 * (T - 1) / T * bytes * 1e-5;
        pp_run_result res;
        cr_assert_eq(pp__run(&c, step_gpipe, &res), PP_OK, "%s", res.error);
        int seen = 0;
        for (int q = 0; q < res.P; q++)
            for (int i = 0; i < res.traces[q].n; i++) {
                const pp_event *e = &res.traces[q].ev[i];
                if (e->op != PP_OP_F && e->op != PP_OP_B) continue;
                double want = e->op == PP_OP_F ? 2 * (1 + 2 * sum) : 2 * (2 + 2 * sum);
                cr_expect(fabs(e->vend - e->vstart - want) < 1e-9, "T=%d rank %d %s mb%d lasts %.6f, expected %.6f",
                          T, q, e->op == PP_OP_F ? "F" : "B", e->mb, e->vend - e->vstart, want);
                seen++;
            }
        cr_expect_eq(seen, 2 * 2 * 2, "T=%d: %d compute ops", T, seen);
        pp__result_free(&res);
        c.tp_alpha = c.tp_beta = 0;
        pp_run_result free_links, plain;
        cr_assert_eq(pp__run(&c, step_gpipe, &free_links), PP_OK, "%s", free_links.error);
        c.T = 1;
        cr_assert_eq(pp__run(&c, step_gpipe, &plain), PP_OK, "%s", plain.error);
        cr_expect_eq(free_links.makespan, plain.makespan, "T=%d over free links: %g, without shards %g", T,
                     free_links.makespan, plain.makespan);
        pp__result_free(&free_links);
        pp__result_free(&plain);
    }
}

/* Nodes of two ranks, a stage's two shards and two stages: Megatron-LM's placement (tdp) keeps each stage's shards
 * in a node and sends the activations between nodes; pdt's reverse (ptd) keeps the pipeline in a node and spreads
 * the shards. GPipe on two stages of one block and two micro-batches ends at 3F + 2m + 3B: F = 1 + 2s and B = 2 + 2s
 * with s a shards' sum (two per block, one per half), m a message. Both placements measure their formula, on each one's links, and the shards'
 * sums crossing the network make the longer step, though a message crosses it in the other. */
Test(tensor, a_placement_that_spreads_the_shards_pays_their_sums_on_the_network) {
    double bytes = 4.0 * 16 * 64 * 4; /* the default micro-batch: 4 samples x 16 tokens x width 64, floats */
    double nvlink = 2 * PP_TP_ALPHA_DEFAULT + bytes * PP_TP_BETA_DEFAULT, port_ring = 2 * PP_REDUCE_ALPHA_DEFAULT +
                    bytes * PP_REDUCE_BETA_DEFAULT; /* a ring of two: 2(T-1) alpha + 2(T-1)/T bytes beta */
    double step[2];
    const char *placements[] = {"tdp", "ptd"};
    for (int i = 0; i < 2; i++) {
        pp_run_config c = config("gpipe", 2, 2, 2);
        c.node_size = 2, c.placement = placements[i];
        double s = 2 * (i == 0 ? nvlink : port_ring),
               m = i == 0 ? PP_REDUCE_ALPHA_DEFAULT + bytes * PP_REDUCE_BETA_DEFAULT
                          : PP_TP_ALPHA_DEFAULT + bytes * PP_TP_BETA_DEFAULT;
        pp_run_result res;
        cr_assert_eq(pp__run(&c, step_gpipe, &res), PP_OK, "%s", res.error);
        step[i] = res.step_time;
        /* each op records its sums' share and the link they took, for the trace and the timeline */
        for (int q = 0; q < res.P; q++)
            for (int k = 0; k < res.traces[q].n; k++) {
                const pp_event *e = &res.traces[q].ev[k];
                if (!pp__op_is_compute(e->op)) continue;
                cr_expect(fabs(e->tp_time - s) < 1e-12 && e->tp_across == i, "%s rank %d op %d: sums %.6f over %s, "
                          "expected %.6f over %s", placements[i], q, k, e->tp_time, e->tp_across ? "nodes" : "a node",
                          s, i ? "nodes" : "a node");
            }
        cr_expect(fabs(res.step_time - (3 * (1 + s) + 2 * m + 3 * (2 + s))) < 1e-9, "%s: a step of %.6f, the formula "
                  "%.6f", placements[i], res.step_time, 3 * (1 + s) + 2 * m + 3 * (2 + s)); /* s: both sums of an op */
        pp__result_free(&res);
    }
    cr_expect_gt(step[1], step[0], "the shards spread over nodes: %.4f, kept in one: %.4f", step[1], step[0]);
}

/* The canonical replay's timeline carries the shards' sums as the live one does: each F and each backward's
 * input half the sums of its blocks, on the link the placement gives them, none in a weight half. */
Test(tensor, the_ideal_timeline_carries_the_shards_sums) {
    pp_run_config c = config("zbh1", 4, 4, 8);
    c.node_size = 4, c.placement = "pdt";
    pp_schedule s;
    pp_costs k;
    cr_assert_eq(pp__schedule_build(&s, c.schedule->name, c.P, c.M, c.v), 0);
    pp__costs_from_config(&k, &c);
    pp_trace t[4] = {0};
    cr_assert_gt(pp__schedule_trace(&s, &k, t), 0);
    int seen[3] = {0};
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < t[r].n; i++) {
            const pp_event *e = &t[r].ev[i];
            double want = e->op == PP_OP_W ? 0 : pp__config_tp_sums_cost_of(&c, r, e->vstage);
            cr_expect(fabs(e->tp_time - want) < 1e-12, "rank %d op %d: %g, want %g", r, e->op, e->tp_time, want);
            cr_expect_eq(e->tp_across, e->op != PP_OP_W, "pdt on nodes of 4 spreads every stage's shards");
            seen[e->op == PP_OP_F ? 0 : e->op == PP_OP_B ? 1 : 2]++;
        }
    cr_expect(seen[0] && seen[1] && seen[2], "F %d, B %d, W %d", seen[0], seen[1], seen[2]);
    for (int r = 0; r < 4; r++) pp__trace_clear(&t[r]);
    pp__costs_free(&k);
    pp__schedule_free(&s);
}
