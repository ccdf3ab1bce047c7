/* gelu.cu: the CUDA GELU (tanh approximation) and its derivative, in the textbook form with tanhf; within 8e-7 of
 * the CPU kernel (tests/test_cuda.c). Mirrors kernels/cpu/gelu.c. */
#include "cuda_reduce.cuh"

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
