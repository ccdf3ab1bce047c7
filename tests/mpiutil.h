/* mpiutil.h: what the MPI suites share (test_mpi on one machine, test_hosts across network-namespace hosts): where
 * the build is, `pplab run` and `pplab grade` under mpirun against the same on threads, and the comparisons that
 * must hold between the two (the printed lines, the virtual trace, the gradients bit for bit, the grades). A
 * suite sets g_mpirun_extra and g_grade_extra to what its mpirun needs beyond one machine's defaults (a host
 * file), or g_launcher and g_grade_prefix to another launcher altogether (Slurm's), and defines grade_configs,
 * the configurations pplab_grade grades. */
#ifndef PP_TEST_MPIUTIL_H
#define PP_TEST_MPIUTIL_H

#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* Arguments for mpirun beyond MPIRUN's (pplab_run), and for `pplab grade --transport mpi` (pplab_grade). */
static const char *g_mpirun_extra = "", *g_grade_extra = "";
/* How pplab_run starts np processes when not with MPIRUN: a format with one %d, the count ("srun -n %d"); and
 * what `pplab grade --transport mpi` runs inside ("salloc -n 8"). */
static const char *g_launcher = NULL, *g_grade_prefix = "";
/* The configurations pplab_grade grades, one per line (a --config file), set by the suite before each call. */
extern const char *grade_configs;

/* Open MPI keeps some of its own allocations to the end of the process; under `make asan` LeakSanitizer would
 * fail every MPI run on them. Leak checking of pplab itself is covered by the threads runs of the same tests. */
#define MPIRUN "env ASAN_OPTIONS=detect_leaks=0 mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS"

/* Where things are: pplab next to the tests folder of the build, the project root above the build. */
static char g_build[PATH_MAX], g_root[PATH_MAX], g_tmp[PATH_MAX];

static inline void dirs_find(void) {
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

static inline void tmp_remove(void) {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (g_tmp[0] && strncmp(g_tmp, "/tmp/pp_test_mpi_", 17) == 0) (void)!system(cmd);
}

/* Skips the test unless mpirun exists and pplab has the mpi transport. */
static inline void need_mpi(void) {
    dirs_find();
    if (system("command -v mpirun >/dev/null 2>&1") != 0)
        test_skip("mpirun not found: install openmpi-bin (Open MPI) to test the mpi transport");
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "'%s/pplab' info 2>/dev/null | grep -q '^  mpi  *usable'", g_build);
    if (system(cmd) != 0) test_skip("pplab was built without MPI (libopenmpi-dev missing when it was built)");
}

static inline char *file_read(const char *path, size_t *len) {
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

/* system(cmd): its exit status (128 when killed) and, in *secs when given, the wall seconds it took. */
static inline int timed_system(const char *cmd, double *secs) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = system(cmd);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (secs) *secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

/* The hard limit of one pplab_run, in seconds, and whether a launched run that reaches it is started once more.
 * A suite whose launcher crosses a network (test_hosts) sets a limit well inside its tests' own and allows the
 * second start: pplab's waits end at their deadline (10 s), so a run that outlives the limit is stuck where pplab
 * has no say, in the launcher or MPI's wire-up, and a second stall fails the test as the first one would have. */
static int g_run_limit = 120, g_run_restarts = 0;

/* Runs `pplab run <args>` (under mpirun -np P when np > 0) with a hard time limit; stdout, stderr, gradients
 * and trace land in <tmp>/<name>.{out,err,grads,csv}. Returns the exit status and the wall seconds. */
static inline int pplab_run(const char *name, int np, const char *args, double *secs) {
    char cmd[16 * PATH_MAX], launch[2 * PATH_MAX] = "";
    if (np > 0 && g_launcher) snprintf(launch, sizeof launch, g_launcher, np), strcat(launch, " ");
    else if (np > 0) snprintf(launch, sizeof launch, MPIRUN " %s -np %d ", g_mpirun_extra, np);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && timeout %d %s'%s/pplab' run %s --dump-grads '%s/%s.grads' --trace '%s/%s.csv' "
             "> '%s/%s.out' 2> '%s/%s.err'",
             g_root, g_run_limit, launch, g_build, args, g_tmp, name, g_tmp, name, g_tmp, name, g_tmp, name);
    int rc = timed_system(cmd, secs);
    for (int again = 0; np > 0 && rc == 124 && again < g_run_restarts; again++) {
        char err[PATH_MAX + 32];
        snprintf(err, sizeof err, "%s/%s.err", g_tmp, name);
        FILE *f = fopen(err, "r");
        char first[512] = "";
        if (f) (void)!fgets(first, sizeof first, f), fclose(f);
        first[strcspn(first, "\n")] = 0;
        cr_log_warn("%d processes of `pplab run %s` had not ended after %d s (stderr: '%s'): started once more", np,
                    args, g_run_limit, first);
        rc = timed_system(cmd, secs);
    }
    return rc;
}

static inline char *out_of(const char *name, const char *ext) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s.%s", g_tmp, name, ext);
    char *s = file_read(p, NULL);
    return s ? s : strdup("");
}

/* The CSV without the wall-clock columns (the last two): what must not depend on the transport. */
static inline char *trace_virtual(const char *name) {
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
static inline void expect_same_grads(const char *a, const char *b) {
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

/* out without its "time: ... ms/step" line, which differs on every run; fails when there is none. */
static inline char *without_time(char *out) {
    char *t = strstr(out, "time: ");
    cr_expect(t && (t == out || t[-1] == '\n') && strstr(t, " ms/step"), "no step time line in:\n%s", out);
    if (!t) return out;
    char *nl = strchr(t, '\n');
    memmove(t, nl ? nl + 1 : t + strlen(t), strlen(nl ? nl + 1 : t + strlen(t)) + 1);
    return out;
}

/* The same schedule with threads and with mpirun -np P: same lines, same virtual trace, same gradients. */
static inline void compare_transports(int P, const char *args) {
    double secs;
    int rc_t = pplab_run("threads", 0, args, &secs);
    char *err_t = out_of("threads", "err");
    cr_assert_eq(rc_t, 0, "threads run failed (exit %d): %s", rc_t, err_t);
    int rc_m = pplab_run("mpi", P, args, &secs);
    char *err_m = out_of("mpi", "err");
    cr_assert_eq(rc_m, 0, "mpirun -np %d pplab run %s failed (exit %d): %s", P, args, rc_m, err_m);

    char *out_t = without_time(out_of("threads", "out")), *out_m = without_time(out_of("mpi", "out"));
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

static inline int solution_exists(const char *rel) {
    char p[PATH_MAX + 128];
    snprintf(p, sizeof p, "%s/%s", g_root, rel);
    struct stat st;
    return stat(p, &st) == 0;
}

/* `pplab grade --impl impl --lab lab` over grade_configs on `transport`; the JSON report lands in
 * <tmp>/<transport>.json. Returns the exit status and the wall seconds. */
static inline int pplab_grade(const char *impl, const char *lab, const char *transport, double *secs) {
    const char *extra = strcmp(transport, "mpi") ? "" : g_grade_extra, *prefix = strcmp(transport, "mpi") ? "" : g_grade_prefix;
    char cfg[PATH_MAX + 32], cmd[8 * PATH_MAX];
    snprintf(cfg, sizeof cfg, "%s/configs.txt", g_tmp);
    FILE *f = fopen(cfg, "w");
    cr_assert(f, "cannot write %s", cfg);
    fputs(grade_configs, f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && env ASAN_OPTIONS=detect_leaks=0 timeout 120 %s '%s/pplab' grade --impl %s --lab %s --config "
             "'%s' --only-config --transport %s %s --quiet --json '%s/%s.json' > '%s/%s.out' 2>&1",
             g_root, prefix, g_build, impl, lab, cfg, transport, extra, g_tmp, transport, g_tmp, transport);
    return timed_system(cmd, secs);
}

static inline cJSON *json_of(const char *transport) {
    char *text = out_of(transport, "json");
    cJSON *root = cJSON_Parse(text);
    cr_assert(root, "no JSON report from the %s grading; its output:\n%s", transport, out_of(transport, "out"));
    free(text);
    return root;
}

static inline double num_of(const cJSON *o, const char *key) {
    const cJSON *x = cJSON_GetObjectItem(o, key);
    return x ? x->valuedouble : -1;
}

static inline const char *str_of(const cJSON *o, const char *key) {
    const cJSON *x = cJSON_GetObjectItem(o, key);
    return x && cJSON_IsString(x) ? x->valuestring : "";
}

/* Same score per test and the same points and message per check, and a deadlock worded the same (threads find
 * it the moment no rank can move, mpi once a rank's deadline passed with every process waiting: the report is
 * made from the same snapshot either way). */
static inline void expect_same_grades(const cJSON *t, const cJSON *m) {
    cr_expect_eq(num_of(m, "score"), num_of(t, "score"), "total score: mpi %g, threads %g", num_of(m, "score"),
                 num_of(t, "score"));
    const cJSON *tt = cJSON_GetObjectItem(t, "tests"), *mt = cJSON_GetObjectItem(m, "tests");
    cr_assert_eq(cJSON_GetArraySize(mt), cJSON_GetArraySize(tt), "not the same number of tests");
    for (int i = 0; i < cJSON_GetArraySize(tt); i++) {
        const cJSON *a = cJSON_GetArrayItem(tt, i), *b = cJSON_GetArrayItem(mt, i);
        cr_expect_str_eq(str_of(b, "name"), str_of(a, "name"));
        cr_expect_eq(num_of(b, "score"), num_of(a, "score"), "%s: mpi %g points, threads %g", str_of(a, "name"),
                     num_of(b, "score"), num_of(a, "score"));
        cr_expect_str_eq(str_of(b, "status"), str_of(a, "status"), "%s: status differs (mpi: %s; threads: %s)",
                         str_of(a, "name"), str_of(b, "error"), str_of(a, "error"));
        if (!strncmp(str_of(a, "error"), "deadlock:", 9))
            cr_expect_str_eq(str_of(b, "error"), str_of(a, "error"), "%s: the deadlock is worded differently",
                             str_of(a, "name"));
        const cJSON *ca = cJSON_GetObjectItem(a, "checks"), *cb = cJSON_GetObjectItem(b, "checks");
        cr_expect_eq(cJSON_GetArraySize(cb), cJSON_GetArraySize(ca), "%s: check count differs", str_of(a, "name"));
        for (int k = 0; k < cJSON_GetArraySize(ca) && k < cJSON_GetArraySize(cb); k++) {
            const cJSON *x = cJSON_GetArrayItem(ca, k), *y = cJSON_GetArrayItem(cb, k);
            cr_expect_eq(num_of(y, "score"), num_of(x, "score"), "%s, %s: points differ", str_of(a, "name"),
                         str_of(x, "name"));
            cr_expect_str_eq(str_of(y, "message"), str_of(x, "message"), "%s, %s: message differs",
                             str_of(a, "name"), str_of(x, "name"));
        }
    }
}

/* Grades impl with both transports and expects the same grades; returns the mpi report (caller deletes). */
static inline cJSON *compare_grades(const char *impl, const char *lab, int want_rc) {
    double ts = 0, ms = 0;
    int rc_t = pplab_grade(impl, lab, "threads", &ts);
    int rc_m = pplab_grade(impl, lab, "mpi", &ms);
    cr_expect_eq(rc_t, want_rc, "threads grading of %s exited %d", impl, rc_t);
    cr_expect_eq(rc_m, want_rc, "mpi grading of %s exited %d; output:\n%s", impl, rc_m, out_of("mpi", "out"));
    cJSON *t = json_of("threads"), *m = json_of("mpi");
    expect_same_grades(t, m);
    cJSON_Delete(t);
    return m;
}


/* The CPU half of NCCL across processes (tests/helpers/nccl_groups_check, a stand-in for NCCL) over P*D processes
 * started as pplab_run starts them, on a machine of `devices` GPUs, with `per_node` processes on each node: each
 * process takes the GPU of its node rank, every member of a stage's group joins the same communicator (one id per
 * group, none shared) as the member its replica says, of D. */
static inline void expect_nccl_groups(int P, int D, int devices, int per_node) {
    char cmd[4 * PATH_MAX], launch[2 * PATH_MAX], out[1 << 14];
    if (g_launcher) snprintf(launch, sizeof launch, g_launcher, P * D);
    else snprintf(launch, sizeof launch, MPIRUN " %s -np %d", g_mpirun_extra, P * D);
    /* what the launcher says of itself goes to its own file (Open MPI's rsh launcher warns of races it survives) */
    snprintf(cmd, sizeof cmd, "%s '%s/tests/helpers/nccl_groups_check' %d %d %d 2> '%s/groups.err'", launch, g_build, P,
             D, devices, g_tmp);
    test_capture(cmd, out, sizeof out);
    int seen[64] = {0}, n = 0;
    unsigned long long ids[64] = {0};
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        int r, p, d, node, nodes, dev, m, ms;
        unsigned long long id;
        if (sscanf(line, "rank %d stage %d replica %d node %d/%d device %d group %llx member %d/%d", &r, &p, &d, &node,
                   &nodes, &dev, &id, &m, &ms) != 9) {
            cr_expect_fail("unexpected line from nccl_groups_check: %s", line);
            continue;
        }
        cr_assert(r >= 0 && r < P * D && r < 64 && !seen[r], "rank %d twice or out of range", r);
        seen[r] = 1, n++;
        cr_expect(p == r % P && d == r / P, "rank %d holds stage %d of replica %d, not %d of %d", r, p, d, r % P, r / P);
        cr_expect_eq(nodes, per_node, "rank %d: %d processes on its node, not %d", r, nodes, per_node);
        cr_expect(node >= 0 && node < nodes, "rank %d: node rank %d of %d", r, node, nodes);
        cr_expect_eq(dev, node % devices, "rank %d (node rank %d) took GPU %d of %d", r, node, dev, devices);
        cr_expect(m == d && ms == D, "rank %d joined as member %d of %d, not %d of %d", r, m, ms, d, D);
        ids[r] = id;
    }
    cr_assert_eq(n, P * D, "%d of %d processes reported; stderr:\n%s", n, P * D, out_of("groups", "err"));
    for (int a = 0; a < P * D; a++)
        for (int b = 0; b < a; b++)
            cr_expect((ids[a] == ids[b]) == (a % P == b % P), "ranks %d and %d %s a communicator id", a, b,
                      ids[a] == ids[b] ? "share" : "do not share");
}

#endif /* PP_TEST_MPIUTIL_H */
