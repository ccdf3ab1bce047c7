/* bench_reduce.c: `pplab bench reduce`: the wall time of pp_grad_reduce between D thread ranks (D replicas of a
 * one-stage pipeline, the threads transport's in-process reduce), against a plain memcpy of the same gradient
 * bytes measured in the same run. The virtual clock's cost model is beside it for comparison, not checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "runtime.h"

/* Per step, replica 0's seconds in pp_grad_reduce (from its call until the sum is in its gradients, waiting
 * for the other replica included): the step function has no user pointer, and benchmarks run one at a time, so
 * they live here. */
static struct {
    double *secs;
    int nsteps;
} g_red;

static void reduce_step(pp_rank *r) {
    double t0 = pp__now();
    pp_grad_reduce(r, 0);
    double dt = pp__now() - t0;
    if (pp_rank_replica(r) == 0 && r->step < g_red.nsteps) g_red.secs[r->step] = dt;
}

/* Median seconds of one reduce over D replicas at width h (one block, the embedding and the head), or -1. */
static double reduce_time(int D, int h, int reps, double *bytes) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def("dp1f1b");
    c.P = 1, c.M = 1, c.D = D, c.layers = 1, c.hidden = h, c.vocab = 64, c.mb_size = 1, c.seq = 1;
    c.steps = reps + 1; /* the first step warms allocator and caches up and is dropped */
    *bytes = pp__config_grad_bytes(&c, 0);
    g_red.nsteps = c.steps;
    g_red.secs = calloc((size_t)c.steps, sizeof *g_red.secs);
    pp_run_result res;
    double med = -1;
    if (pp__run(&c, reduce_step, &res) == PP_OK) {
        med = pp__cli_median(g_red.secs + 1, reps);
    } else {
        char *nl = strchr(res.error, '\n');
        if (nl) *nl = 0;
        printf("# reduce: the run failed (%s): %s\n", pp__status_str(res.status), res.error);
    }
    pp__result_free(&res);
    free(g_red.secs);
    g_red.secs = NULL;
    return med;
}

static double memcpy_time(size_t bytes, int reps) {
    char *src = malloc(bytes), *dst = malloc(bytes);
    double *t = calloc((size_t)reps, sizeof *t), med = -1;
    if (src && dst && t) {
        memset(src, 1, bytes);
        memset(dst, 2, bytes);
        for (int k = 0; k < reps; k++) {
            double t0 = pp__now();
            for (int i = 0; i < 8; i++) {
                memcpy(dst, src, bytes);
                __asm__ volatile("" ::: "memory"); /* the copy must happen every time */
            }
            t[k] = (pp__now() - t0) / 8;
        }
        med = pp__cli_median(t, reps);
    }
    free(t), free(src), free(dst);
    return med;
}

int pp__bench_reduce(const pp_bench_opts *o) {
    static const int widths_full[] = {64, 256, 512}, widths_quick[] = {64, 256};
    static const int reps_of[] = {7, 3};
    const int *widths = o->quick ? widths_quick : widths_full;
    int nw = o->quick ? 2 : 3, reps = reps_of[o->quick != 0];
    printf("# reduce: pp_grad_reduce over D thread ranks (D replicas of one stage, threads transport), median of %d "
           "steps\n", reps);
    printf("#   bytes = one stage's gradient; algbw = bytes / reduce time; memcpy = the same bytes copied by one\n");
    printf("#   thread, this run; ratio = algbw / memcpy; virtual = the clock's cost at the default alpha, beta\n");
    printf("#\n");
    printf("# %10s  %3s  %10s  %8s  %8s  %7s  %8s\n", "bytes", "D", "reduce", "algbw", "memcpy", "ratio", "virtual");
    printf("# %10s  %3s  %10s  %8s  %8s  %7s  %8s\n", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(units)");
    double last_ratio = -1, last_us = -1;
    char last_sz[16] = "";
    for (int i = 0; i < nw; i++)
        for (int D = 2; D <= 4; D *= 2) {
            double bytes, t = reduce_time(D, widths[i], reps, &bytes);
            if (t < 0) return -1;
            double mt = memcpy_time((size_t)bytes, reps), bw = bytes / t / 1e9, mbw = mt > 0 ? bytes / mt / 1e9 : 0;
            pp_run_config c;
            pp__config_defaults(&c);
            c.D = D;
            char sz[16];
            pp__bench_size((size_t)bytes, sz, sizeof sz);
            printf("  %10s  %3d  %10.1f  %8.3f  %8.2f  %7.3f  %8.3f\n", sz, D, t * 1e6, bw, mbw, mbw > 0 ? bw / mbw : 0,
                   pp__config_reduce_cost(&c, bytes));
            last_ratio = mbw > 0 ? bw / mbw : 0, last_us = t * 1e6;
            snprintf(last_sz, sizeof last_sz, "%s", sz);
        }
    printf("# conclusion: at %s over 4 replicas one reduce takes %.1f us, %.3fx memcpy's bandwidth (the sum reads "
           "every replica's copy, on one thread)\n", last_sz, last_us, last_ratio);
    return 0;
}
