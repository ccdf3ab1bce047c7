/* test_slurm.c: pplab under a real Slurm, the launcher courses use. scripts/check-slurm.sh (make check-slurm, as
 * root) starts munge, slurmctld and slurmd on this machine (Debian's slurm-wlm, one node on loopback) and runs this
 * suite: srun starting the ranks itself through PMIx, mpirun inside an salloc allocation, `pplab grade --transport
 * mpi` inside an allocation (each test's mpirun takes its slots from it), and the batch script docs/multinode.md
 * shows, submitted with sbatch; each against the threads run, lab 08's shards too. A job larger than the cluster
 * is refused at once. Skipped, with the reason, outside make check-slurm. */
#include "mpiutil.h"

const char *grade_configs = "1f1b P=4 M=8 steps=2 seed=35\n"
                            "interleaved P=4 M=8 v=2 seed=54\n"
                            "dp1f1b P=2 M=4 dp=4 seed=71\n"
                            "tpgrid P=2 M=4 tp=2 dp=2 node-size=4 seed=78\n";

static void need_slurm(void) {
    need_mpi();
    if (!getenv("SLURM_CONF") || system("sinfo -h >/dev/null 2>&1") != 0)
        test_skip("no Slurm: make check-slurm (as root) starts a one-node cluster and runs this suite on it");
}

Test(slurm, srun_starts_the_ranks_as_mpirun_does, .timeout = 180) {
    need_slurm();
    g_launcher = "srun --mpi=pmix -n %d";
    compare_transports(4, "--impl solutions --schedule 1f1b --stages 4 --microbatches 8 --steps 2");
}

/* Lab 07 at D = 4: eight tasks of one job step, each reduce's parts and gradients among them. */
Test(slurm, srun_starts_the_replicas, .timeout = 180) {
    need_slurm();
    g_launcher = "srun --mpi=pmix -n %d";
    compare_transports(8, "--impl solutions --schedule dpinterleaved --stages 2 --chunks 2 --microbatches 4 --dp 4");
}

/* Lab 08: four tasks of one step, two stages of two shards each. */
Test(slurm, srun_starts_the_shards, .timeout = 180) {
    need_slurm();
    g_launcher = "srun --mpi=pmix -n %d";
    compare_transports(4, "--impl solutions --schedule tpblock --tp 2 --stages 2 --microbatches 4 --steps 2");
}

/* srun -N 2 on this one-node cluster: refused at once (EnforcePartLimits=ALL), never queued for a node that will
 * never come. */
Test(slurm, a_job_larger_than_the_cluster_is_refused_at_once, .timeout = 60) {
    need_slurm();
    char out[4096];
    int rc = test_capture("timeout 20 srun -N 2 -n 4 true 2>&1", out, sizeof out);
    cr_expect(rc != 0 && rc != 124, "srun -N 2 on one node: exit %d (124: it waited)\n%s", rc, out);
    cr_expect(strstr(out, "Node count specification invalid"), "srun -N 2 should say why it is refused:\n%s", out);
}

Test(slurm, mpirun_inside_an_allocation, .timeout = 180) {
    need_slurm();
    g_launcher = "salloc -Q -n %d " MPIRUN;
    compare_transports(4, "--impl solutions --schedule interleaved --stages 4 --chunks 2 --microbatches 8");
}

/* pplab grade stays one process inside the allocation; each test's mpirun takes its slots from it (lab 07's test
 * of 4 replicas needs 8). */
Test(slurm, grading_inside_an_allocation_matches_threads, .timeout = 300) {
    need_slurm();
    g_grade_prefix = "salloc -Q -n 8";
    cJSON *m = compare_grades("solutions", "all", 0);
    cr_expect_eq(num_of(m, "score"), num_of(m, "max_score"), "the references lost points under Slurm");
    cJSON_Delete(m);
    tmp_remove();
}

/* docs/slurm/pplab.sbatch, shown verbatim in docs/multinode.md, submitted as a course would (with the solutions in
 * place of the labs): its run prints what the threads run prints, and its grading is the threads' grading. */
Test(slurm, the_documented_batch_script, .timeout = 300) {
    need_slurm();
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/docs/slurm/pplab.sbatch", g_root);
    char *script = file_read(path, NULL);
    snprintf(path, sizeof path, "%s/docs/multinode.md", g_root);
    char *doc = file_read(path, NULL);
    cr_assert(script && doc, "docs/slurm/pplab.sbatch or docs/multinode.md is missing");
    cr_expect(strstr(doc, script), "docs/multinode.md does not show docs/slurm/pplab.sbatch verbatim");
    free(script), free(doc);
    char cmd[4 * PATH_MAX], id[64];
    snprintf(cmd, sizeof cmd, "cd '%s' && IMPL=solutions sbatch --parsable --wait --output='%s/batch.out' docs/slurm/pplab.sbatch",
             g_root, g_tmp);
    test_capture(cmd, id, sizeof id);
    id[strcspn(id, "\n;")] = 0;
    cr_assert(id[0] >= '0' && id[0] <= '9', "sbatch gave no job id: '%s'\n%s", id, out_of("batch", "out"));
    char *out = out_of("batch", "out");
    cr_expect(strstr(out, "transport: mpi (4 processes)\n"), "the batch job's srun did not start 4 ranks:\n%s", out);
    cr_expect(strstr(out, "FULL MARKS"), "the batch job's grading lost points:\n%s", out);
    /* the batch run's lines are the threads run's */
    int rc = pplab_run("threads", 0, "--impl solutions --schedule 1f1b --stages 4 --microbatches 8", NULL);
    cr_assert_eq(rc, 0, "threads run failed: %s", out_of("threads", "err"));
    char *t = without_time(out_of("threads", "out"));
    cr_expect(strstr(out, t), "the batch job's run printed other lines than threads:\n%s\nthreads:\n%s", out, t);
    /* its grading, test by test, is the threads' */
    char json[PATH_MAX + 64];
    snprintf(json, sizeof json, "%s/pplab-%s.json", g_root, id);
    size_t len = 0;
    char *text = file_read(json, &len);
    cr_assert(text, "the batch job wrote no %s", json);
    unlink(json);
    cJSON *m = cJSON_Parse(text);
    free(text);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/pplab' grade --impl solutions --lab 07-hybrid --quiet --json '%s/threads.json' "
             "> /dev/null 2>&1", g_root, g_build, g_tmp);
    cr_assert_eq(system(cmd), 0, "the threads grading of 07-hybrid lost points");
    cJSON *th = json_of("threads");
    expect_same_grades(th, m);
    cJSON_Delete(th);
    cJSON_Delete(m);
    free(out), free(t);
    tmp_remove();
}
