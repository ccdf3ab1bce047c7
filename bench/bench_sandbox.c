/* bench_sandbox.c: `pplab bench sandbox`: what running schedules in sandboxed drivers costs. Two figures, each
 * against its in-process baseline in the same run:
 *   - what the way to the runtime costs a schedule (bench/rpc): a pp.h call that does next to nothing (an empty
 *     group's start and end, 40000 calls), a function call in-process and a post the driver does not wait for
 *     when sandboxed; and a step's round trip (1000 steps), where the driver waits for the runtime;
 *   - the wall time of `pplab grade --impl solutions --lab all`, sandboxed against the same configurations with
 *     --in-process, runs alternating so that the machine's drift hits both. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "impl_build.h"
#include "runtime.h"
#include "host.h"

typedef struct rpc_figures {
    int calls, steps;
    double call[3], step[3]; /* ns per call and between two steps: p10, median, p90 */
} rpc_figures;

/* One step of the bench/rpc schedule (sandboxed when sb is set, else fn in-process) with this process's output
 * caught in a file, where the schedule leaves its figures. Returns 0 with f filled, or -1 (the reason printed). */
static int rpc_run(pp_step_fn fn, pp_sandbox *sb, int P, rpc_figures *f) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def("naive");
    c.P = P, c.M = 1, c.hidden = 8, c.vocab = 8, c.seq = 1, c.mb_size = 1;
    c.steps = 1001; /* bench/rpc's STEPS + 1 */
    char path[] = "/tmp/pplab-bench-rpc-XXXXXX";
    int fd = mkstemp(path), saved = dup(1);
    if (fd < 0 || saved < 0) {
        printf("# sandbox: cannot make a temporary file: %s\n", strerror(errno));
        return -1;
    }
    fflush(stdout);
    dup2(fd, 1);
    pp_program prog = {.fn = fn, .sandbox = sb, .symbol = "pp_naive_step"};
    pp_run_result res;
    pp_status st = pp__run_program(&c, &prog, &res);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    char text[4096] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(path);
    const char *line = strstr(text, "pplab-bench-rpc ");
    if (st != PP_OK || !line ||
        sscanf(line, "pplab-bench-rpc calls=%d steps=%d call_p10_ns=%lf call_median_ns=%lf call_p90_ns=%lf "
               "step_p10_ns=%lf step_median_ns=%lf step_p90_ns=%lf", &f->calls, &f->steps, &f->call[0], &f->call[1],
               &f->call[2], &f->step[0], &f->step[1], &f->step[2]) != 8) {
        char *nl = strchr(res.error, '\n');
        if (nl) *nl = 0;
        printf("# sandbox: the %s run failed (%s): %s\n", sb ? "sandboxed" : "in-process", pp__status_str(st),
               res.error[0] ? res.error : "no figures in its output");
        pp__result_free(&res);
        return -1;
    }
    pp__result_free(&res);
    return 0;
}

/* Seconds of one `pplab grade` of the solutions' `lab`, or -1 when it did not give full marks, after printing
 * the first lines of the tests that lost points (a machine too busy for the time limits shows there). */
static double grade_once(const char *exe, const char *lab, const char *extra) {
    char out[] = "/tmp/pplab-bench-grade-XXXXXX", cmd[2 * PATH_MAX + 160];
    int fd = mkstemp(out);
    if (fd < 0) return -1;
    close(fd);
    snprintf(cmd, sizeof cmd, "'%s' grade --impl solutions --lab %s --quiet %s > '%s' 2>&1", exe, lab, extra, out);
    double t0 = pp__now();
    int rc = system(cmd);
    double t = pp__now() - t0;
    if (rc != 0) {
        snprintf(cmd, sizeof cmd, "grep -A2 'FAIL' '%s' | head -6 | sed 's/^/#   /'", out);
        (void)!system(cmd);
    }
    unlink(out);
    return rc == 0 ? t : -1;
}

/* One pp.h call's round trip, in-process and sandboxed with one and two ranks, and the wait between two steps
 * (bench/rpc, built from the kit at root); -1 when the machine refuses the sandbox or the benchmark cannot run. */
static int bench_rpc(const char *root) {
    char dir[PATH_MAX + 16], err[4096];
    snprintf(dir, sizeof dir, "%s/bench/rpc", root);
    pp_sandbox sb;
    pp__sandbox_defaults(&sb);
    pp_impl built;
    if (pp__sandbox_probe(&sb, err, sizeof err)) {
        printf("# sandbox: this machine refuses the sandbox: %s\n", err);
        return -1;
    }
    if (pp__impl_build(dir, pp__lab_find("naive"), &sb, &built, err, sizeof err) != PP_OK) {
        for (char *c = err; *c; c++)
            if (*c == '\n') *c = ' ';
        printf("# sandbox: cannot build bench/rpc: %s\n", err);
        return -1;
    }
    pp_step_fn fn = (pp_step_fn)pp__impl_symbol(built.shared, "pp_naive_step", err, sizeof err);
    if (!fn || pp__host_open(&sb, built.driver, built.object, err, sizeof err)) {
        printf("# sandbox: cannot run the benchmark: %s\n", fn ? err : "no pp_naive_step in bench/rpc");
        return -1;
    }
    /* one rank: its runtime thread and its driver can each have a core, so both spin briefly before they sleep;
     * two ranks on fewer than four cores do not spin, and every call is a futex hand-over */
    rpc_figures in = {0}, out = {0}, out2 = {0};
    int bad = rpc_run(fn, NULL, 1, &in) || rpc_run(NULL, &sb, 1, &out) || rpc_run(NULL, &sb, 2, &out2);
    pp__host_close(&sb);
    if (bad) return -1;
    printf("#   a sandboxed driver posts every call and waits once a step, for the runtime to serve the step's\n"
           "#   calls and send the next command; it spins before it sleeps only when every rank's two ends can\n"
           "#   have a core each\n");
    printf("#\n# %-28s %8s %10s %10s %10s\n", "what", "samples", "p10", "median", "p90");
    printf("# %-28s %8s %10s %10s %10s\n", "", "", "(us)", "(us)", "(us)");
    struct {
        const char *name;
        const rpc_figures *f;
        int step;
    } rows[] = {{"a call, in-process", &in, 0},          {"a call, sandboxed, P=1", &out, 0},
                {"a call, sandboxed, P=2", &out2, 0},    {"between steps, in-process", &in, 1},
                {"between steps, sandboxed, P=1", &out, 1}, {"between steps, sandboxed, P=2", &out2, 1}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const double *q = rows[i].step ? rows[i].f->step : rows[i].f->call;
        printf("  %-28s %8d %10.3f %10.3f %10.3f\n", rows[i].name, rows[i].step ? rows[i].f->steps : rows[i].f->calls,
               q[0] / 1e3, q[1] / 1e3, q[2] / 1e3);
    }
    double trip = out.step[1] - in.step[1], trip2 = out2.step[1] - in.step[1];
    printf("# conclusion: a pp.h call costs a schedule %.3f us sandboxed (median, P=1; goal < 5 us: %s), %.3f us with "
           "two ranks on %ld CPUs, %.3f us in-process; the driver's one wait a step adds %.2f us between two steps "
           "(P=1) and %.2f us (P=2)\n", out.call[1] / 1e3, out.call[1] < 5000 ? "met" : "NOT met", out2.call[1] / 1e3,
           sysconf(_SC_NPROCESSORS_ONLN), in.call[1] / 1e3, trip / 1e3, trip2 / 1e3);
    return 0;
}

/* Grading the solutions in-process and sandboxed, alternating (one lab, once each, with --quick); 0 where the kit
 * at root has no solutions/ (a student handout), -1 when a grading did not give full marks. */
static int bench_grading(const pp_bench_opts *o, const char *root) {
    char sol[PATH_MAX + 16];
    snprintf(sol, sizeof sol, "%s/solutions", root);
    struct stat st;
    if (stat(sol, &st) || !S_ISDIR(st.st_mode)) {
        printf("# grading: no solutions/ here (a student handout): the grading comparison is skipped\n");
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return printf("# grading: cannot find the pplab executable\n"), -1;
    exe[k] = 0;
    /* --quick is a smoke run: one lab, once each */
    int reps = o->quick ? 1 : 5;
    const char *lab = o->quick ? "1f1b" : "all";
    double sand[8], inproc[8];
    /* one untimed run builds (or checks) the solutions' drivers, so both modes find them ready */
    grade_once(exe, lab, "");
    for (int i = 0; i < reps; i++) {
        inproc[i] = grade_once(exe, lab, "--in-process");
        sand[i] = grade_once(exe, lab, "");
        if (inproc[i] < 0 || sand[i] < 0) {
            printf("# grading: pplab grade --impl solutions --lab %s did not give full marks (above)\n", lab);
            return -1;
        }
    }
    double ms = pp__cli_median(sand, reps), mi = pp__cli_median(inproc, reps);
    printf("#\n# grading: pplab grade --impl solutions --lab %s, median of %d runs each, alternating\n", lab,
           reps);
    printf("# %-12s %10s\n# %-12s %10s\n", "mode", "wall", "", "(s)");
    printf("  %-12s %10.2f\n  %-12s %10.2f\n", "in-process", mi, "sandboxed", ms);
    printf("# conclusion: sandboxed grading takes %.2fx the in-process time (goal <= 1.15x: %s)\n", ms / mi,
           ms / mi <= 1.15 ? "met" : "NOT met");
    return 0;
}

int pp__bench_sandbox(const pp_bench_opts *o) {
    printf("# sandbox: what the sandbox costs: one pp.h call's round trip, and grading the solutions\n");
    printf("#   rpc = an empty pp_group_start timed inside the schedule (bench/rpc), %s\n",
           "in-process (a function call) and sandboxed (a request over the driver's channel)");
    char build[PATH_MAX], root[PATH_MAX];
    pp__impl_dirs(build, root, sizeof build);
    if (bench_rpc(root)) return -1;
    return bench_grading(o, root);
}
