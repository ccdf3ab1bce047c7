/* bench_comm.c: `pplab bench comm`: round-trip latency and bandwidth of pp_send/pp_recv between two thread
 * ranks (a ping-pong of one activation-shaped tensor), in rendezvous and eager mode, against a plain memcpy of
 * the same bytes measured in the same run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "runtime.h"

/* The ping-pong's parameters and per-step results; the step function has no user pointer, and benchmarks run
 * one at a time, so they live here. */
static struct {
    int rounds, warm;   /* timed and untimed round trips per step */
    double *secs;       /* per step: seconds per round trip, as rank 0 saw it */
    int nsteps;
} g_pp;

/* Rank 0 sends a tensor to rank 1 and waits for it to come back, `rounds` times; rank 1 echoes. Every receive
 * makes a fresh tensor (as pp_recv does for a schedule), so its allocation is part of what is measured. */
static void pingpong_step(pp_rank *r) {
    int me = pp_rank_id(r), fwd = pp_tag(PP_FWD, 0, 1), bwd = pp_tag(PP_BWD, 0, 0);
    int n = g_pp.warm + g_pp.rounds;
    if (me == 0) {
        pp_tensor *t = pp__tensor_new(r->be, &r->arena, r->cfg->mb_size * r->cfg->seq, r->cfg->hidden, PP_F32, 0);
        double t0 = pp__now();
        for (int i = 0; i < n; i++) {
            if (i == g_pp.warm) t0 = pp__now();
            pp_send(r, t, 1, fwd);
            t = pp_recv(r, 1, bwd);
        }
        if (r->step < g_pp.nsteps) g_pp.secs[r->step] = (pp__now() - t0) / g_pp.rounds;
    } else if (me == 1) {
        for (int i = 0; i < n; i++) {
            pp_tensor *x = pp_recv(r, 0, fwd);
            pp_send(r, x, 0, bwd);
        }
    }
}

/* Median seconds per round trip of `bytes` (a multiple of 64), or -1 with the run's error printed. */
static double pingpong(size_t bytes, int eager, int rounds, int reps) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.P = 2;
    c.M = 1;
    c.layers = 2;
    c.vocab = 16;
    c.hidden = 16;               /* one 64-byte row per token */
    c.mb_size = 1;
    c.seq = (int)(bytes / 64);
    c.eager = eager;
    c.uncapped = 1;
    c.steps = reps + 1;          /* the first step warms allocator and caches up and is dropped */
    g_pp.rounds = rounds;
    g_pp.warm = rounds / 10 + 1;
    g_pp.nsteps = c.steps;
    g_pp.secs = calloc((size_t)c.steps, sizeof *g_pp.secs);
    pp_run_result res;
    double med = -1;
    if (pp__run(&c, pingpong_step, &res) == PP_OK) {
        med = pp__cli_median(g_pp.secs + 1, reps);
    } else {
        char *nl = strchr(res.error, '\n');
        if (nl) *nl = 0;
        printf("# comm: the ping-pong run failed (%s): %s\n", pp__status_str(res.status), res.error);
    }
    pp__result_free(&res);
    free(g_pp.secs);
    g_pp.secs = NULL;
    return med;
}

/* Median seconds of one memcpy of `bytes` between two buffers that stay warm. */
static double memcpy_time(size_t bytes, int iters, int reps) {
    char *src = malloc(bytes), *dst = malloc(bytes);
    if (!src || !dst) {
        free(src);
        free(dst);
        return -1;
    }
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    double *t = calloc((size_t)reps, sizeof *t);
    for (int k = 0; k < reps; k++) {
        double t0 = pp__now();
        for (int i = 0; i < iters; i++) {
            memcpy(dst, src, bytes);
            __asm__ volatile("" ::: "memory"); /* the copy must happen every time */
        }
        t[k] = (pp__now() - t0) / iters;
    }
    double med = pp__cli_median(t, reps);
    free(t);
    free(src);
    free(dst);
    return med;
}

static int clampi(long x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : (int)x; }

int pp__bench_comm(const pp_bench_opts *o) {
    static const size_t full[] = {64, 1024, 16 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20};
    static const size_t quick[] = {64, 64 << 10, 4 << 20};
    const size_t *sizes = o->quick ? quick : full;
    int nsizes = o->quick ? 3 : 7, reps = o->quick ? 3 : 7;
    /* enough round trips per step to time small messages well, few enough that the step's received tensors
     * (freed only when the step ends) stay within a few tens of MiB */
    long budget = o->quick ? 16L << 20 : 64L << 20;
    int max_rounds = o->quick ? 500 : 2000;

    printf("# comm: pp_send/pp_recv ping-pong between two thread ranks (threads transport), median of %d steps\n",
           reps);
    printf("#   algbw = size / (round trip / 2), one way; memcpy = the same bytes copied by one thread, this run;\n");
    printf("#   ratio = algbw / memcpy. Each receive allocates its tensor, as in a schedule.\n");
    printf("#\n");
    printf("# %10s  %10s  %6s  %10s  %8s  %8s  %7s\n", "size", "mode", "rounds", "round-trip", "algbw", "memcpy",
           "ratio");
    printf("# %10s  %10s  %6s  %10s  %8s  %8s  %7s\n", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
    double small_rt[2] = {-1, -1}, big_ratio[2] = {-1, -1}, big_bw[2] = {-1, -1};
    int ok = 1;
    for (int s = 0; s < nsizes; s++) {
        size_t bytes = sizes[s];
        int rounds = clampi(budget / (long)bytes, 8, max_rounds);
        double mt = memcpy_time(bytes, clampi((256L << 20) / (long)bytes, 16, 200000) / (o->quick ? 4 : 1), reps);
        double mbw = mt > 0 ? (double)bytes / mt / 1e9 : 0;
        for (int eager = 0; eager < 2; eager++) {
            double rt = pingpong(bytes, eager, rounds, reps);
            char sz[16];
            pp__bench_size(bytes, sz, sizeof sz);
            if (rt < 0) {
                ok = 0;
                continue;
            }
            double bw = (double)bytes / (rt / 2) / 1e9;
            printf("  %10s  %10s  %6d  %10.2f  %8.3f  %8.2f  %7.3f\n", sz, eager ? "eager" : "rendezvous", rounds,
                   rt * 1e6, bw, mbw, mbw > 0 ? bw / mbw : 0);
            if (s == 0) small_rt[eager] = rt;
            if (s == nsizes - 1) big_ratio[eager] = mbw > 0 ? bw / mbw : 0, big_bw[eager] = bw;
        }
    }
    if (!ok) return -1;
    char lo[16], hi[16];
    pp__bench_size(sizes[0], lo, sizeof lo);
    pp__bench_size(sizes[nsizes - 1], hi, sizeof hi);
    double worst = small_rt[0] > small_rt[1] ? small_rt[0] : small_rt[1];
    printf("# conclusion: round trip at %s %.2f us rendezvous, %.2f us eager (goal < 10 us: %s); at %s one-way "
           "%.2f GB/s rendezvous (%.2fx memcpy), %.2f GB/s eager (%.2fx memcpy)\n",
           lo, small_rt[0] * 1e6, small_rt[1] * 1e6, worst < 10e-6 ? "met" : "NOT met", hi, big_bw[0],
           big_ratio[0], big_bw[1], big_ratio[1]);
    return 0;
}
