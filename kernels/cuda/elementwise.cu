/* elementwise.cu: the CUDA bias add and gradient, axpy and fill. Mirrors kernels/cpu/elementwise.c. */
#include "cuda_reduce.cuh"

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
    pp__cuda_column_sums(cx, db, NULL, dout, NULL, NULL, NULL, n, c);
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
