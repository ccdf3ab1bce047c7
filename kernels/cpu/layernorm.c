/* layernorm.c: LayerNorm over the last dimension (eps 1e-5, biased variance) and its backward, which can run
 * as two halves (input gradient, weight gradients) for a split backward. */
#include <math.h>
#include <stddef.h>

#include "cpu/cpu_kernels.h"

#define PP__LN_EPS 1e-5

/* out = (x - mean) * rstd * g + b per row of x (n x h); writes mean[n] and rstd[n] for the backward. */
PP_CPU_CLONES void pp__cpu_layernorm_fwd(void *ctx, float *out, float *mean, float *rstd, const float *x, const float *g,
                           const float *b, int n, int h) {
    for (int i = 0; i < n; i++) {
        const float *xi = x + (size_t)i * h;
        float *oi = out + (size_t)i * h;
        /* Two passes in double: the variance of activations with a large mean loses digits in float. */
        double s = 0.0;
        for (int j = 0; j < h; j++) s += xi[j];
        double mu = s / h;
        double ss = 0.0;
        for (int j = 0; j < h; j++) {
            double d = xi[j] - mu;
            ss += d * d;
        }
        double r = 1.0 / sqrt(ss / h + PP__LN_EPS);
        /* xhat from the double mean: the float-rounded mean of a row far from zero would shift every xhat */
        for (int j = 0; j < h; j++) oi[j] = (float)((xi[j] - mu) * r) * g[j] + b[j];
        mean[i] = (float)mu;
        rstd[i] = (float)r;
    }
}

/* dx overwritten (skipped when NULL); dg += sum_i dout * xhat and db += sum_i dout (each skipped when NULL).
 * Needs the mean and rstd the forward saved for this x. */
PP_CPU_CLONES void pp__cpu_layernorm_bwd(void *ctx, float *dx, float *dg, float *db, const float *dout, const float *x,
                           const float *mean, const float *rstd, const float *g, int n, int h) {
    for (int i = 0; i < n; i++) {
        const float *xi = x + (size_t)i * h;
        const float *di = dout + (size_t)i * h;
        float m = mean[i], r = rstd[i];
        if (dg || db) {
            for (int j = 0; j < h; j++) {
                float xhat = (xi[j] - m) * r;
                if (dg) dg[j] += di[j] * xhat;
                if (db) db[j] += di[j];
            }
        }
        if (dx) {
            /* dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dout * g */
            float sum_d = 0.0f, sum_dx = 0.0f;
            for (int j = 0; j < h; j++) {
                float dxhat = di[j] * g[j];
                sum_d += dxhat;
                sum_dx += dxhat * (xi[j] - m) * r;
            }
            float mean_d = sum_d / h, mean_dx = sum_dx / h;
            float *dxi = dx + (size_t)i * h;
            for (int j = 0; j < h; j++) {
                float xhat = (xi[j] - m) * r;
                dxi[j] = r * (di[j] * g[j] - mean_d - xhat * mean_dx);
            }
        }
    }
}
