/* optim.cu: the CUDA SGD and AdamW updates. Mirrors kernels/cpu/optim.c. */
#include "cuda_reduce.cuh"

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
