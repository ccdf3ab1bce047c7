/* bench_gemm.c: `pplab bench gemm`: GFLOP/s of the cpu backend's gemm slot against cblas_sgemm called
 * directly on the same buffers, at the model's shapes (tokens = the default micro-batch, hidden 64/256/1024)
 * and a square 512. Both run on the one BLAS thread the backend sets, so the ratio is the slot's own cost. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "cpu/cpu_kernels.h"
#include "runtime.h"

typedef struct gemm_shape {
    const char *what;
    int tA, tB, m, n, k;
} gemm_shape;

static void direct_gemm(const gemm_shape *s, const float *A, const float *B, float *C) {
    int lda = s->tA ? s->m : s->k, ldb = s->tB ? s->k : s->n;
    cblas_sgemm(CblasRowMajor, s->tA ? CblasTrans : CblasNoTrans, s->tB ? CblasTrans : CblasNoTrans, s->m, s->n,
                s->k, 1.0f, A, lda, B, ldb, 0.0f, C, s->n);
}

static void slot_gemm(pp_backend *be, const gemm_shape *s, const float *A, const float *B, float *C) {
    int lda = s->tA ? s->m : s->k, ldb = s->tB ? s->k : s->n;
    be->ops->gemm(be->ctx, s->tA, s->tB, s->m, s->n, s->k, 1.0f, A, lda, B, ldb, 0.0f, C, s->n);
}

/* Seconds per call of `iters` calls, through the slot (via_slot) or directly. */
static double gemm_time(pp_backend *be, const gemm_shape *s, const float *A, const float *B, float *C, int iters,
                        int via_slot) {
    double t0 = pp__now();
    for (int i = 0; i < iters; i++) {
        if (via_slot)
            slot_gemm(be, s, A, B, C);
        else
            direct_gemm(s, A, B, C);
    }
    if (be->ops->sync) be->ops->sync(be->ctx);
    return (pp__now() - t0) / iters;
}

static float *buffer(pp_backend *be, size_t count, unsigned *seed) {
    float *host = malloc(count * sizeof *host);
    for (size_t i = 0; i < count; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        host[i] = (float)(*seed >> 8) / 16777216.0f - 0.5f;
    }
    float *dev = be->ops->alloc(be->ctx, count * sizeof *dev);
    be->ops->from_host(be->ctx, dev, host, count * sizeof *dev);
    free(host);
    return dev;
}

int pp__bench_gemm(const pp_bench_opts *o) {
    char err[256];
    pp_backend *be = pp__backend_open("cpu", 0, 1, err, sizeof err);
    if (!be) {
        printf("# gemm: the cpu backend cannot open: %s\n", err);
        return -1;
    }
    pp_run_config d;
    pp__config_defaults(&d);
    int T = d.mb_size * d.seq; /* tokens of one default micro-batch: the row count of every block GEMM */
    gemm_shape shapes[16];
    int ns = 0;
    static const int hiddens[] = {64, 256, 1024};
    for (int i = 0; i < 3; i++) {
        int h = hiddens[i];
        /* the three kinds of block GEMM: fc1 forward, fc2's input gradient, fc1's weight gradient */
        shapes[ns++] = (gemm_shape){"fc1 fwd", 0, 0, T, 4 * h, h};
        shapes[ns++] = (gemm_shape){"fc2 dx", 0, 1, T, 4 * h, h};
        shapes[ns++] = (gemm_shape){"fc1 dW", 1, 0, h, 4 * h, T};
    }
    shapes[ns++] = (gemm_shape){"square", 0, 0, 512, 512, 512};
    int reps = o->quick ? 3 : 7;
    double target = o->quick ? 0.005 : 0.03; /* seconds per timed batch of calls */

    printf("# gemm: cpu backend gemm slot vs cblas_sgemm called directly, fp32, 1 BLAS thread, median of %d\n", reps);
    /* the kernel in use sets every figure here (blas_core.c says how pplab picks it) */
    char blas[160];
    pp__cpu_blas_describe(blas, sizeof blas);
    printf("#   BLAS: %s\n", blas);
    printf("#   tokens T = %d (default micro-batch %d x seq %d); flops = 2mnk; ratio = slot / direct\n", T, d.mb_size,
           d.seq);
    printf("#\n");
    printf("# %-8s  %2s  %5s  %5s  %5s  %7s  %9s  %9s  %6s\n", "shape", "op", "m", "n", "k", "calls", "slot",
           "direct", "ratio");
    printf("# %-8s  %2s  %5s  %5s  %5s  %7s  %9s  %9s  %6s\n", "", "", "", "", "", "", "(GFLOP/s)", "(GFLOP/s)", "");
    double lo = 1e9, hi = 0, sum = 0;
    unsigned seed = 1234;
    for (int i = 0; i < ns; i++) {
        gemm_shape *s = &shapes[i];
        size_t na = (size_t)s->m * s->k, nb = (size_t)s->k * s->n, nc = (size_t)s->m * s->n;
        float *A = buffer(be, na, &seed), *B = buffer(be, nb, &seed), *C = buffer(be, nc, &seed);
        double flops = 2.0 * s->m * s->n * s->k;
        /* calibrate: a warm-up call, then double the calls until a batch takes a measurable time */
        gemm_time(be, s, A, B, C, 1, 1);
        int iters = 1;
        double per = gemm_time(be, s, A, B, C, iters, 1);
        while (per * iters < target / 8 && iters < 100000) per = gemm_time(be, s, A, B, C, iters *= 2, 1);
        iters = (int)(target / per);
        if (iters < 1) iters = 1;
        if (iters > 100000) iters = 100000;
        double ts[16], td[16];
        for (int r = 0; r < reps; r++) {
            /* alternate so that drift on a shared machine hits both sides alike */
            ts[r] = gemm_time(be, s, A, B, C, iters, 1);
            td[r] = gemm_time(be, s, A, B, C, iters, 0);
        }
        double gs = flops / pp__cli_median(ts, reps) / 1e9, gd = flops / pp__cli_median(td, reps) / 1e9;
        char label[16];
        snprintf(label, sizeof label, "%s%s", s->tA ? "T" : "N", s->tB ? "T" : "N");
        char name[24];
        snprintf(name, sizeof name, "%s", s->what);
        printf("  %-8s  %2s  %5d  %5d  %5d  %7d  %9.2f  %9.2f  %6.3f\n", name, label, s->m, s->n, s->k, iters, gs,
               gd, gs / gd);
        double ratio = gs / gd;
        lo = ratio < lo ? ratio : lo;
        hi = ratio > hi ? ratio : hi;
        sum += ratio;
        be->ops->free(be->ctx, A);
        be->ops->free(be->ctx, B);
        be->ops->free(be->ctx, C);
    }
    double avg = sum / ns;
    printf("# conclusion: the gemm slot runs at %.3fx cblas_sgemm on average (%.3f..%.3f over %d shapes): %s\n", avg,
           lo, hi, ns,
           avg > 0.95 && avg < 1.05 ? "within 5%, the slot adds no measurable cost"
                                    : "more than 5% apart: rerun on a quiet machine before reading anything into it");
    pp__backend_close(be);
    return 0;
}
