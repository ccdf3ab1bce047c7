/* cuda_reduce.cuh: what the CUDA kernels of several op families share: the block size, the context cast, and
 * warp and block reductions (fixed order: deterministic). Included only by the .cu files of kernels/cuda. */
#ifndef PP_CUDA_REDUCE_CUH
#define PP_CUDA_REDUCE_CUH

#include <math.h>

#include "cuda_common.h"

#define PP_CUDA_THREADS 256

static inline pp_cuda_ctx *ctx_of(void *ctx) { return (pp_cuda_ctx *)ctx; }

__device__ static inline float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ static inline float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Sum (or max) over a block of blockDim.x threads, a multiple of 32; every thread gets the result. */
__device__ static inline float block_reduce(float v, int is_max)
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

#endif /* PP_CUDA_REDUCE_CUH */
