/* cuda_kernels.cu: the element-wise, row-wise and column-reduction kernels of the CUDA backend (everything but
 * GEMM), each behind a launcher with the signature of its pp_backend_ops slot. All run on the rank's stream.
 * Reductions are deterministic (fixed order, no atomics) except embedding_bwd, where repeated tokens add with
 * atomicAdd: its result can differ from run to run in the last bits. */
#include "cuda_common.h"

#include <math.h>

#define PP_CUDA_THREADS 256
#define PP_CUDA_LN_EPS 1e-5f

static pp_cuda_ctx *ctx_of(void *ctx) { return (pp_cuda_ctx *)ctx; }

/* ---- reductions ---------------------------------------------------------------------------------------- */

__device__ static float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ static float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Sum (or max) over a block of blockDim.x threads, a multiple of 32; every thread gets the result. */
__device__ static float block_reduce(float v, int is_max)
{
    __shared__ float part[32];
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = is_max ? warp_max(v) : warp_sum(v);
    __syncthreads(); /* part[] may still be read by a previous call */
    if (lane == 0) part[wid] = v;
    __syncthreads();
    float r = lane < nw ? part[lane] : (is_max ? -INFINITY : 0.0f);
    r = is_max ? warp_max(r) : warp_sum(r);
    return r;
}

/* ---- embedding ----------------------------------------------------------------------------------------- */

__global__ static void k_embedding_fwd(float *out, const float *table, const int *tokens, int n, int h)
{
    long total = (long)n * h;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        long r = i / h, j = i % h;
        out[i] = table[(long)tokens[r] * h + j];
    }
}

__global__ static void k_embedding_bwd(float *dtable, const float *dout, const int *tokens, int n, int h)
{
    long total = (long)n * h;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        long r = i / h, j = i % h;
        atomicAdd(&dtable[(long)tokens[r] * h + j], dout[i]);
    }
}

void pp__cuda_embedding_fwd(void *ctx, float *out, const float *table, const int *tokens, int n, int h)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if ((long)n * h == 0) return;
    pp__cuda_enter(c);
    k_embedding_fwd<<<pp__cuda_blocks((long)n * h, PP_CUDA_THREADS), PP_CUDA_THREADS, 0, c->stream>>>(out, table,
                                                                                                  tokens, n, h);
    PP_CUDA_LAUNCHED();
}

void pp__cuda_embedding_bwd(void *ctx, float *dtable, const float *dout, const int *tokens, int n, int h)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if ((long)n * h == 0) return;
    pp__cuda_enter(c);
    k_embedding_bwd<<<pp__cuda_blocks((long)n * h, PP_CUDA_THREADS), PP_CUDA_THREADS, 0, c->stream>>>(dtable, dout,
                                                                                                  tokens, n, h);
    PP_CUDA_LAUNCHED();
}

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

/* ---- column sums: a 32 x 32 block owns 32 columns, its 32 row-lanes stride over the rows ----------------- */

/* dcol1[j] += sum_i dout[i,j] * xhat[i,j] (when dcol1 and x are given); dcol0[j] += sum_i dout[i,j] (when dcol0
 * is given). xhat = (x - mean[i]) * rstd[i]. */
__global__ static void k_column_sums(float *dcol0, float *dcol1, const float *dout, const float *x,
                                     const float *mean, const float *rstd, int n, int c)
{
    __shared__ float s0[32][33], s1[32][33];
    int j = blockIdx.x * 32 + threadIdx.x;
    float a0 = 0.0f, a1 = 0.0f;
    if (j < c)
        for (int i = threadIdx.y; i < n; i += 32) {
            float d = dout[(long)i * c + j];
            a0 += d;
            if (dcol1) a1 += d * (x[(long)i * c + j] - mean[i]) * rstd[i];
        }
    s0[threadIdx.y][threadIdx.x] = a0;
    s1[threadIdx.y][threadIdx.x] = a1;
    __syncthreads();
    if (threadIdx.y == 0 && j < c) {
        float t0 = 0.0f, t1 = 0.0f;
        for (int k = 0; k < 32; k++) {
            t0 += s0[k][threadIdx.x];
            t1 += s1[k][threadIdx.x];
        }
        if (dcol0) dcol0[j] += t0;
        if (dcol1) dcol1[j] += t1;
    }
}

static void column_sums(pp_cuda_ctx *c, float *dcol0, float *dcol1, const float *dout, const float *x,
                        const float *mean, const float *rstd, int n, int cols)
{
    if (cols <= 0 || (!dcol0 && !dcol1)) return;
    dim3 block(32, 32), grid((cols + 31) / 32);
    k_column_sums<<<grid, block, 0, c->stream>>>(dcol0, dcol1, dout, x, mean, rstd, n, cols);
    PP_CUDA_LAUNCHED();
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
    column_sums(c, db, dg, dout, x, mean, rstd, n, h);
}

/* ---- bias ---------------------------------------------------------------------------------------------- */

__global__ static void k_bias_add(float *x, const float *bias, int n, int c)
{
    long total = (long)n * c;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x)
        x[i] += bias[i % c];
}

void pp__cuda_bias_add(void *ctx, float *x, const float *bias, int n, int c)
{
    pp_cuda_ctx *cx = ctx_of(ctx);
    if ((long)n * c == 0) return;
    pp__cuda_enter(cx);
    k_bias_add<<<pp__cuda_blocks((long)n * c, PP_CUDA_THREADS), PP_CUDA_THREADS, 0, cx->stream>>>(x, bias, n, c);
    PP_CUDA_LAUNCHED();
}

void pp__cuda_bias_grad(void *ctx, float *db, const float *dout, int n, int c)
{
    pp_cuda_ctx *cx = ctx_of(ctx);
    if (n <= 0) return;
    pp__cuda_enter(cx);
    column_sums(cx, db, NULL, dout, NULL, NULL, NULL, n, c);
}

/* ---- GELU (tanh approximation) ------------------------------------------------------------------------- */

#define PP_GELU_K 0.7978845608028654f /* sqrt(2/pi) */
#define PP_GELU_C 0.044715f

__global__ static void k_gelu_fwd(float *out, const float *x, int count)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x) {
        float v = x[i];
        out[i] = 0.5f * v * (1.0f + tanhf(PP_GELU_K * (v + PP_GELU_C * v * v * v)));
    }
}

__global__ static void k_gelu_bwd(float *dx, const float *x, const float *dout, int count)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x) {
        float v = x[i];
        float t = tanhf(PP_GELU_K * (v + PP_GELU_C * v * v * v));
        float du = PP_GELU_K * (1.0f + 3.0f * PP_GELU_C * v * v);
        dx[i] = (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du) * dout[i];
    }
}

void pp__cuda_gelu_fwd(void *ctx, float *out, const float *x, int count)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (count <= 0) return;
    pp__cuda_enter(c);
    k_gelu_fwd<<<pp__cuda_blocks(count, PP_CUDA_THREADS), PP_CUDA_THREADS, 0, c->stream>>>(out, x, count);
    PP_CUDA_LAUNCHED();
}

void pp__cuda_gelu_bwd(void *ctx, float *dx, const float *x, const float *dout, int count)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (count <= 0) return;
    pp__cuda_enter(c);
    k_gelu_bwd<<<pp__cuda_blocks(count, PP_CUDA_THREADS), PP_CUDA_THREADS, 0, c->stream>>>(dx, x, dout, count);
    PP_CUDA_LAUNCHED();
}

/* ---- vector ops ---------------------------------------------------------------------------------------- */

__global__ static void k_axpy(float *y, float alpha, const float *x, int count)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x)
        y[i] += alpha * x[i];
}

__global__ static void k_fill(float *x, float value, int count)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x)
        x[i] = value;
}

void pp__cuda_axpy(void *ctx, float *y, float alpha, const float *x, int count)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (count <= 0) return;
    pp__cuda_enter(c);
    k_axpy<<<pp__cuda_blocks(count, PP_CUDA_THREADS), PP_CUDA_THREADS, 0, c->stream>>>(y, alpha, x, count);
    PP_CUDA_LAUNCHED();
}

void pp__cuda_fill(void *ctx, float *x, float value, int count)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (count <= 0) return;
    pp__cuda_enter(c);
    k_fill<<<pp__cuda_blocks(count, PP_CUDA_THREADS), PP_CUDA_THREADS, 0, c->stream>>>(x, value, count);
    PP_CUDA_LAUNCHED();
}

/* ---- softmax cross-entropy: one block per row, then one block for the mean ------------------------------ */

__global__ static void k_xent_rows(float *rowloss, float *probs, const float *logits, const int *targets, int V)
{
    long row = blockIdx.x;
    const float *z = logits + row * V;
    float *p = probs + row * V;
    float mx = -INFINITY;
    for (int j = threadIdx.x; j < V; j += blockDim.x) mx = fmaxf(mx, z[j]);
    mx = block_reduce(mx, 1);
    float s = 0.0f;
    for (int j = threadIdx.x; j < V; j += blockDim.x) s += expf(z[j] - mx);
    s = block_reduce(s, 0);
    float inv = 1.0f / s;
    for (int j = threadIdx.x; j < V; j += blockDim.x) p[j] = expf(z[j] - mx) * inv;
    /* -log softmax from the logits (not from probs, which may underflow to 0) */
    if (threadIdx.x == 0) rowloss[row] = logf(s) - (z[targets[row]] - mx);
}

/* loss[0] = mean of rowloss over n rows, summed in double in a fixed order */
__global__ static void k_mean(float *loss, const float *rowloss, int n)
{
    __shared__ double part[1024];
    double a = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) a += rowloss[i];
    part[threadIdx.x] = a;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) loss[0] = (float)(part[0] / n);
}

void pp__cuda_xent_fwd(void *ctx, float *loss, float *probs, const float *logits, const int *targets, int n, int V)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (n <= 0 || V <= 0) return;
    pp__cuda_enter(c);
    if (c->scratch_floats < (size_t)n) {
        /* stream-ordered: the old buffer is released after the kernels already queued that use it */
        if (c->scratch) PP_CUDA_CHECK(cudaFreeAsync(c->scratch, c->stream));
        PP_CUDA_CHECK(cudaMallocAsync((void **)&c->scratch, (size_t)n * sizeof(float), c->stream));
        c->scratch_floats = (size_t)n;
    }
    k_xent_rows<<<n, PP_CUDA_THREADS, 0, c->stream>>>(c->scratch, probs, logits, targets, V);
    PP_CUDA_LAUNCHED();
    k_mean<<<1, 1024, 0, c->stream>>>(loss, c->scratch, n);
    PP_CUDA_LAUNCHED();
}

__global__ static void k_xent_bwd(float *dlogits, const float *probs, const int *targets, const float *dloss,
                                  int n, int V)
{
    float scale = dloss[0] / n;
    long total = (long)n * V;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        long r = i / V, j = i % V;
        dlogits[i] = (probs[i] - (j == targets[r] ? 1.0f : 0.0f)) * scale;
    }
}

void pp__cuda_xent_bwd(void *ctx, float *dlogits, const float *probs, const int *targets, const float *dloss, int n,
                       int V)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if ((long)n * V == 0) return;
    pp__cuda_enter(c);
    k_xent_bwd<<<pp__cuda_blocks((long)n * V, PP_CUDA_THREADS), PP_CUDA_THREADS, 0, c->stream>>>(dlogits, probs,
                                                                                             targets, dloss, n, V);
    PP_CUDA_LAUNCHED();
}

/* ---- optimizers ---------------------------------------------------------------------------------------- */

__global__ static void k_sgd(float *p, const float *g, float lr, float wd, int count)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x)
        p[i] -= lr * (g[i] + wd * p[i]);
}

__global__ static void k_adamw(float *p, const float *g, float *m, float *v, float lr, float b1, float b2, float eps,
                               float wd, float bc1, float bc2, int count)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x) {
        float gi = g[i];
        float mi = b1 * m[i] + (1.0f - b1) * gi;
        float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        float mhat = mi / bc1, vhat = vi / bc2;
        /* decoupled decay: applied to the weight itself, not folded into the gradient moments */
        p[i] -= lr * (mhat / (sqrtf(vhat) + eps) + wd * p[i]);
    }
}

void pp__cuda_sgd(void *ctx, float *p, const float *g, float lr, float wd, int count)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (count <= 0) return;
    pp__cuda_enter(c);
    k_sgd<<<pp__cuda_blocks(count, PP_CUDA_THREADS), PP_CUDA_THREADS, 0, c->stream>>>(p, g, lr, wd, count);
    PP_CUDA_LAUNCHED();
}

void pp__cuda_adamw(void *ctx, float *p, const float *g, float *m, float *v, float lr, float beta1, float beta2,
                    float eps, float wd, int t, int count)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (count <= 0) return;
    if (t < 1) PP_DIE("call the optimizer with step t >= 1", "adamw: step t = %d", t);
    pp__cuda_enter(c);
    float bc1 = (float)(1.0 - pow((double)beta1, t)), bc2 = (float)(1.0 - pow((double)beta2, t));
    k_adamw<<<pp__cuda_blocks(count, PP_CUDA_THREADS), PP_CUDA_THREADS, 0, c->stream>>>(p, g, m, v, lr, beta1, beta2,
                                                                                    eps, wd, bc1, bc2, count);
    PP_CUDA_LAUNCHED();
}
