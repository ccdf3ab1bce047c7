/* test_mpi.c: the mpi transport end to end. Each test runs `mpirun -np P <build>/pplab run ...` as a subprocess
 * and the same run on the threads transport, and expects the same printed lines (plus rank 0's transport line),
 * the same virtual trace and bitwise-equal gradients: every rank computes the same stage on the same inputs,
 * so any difference is a transport bug, not noise. Also: a deadlocking order ends at its deadline with the report
 * threads give (its cycle and hint) instead of hanging, and a wrong process count is refused with the command to
 * use. And
 * `pplab grade --transport mpi` (one mpirun per test) gives the threads grades: the same points and messages for
 * the solutions and for broken implementations. Skipped, with the reason, where mpirun is missing or pplab was
 * built without MPI. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "impl_build.h"
#include "runner.h"
#include "mpiutil.h"
#include "rpc.h"
#include "testutil.h"

/* A recomputation config (two mpiruns: with and without), a 1f1b one, an interleaved one. */
const char *grade_configs = "gpipe P=4 M=8 seed=20 recompute=1\n"
                            "1f1b P=4 M=8 steps=3 seed=35\n"
                            "interleaved P=4 M=8 v=2 seed=54\n";
/* For the broken implementations, one mpirun per lab is enough to compare the verdicts. */
static const char *broken_configs = "gpipe P=2 M=4 seed=12\n"
                                    "1f1b P=4 M=8 steps=3 seed=35 time=8\n"; /* deadline: 40% of 8 s */

Test(mpi, gpipe_p2_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(2, "--impl solutions --schedule gpipe --stages 2 --microbatches 4 --steps 2");
}

/* Open MPI's keepalive gives a lost node up intvl x probes seconds after it is lost, at the soonest; pplab's report
 * of a lost rank must come before that, after 2 s of silence at least, so keepalives shorter than 3 s are said
 * once, by rank 0, and the run goes on. */
Test(mpi, keepalives_too_short_for_a_report_are_said_once, .timeout = 120) {
    need_mpi();
    char cmd[4 * PATH_MAX], out[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && OMPI_MCA_oob_tcp_keepalive_intvl=1 OMPI_MCA_oob_tcp_keepalive_probes=2 "
             MPIRUN " -np 2 '%s/pplab' run --impl solutions --schedule gpipe --stages 2 --microbatches 2 2>&1",
             g_root, g_build);
    int rc = test_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "the run failed:\n%s", out);
    const char *want = "pplab run: Open MPI's keepalive (oob_tcp_keepalive_intvl x oob_tcp_keepalive_probes = 2 s) "
                       "gives a lost node up before pplab can report it (after 2 s of silence): make that product 3 s "
                       "or more\n";
    const char *at = strstr(out, want);
    cr_expect(at && !strstr(at + 1, want), "the warning should be said once:\n%s", out);
}

Test(mpi, gpipe_p4_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule gpipe --stages 4 --microbatches 6");
}

Test(mpi, onef1b_p2_eager_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(2, "--impl solutions --schedule 1f1b --stages 2 --microbatches 3 --eager");
}

Test(mpi, onef1b_p4_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule 1f1b --stages 4 --microbatches 8");
}

/* Breadth-first with M not a multiple of P. */
Test(mpi, loopedbfs_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule loopedbfs --stages 4 --chunks 2 --microbatches 6");
}

/* Zero bubble on the loop: split backwards, weight halves held back, one round of six micro-batches. */
Test(mpi, interleaved_zero_bubble_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule zbinterleaved --stages 4 --chunks 2 --microbatches 6");
}

/* Interleaved in one round of three micro-batches, which P = 2 does not divide. */
Test(mpi, interleaved_p2_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(2, "--impl solutions --schedule interleaved --stages 2 --chunks 3 --microbatches 3");
}

Test(mpi, interleaved_p4_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule interleaved --stages 4 --chunks 2 --microbatches 8");
}

/* D replicas as D*P processes: the gradient reduce on one communicator per stage sums in replica order, so the
 * gradients, the trace (the reduce's lane included) and the figures are the threads run's. */
Test(mpi, dp1f1b_d2_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule dp1f1b --stages 2 --microbatches 4 --dp 2 --steps 2");
}

Test(mpi, dpinterleaved_d2_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule dpinterleaved --stages 2 --chunks 2 --microbatches 4 --dp 2");
}

/* The V placement across processes: rank 3's turn stays local, the others' messages cross as with threads. */
Test(mpi, zbv_p4_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule zbv --stages 4 --microbatches 8");
}

/* Full DualPipe across processes: a stage's two copies, on ranks r and P-1-r, meet in a reduce group of their own
 * (MPI_Comm_split by pair), summed in the order threads sum them, so the weights agree bit for bit. */
Test(mpi, dualpipe_p4_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule dualpipe --stages 4 --microbatches 8 --steps 2");
}

/* A stage's shards as processes (--tp): their sums meet on a communicator per stage, added in shard order as the
 * threads add them, so gradients and traces are the threads run's bit for bit: the grids (T, P, D) = (2, 1, 1),
 * (2, 2, 1), (2, 2, 2) and (4, 2, 1), the lab's own blocks and the library's, a recomputed forward's sums too. */
Test(mpi, shards_t2_p1_match_threads, .timeout = 120) {
    need_mpi();
    compare_transports(2, "--impl solutions --schedule tpblock --tp 2 --stages 1 --microbatches 2");
}

Test(mpi, shards_t2_p2_match_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule tpblock --tp 2 --stages 2 --microbatches 4 --steps 2");
}

Test(mpi, shards_t2_p2_d2_match_threads, .timeout = 120) {
    need_mpi();
    compare_transports(8, "--impl solutions --schedule dp1f1b --tp 2 --stages 2 --dp 2 --microbatches 4");
}

Test(mpi, shards_t4_p2_match_threads, .timeout = 120) {
    need_mpi();
    compare_transports(8, "--impl solutions --schedule tpblock --tp 4 --stages 2 --microbatches 4");
}

/* Lab 08's grid as eight processes: rank 0's driver gives the mapping, every process is placed by it, and the run
 * is the threads run's on the same links. */
Test(mpi, the_grid_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(8, "--impl solutions --schedule tpgrid --tp 2 --stages 2 --dp 2 --microbatches 4 --node-size 2");
}

Test(mpi, shards_recomputed_match_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule 1f1b --tp 2 --stages 2 --microbatches 4 --recompute");
}

/* On a corpus: every process reads the same windows of the same file, so the run is the threads run's bit for bit
 * (with two replicas too, whose micro-batches are the global batch's). */
Test(mpi, a_corpus_run_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(2, "--impl solutions --schedule 1f1b --stages 2 --microbatches 4 --steps 2 --seq 32 "
                          "--corpus data/shakespeare.txt");
}

Test(mpi, a_corpus_run_of_two_replicas_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule dp1f1b --dp 2 --stages 2 --microbatches 4 --seq 32 "
                          "--corpus data/shakespeare.txt");
}

/* The lines of a `pplab train` output that do not depend on the clock: each step's without its time, the sample
 * and the lines after it; the header and the summary, which say wall times and the transport, left out. */
static char *train_figures(const char *out) {
    char *s = strdup(out), *o = s;
    int sample = 0;
    for (const char *line = out; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        sample |= !strncmp(line, "sample (", 8);
        if (!strncmp(line, "step ", 5)) {
            const char *ms = line + n;
            while (ms > line && ms[-1] != ' ') ms--; /* "ms" */
            for (ms--; ms > line && ms[-1] != ' '; ms--) continue; /* its figure */
            n = (size_t)(ms - line);
        }
        if (sample || !strncmp(line, "step ", 5)) memcpy(o, line, n), o += n, *o++ = '\n';
        line = nl ? nl + 1 : line + n;
    }
    *o = 0;
    return s;
}

/* pplab train under mpirun -np P: the weights each step's validation and the sample read come from every process,
 * and are the threads run's bit for bit: the same losses, the same validation losses, the same text. */
Test(mpi, training_matches_threads, .timeout = 120) {
    need_mpi();
    static const char *args = "--impl solutions --schedule interleaved --stages 2 --layers 4 --width 32 --seq 32 "
                              "--steps 4 --sample 60";
    char cmd[4 * PATH_MAX], *out[2];
    for (int mpi = 0; mpi < 2; mpi++) {
        snprintf(cmd, sizeof cmd, "cd '%s' && timeout %d %s'%s/pplab' train %s > '%s/train%d.out' 2>&1", g_root,
                 g_run_limit, mpi ? MPIRUN " -np 2 " : "", g_build, args, g_tmp, mpi);
        int rc = timed_system(cmd, NULL);
        char name[32];
        snprintf(name, sizeof name, "train%d", mpi);
        out[mpi] = out_of(name, "out");
        cr_assert_eq(rc, 0, "%s: exit %d:\n%s", cmd, rc, out[mpi]);
    }
    cr_expect(strstr(out[1], "\ntransport: mpi (2 processes)\n"), "%s", out[1]);
    char *t = train_figures(out[0]), *m = train_figures(out[1]);
    cr_expect(strstr(t, "step 4/4  loss ") && strstr(t, "sample (60 bytes"), "%s", out[0]);
    cr_expect_str_eq(m, t, "mpi printed\n%s\nthreads printed\n%s", m, t);
    free(t), free(m), free(out[0]), free(out[1]);
    tmp_remove();
}

/* Rank 1 sends its first gradient back while rank 0 sends the next forward: both block in a rendezvous send.
 * The run must end at the 1 s deadline (plus start-up) with the report threads give, not hang. */
Test(mpi, deadlock_reported_at_deadline, .timeout = 90) {
    need_mpi();
    double secs = 0;
    int rc = pplab_run("dead", 2,
                       "--impl tests/broken/mpi-deadlock --schedule gpipe --stages 2 --microbatches 4 --deadline 1",
                       &secs);
    char *err = out_of("dead", "err"), *out = out_of("dead", "out");
    cr_expect_neq(rc, 0, "a deadlocked run must exit non-zero");
    cr_expect(secs < 30, "the deadlock took %.1f s to report with --deadline 1", secs);
    cr_expect(strstr(err, "deadlock"), "stderr should name the deadlock: %s", err);
    cr_expect(strstr(err, "deadlock: every rank is blocked and no posted operation can match\n"
                          "  rank 0 blocked in pp_send(dst=1, tag F mb1 vs1)\n"
                          "  rank 1 blocked in pp_send(dst=0, tag B mb0 vs0)\n"
                          "  cycle: rank 0 -> rank 1 -> rank 0\n"
                          "HINT: two neighbours both blocked in a send"), "not the report threads give: %s", err);
    cr_expect_str_eq(out, "", "a failed run prints nothing on stdout, got: %s", out);
    /* rank 0 alone reports: one copy of the message */
    const char *first = strstr(err, "rank 1 blocked in");
    cr_expect(first && !strstr(first + 1, "rank 1 blocked in"), "the report should appear once: %s", err);
    free(err), free(out);
    tmp_remove();
}

/* A rank busy for six deadlines while its neighbours wait is slow, not deadlocked: the run succeeds. */
Test(mpi, a_slow_rank_is_no_deadlock, .timeout = 90) {
    need_mpi();
    int rc = pplab_run("slow", 3,
                       "--impl tests/valid/slow-rank --schedule gpipe --stages 3 --microbatches 4 --deadline 0.1",
                       NULL);
    char *err = out_of("slow", "err");
    cr_expect_eq(rc, 0, "a run whose rank 0 computes for 0.6 s failed (exit %d): %s", rc, err);
    cr_expect(!strstr(err, "deadlock"), "a slow rank was called a deadlock: %s", err);
    free(err);
    tmp_remove();
}

Test(mpi, process_count_must_match_stages, .timeout = 60) {
    need_mpi();
    int rc = pplab_run("np", 3, "--impl solutions --schedule gpipe --stages 4 --microbatches 4", NULL);
    char *err = out_of("np", "err");
    cr_expect_neq(rc, 0, "-np 3 with --stages 4 must fail");
    cr_expect(strstr(err, "pplab run: mpirun started 3 processes but --stages is 4: use mpirun -np 4"),
              "unexpected message: %s", err);
    free(err);
    tmp_remove();
}

Test(mpi_grade, solutions_full_marks_as_with_threads, .timeout = 240) {
    need_mpi();
    cJSON *m = compare_grades("solutions", "all", 0);
    cr_expect_eq(num_of(m, "score"), num_of(m, "max_score"), "solutions should score full marks under mpi");
    /* the recomputation check compares against the second mpirun, without recomputation */
    const cJSON *rec = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "tests"), 0), "checks");
    const char *msg = str_of(cJSON_GetArrayItem(rec, cJSON_GetArraySize(rec) - 1), "message");
    cr_expect(strstr(msg, "with recomputation") && strstr(msg, "KiB without"), "recomputation check: %s", msg);
    cJSON_Delete(m);
    tmp_remove();
}

Test(mpi_grade, missing_loss_scaling_loses_the_same_points, .timeout = 240) {
    need_mpi();
    grade_configs = broken_configs;
    cJSON *m = compare_grades("tests/broken/no-scale", "gpipe", 1);
    cr_expect_eq(num_of(m, "score"), 0, "no-scale should score 0 on gpipe, got %g", num_of(m, "score"));
    cJSON_Delete(m);
    tmp_remove();
}

/* The deadlock is found the moment no rank can move with threads and by deadline under mpi: the same points and
 * the same report (compare_grades), naming each rank's blocked send and the cycle, well inside the time limit. */
Test(mpi_grade, blocking_1f1b_deadlock_reported_as_with_threads, .timeout = 240) {
    need_mpi();
    grade_configs = broken_configs;
    cJSON *m = compare_grades("tests/broken/blocking-1f1b", "1f1b", 1);
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "tests"), 0);
    cr_assert(t, "no 1f1b test in the report");
    const char *err = str_of(t, "error");
    cr_expect(strstr(err, "deadlock: every rank is blocked") && strstr(err, "rank 0 blocked in pp_send(") &&
                  strstr(err, "  cycle: "), "the 1f1b test should fail with the deadlock report, got: %s", err);
    cr_expect(!cJSON_IsTrue(cJSON_GetObjectItem(t, "timed_out")), "the deadlock should not hit the time limit");
    /* inside the limit with room to spare on a loaded machine: mpirun's own start-up is about a second */
    cr_expect(num_of(t, "seconds") < 8, "the deadlock took %.1f s to report (limit 8 s)", num_of(t, "seconds"));
    cJSON_Delete(m);
    tmp_remove();
}

Test(mpi_grade, segfault_is_a_reported_crash, .timeout = 240) {
    need_mpi();
    grade_configs = broken_configs;
    cJSON *m = compare_grades("tests/broken/segfault", "gpipe", 1);
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "tests"), 0);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(t, "crashed")), "a segfaulting rank should be reported as a crash");
    cr_expect(strstr(str_of(t, "output"), "crashed with SIGSEGV"), "the rank's crash report should be captured: %s",
              str_of(t, "output"));
    cJSON_Delete(m);
    tmp_remove();
}

/* Under mpirun every rank is a trusted process serving its own sandboxed driver: a schedule that reaches for
 * the grader's files is stopped at its first forbidden call, as with threads, and rank 0 scores nothing. */
/* Code past every build check (an object compiled here without them) meets the same filters under MPI: each
 * rank's process serves its own jailed driver. */
Test(mpi_grade, forbidden_calls_are_stopped_as_with_threads, .timeout = 240) {
    need_mpi();
    pp_impl impl;
    test_hostile_object("open-file", &impl);
    char exe[PATH_MAX + 16];
    snprintf(exe, sizeof exe, "%s/pplab", g_build);
    pp_test_config c = {.lab = "gpipe", .P = 2, .M = 2, .v = 1, .steps = 1, .seed = 1, .time_limit_s = 20};
    pp_test_result with_threads, with_mpi;
    pp__runner_test(&c, &impl, PP_OK, NULL, "cpu", &with_threads);
    cr_assert_eq(pp__runopts_set_transport("mpi", exe), 0);
    pp__runner_test(&c, &impl, PP_OK, NULL, "cpu", &with_mpi);
    test_expect_failed_run(&with_threads, PP_ERR_SANDBOX, "the schedule called open(), which a schedule never needs");
    test_expect_failed_run(&with_mpi, PP_ERR_SANDBOX, "the schedule called open(), which a schedule never needs");
    tmp_remove();
}

/* The grid lab's mapping, asked by rank 0 before MPI starts, is the submission's time: a mapping that sleeps is a
 * time-out scored 0 within the test's limit (never the launcher's "did not start", which a CI job reads as the
 * kit's failure), and a start-up request it sends is refused as its own, as with threads. */
Test(mpi_grade, the_grid_mapping_is_the_submissions_time, .timeout = 240) {
    need_mpi();
    char exe[PATH_MAX + 16], addr[64], flags[256];
    snprintf(exe, sizeof exe, "%s/pplab", g_build);
    pp_test_config c = {.lab = "tpgrid", .P = 2, .M = 2, .v = 1, .T = 2, .D = 1, .steps = 1, .seed = 1,
                        .time_limit_s = 3};
    pp_impl sleeper, forger;
    test_hostile_object_with("forge-grid", "-DFORGE_IN=1 -DFORGE_OP=-1", &sleeper);
    test_driver_stop_addr(addr, sizeof addr);
    snprintf(flags, sizeof flags, "-DFORGE_IN=2 -DFORGE_ADDR=%s -DFORGE_OP=%d -DFORGE_CODE=%d -DFORGE_ARG=1L", addr,
             PP_RPC_SETUP_FAILED, PP_STOP_LOCKDOWN);
    cr_assert_eq(pp__runopts_set_transport("mpi", exe), 0);
    pp_test_result r;
    double t0 = pp__now();
    pp__runner_test(&c, &sleeper, PP_OK, NULL, "cpu", &r);
    double took = pp__now() - t0;
    test_expect_failed_run(&r, PP_ERR_TIMEOUT, "no result after 3 s");
    cr_expect(took < 25, "the sleeping mapping was ended after %.1f s, past its 3 s", took);
    test_hostile_object_with("forge-grid", flags, &forger); /* the same object file as the sleeper's: made after */
    pp__runner_test(&c, &forger, PP_OK, NULL, "cpu", &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "refused: the schedule's code sent a request");
    cr_expect(!strstr(r.error, "lock itself down"), "%s", r.error);
    tmp_remove();
}

/* Several ranks fail, each in its own process: the report leads with the same failure and the same rank as with
 * threads (the earliest on the virtual clock, the lowest rank on a tie), and names the ranks that only waited as
 * stopped, on every run. */
Test(mpi_grade, several_failures_lead_as_with_threads, .timeout = 240) {
    need_mpi();
    /* one configuration per grading: two mpiruns at once can race on Open MPI's session folder */
    static const char *const configs[] = {"zbv P=4 M=8 seed=93\n", "zbv P=4 M=4 seed=94\n"};
    static const char *const variants[] = {"tests/broken/zbv-loss-wrong-rank", "tests/broken/zbv-looped-placement"};
    for (size_t v = 0; v < 2 * sizeof variants / sizeof *variants; v++) {
        grade_configs = configs[v % 2];
        cJSON *m = compare_grades(variants[v / 2], "zbv", 1), *t = json_of("threads");
        for (int i = 0; i < cJSON_GetArraySize(cJSON_GetObjectItem(m, "tests")); i++) {
            const char *em = str_of(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "tests"), i), "error"),
                       *et = str_of(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "tests"), i), "error");
            const char *nm = strchr(em, '\n'), *nt = strchr(et, '\n');
            size_t lm = nm ? (size_t)(nm - em) : strlen(em), lt = nt ? (size_t)(nt - et) : strlen(et);
            cr_expect(lm == lt && !strncmp(em, et, lt), "%s: the cause differs\nmpi:     %s\nthreads: %s",
                      variants[v / 2], em, et);
        }
        cJSON_Delete(t);
        cJSON_Delete(m);
    }
    tmp_remove();
}

/* Lab 07 under mpirun -np D*P: the references keep full marks at D = 2 and 4, and a missing reduce loses the same
 * points with the same message as with threads (one configuration per grading, as above). */
Test(mpi_grade, replicas_grade_as_with_threads, .timeout = 240) {
    need_mpi();
    static const char *const configs[] = {"dp1f1b P=2 M=4 dp=2 seed=71\n", "dpinterleaved P=2 M=4 v=2 dp=4 seed=72\n"};
    static const char *const labs[] = {"dp1f1b", "dpinterleaved"};
    for (int i = 0; i < 2; i++) {
        grade_configs = configs[i];
        cJSON *m = compare_grades("solutions", labs[i], 0);
        cr_expect_eq(num_of(m, "score"), num_of(m, "max_score"), "%s: the references lost points under mpi", labs[i]);
        cJSON_Delete(m);
    }
    grade_configs = configs[0];
    cJSON_Delete(compare_grades("tests/broken/dp-no-reduce", "dp1f1b", 1));
    tmp_remove();
}

/* DualPipe's copies under mpirun -np P: the reference keeps full marks, and copies never summed or summed with the
 * wrong partner lose the same points with the same message as with threads. */
Test(mpi_grade, dualpipes_copies_grade_as_with_threads, .timeout = 240) {
    need_mpi();
    grade_configs = "dualpipe P=4 M=8 v=2 seed=73\n";
    cJSON *m = compare_grades("solutions", "dualpipe", 0);
    cr_expect_eq(num_of(m, "score"), num_of(m, "max_score"), "the reference lost points under mpi");
    cJSON_Delete(m);
    cJSON_Delete(compare_grades("tests/broken/dualpipe-no-copy-reduce", "dualpipe", 1));
    cJSON_Delete(compare_grades("tests/broken/dualpipe-reduce-chunk-order", "dualpipe", 1));
    tmp_remove();
}

/* A topology under mpirun: every message priced by its link (nodes of two, the pipeline's stages spread or side by
 * side) grades as with threads, reduces included. */
Test(mpi_grade, a_topology_grades_as_with_threads, .timeout = 240) {
    need_mpi();
    grade_configs = "dp1f1b P=2 M=4 dp=2 node-size=2 seed=74\n1f1b P=4 M=8 node-size=2 placement=pdt seed=75\n";
    cJSON *m = compare_grades("solutions", "all", 0);
    cr_expect_eq(num_of(m, "score"), num_of(m, "max_score"), "the references lost points under mpi");
    cJSON_Delete(m);
    tmp_remove();
}

/* Lab 08's blocks under mpirun -np T*P: the reference keeps full marks, and every broken block (a mistake of
 * either half) loses the same points with the same diagnosis (the notes gathered from every shard's process), a
 * shard that fails or returns early is reported as with threads, and shards whose whole parameters part ways are
 * named from their weights' fingerprints. */
Test(mpi_grade, shards_grade_as_with_threads, .timeout = 900) {
    need_mpi();
    grade_configs = "tpblock P=2 M=4 tp=2 seed=76\ntpblock P=4 M=8 tp=2 seed=77\n";
    cJSON *m = compare_grades("solutions", "tpblock", 0);
    cr_expect_eq(num_of(m, "score"), num_of(m, "max_score"), "the reference lost points under mpi");
    cJSON_Delete(m);
    static const char *const broken[] = {"tp-sum-after-w1", "tp-bias-before-sum", "tp-no-backward-sum",
                                         "tp-forward-twice", "tp-b2-grad-one-shard", "tp-shard-fails",
                                         "tp-shard-returns", "tp-sum-attention", "tp-attn-no-backward-sum"};
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        char impl[96];
        snprintf(impl, sizeof impl, "tests/broken/%s", broken[i]);
        cJSON_Delete(compare_grades(impl, "tpblock", 1));
    }
    /* the grid: full marks, a mapping that spreads the shards loses the step, one that is no grid is refused */
    grade_configs = "tpgrid P=2 M=4 tp=2 dp=2 node-size=4 seed=78\ntpgrid P=2 M=4 tp=2 node-size=2 seed=79\n";
    m = compare_grades("solutions", "tpgrid", 0);
    cr_expect_eq(num_of(m, "score"), num_of(m, "max_score"), "the grid's reference lost points under mpi");
    cJSON_Delete(m);
    cJSON_Delete(compare_grades("tests/broken/tpgrid-stages-fastest", "tpgrid", 1));
    cJSON_Delete(compare_grades("tests/broken/tpgrid-group-unordered", "tpgrid", 1));
    tmp_remove();
}

/* NCCL across processes, the CPU half, on one machine: eight processes, two GPUs (a stand-in for NCCL): GPU = node
 * rank % 2, one communicator per stage's group of four replicas. A member that cannot join fails its whole
 * group, which names it. */
Test(mpi, nccl_groups_agree_on_ids_and_devices, .timeout = 60) {
    need_mpi();
    expect_nccl_groups(2, 4, 2, 8);
    char cmd[4 * PATH_MAX], out[1 << 14];
    snprintf(cmd, sizeof cmd, "env PPLAB_TEST_NCCL_REFUSE=5 " MPIRUN " -x PPLAB_TEST_NCCL_REFUSE -np 8 "
             "'%s/tests/helpers/nccl_groups_check' 2 4 2 2>&1 | sort -n -k2", g_build);
    test_capture(cmd, out, sizeof out);
    for (int r = 1; r < 8; r += 2) {
        char want[128];
        snprintf(want, sizeof want, "rank %d error: NCCL for the gradient reduce: replica 2 of the group: the stand-in "
                 "refused world rank 5", r);
        cr_expect(strstr(out, want), "stage 1's group should fail naming replica 2:\n%s", out);
    }
    cr_expect(strstr(out, "rank 0 stage 0") && strstr(out, "rank 6 stage 0"), "stage 0's group should join:\n%s", out);
    tmp_remove();
}

/* ---- lab 07 under mpirun: every variant, as with threads ------------------------------------------------ */

/* `pplab grade --impl impl --lab lab --transport transport` over the lab's default set, each test's time limit
 * capped at limit seconds (a deadlock's deadline is 40% of it), its JSON report parsed. */
static cJSON *grade_once(const char *impl, const char *lab, const char *transport, int limit) {
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && env ASAN_OPTIONS=detect_leaks=0 timeout 300 '%s/pplab' grade --impl %s --lab %s --transport "
             "%s --time-limit %d --quiet --json '%s/%s.json' > '%s/%s.out' 2>&1",
             g_root, g_build, impl, lab, transport, limit, g_tmp, transport, g_tmp, transport);
    int rc = system(cmd);
    cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) <= 1, "grading %s (%s) with %s exited %d:\n%s", impl, lab, transport,
              WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out_of(transport, "out"));
    return json_of(transport);
}

static int any_timed_out(const cJSON *report) {
    const cJSON *tests = cJSON_GetObjectItem(report, "tests");
    for (int i = 0; i < cJSON_GetArraySize(tests); i++)
        if (cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(tests, i), "timed_out"))) return 1;
    return 0;
}

/* The report of grading impl's lab with transport. A limit short enough to keep deadlines quick can be outrun by
 * a loaded machine (CI runs suites side by side), and a test out of time reports that instead of its mistake: a
 * grading with a test out of time is graded again with 30 s, so that only a run that never ends reports a
 * timeout. */
static cJSON *grade_default(const char *impl, const char *lab, const char *transport, int limit) {
    cJSON *r = grade_once(impl, lab, transport, limit);
    if (!r || !any_timed_out(r) || limit >= 30) return r;
    cJSON_Delete(r);
    return grade_once(impl, lab, transport, 30);
}

/* A grade that rests on the kit's own failure is no grade: no test may say so. */
static void expect_no_harness_failure(const cJSON *report, const char *what) {
    const cJSON *tests = cJSON_GetObjectItem(report, "tests");
    for (int i = 0; i < cJSON_GetArraySize(tests); i++) {
        const cJSON *t = cJSON_GetArrayItem(tests, i);
        const char *err = str_of(t, "error");
        cr_expect(!strstr(err, "a bug in pplab") && !strstr(err, "ended without a report") &&
                      !strstr(err, "mpirun ended") && !strstr(err, "MPI_ERR"),
                  "%s, %s: the kit failed, not the submission: %s", what, str_of(t, "name"), err);
    }
}

/* A test's first diagnosis: its run's error up to the first line's end, else its first failed check's message. */
static void first_diagnosis(const cJSON *test, char *out, size_t len) {
    const char *err = str_of(test, "error");
    if (*err) {
        snprintf(out, len, "%.*s", (int)strcspn(err, "\n"), err);
        return;
    }
    const cJSON *checks = cJSON_GetObjectItem(test, "checks");
    for (int k = 0; k < cJSON_GetArraySize(checks); k++) {
        const cJSON *c = cJSON_GetArrayItem(checks, k);
        if (!cJSON_IsTrue(cJSON_GetObjectItem(c, "passed"))) {
            snprintf(out, len, "%s: %s", str_of(c, "name"), str_of(c, "message"));
            return;
        }
    }
    snprintf(out, len, "(full marks)");
}

/* Every lab 07 file of every broken and valid variant: the same score, first diagnosis and whole report per test
 * under mpirun -np D*P as with threads, deadlocks in reduces included. A variant added to either folder is held
 * to this by its file alone. */
Test(mpi_grade, every_lab07_variant_grades_as_with_threads, .timeout = 1500) {
    need_mpi();
    static const char *const roots[] = {"tests/broken", "tests/valid"};
    int graded = 0;
    for (int k = 0; k < 2; k++) {
        char top[PATH_MAX + 32];
        snprintf(top, sizeof top, "%s/%s", g_root, roots[k]);
        DIR *d = opendir(top);
        cr_assert(d, "%s is missing", top);
        struct dirent *e;
        while ((e = readdir(d))) {
            for (int l = 0; e->d_name[0] != '.' && l < pp__nlabs; l++) {
                if (strcmp(pp__labs[l].folder, "07-hybrid")) continue;
                char rel[PATH_MAX], impl[PATH_MAX];
                snprintf(impl, sizeof impl, "%s/%s", roots[k], e->d_name);
                snprintf(rel, sizeof rel, "%s/%s/%s.c", impl, pp__labs[l].folder, pp__labs[l].file);
                if (!solution_exists(rel)) continue;
                cJSON *t = grade_default(impl, pp__labs[l].name, "threads", 4);
                cJSON *m = grade_default(impl, pp__labs[l].name, "mpi", 4);
                expect_no_harness_failure(t, rel);
                expect_no_harness_failure(m, rel);
                const cJSON *tt = cJSON_GetObjectItem(t, "tests"), *mt = cJSON_GetObjectItem(m, "tests");
                cr_assert_eq(cJSON_GetArraySize(mt), cJSON_GetArraySize(tt), "%s: not the same tests", rel);
                for (int i = 0; i < cJSON_GetArraySize(tt); i++) {
                    const cJSON *a = cJSON_GetArrayItem(tt, i), *b = cJSON_GetArrayItem(mt, i);
                    char da[1024], db[1024];
                    first_diagnosis(a, da, sizeof da);
                    first_diagnosis(b, db, sizeof db);
                    cr_expect_eq(num_of(b, "score"), num_of(a, "score"), "%s, %s: mpi %g points (%s), threads %g (%s)",
                                 rel, str_of(a, "name"), num_of(b, "score"), db, num_of(a, "score"), da);
                    cr_expect_str_eq(str_of(b, "error"), str_of(a, "error"), "%s, %s: the reports differ", rel,
                                     str_of(a, "name"));
                    cr_expect_str_eq(db, da, "%s, %s: the first diagnosis differs", rel, str_of(a, "name"));
                }
                cJSON_Delete(t);
                cJSON_Delete(m);
                graded++;
            }
        }
        closedir(d);
    }
    cr_expect_geq(graded, 20, "only %d lab 07 variants found", graded);
    tmp_remove();
}

/* Every deadlock of every broken variant, on every lab, is worded under mpirun as with threads: the blocked calls,
 * the cycle or chain, the near misses and the hint, made from the snapshot each process sends rank 0 (deadlock.h).
 * Only the labs whose threads grading finds a deadlock are graded again under mpirun (lab 07's are held whole by
 * the test above). A new deadlocking variant is held to this by its folder alone. */
Test(mpi_grade, every_deadlock_is_worded_as_with_threads, .timeout = 1500) {
    need_mpi();
    char top[PATH_MAX + 32];
    snprintf(top, sizeof top, "%s/tests/broken", g_root);
    DIR *d = opendir(top);
    cr_assert(d, "%s is missing", top);
    int compared = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        for (int l = 0; e->d_name[0] != '.' && l < pp__nlabs; l++) {
            char rel[PATH_MAX], impl[PATH_MAX];
            snprintf(impl, sizeof impl, "tests/broken/%s", e->d_name);
            snprintf(rel, sizeof rel, "%s/%s/%s.c", impl, pp__labs[l].folder, pp__labs[l].file);
            if (!strcmp(pp__labs[l].folder, "07-hybrid") || !solution_exists(rel)) continue;
            /* threads find a deadlock at once: a short limit only ends the endless loop sooner */
            cJSON *t = grade_once(impl, pp__labs[l].name, "threads", 3);
            const cJSON *tt = cJSON_GetObjectItem(t, "tests");
            int deadlocks = 0;
            for (int i = 0; i < cJSON_GetArraySize(tt); i++)
                deadlocks += !strncmp(str_of(cJSON_GetArrayItem(tt, i), "error"), "deadlock:", 9);
            if (deadlocks) {
                cJSON *m = grade_default(impl, pp__labs[l].name, "mpi", 4);
                expect_no_harness_failure(m, rel);
                const cJSON *mt = cJSON_GetObjectItem(m, "tests");
                cr_assert_eq(cJSON_GetArraySize(mt), cJSON_GetArraySize(tt), "%s: not the same tests", rel);
                for (int i = 0; i < cJSON_GetArraySize(tt); i++) {
                    const cJSON *a = cJSON_GetArrayItem(tt, i), *b = cJSON_GetArrayItem(mt, i);
                    if (strncmp(str_of(a, "error"), "deadlock:", 9)) continue;
                    cr_expect_str_eq(str_of(b, "error"), str_of(a, "error"), "%s, %s: the deadlock is worded "
                                     "differently under mpirun", rel, str_of(a, "name"));
                    compared++;
                }
                cJSON_Delete(m);
            }
            cJSON_Delete(t);
        }
    }
    closedir(d);
    cr_expect_geq(compared, 20, "only %d deadlocks compared", compared);
    tmp_remove();
}

/* A JSON report without what may differ between two runs: each test's wall seconds, the wall time a deadline's
 * report gives each blocked rank ("for 1.3 s"), and what follows from the time limit grade_default chose for
 * this grading (3 s, or 30 s after a test of it ran out of time on a loaded machine): the limit in each test's
 * config and the deadline a deadlock report names ("waited 1.2 s (the deadline)"). Whether a test ran out of
 * time stays in: a run that never ends does so at 30 s too. */
static char *report_without_times(cJSON *report) {
    const cJSON *tests = cJSON_GetObjectItem(report, "tests");
    for (int i = 0; i < cJSON_GetArraySize(tests); i++) {
        cJSON *t = cJSON_GetArrayItem(tests, i);
        cJSON_DeleteItemFromObject(t, "seconds");
        cJSON_DeleteItemFromObject(cJSON_GetObjectItem(t, "config"), "time");
    }
    char *s = cJSON_Print(report), *o = s;
    static const char *const before[] = {"for ", "waited "};
    for (const char *p = s; *p;) {
        int blanked = 0;
        for (int k = 0; k < 2 && !blanked; k++) {
            size_t n = strlen(before[k]);
            const char *q = p + n;
            if (strncmp(p, before[k], n) || *q < '0' || *q > '9') continue;
            while (*q >= '0' && *q <= '9') q++;
            if (q[0] == '.' && q[1] >= '0' && q[1] <= '9' && q[2] == ' ' && q[3] == 's') {
                memcpy(o, before[k], n), o += n;
                memcpy(o, "T s", 3), o += 3;
                p = q + 4, blanked = 1;
            }
        }
        if (!blanked) *o++ = *p++;
    }
    *o = 0;
    return s;
}

/* Two reports of one submission that should be the same: the first test they differ in, whole, from each run, so
 * that a log names the test, the check and both texts. */
static void expect_same_tests(const char *rel, int run, const char *first, const char *other) {
    cJSON *a = cJSON_Parse(first), *b = cJSON_Parse(other);
    const cJSON *ta = cJSON_GetObjectItem(a, "tests"), *tb = cJSON_GetObjectItem(b, "tests");
    int n = cJSON_GetArraySize(ta) > cJSON_GetArraySize(tb) ? cJSON_GetArraySize(ta) : cJSON_GetArraySize(tb), found = 0;
    for (int i = 0; i < n && !found; i++) {
        char *x = cJSON_PrintUnformatted(cJSON_GetArrayItem(ta, i)), *y = cJSON_PrintUnformatted(cJSON_GetArrayItem(tb, i));
        int same = x && y && !strcmp(x, y);
        found = !same;
        if (!same)
            cr_expect_fail("%s: mpi run %d differs from run 1 in test %d\n  run 1: %s\n  run %d: %s", rel, run, i + 1,
                           x ? x : "(none)", run, y ? y : "(none)");
        free(x);
        free(y);
    }
    if (!found) cr_expect_fail("%s: mpi run %d differs from run 1 outside its tests", rel, run);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* A reduce that cannot complete (members in different orders, one that never joins, a chunk twice, a step past a
 * reduce in flight, a send to another replica, reduces that wait on each other through the pipelines) is reported
 * the same way on every run under mpirun, wall times aside: the lead is the earliest failure on the virtual
 * clock, ties to the lowest (replica, rank), whichever process got there first. Threads are held to the same by
 * test_sweeps. The variants are those of lab 07 whose threads report names a reduce. */
Test(mpi_grade, reduce_failures_report_the_same_ten_times, .timeout = 2400) {
    need_mpi();
    char top[PATH_MAX + 32];
    snprintf(top, sizeof top, "%s/tests/broken", g_root);
    DIR *d = opendir(top);
    cr_assert(d, "%s is missing", top);
    struct dirent *e;
    int held = 0;
    while ((e = readdir(d))) {
        for (int l = 0; e->d_name[0] != '.' && l < pp__nlabs; l++) {
            if (strcmp(pp__labs[l].folder, "07-hybrid")) continue;
            char rel[PATH_MAX], impl[PATH_MAX];
            snprintf(impl, sizeof impl, "tests/broken/%s", e->d_name);
            snprintf(rel, sizeof rel, "%s/%s/%s.c", impl, pp__labs[l].folder, pp__labs[l].file);
            if (!solution_exists(rel)) continue;
            cJSON *t = grade_default(impl, pp__labs[l].name, "threads", 3);
            char *ts = cJSON_PrintUnformatted(t);
            int names_reduce = strstr(ts, "reduce(") || strstr(ts, "_reduce: ") || strstr(ts, "reduce: chunk");
            free(ts);
            cJSON_Delete(t);
            if (!names_reduce) continue;
            char *first = NULL;
            for (int run = 0; run < 10; run++) {
                cJSON *m = grade_default(impl, pp__labs[l].name, "mpi", 3);
                char *s = report_without_times(m);
                cJSON_Delete(m);
                if (!first) {
                    first = s;
                    continue;
                }
                if (strcmp(s, first)) {
                    expect_same_tests(rel, run + 1, first, s);
                    free(s);
                    break;
                }
                free(s);
            }
            free(first);
            held++;
        }
    }
    closedir(d);
    cr_expect_geq(held, 6, "only %d lab 07 variants fail in a reduce", held);
    tmp_remove();
}

/* Names in folder dir (a snapshot, one per line, sorted), for what a run leaves behind. */
static char *folder_names(const char *dir) {
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "ls -A '%s' 2>/dev/null | sort", dir);
    static char buf[1 << 16];
    test_capture(cmd, buf, sizeof buf);
    return strdup(buf);
}

/* A test that mpirun runs and the grader ends (a deadlock found at the deadline, a replica that returns early, an
 * endless loop killed at its limit) leaves nothing: no file in the grader's temporary folder (Open MPI's session
 * folder and shared-memory segments live in the test's own folder, removed whole), none in /dev/shm, and no
 * process. */
Test(mpi_grade, an_ended_test_leaves_nothing_behind, .timeout = 240) {
    need_mpi();
    static const char *const cases[][2] = {{"tests/broken/blocking-1f1b", "1f1b"},
                                           {"tests/broken/dp-reduce-one-replica", "dp1f1b"},
                                           {"tests/broken/endless-loop", "gpipe"}};
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s/tmpdir", g_tmp);
    cr_assert_eq(mkdir(tmp, 0700), 0, "cannot make %s", tmp);
    char *shm_before = folder_names("/dev/shm");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cmd[4 * PATH_MAX];
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && env TMPDIR='%s' ASAN_OPTIONS=detect_leaks=0 timeout 200 '%s/pplab' grade --impl %s --lab "
                 "%s --transport mpi --time-limit 3 --quiet > '%s/left.out' 2>&1",
                 g_root, tmp, g_build, cases[i][0], cases[i][1], g_tmp);
        int rc = system(cmd);
        cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "%s should lose points (exit %d):\n%s", cases[i][0],
                  WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out_of("left", "out"));
        char *left = folder_names(tmp), *shm = folder_names("/dev/shm");
        cr_expect_str_eq(left, "", "%s left files in the grader's temporary folder:\n%s", cases[i][0], left);
        /* a segment that appeared is left behind when no process maps it any more (another test's running
         * mpirun maps its own) */
        for (char *name = strtok(shm, "\n"); name; name = strtok(NULL, "\n")) {
            char line[300], mapped[64];
            snprintf(line, sizeof line, "\n%s\n", name);
            char *was = pp__xmalloc(strlen(shm_before) + 3);
            sprintf(was, "\n%s\n", shm_before);
            int old = strstr(was, line) != NULL;
            free(was);
            if (old) continue;
            snprintf(cmd, sizeof cmd, "grep -lsF '/dev/shm/%s' /proc/[0-9]*/maps | head -1", name);
            test_capture(cmd, mapped, sizeof mapped);
            cr_expect(mapped[0], "%s left /dev/shm/%s behind", cases[i][0], name);
        }
        free(left), free(shm);
        static char procs[8192];
        snprintf(cmd, sizeof cmd, "ps -eo args | grep -F '%s' | grep -v grep || true", tmp);
        test_capture(cmd, procs, sizeof procs);
        cr_expect_str_eq(procs, "", "%s left processes behind:\n%s", cases[i][0], procs);
    }
    free(shm_before);
    tmp_remove();
}

/* A grade that rests on the kit's failure is no grade: with an mpirun that ends without starting anything (a
 * broken MPI installation), every test says why, the summary says the score is none, and pplab grade exits 3,
 * not the 1 of a submission that lost points. */
Test(mpi_grade, a_test_the_kit_could_not_run_is_no_grade, .timeout = 120) {
    need_mpi();
    char fake[PATH_MAX + 32], cmd[4 * PATH_MAX];
    snprintf(fake, sizeof fake, "%s/bin", g_tmp);
    cr_assert_eq(mkdir(fake, 0755), 0);
    snprintf(cmd, sizeof cmd, "printf '#!/bin/sh\\nexit 1\\n' > '%s/mpirun' && chmod 755 '%s/mpirun'", fake, fake);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "cd '%s' && env PATH='%s':\"$PATH\" '%s/pplab' grade --impl solutions --lab gpipe "
             "--transport mpi --json '%s/broken.json' > '%s/broken.out' 2>&1", g_root, fake, g_build, g_tmp, g_tmp);
    int rc = system(cmd);
    char *out = out_of("broken", "out");
    cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 3, "pplab grade exited %d, not 3:\n%s",
              WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out);
    cr_expect(strstr(out, "NOT GRADED: ") && strstr(out, "the score above is no grade"), "no word of it:\n%s", out);
    cJSON *j = json_of("broken");
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "tests"), 0);
    cr_expect(strstr(str_of(t, "error"), "mpirun ended (status 1) before rank 0 reported the run"), "%s",
              str_of(t, "error"));
    cJSON_Delete(j);
    free(out);
    tmp_remove();
}
