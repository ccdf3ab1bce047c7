/* test_mpi.c: the mpi transport end to end. Each test runs `mpirun -np P <build>/pplab run ...` as a subprocess
 * and the same run on the threads transport, and expects the same printed lines (plus rank 0's transport line),
 * the same virtual trace and bitwise-equal gradients: every rank computes the same stage on the same inputs,
 * so any difference is a transport bug, not noise. Also: a deadlocking order ends with each rank's last op at
 * its deadline instead of hanging, and a wrong process count is refused with the command to use. Skipped,
 * with the reason, where mpirun is missing or pplab was built without MPI. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Open MPI keeps some of its own allocations to the end of the process; under `make asan` LeakSanitizer would
 * fail every MPI run on them. Leak checking of pplab itself is covered by the threads runs of the same tests. */
#define MPIRUN "env ASAN_OPTIONS=detect_leaks=0 mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS"

/* Where things are: pplab next to the tests folder of the build, the project root above the build. */
static char g_build[PATH_MAX], g_root[PATH_MAX], g_tmp[PATH_MAX];

static void dirs_find(void) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert(n > 0, "cannot read /proc/self/exe");
    exe[n] = 0;
    *strrchr(exe, '/') = 0; /* <build>/tests */
    *strrchr(exe, '/') = 0; /* <build> */
    snprintf(g_build, sizeof g_build, "%s", exe);
    snprintf(g_root, sizeof g_root, "%s", exe);
    *strrchr(g_root, '/') = 0;
    snprintf(g_tmp, sizeof g_tmp, "/tmp/pp_test_mpi_XXXXXX");
    cr_assert(mkdtemp(g_tmp), "cannot create a temporary folder under /tmp");
}

static void tmp_remove(void) {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (g_tmp[0] && strncmp(g_tmp, "/tmp/pp_test_mpi_", 17) == 0) (void)!system(cmd);
}

/* Skips the test unless mpirun exists and pplab has the mpi transport. */
static void need_mpi(void) {
    dirs_find();
    if (system("command -v mpirun >/dev/null 2>&1") != 0)
        cr_skip_test("mpirun not found: install openmpi-bin (Open MPI) to test the mpi transport");
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "'%s/pplab' info 2>/dev/null | grep -q '^  mpi  *usable'", g_build);
    if (system(cmd) != 0) cr_skip_test("pplab was built without MPI (libopenmpi-dev missing when it was built)");
}

static char *file_read(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    buf[got] = 0;
    if (len) *len = got;
    return buf;
}

/* Runs `pplab run <args>` (under mpirun -np P when np > 0) with a hard time limit; stdout, stderr, gradients
 * and trace land in <tmp>/<name>.{out,err,grads,csv}. Returns the exit status and the wall seconds. */
static int pplab_run(const char *name, int np, const char *args, double *secs) {
    char cmd[16 * PATH_MAX], launch[128] = "";
    if (np > 0) snprintf(launch, sizeof launch, MPIRUN " -np %d ", np);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && timeout 120 %s'%s/pplab' run %s --dump-grads '%s/%s.grads' --trace '%s/%s.csv' "
             "> '%s/%s.out' 2> '%s/%s.err'",
             g_root, launch, g_build, args, g_tmp, name, g_tmp, name, g_tmp, name, g_tmp, name);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = system(cmd);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (secs) *secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static char *out_of(const char *name, const char *ext) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s.%s", g_tmp, name, ext);
    char *s = file_read(p, NULL);
    return s ? s : strdup("");
}

/* The CSV without the wall-clock columns (the last two): what must not depend on the transport. */
static char *trace_virtual(const char *name) {
    char *s = out_of(name, "csv");
    char *o = s;
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
        int commas = 0;
        char *p = line;
        while (*p && !(*p == ',' && ++commas == 9)) p++;
        size_t n = (size_t)(p - line);
        memmove(o, line, n);
        o += n;
        *o++ = '\n';
    }
    *o = 0;
    return s;
}

/* Expects bitwise-equal gradient dumps; on a difference names the parameter and the first element. */
static void expect_same_grads(const char *a, const char *b) {
    char pa[PATH_MAX + 64], pb[PATH_MAX + 64];
    snprintf(pa, sizeof pa, "%s/%s.grads", g_tmp, a);
    snprintf(pb, sizeof pb, "%s/%s.grads", g_tmp, b);
    size_t la = 0, lb = 0;
    char *x = file_read(pa, &la), *y = file_read(pb, &lb);
    cr_assert(x && y, "gradient dumps missing (%s, %s)", pa, pb);
    cr_assert(la > 0, "empty gradient dump from the threads run");
    cr_expect_eq(la, lb, "gradient dumps differ in size: threads %zu bytes, mpi %zu bytes", la, lb);
    size_t off = 0;
    while (off + 40 <= la && off + 40 <= lb) {
        int32_t head[2];
        memcpy(head, x + off + 32, sizeof head);
        size_t bytes = (size_t)head[1] * sizeof(float);
        if (off + 40 + bytes > la || off + 40 + bytes > lb) break;
        if (memcmp(x + off, y + off, 40 + bytes)) {
            const float *fx = (const float *)(x + off + 40), *fy = (const float *)(y + off + 40);
            int i = 0;
            while (i < head[1] && !memcmp(&fx[i], &fy[i], sizeof(float))) i++;
            cr_expect(0, "gradient of %.32s (virtual stage %d) differs: element %d is %.9g with threads, %.9g "
                         "with mpi", x + off, head[0], i, i < head[1] ? fx[i] : 0.0f,
                      i < head[1] ? fy[i] : 0.0f);
            break;
        }
        off += 40 + bytes;
    }
    free(x);
    free(y);
}

/* The same schedule with threads and with mpirun -np P: same lines, same virtual trace, same gradients. */
static void compare_transports(int P, const char *args) {
    double secs;
    int rc_t = pplab_run("threads", 0, args, &secs);
    char *err_t = out_of("threads", "err");
    cr_assert_eq(rc_t, 0, "threads run failed (exit %d): %s", rc_t, err_t);
    int rc_m = pplab_run("mpi", P, args, &secs);
    char *err_m = out_of("mpi", "err");
    cr_assert_eq(rc_m, 0, "mpirun -np %d pplab run %s failed (exit %d): %s", P, args, rc_m, err_m);

    char *out_t = out_of("threads", "out"), *out_m = out_of("mpi", "out");
    char want[64];
    snprintf(want, sizeof want, "transport: mpi (%d processes)\n", P);
    cr_expect(!strncmp(out_m, want, strlen(want)), "rank 0 should print '%.*s' first; stdout was:\n%s",
              (int)strlen(want) - 1, want, out_m);
    const char *rest = strncmp(out_m, want, strlen(want)) ? out_m : out_m + strlen(want);
    cr_expect_str_eq(rest, out_t, "stdout differs: mpi printed\n%s\nthreads printed\n%s", rest, out_t);
    cr_expect(strstr(out_t, "bubble: ") && strstr(out_t, "peak stashes:"), "unexpected stdout: %s", out_t);

    char *tr_t = trace_virtual("threads"), *tr_m = trace_virtual("mpi");
    cr_expect(strlen(tr_t) > 100, "the threads trace is nearly empty");
    cr_expect_str_eq(tr_m, tr_t, "the traces differ in their virtual columns (rank, op, microbatch, chunk, vstage, "
                                 "peer, bytes, virtual_start, virtual_end)");
    expect_same_grads("threads", "mpi");
    free(err_t), free(err_m), free(out_t), free(out_m), free(tr_t), free(tr_m);
    tmp_remove();
}

static int solution_exists(const char *rel) {
    char p[PATH_MAX + 128];
    snprintf(p, sizeof p, "%s/%s", g_root, rel);
    struct stat st;
    return stat(p, &st) == 0;
}

Test(mpi, gpipe_p2_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(2, "--impl solutions --schedule gpipe --stages 2 --microbatches 4 --steps 2");
}

Test(mpi, gpipe_p4_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(4, "--impl solutions --schedule gpipe --stages 4 --microbatches 6");
}

Test(mpi, gpipe_p2_eager_matches_threads, .timeout = 120) {
    need_mpi();
    compare_transports(2, "--impl solutions --schedule gpipe --stages 2 --microbatches 3 --eager");
}

Test(mpi, onef1b_p4_matches_threads, .timeout = 120) {
    need_mpi();
    if (!solution_exists("solutions/03-1f1b/onef1b.c")) cr_skip_test("solutions/03-1f1b/onef1b.c is not written yet");
    compare_transports(4, "--impl solutions --schedule 1f1b --stages 4 --microbatches 8");
}

Test(mpi, interleaved_p4_matches_threads, .timeout = 120) {
    need_mpi();
    if (!solution_exists("solutions/04-interleaved/interleaved.c"))
        cr_skip_test("solutions/04-interleaved/interleaved.c is not written yet");
    compare_transports(4, "--impl solutions --schedule interleaved --stages 4 --chunks 2 --microbatches 8");
}

/* Rank 1 sends its first gradient back while rank 0 sends the next forward: both block in a rendezvous send.
 * The run must end at the 2 s deadline (plus start-up) with each rank's op, not hang. */
Test(mpi, deadlock_reported_at_deadline, .timeout = 90) {
    need_mpi();
    double secs = 0;
    int rc = pplab_run("dead", 2,
                       "--impl tests/broken/mpi-deadlock --schedule gpipe --stages 2 --microbatches 4 --deadline 2",
                       &secs);
    char *err = out_of("dead", "err"), *out = out_of("dead", "out");
    cr_expect_neq(rc, 0, "a deadlocked run must exit non-zero");
    cr_expect(secs < 30, "the deadlock took %.1f s to report with --deadline 2", secs);
    cr_expect(strstr(err, "deadlock"), "stderr should name the deadlock: %s", err);
    cr_expect(strstr(err, "rank 0 blocked in pp_send(dst=1, tag F mb1 vs1) for"), "rank 0's op missing: %s", err);
    cr_expect(strstr(err, "rank 1 blocked in pp_send(dst=0, tag B mb0 vs0) for"), "rank 1's op missing: %s", err);
    cr_expect(strstr(err, "HINT:"), "a hint should follow: %s", err);
    cr_expect_str_eq(out, "", "a failed run prints nothing on stdout, got: %s", out);
    /* rank 0 alone reports: one copy of the message */
    const char *first = strstr(err, "rank 1 blocked in");
    cr_expect(first && !strstr(first + 1, "rank 1 blocked in"), "the report should appear once: %s", err);
    free(err), free(out);
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
