/* test_hosts.c: the mpi transport across hosts. scripts/check-hosts.sh (make check-hosts, as root) makes four hosts
 * on this machine, each a network namespace with its own address and host name, joined by veth links to a bridge;
 * Open MPI starts ranks on them through a launcher agent, as it would through ssh, and they talk over TCP alone.
 * Here, with one rank per host (every pipeline boundary and every reduce crosses the network): `pplab run` gives
 * the threads' printed lines, trace and gradients bit for bit; `pplab grade --transport mpi --hostfile` gives the
 * threads' grades (lab 08's shards included) and says so in its first line; the doc's rankfile puts a stage's
 * shards on one host; and a host cut off mid-run (its link set down) ends the run with a report naming its ranks
 * within the deadline. Skipped, with the reason, outside make check-hosts. */
#include <signal.h>
#include <sys/wait.h>

#include "mpiutil.h"

const char *grade_configs = "1f1b P=4 M=8 steps=2 seed=35\n"
                            "interleaved P=4 M=8 v=2 seed=54\n"
                            "dp1f1b P=2 M=4 dp=2 seed=71\n"
                            "dpinterleaved P=2 M=4 v=2 dp=2 seed=72\n"
                            "tpblock P=2 M=4 tp=2 seed=76\n"
                            "tpgrid P=2 M=4 tp=2 node-size=2 seed=79\n";

static char g_run_args[PATH_MAX + 64], g_grade_args[PATH_MAX + 64];

/* Skips unless check-hosts made the hosts; points pplab_run and pplab_grade at them (--map-by node: rank i on
 * host i, rank 0 on the first, where the run's results are written). */
static void need_hosts(void) {
    need_mpi();
    const char *hf = getenv("PPLAB_TEST_HOSTFILE");
    if (!hf || !*hf)
        test_skip("no hosts: make check-hosts (as root) makes network-namespace hosts and runs this suite on them");
    snprintf(g_run_args, sizeof g_run_args, "--hostfile '%s' --map-by node", hf);
    snprintf(g_grade_args, sizeof g_grade_args, "--hostfile '%s'", hf);
    g_mpirun_extra = g_run_args;
    g_grade_extra = g_grade_args;
    g_run_limit = 40;
    g_run_restarts = 1;
}

/* The hosts are hosts: each rank reports a host name of its own (the host file's) and a network namespace of its
 * own, none of them this process's. */
Test(hosts, every_rank_runs_on_a_host_of_its_own, .timeout = 60) {
    need_hosts();
    char cmd[2 * PATH_MAX], out[4096], mine[256] = "";
    ssize_t k = readlink("/proc/self/ns/net", mine, sizeof mine - 1);
    cr_assert(k > 0, "cannot read this process's network namespace");
    snprintf(cmd, sizeof cmd, MPIRUN " %s -np 4 sh -c 'echo $(hostname) $(readlink /proc/self/ns/net)' | sort",
             g_mpirun_extra);
    test_capture(cmd, out, sizeof out);
    char names[4][64], nets[4][128];
    int n = 0;
    for (char *line = strtok(out, "\n"); line && n < 4; line = strtok(NULL, "\n"), n++)
        cr_assert_eq(sscanf(line, "%63s %127s", names[n], nets[n]), 2, "unexpected line: %s", line);
    cr_assert_eq(n, 4, "mpirun started %d ranks on the hosts, not 4", n);
    for (int i = 0; i < 4; i++) {
        cr_expect(strstr(getenv("PPLAB_TEST_HOSTS"), names[i]), "rank on '%s', not one of the hosts", names[i]);
        cr_expect_str_neq(nets[i], mine, "a rank shares this process's network namespace");
        for (int j = 0; j < i; j++) {
            cr_expect_str_neq(names[i], names[j], "two ranks on host %s", names[i]);
            cr_expect_str_neq(nets[i], nets[j], "two ranks share a network namespace");
        }
    }
    tmp_remove();
}

/* NCCL across processes, the CPU half: one process per host, so each is rank 0 of its node and takes GPU 0. */
Test(hosts, each_host_gives_its_process_the_first_gpu, .timeout = 60) {
    need_hosts();
    expect_nccl_groups(2, 2, 8, 1);
    tmp_remove();
}

Test(hosts, onef1b_matches_threads, .timeout = 120) {
    need_hosts();
    compare_transports(4, "--impl solutions --schedule 1f1b --stages 4 --microbatches 8 --steps 2");
}

Test(hosts, interleaved_matches_threads, .timeout = 120) {
    need_hosts();
    compare_transports(4, "--impl solutions --schedule interleaved --stages 4 --chunks 2 --microbatches 8");
}

/* Lab 07 at D = 2: each reduce's parts and gradients cross the network too. */
Test(hosts, dp1f1b_matches_threads, .timeout = 120) {
    need_hosts();
    compare_transports(4, "--impl solutions --schedule dp1f1b --stages 2 --microbatches 4 --dp 2 --steps 2");
}

Test(hosts, dpinterleaved_matches_threads, .timeout = 120) {
    need_hosts();
    compare_transports(4, "--impl solutions --schedule dpinterleaved --stages 2 --chunks 2 --microbatches 4 --dp 2");
}

/* Lab 08: a stage's two shards on two hosts, so each of their sums crosses the network; and the TP x PP x DP grid
 * with a node of two hosts' worth of ranks, the placement --node-size describes. */
Test(hosts, tpblock_matches_threads, .timeout = 120) {
    need_hosts();
    compare_transports(4, "--impl solutions --schedule tpblock --tp 2 --stages 2 --microbatches 4 --steps 2");
}

Test(hosts, tpgrid_matches_threads, .timeout = 120) {
    need_hosts();
    compare_transports(4, "--impl solutions --schedule tpgrid --tp 2 --stages 2 --microbatches 4 --node-size 2");
}

/* docs/multinode.md's rankfile for a stage's shards on one node, as the doc shows it, on the first two hosts: the
 * shards of each stage share a host, the stages do not, and the run is the threads run. */
Test(hosts, the_documented_rankfile_puts_each_stages_shards_on_one_host, .timeout = 120) {
    need_hosts();
    char cmd[4 * PATH_MAX], out[4096], rf[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "cd '%s' && printf '%%s\\n' %s | head -2 > nodes && sed -n '/^T=2 D=1 P=2 G=2$/,"
             "/^done > rankfile$/p' '%s/docs/multinode.md' > rankfile.sh && bash rankfile.sh && " MPIRUN
             " --rankfile rankfile -np 4 sh -c 'echo $OMPI_COMM_WORLD_RANK $(hostname)' | sort",
             g_tmp, getenv("PPLAB_TEST_HOSTS"), g_root);
    test_capture(cmd, out, sizeof out);
    char host[4][64];
    int n = 0;
    for (char *line = strtok(out, "\n"); line && n < 4; line = strtok(NULL, "\n"), n++)
        cr_assert_eq(sscanf(line, "%*d %63s", host[n]), 1, "unexpected line: %s", line);
    cr_assert_eq(n, 4, "mpirun --rankfile started %d ranks, not 4", n);
    /* world rank r = t * P + p at D = 1: ranks 0 and 2 hold stage 0's shards, 1 and 3 stage 1's */
    cr_expect_str_eq(host[0], host[2], "stage 0's shards on two hosts");
    cr_expect_str_eq(host[1], host[3], "stage 1's shards on two hosts");
    cr_expect_str_neq(host[0], host[1], "both stages on one host");
    snprintf(rf, sizeof rf, "--rankfile '%s/rankfile'", g_tmp);
    g_mpirun_extra = rf;
    compare_transports(4, "--impl solutions --schedule tpblock --tp 2 --stages 2 --microbatches 4 --node-size 2");
}

/* Each test one mpirun over the hosts: the references keep full marks, and replicas that reduce in different
 * orders lose the same points with the same report as with threads. */
Test(hosts, grading_matches_threads, .timeout = 300) {
    need_hosts();
    cJSON *m = compare_grades("solutions", "all", 0);
    cr_expect_eq(num_of(m, "score"), num_of(m, "max_score"), "the references lost points across hosts");
    cJSON_Delete(m);
    grade_configs = "dpinterleaved P=2 M=4 v=2 dp=2 seed=72\n";
    m = compare_grades("tests/broken/dp-reduce-order", "dpinterleaved", 1);
    cJSON *t = json_of("threads");
    cr_expect_str_eq(str_of(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "tests"), 0), "error"),
                     str_of(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "tests"), 0), "error"), "the reports differ");
    cJSON_Delete(t);
    cJSON_Delete(m);
    tmp_remove();
}

/* The grading's first line says where its ranks ran: the transport and the host file's nodes, in its order. */
Test(hosts, a_grading_names_its_transport_and_hosts, .timeout = 120) {
    need_hosts();
    char cmd[4 * PATH_MAX], out[8192], want[512];
    snprintf(cmd, sizeof cmd, "cd '%s' && printf 'naive P=2 M=1 seed=1\\n' > '%s/naive.cfg' && timeout 100 '%s/pplab' "
             "grade --impl solutions --lab 01-naive --config '%s/naive.cfg' --only-config --transport mpi %s 2>&1 | head -1",
             g_root, g_tmp, g_build, g_tmp, g_grade_extra);
    test_capture(cmd, out, sizeof out);
    char hosts[256];
    snprintf(hosts, sizeof hosts, "%s", getenv("PPLAB_TEST_HOSTS"));
    for (char *p = strchr(hosts, ' '); p; p = strchr(p, ' ')) memmove(p + 1, p, strlen(p) + 1), *p = ',', p += 2;
    snprintf(want, sizeof want, "transport mpi: one mpirun per test on the nodes of %s (%s): 1 tests",
             getenv("PPLAB_TEST_HOSTFILE"), hosts);
    cr_expect(strstr(out, want), "the grading's first line should end with \"%s\":\n%s", want, out);
    tmp_remove();
}

/* A run of many steps, with the default deadline (10 s), loses its last host (the link to it goes down): rank 0
 * hears nothing from the rank there and ends the run naming it and its host before Open MPI's keepalive (which
 * check-hosts sets to give a host up 6 to 10 s after a cut) ends the job, and mpirun ends soon after, never a
 * hang. The killed processes leave no folder of pplab's in their $TMPDIR. */
Test(hosts, a_host_cut_off_is_reported_within_the_deadline, .timeout = 120) {
    need_hosts();
    const char *cut = getenv("PPLAB_TEST_CUT"), *uncut = getenv("PPLAB_TEST_UNCUT"),
               *stepping = getenv("PPLAB_TEST_STEPPING");
    cr_assert(cut && uncut && stepping, "check-hosts sets PPLAB_TEST_CUT, PPLAB_TEST_UNCUT and PPLAB_TEST_STEPPING");
    char cmd[4 * PATH_MAX], err[PATH_MAX + 32], tmpdir[PATH_MAX + 32], last[64] = "";
    const char *names = getenv("PPLAB_TEST_HOSTS"), *sp = strrchr(names, ' ');
    snprintf(last, sizeof last, "%s", sp ? sp + 1 : names);
    snprintf(err, sizeof err, "%s/cut.err", g_tmp);
    /* the ranks' own $TMPDIR (the hosts share this machine's /tmp), so that what they leave is theirs alone */
    snprintf(tmpdir, sizeof tmpdir, "%s/tmpdir", g_tmp);
    cr_assert_eq(mkdir(tmpdir, 0755), 0, "cannot make %s", tmpdir);
    snprintf(cmd, sizeof cmd, "cd '%s' && TMPDIR='%s' exec " MPIRUN " %s -np 4 '%s/pplab' run --impl solutions "
             "--schedule 1f1b --stages 4 --microbatches 8 --steps 100000 > /dev/null 2> '%s'",
             g_root, tmpdir, g_mpirun_extra, g_build, err);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    cr_assert(pid > 0, "cannot fork");
    /* cut only once the ranks are past MPI's start-up, which has no deadline of pplab's, and well into the steps:
     * on a loaded machine a start-up takes seconds */
    int waited = 0;
    for (; waited < 300 && system(stepping) != 0; waited++) {
        cr_assert(waitpid(pid, NULL, WNOHANG) == 0, "the run ended before its host was cut off:\n%s",
                  out_of("cut", "err"));
        usleep(100000);
    }
    cr_assert_lt(waited, 300, "the ranks on the first and the last host had not started their watch 30 s after "
                              "mpirun started");
    sleep(1);
    int still = waitpid(pid, NULL, WNOHANG) == 0;
    cr_assert(still, "the run ended before its host was cut off:\n%s", out_of("cut", "err"));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(system(cut), 0, "cannot cut the host off: %s", cut);
    double reported = -1, ended = -1;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double t = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        char *e = out_of("cut", "err");
        if (reported < 0 && strstr(e, "ranks lost")) reported = t;
        free(e);
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            ended = t;
            break;
        }
        if (t > 60) break;
        usleep(50000);
    }
    if (ended < 0) kill(-pid, SIGKILL), waitpid(pid, NULL, 0);
    (void)!system(uncut);
    char *e = out_of("cut", "err"), want[128];
    snprintf(want, sizeof want, "rank 3 (on %s)", last);
    cr_expect(reported >= 0, "no report of the lost ranks:\n%s", e);
    cr_expect(strstr(e, want), "the report should name rank 3 and its host (%s):\n%s", want, e);
    cr_expect(!strstr(e, "rank 2 (on"), "the report names a rank that was not lost:\n%s", e);
    /* the silence pplab waits is the keepalive's soonest give-up (2 s x 3 probes) less a second, not the deadline */
    cr_expect(strstr(e, "nothing heard for 5.0 s"), "the report should count 5.0 s of silence (keepalive 6 s at "
              "the soonest, less a second):\n%s", e);
    cr_log_info("the lost rank was reported %.1f s after the cut, and mpirun ended after %.1f s", reported, ended);
    /* within the default deadline (10 s), and before the keepalive's soonest (6 s) */
    cr_expect(reported >= 0 && reported < 6, "the report came %.1f s after the cut (deadline 10 s, keepalive 6 s "
              "at the soonest)", reported);
    cr_expect(ended >= 0 && ended < 30, "mpirun had not ended %.1f s after the cut", ended < 0 ? 60 : ended);
    free(e);
    char ls[PATH_MAX + 64], left[4096] = "";
    snprintf(ls, sizeof ls, "ls -d '%s'/pplab-* 2>/dev/null", tmpdir);
    test_capture(ls, left, sizeof left);
    cr_expect(!left[0], "the killed processes left folders in their $TMPDIR:\n%s", left);
    tmp_remove();
}
