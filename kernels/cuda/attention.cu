/* attention.cu: the CUDA causal multi-head self-attention, forward and backward. Mirrors kernels/cpu/attention.c.
 *
 * The products are cuBLAS strided batched GEMMs over the heads of one sequence: head j of q starts hd floats after
 * head j-1 in the same rows, and its T x T probabilities T*T floats after, so one call per sequence covers its nh
 * heads with constant strides (the heads of different sequences lie T*nh*hd floats apart, which no single stride
 * joins to the heads' hd). Row-major as gemm.cu: C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T, operands
 * swapped, no copy. The products are whole T x T ones (the masked half is computed and overwritten: a batched call
 * takes one shape); the softmax and its backward are one warp per row, zeroing what the mask hides. */
#include "cuda_reduce.cuh"

/* Rows per block of the row kernels: one warp each. */
#define PP_CUDA_ATTN_ROWS 8

/* C = alpha op(A) op(B) + beta C, row-major with row strides lda/ldb/ldc, for `count` matrices at element strides
 * sA, sB, sC; fp32 or TF32 as the backend's gemm (c->tf32). */
static void gemm_heads(pp_cuda_ctx *c, int tA, int tB, int m, int n, int k, float alpha, const float *A, int lda,
                       long long sA, const float *B, int ldb, long long sB, float beta, float *C, int ldc,
                       long long sC, int count)
{
    cublasOperation_t opB = tB ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opA = tA ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasComputeType_t ct = c->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    PP_CUBLAS_CHECK(cublasGemmStridedBatchedEx(c->blas, opB, opA, n, m, k, &alpha, B, CUDA_R_32F, ldb, sB, A,
                                               CUDA_R_32F, lda, sA, &beta, C, CUDA_R_32F, ldc, sC, count, ct,
                                               CUBLAS_GEMM_DEFAULT));
}

/* Row r of the B*nh*T rows of att (token i = r % T): the scaled logits in columns 0..i become probabilities, max
 * subtracted, and columns i+1..T-1 become 0. fmaxf passes over a NaN, whose own exp then makes the row NaN, as on
 * the CPU. */
__global__ static void k_attn_softmax(float *att, long rows, int T)
{
    long r = (long)blockIdx.x * PP_CUDA_ATTN_ROWS + (threadIdx.x >> 5);
    int lane = threadIdx.x & 31;
    if (r >= rows) return;
    int i = (int)(r % T);
    float *s = att + r * T;
    float mx = -INFINITY;
    for (int j = lane; j <= i; j += 32) mx = fmaxf(mx, s[j]);
    mx = warp_max(mx);
    float sum = 0.0f;
    for (int j = lane; j <= i; j += 32) sum += expf(s[j] - mx);
    float inv = 1.0f / warp_sum(sum);
    for (int j = lane; j < T; j += 32) s[j] = j <= i ? expf(s[j] - mx) * inv : 0.0f;
}

/* Row r of dS = P o (dP - rowsum(dP o P)), in place over dP in ds; 0 above the diagonal (where dP was computed
 * too, and is masked rather than multiplied by P's zeros, so that a NaN of a later key stays out of the row). */
__global__ static void k_attn_softmax_bwd(float *ds, const float *att, long rows, int T)
{
    long r = (long)blockIdx.x * PP_CUDA_ATTN_ROWS + (threadIdx.x >> 5);
    int lane = threadIdx.x & 31;
    if (r >= rows) return;
    int i = (int)(r % T);
    float *d = ds + r * T;
    const float *p = att + r * T;
    float dot = 0.0f;
    for (int j = lane; j <= i; j += 32) dot += d[j] * p[j];
    dot = warp_sum(dot);
    for (int j = lane; j < T; j += 32) d[j] = j <= i ? p[j] * (d[j] - dot) : 0.0f;
}

/* Blocks of PP_CUDA_ATTN_ROWS warps for one warp per row. */
static int row_blocks(long rows) { return (int)((rows + PP_CUDA_ATTN_ROWS - 1) / PP_CUDA_ATTN_ROWS); }

/* out = softmax(q k^T / sqrt(hd), causal) v per (sequence, head), overwritten; att (B x nh x T x T) the
 * probabilities, zero above the diagonal. Three steps on the stream: the logits, the softmax, the product. */
void pp__cuda_attn_fwd(void *ctx, float *out, float *att, const float *q, const float *k, const float *v, int B,
                       int T, int nh, int hd)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (B <= 0 || T <= 0 || nh <= 0 || hd <= 0) return;
    pp__cuda_enter(c);
    int ld = nh * hd;
    long long tt = (long long)T * T;
    float scale = 1.0f / sqrtf((float)hd);
    for (int b = 0; b < B; b++) {
        size_t row0 = (size_t)b * T * ld;
        float *ab = att + (size_t)b * nh * tt;
        /* S = scale Q K^T, T x T per head */
        gemm_heads(c, 0, 1, T, T, hd, scale, q + row0, ld, hd, k + row0, ld, hd, 0.0f, ab, T, tt, nh);
    }
    long rows = (long)B * nh * T;
    k_attn_softmax<<<row_blocks(rows), PP_CUDA_ATTN_ROWS * 32, 0, c->stream>>>(att, rows, T);
    PP_CUDA_LAUNCHED();
    for (int b = 0; b < B; b++) {
        size_t row0 = (size_t)b * T * ld;
        /* out = P V, T x hd per head, into the head's columns */
        gemm_heads(c, 0, 0, T, hd, T, 1.0f, att + (size_t)b * nh * tt, T, tt, v + row0, ld, hd, 0.0f, out + row0,
                   ld, hd, nh);
    }
}

/* dq, dk, dv (overwritten) from dout and the forward's q, k, v, att; the whole scratch (B*nh*T*T) holds dP, then
 * dS in place, so that each product runs over every head of a sequence at once. */
void pp__cuda_attn_bwd(void *ctx, float *dq, float *dk, float *dv, float *scratch, const float *dout,
                       const float *q, const float *k, const float *v, const float *att, int B, int T, int nh, int hd)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (B <= 0 || T <= 0 || nh <= 0 || hd <= 0) return;
    pp__cuda_enter(c);
    int ld = nh * hd;
    long long tt = (long long)T * T;
    float scale = 1.0f / sqrtf((float)hd);
    for (int b = 0; b < B; b++) {
        size_t row0 = (size_t)b * T * ld, p0 = (size_t)b * nh * tt;
        /* dV = P^T dO; dP = dO V^T into the scratch */
        gemm_heads(c, 1, 0, T, hd, T, 1.0f, att + p0, T, tt, dout + row0, ld, hd, 0.0f, dv + row0, ld, hd, nh);
        gemm_heads(c, 0, 1, T, T, hd, 1.0f, dout + row0, ld, hd, v + row0, ld, hd, 0.0f, scratch + p0, T, tt, nh);
    }
    long rows = (long)B * nh * T;
    k_attn_softmax_bwd<<<row_blocks(rows), PP_CUDA_ATTN_ROWS * 32, 0, c->stream>>>(scratch, att, rows, T);
    PP_CUDA_LAUNCHED();
    for (int b = 0; b < B; b++) {
        size_t row0 = (size_t)b * T * ld, p0 = (size_t)b * nh * tt;
        /* dQ = scale dS K; dK = scale dS^T Q */
        gemm_heads(c, 0, 0, T, hd, T, scale, scratch + p0, T, tt, k + row0, ld, hd, 0.0f, dq + row0, ld, hd, nh);
        gemm_heads(c, 1, 0, T, hd, T, scale, scratch + p0, T, tt, q + row0, ld, hd, 0.0f, dk + row0, ld, hd, nh);
    }
}
