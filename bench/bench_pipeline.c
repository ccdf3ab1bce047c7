/* bench_pipeline.c: `pplab bench pipeline`: what pipelining costs on real cores. The reference GPipe step runs
 * on P=2 thread ranks and, as the baseline, on 1 rank with the same layers and micro-batches (the same forward
 * and backward work, no messages). Per step it measures wall time and the CPU time of every rank thread
 * (summed), and sets them beside what the bubble alone predicts: wall P=2 / wall 1 = (1/P) / (1 - bubble) and
 * CPU P=2 / CPU 1 = 1. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "impl_build.h"
#include "runtime.h"
#include "replay.h"

#define PL_MAX_RANKS 2
#define PL_MAX_REPS 16

/* Per rank: wall start/end and thread CPU time of the step function. The step function has no user pointer and
 * benchmarks run one at a time, so the wrapped function and the figures live here. */
static struct {
    pp_step_fn inner;
    double w0[PL_MAX_RANKS], w1[PL_MAX_RANKS], cpu[PL_MAX_RANKS];
} g_pl;

static void timed_step(pp_rank *r) {
    int id = pp_rank_id(r);
    double c0 = pp__bench_thread_cpu(), t0 = pp__now();
    g_pl.inner(r);
    if (id < PL_MAX_RANKS) {
        g_pl.w0[id] = t0;
        g_pl.w1[id] = pp__now();
        g_pl.cpu[id] = pp__bench_thread_cpu() - c0;
    }
}

/* One step of fn on P ranks: its wall time (first start to last end over ranks), the thread CPU time of each
 * rank into cpu_rank[0..P-1] and the virtual bubble; returns the summed CPU time, or -1 after printing the run's
 * error. */
static double pl_step(pp_step_fn fn, int P, int hidden, int layers, int M, double *wall, double *cpu_rank,
                      double *bubble) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def("gpipe");
    c.P = P;
    c.M = M;
    c.layers = layers;
    c.hidden = hidden;
    c.steps = 1;
    memset(&g_pl, 0, sizeof g_pl);
    g_pl.inner = fn;
    pp_run_result res;
    if (pp__run(&c, timed_step, &res) != PP_OK) {
        char *nl = strchr(res.error, '\n');
        if (nl) *nl = 0;
        printf("# pipeline: the P=%d run failed (%s): %s\n", P, pp__status_str(res.status), res.error);
        pp__result_free(&res);
        return -1;
    }
    double lo = g_pl.w0[0], hi = g_pl.w1[0], sum = 0;
    for (int i = 0; i < P; i++) {
        lo = g_pl.w0[i] < lo ? g_pl.w0[i] : lo;
        hi = g_pl.w1[i] > hi ? g_pl.w1[i] : hi;
        cpu_rank[i] = g_pl.cpu[i];
        sum += cpu_rank[i];
    }
    *wall = hi - lo;
    *bubble = res.bubble;
    pp__result_free(&res);
    return sum;
}

int pp__bench_pipeline(const pp_bench_opts *o) {
    /* --quick is a smoke run: a model a quarter the width keeps it to a second or two */
    const int P = 2, hidden = o->quick ? 64 : 256, layers = 8, M = 8, reps = o->quick ? 3 : 9;
    char err[4096];
    const pp_lab_info *lab = pp__lab_find("gpipe");
    pp_step_fn gpipe = lab ? (pp_step_fn)pp__impl_load("solutions", lab, err, sizeof err) : NULL;
    printf("# pipeline: reference GPipe on P=%d thread ranks vs the same step on 1 rank, median of %d steps each\n",
           P, reps);
    if (!gpipe) {
        for (char *c = err; *c; c++)
            if (*c == '\n') *c = ' '; /* a compiler's message, on the table's one line */
        printf("# pipeline: cannot load the reference GPipe step, which this benchmark runs (check that `make` "
               "builds solutions/02-gpipe): %s\n", lab ? err : "no gpipe lab");
        return -1;
    }
    pp_run_config d;
    pp__config_defaults(&d);
    d.schedule = pp__schedule_def("gpipe"), d.P = P, d.M = M, d.layers = layers;
    double bubble = pp__theory_bubble(&d, NULL), exp_wall = (1.0 / P) / (1.0 - bubble);
    printf("#   model: hidden %d, layers %d, M %d micro-batches of %d x seq %d, vocab %d, cpu backend, SGD\n", hidden,
           layers, M, d.mb_size, d.seq, d.vocab);
    printf("#   expected: wall ratio = (1/P) / (1 - bubble) with GPipe's theoretical bubble = %.3f; cpu ratio = 1\n",
           bubble);
    printf("#   cpu = thread CPU time of the step function summed over ranks; ratios against the 1-rank run\n");
    printf("#\n");
    printf("# %-10s  %5s  %9s  %9s  %9s  %9s  %10s  %8s  %9s  %8s\n", "run", "ranks", "wall", "cpu", "cpu r0",
           "cpu r1", "wall ratio", "expected", "cpu ratio", "expected");
    printf("# %-10s  %5s  %9s  %9s  %9s  %9s  %10s  %8s  %9s  %8s\n", "", "", "(ms)", "(ms)", "(ms)", "(ms)", "", "",
           "", "");
    /* one step each, alternating which goes first, so that the load of a shared machine drifts over both */
    double w1[PL_MAX_REPS], c1[PL_MAX_REPS], w2[PL_MAX_REPS], c2[PL_MAX_REPS], r0[PL_MAX_REPS], r1[PL_MAX_REPS];
    double bub = 0;
    for (int k = 0; k < reps; k++) {
        double cr1[PL_MAX_RANKS], cr2[PL_MAX_RANKS], b1;
        for (int j = 0; j < 2; j++) {
            int par = (j + k) % 2;
            double got = par ? pl_step(gpipe, P, hidden, layers, M, &w2[k], cr2, &bub)
                             : pl_step(gpipe, 1, hidden, layers, M, &w1[k], cr1, &b1);
            if (got < 0) return -1;
            if (par)
                c2[k] = got;
            else
                c1[k] = got;
        }
        r0[k] = cr2[0];
        r1[k] = cr2[1];
    }
    double sw = pp__cli_median(w1, reps), sc = pp__cli_median(c1, reps);
    double pw = pp__cli_median(w2, reps), pc = pp__cli_median(c2, reps);
    double pr0 = pp__cli_median(r0, reps), pr1 = pp__cli_median(r1, reps);
    printf("  %-10s  %5d  %9.2f  %9.2f  %9.2f  %9s  %10.3f  %8.3f  %9.3f  %8.3f\n", "1 rank", 1, sw * 1e3, sc * 1e3,
           sc * 1e3, "-", 1.0, 1.0, 1.0, 1.0);
    double wr = pw / sw, cr = pc / sc;
    printf("  %-10s  %5d  %9.2f  %9.2f  %9.2f  %9.2f  %10.3f  %8.3f  %9.3f  %8.3f\n", "gpipe P=2", P, pw * 1e3,
           pc * 1e3, pr0 * 1e3, pr1 * 1e3, wr, exp_wall, cr, 1.0);
    printf("# conclusion: CPU-time overhead %+.1f%% (goal < 10%%: %s); wall time %+.1f%% beyond the bubble's "
           "%.3fx (speed-up %.2fx of an ideal %.2fx); virtual bubble %.3f (theory %.3f)\n",
           (cr - 1) * 100, cr - 1 < 0.10 ? "met" : "NOT met", (wr / exp_wall - 1) * 100, exp_wall, 1 / wr,
           1 / exp_wall, bub, bubble);
    return 0;
}
