/* cuda_common.h: what the files of the CUDA backend share: the per-rank context (device, stream, cuBLAS handle,
 * timing events), the checks that stop a run on a CUDA, cuBLAS or driver error, and the launch helpers.
 * Included by the .cu files of kernels/cuda and by the nccl transport (lib/transport/nccl.cu), which runs on the
 * backend's streams. The project headers are C, so they are wrapped in extern "C" here. */
#ifndef PP_CUDA_COMMON_H
#define PP_CUDA_COMMON_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" {
#include "backend.h"
#include "error.h"
extern const pp_backend_ops pp__backend_cuda_ops;
}

/* The SM share a rank was given. mode: "green context" when the rank owns a disjoint SM partition, "stream"
 * when it shares the whole device with the other ranks on it. */
typedef struct pp_cuda_share {
    const char *mode;
    int sms;                 /* SMs this rank may use */
    int sms_total;           /* SMs of the device */
    int ranks_on_device;     /* ranks sharing the device, this one included */
    char why[160];           /* why green contexts were not used ("" when they were) */
    void *green;             /* CUgreenCtx, or NULL */
} pp_cuda_share;

/* One rank's backend instance. Every op runs on `stream`; the instance is used by its rank's thread, except
 * copy(), which the threads transport may call from the peer's thread. */
typedef struct pp_cuda_ctx {
    int rank, nranks;
    int dev;                 /* rank % device count */
    cudaStream_t stream;
    cublasHandle_t blas;
    int tf32;                /* 1: GEMMs may use TF32 tensor cores (PP_CUDA_TF32=1) */
    pp_cuda_share share;
    float *scratch;          /* per-row losses of xent_fwd, grown on demand */
    size_t scratch_floats;
    /* timing: ev[2h] and ev[2h+1] are the begin and end events of handle h, measured against `base` */
    cudaEvent_t base;
    cudaEvent_t *ev;
    int ev_pairs, ev_used;
    int base_recorded;
    char desc[640];
} pp_cuda_ctx;

/* The hint printed under a CUDA error: what the reader can try, by error kind. */
const char *pp__cuda_hint(cudaError_t e);

/* Stops the run with file:line, the failing call, CUDA's error name and string, and a HINT. */
#define PP_CUDA_CHECK(call)                                                                                    \
    do {                                                                                                       \
        cudaError_t pp_e_ = (call);                                                                            \
        if (pp_e_ != cudaSuccess)                                                                              \
            PP_DIE(pp__cuda_hint(pp_e_), "CUDA call failed: %s: %s (%s)", #call, cudaGetErrorString(pp_e_),    \
                   cudaGetErrorName(pp_e_));                                                                   \
    } while (0)

/* Same for cuBLAS. */
#define PP_CUBLAS_CHECK(call)                                                                                  \
    do {                                                                                                       \
        cublasStatus_t pp_s_ = (call);                                                                         \
        if (pp_s_ != CUBLAS_STATUS_SUCCESS)                                                                    \
            PP_DIE("check the GEMM shapes and leading dimensions; CUBLAS_STATUS_NOT_INITIALIZED or ALLOC_FAILED " \
                   "mean the GPU is out of memory or the driver is broken (see nvidia-smi)",                   \
                   "cuBLAS call failed: %s: %s", #call, cublasGetStatusString(pp_s_));                         \
    } while (0)

/* After a kernel launch: a bad configuration shows up here, a fault inside the kernel at the next sync. */
#define PP_CUDA_LAUNCHED() PP_CUDA_CHECK(cudaGetLastError())

/* Makes the rank's device current on the calling thread (ranks are threads; several devices per process). */
static inline void pp__cuda_enter(const pp_cuda_ctx *c) { PP_CUDA_CHECK(cudaSetDevice(c->dev)); }

/* Blocks for a grid-stride loop over count elements. */
static inline int pp__cuda_blocks(long count, int threads)
{
    long b = (count + threads - 1) / threads;
    if (b > 8192) b = 8192;
    return b < 1 ? 1 : (int)b;
}

/* Splits the device's SMs among the ranks on it with green contexts (cuda_green.cu). Fills sh and, on success,
 * makes *stream a stream of the rank's green context; otherwise leaves *stream NULL and sh->why says why (the
 * caller then makes a plain stream). Never fails the open. */
void pp__cuda_green_open(int dev, int local, int share_count, pp_cuda_share *sh, cudaStream_t *stream);
/* Destroys the stream and green context made by pp__cuda_green_open (no-op without one). */
void pp__cuda_green_close(pp_cuda_share *sh, cudaStream_t stream);

/* Kernel launchers (embedding.cu, layernorm.cu, elementwise.cu, gelu.cu, xent.cu, optim.cu), with the signatures
 * of the pp_backend_ops slots. */
/* dcol1[j] += sum_i dout[i,j] * xhat[i,j] with xhat = (x - mean[i]) * rstd[i] (when dcol1 is given), dcol0[j] +=
 * sum_i dout[i,j] (when dcol0 is given), n x cols, on c's stream (columns.cu). */
void pp__cuda_column_sums(pp_cuda_ctx *c, float *dcol0, float *dcol1, const float *dout, const float *x,
                          const float *mean, const float *rstd, int n, int cols);

void pp__cuda_embedding_fwd(void *ctx, float *out, const float *table, const int *tokens, int n, int h);
void pp__cuda_embedding_bwd(void *ctx, float *dtable, const float *dout, const int *tokens, int n, int h);
void pp__cuda_layernorm_fwd(void *ctx, float *out, float *mean, float *rstd, const float *x, const float *g,
                            const float *b, int n, int h);
void pp__cuda_layernorm_bwd(void *ctx, float *dx, float *dg, float *db, const float *dout, const float *x,
                            const float *mean, const float *rstd, const float *g, int n, int h);
void pp__cuda_bias_add(void *ctx, float *x, const float *bias, int n, int c);
void pp__cuda_bias_grad(void *ctx, float *db, const float *dout, int n, int c);
void pp__cuda_gelu_fwd(void *ctx, float *out, const float *x, int count);
void pp__cuda_gelu_bwd(void *ctx, float *dx, const float *x, const float *dout, int count);
void pp__cuda_axpy(void *ctx, float *y, float alpha, const float *x, int count);
void pp__cuda_fill(void *ctx, float *x, float value, int count);
void pp__cuda_xent_fwd(void *ctx, float *loss, float *probs, const float *logits, const int *targets, int n, int V);
void pp__cuda_xent_bwd(void *ctx, float *dlogits, const float *probs, const int *targets, const float *dloss, int n,
                       int V);
void pp__cuda_sgd(void *ctx, float *p, const float *g, float lr, float wd, int count);
void pp__cuda_adamw(void *ctx, float *p, const float *g, float *m, float *v, float lr, float beta1, float beta2,
                    float eps, float wd, int t, int count);
/* Causal multi-head self-attention (attention.cu): cuBLAS batched products over each sequence's heads, one warp
 * per row for the softmax and its backward. */
void pp__cuda_attn_fwd(void *ctx, float *out, float *att, const float *q, const float *k, const float *v, int B,
                       int T, int nh, int hd);
void pp__cuda_attn_bwd(void *ctx, float *dq, float *dk, float *dv, float *scratch, const float *dout,
                       const float *q, const float *k, const float *v, const float *att, int B, int T, int nh, int hd);
/* cuBLAS GEMM (gemm.cu). */
void pp__cuda_gemm(void *ctx, int tA, int tB, int m, int n, int k, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc);

#endif /* PP_CUDA_COMMON_H */
