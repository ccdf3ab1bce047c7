/* embedding.cu: the CUDA embedding, forward (a gather) and backward (a scatter-add: repeated tokens add with
 * atomicAdd, so its last bits can differ from run to run). Mirrors kernels/cpu/embedding.c. */
#include "cuda_reduce.cuh"

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
