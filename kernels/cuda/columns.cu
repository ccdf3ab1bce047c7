/* columns.cu: sums down the columns of a row-major matrix, for the bias and LayerNorm gradients: in a fixed order
 * (a 32 x 32 block per 32 columns), so the result does not depend on the launch. */
#include "cuda_reduce.cuh"

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

void pp__cuda_column_sums(pp_cuda_ctx *c, float *dcol0, float *dcol1, const float *dout, const float *x,
                        const float *mean, const float *rstd, int n, int cols)
{
    if (cols <= 0 || (!dcol0 && !dcol1)) return;
    dim3 block(32, 32), grid((cols + 31) / 32);
    k_column_sums<<<grid, block, 0, c->stream>>>(dcol0, dcol1, dout, x, mean, rstd, n, cols);
    PP_CUDA_LAUNCHED();
}
