/* layernorm.cu: the CUDA LayerNorm: statistics per row in double (one warp per row), the input gradient per row,
 * gamma and beta gradients as column sums (columns.cu). Mirrors kernels/cpu/layernorm.c. */
#include "cuda_reduce.cuh"

#define PP_CUDA_LN_EPS 1e-5f

/* ---- layernorm: one warp per row ----------------------------------------------------------------------- */

#define PP_CUDA_ROWS_PER_BLOCK 8

__device__ static double warp_sum_d(double v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Two passes in double, as the CPU reference: the variance of a row with a large mean loses digits in float,
 * and xhat is formed from the double mean. */
__global__ static void k_layernorm_fwd(float *out, float *mean, float *rstd, const float *x, const float *g,
                                       const float *b, int n, int h)
{
    int row = blockIdx.x * PP_CUDA_ROWS_PER_BLOCK + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= n) return;
    const float *xr = x + (long)row * h;
    double s = 0.0;
    for (int j = lane; j < h; j += 32) s += xr[j];
    double mu = warp_sum_d(s) / h;
    double q = 0.0;
    for (int j = lane; j < h; j += 32) {
        double d = xr[j] - mu;
        q += d * d;
    }
    double rs = 1.0 / sqrt(warp_sum_d(q) / h + (double)PP_CUDA_LN_EPS);
    float *o = out + (long)row * h;
    for (int j = lane; j < h; j += 32) o[j] = (float)((xr[j] - mu) * rs) * g[j] + b[j];
    if (lane == 0) {
        mean[row] = (float)mu;
        rstd[row] = (float)rs;
    }
}

/* dx = rstd * (g*dout - mean(g*dout) - xhat * mean(g*dout*xhat)) */
__global__ static void k_layernorm_bwd_dx(float *dx, const float *dout, const float *x, const float *mean,
                                          const float *rstd, const float *g, int n, int h)
{
    int row = blockIdx.x * PP_CUDA_ROWS_PER_BLOCK + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= n) return;
    const float *xr = x + (long)row * h, *dr = dout + (long)row * h;
    float mu = mean[row], rs = rstd[row];
    float s1 = 0.0f, s2 = 0.0f;
    for (int j = lane; j < h; j += 32) {
        float dxh = dr[j] * g[j];
        s1 += dxh;
        s2 += dxh * (xr[j] - mu) * rs;
    }
    s1 = warp_sum(s1) / h;
    s2 = warp_sum(s2) / h;
    float *o = dx + (long)row * h;
    for (int j = lane; j < h; j += 32) {
        float xh = (xr[j] - mu) * rs;
        o[j] = rs * (dr[j] * g[j] - s1 - xh * s2);
    }
}

void pp__cuda_layernorm_fwd(void *ctx, float *out, float *mean, float *rstd, const float *x, const float *g,
                            const float *b, int n, int h)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (n <= 0 || h <= 0) return;
    pp__cuda_enter(c);
    int blocks = (n + PP_CUDA_ROWS_PER_BLOCK - 1) / PP_CUDA_ROWS_PER_BLOCK;
    k_layernorm_fwd<<<blocks, 32 * PP_CUDA_ROWS_PER_BLOCK, 0, c->stream>>>(out, mean, rstd, x, g, b, n, h);
    PP_CUDA_LAUNCHED();
}

void pp__cuda_layernorm_bwd(void *ctx, float *dx, float *dg, float *db, const float *dout, const float *x,
                            const float *mean, const float *rstd, const float *g, int n, int h)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (n <= 0 || h <= 0) return;
    pp__cuda_enter(c);
    if (dx) {
        int blocks = (n + PP_CUDA_ROWS_PER_BLOCK - 1) / PP_CUDA_ROWS_PER_BLOCK;
        k_layernorm_bwd_dx<<<blocks, 32 * PP_CUDA_ROWS_PER_BLOCK, 0, c->stream>>>(dx, dout, x, mean, rstd, g, n, h);
        PP_CUDA_LAUNCHED();
    }
    pp__cuda_column_sums(c, db, dg, dout, x, mean, rstd, n, h);
}
