/* xent.cu: the CUDA softmax cross-entropy: one block per row, then one block for the mean (in double). Mirrors
 * kernels/cpu/xent.c. */
#include "cuda_reduce.cuh"

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
