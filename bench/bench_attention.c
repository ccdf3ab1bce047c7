/* bench_attention.c: `pplab bench attention`: the cpu backend's causal multi-head self-attention (its attn_fwd and
 * attn_bwd slots, pp__cpu_attn_fwd and pp__cpu_attn_bwd) at the shapes of a small GPT: B = 8 sequences of T = 64,
 * 128 and 256 tokens, 4 and 8 heads of 16, 32 and 64 columns. Each timed call is one forward and one backward, as a
 * training step runs them; on the one BLAS thread the backend sets. Its baseline is PyTorch's
 * F.scaled_dot_product_attention(is_causal=True) at the same shapes, which bench/compare.sh times beside it
 * (bench/torch_attention.py); this table alone gives the kernel's time and its rate against the causal work. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "runtime.h"

typedef struct attn_shape {
    int B, T, nh, hd;
} attn_shape;

typedef struct attn_bufs {
    float *q, *k, *v, *out, *att, *dout, *dq, *dk, *dv, *scratch;
} attn_bufs;

static float *buffer(pp_backend *be, size_t count, unsigned *seed) {
    float *host = malloc(count * sizeof *host);
    for (size_t i = 0; i < count; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        host[i] = (float)(*seed >> 8) / 8388608.0f - 1.0f; /* uniform in [-1, 1) */
    }
    float *dev = be->ops->alloc(be->ctx, count * sizeof *dev);
    be->ops->from_host(be->ctx, dev, host, count * sizeof *dev);
    free(host);
    return dev;
}

/* Seconds per forward + backward, over `iters` of them. */
static double attn_time(pp_backend *be, const attn_shape *s, attn_bufs *b, int iters) {
    const pp_backend_ops *o = be->ops;
    double t0 = pp__now();
    for (int i = 0; i < iters; i++) {
        o->attn_fwd(be->ctx, b->out, b->att, b->q, b->k, b->v, s->B, s->T, s->nh, s->hd);
        o->attn_bwd(be->ctx, b->dq, b->dk, b->dv, b->scratch, b->dout, b->q, b->k, b->v, b->att, s->B, s->T, s->nh,
                    s->hd);
    }
    if (o->sync) o->sync(be->ctx);
    return (pp__now() - t0) / iters;
}

int pp__bench_attention(const pp_bench_opts *o) {
    char err[256];
    pp_backend *be = pp__backend_open("cpu", 0, 1, err, sizeof err);
    if (!be) {
        printf("# attention: the cpu backend cannot open: %s\n", err);
        return -1;
    }
    if (!be->ops->attn_fwd || !be->ops->attn_bwd) {
        printf("# attention: the cpu backend has no attention kernel\n");
        pp__backend_close(be);
        return -1;
    }
    attn_shape shapes[32];
    int ns = 0;
    static const int Ts[] = {64, 128, 256}, nhs[] = {4, 8}, hds[] = {16, 32, 64};
    for (int t = 0; t < 3; t++)
        for (int j = 0; j < 2; j++)
            for (int d = 0; d < 3; d++)
                if (!o->quick || (nhs[j] == 8 && hds[d] == 32)) shapes[ns++] = (attn_shape){8, Ts[t], nhs[j], hds[d]};
    int reps = o->quick ? 3 : 7;
    double target = o->quick ? 0.01 : 0.1; /* seconds per timed batch of calls */

    printf("# attention: cpu backend attn_fwd + attn_bwd (causal, fp32, 1 BLAS thread), median of %d\n", reps);
    printf("#   q, k, v: (B*T) x (nh*hd), uniform in [-1, 1); GFLOP/s counts the causal half's products:\n");
    printf("#   2 B nh T (T+1)/2 hd per product, 2 in the forward (q k^T, att v) and 4 in the backward\n");
    printf("#\n");
    printf("# %3s  %4s  %3s  %3s  %6s  %9s  %9s\n", "B", "T", "nh", "hd", "calls", "ms", "GFLOP/s");
    unsigned seed = 4321;
    double lo = 1e9, hi = 0;
    for (int i = 0; i < ns; i++) {
        attn_shape *s = &shapes[i];
        size_t n = (size_t)s->B * s->T * s->nh * s->hd, a = (size_t)s->B * s->nh * s->T * s->T;
        attn_bufs b = {buffer(be, n, &seed), buffer(be, n, &seed), buffer(be, n, &seed), buffer(be, n, &seed),
                       buffer(be, a, &seed), buffer(be, n, &seed), buffer(be, n, &seed), buffer(be, n, &seed),
                       buffer(be, n, &seed), buffer(be, a, &seed)};
        double flops = 6.0 * 2.0 * s->B * s->nh * (s->T * (s->T + 1.0) / 2.0) * s->hd;
        attn_time(be, s, &b, 1); /* warm-up */
        int iters = 1;
        double per = attn_time(be, s, &b, iters);
        while (per * iters < target / 8 && iters < 10000) per = attn_time(be, s, &b, iters *= 2);
        iters = (int)(target / per);
        if (iters < 1) iters = 1;
        double ts[16];
        for (int r = 0; r < reps; r++) ts[r] = attn_time(be, s, &b, iters);
        double t = pp__cli_median(ts, reps), g = flops / t / 1e9;
        printf("  %3d  %4d  %3d  %3d  %6d  %9.3f  %9.2f\n", s->B, s->T, s->nh, s->hd, iters, t * 1e3, g);
        lo = g < lo ? g : lo;
        hi = g > hi ? g : hi;
        float **all = (float **)&b;
        for (size_t j = 0; j < sizeof b / sizeof *all; j++) be->ops->free(be->ctx, all[j]);
    }
    printf("# conclusion: %.1f..%.1f GFLOP/s of causal work over %d shapes; bench/compare.sh sets each beside "
           "PyTorch's scaled_dot_product_attention\n", lo, hi, ns);
    pp__backend_close(be);
    return 0;
}
