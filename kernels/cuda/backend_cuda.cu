/* backend_cuda.cu: the CUDA backend object: opening one instance per rank (device rank % device count, one
 * stream, one cuBLAS handle, a green-context SM share when ranks share a GPU), memory, synchronisation,
 * CUDA-event timers, describe(), and the ops table. The kernels live one op family per file, as in kernels/cpu. */
#include "cuda_common.h"

#include <stdint.h>
#include <string.h>

extern "C" {
pp_backend *pp__backend_cuda_open(int rank, int nranks, char *err, size_t errlen);
void pp__backend_cuda_close(pp_backend *be);
extern const pp_backend_ops pp__backend_cuda_ops;
}

static pp_cuda_ctx *ctx_of(void *ctx) { return (pp_cuda_ctx *)ctx; }

/* ---- memory -------------------------------------------------------------------------------------------- */

/* Stream-ordered allocation from the device's pool: the pool keeps freed blocks (release threshold raised at
 * open), so steady-state steps do not call into the driver. */
static void *cuda_alloc(void *ctx, size_t bytes)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    void *p = NULL;
    pp__cuda_enter(c);
    PP_CUDA_CHECK(cudaMallocAsync(&p, bytes ? bytes : 1, c->stream));
    PP_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes ? bytes : 1, c->stream));
    return p;
}

static void cuda_free(void *ctx, void *p)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (!p) return;
    pp__cuda_enter(c);
    PP_CUDA_CHECK(cudaFreeAsync(p, c->stream));
}

static void cuda_zero(void *ctx, void *p, size_t bytes)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (!bytes) return;
    pp__cuda_enter(c);
    PP_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, c->stream));
}

static void cuda_to_host(void *ctx, void *host_dst, const void *src, size_t bytes)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (!bytes) return;
    pp__cuda_enter(c);
    PP_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, c->stream));
    PP_CUDA_CHECK(cudaStreamSynchronize(c->stream));
}

static void cuda_from_host(void *ctx, void *dst, const void *host_src, size_t bytes)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (!bytes) return;
    pp__cuda_enter(c);
    PP_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, c->stream));
    PP_CUDA_CHECK(cudaStreamSynchronize(c->stream));
}

/* Device to device on this instance's stream. The source may belong to another rank (a message): its owner
 * synchronised its stream before posting, and may free or reuse the buffer as soon as the transport reports the
 * message delivered, i.e. when this returns. So the copy completes before returning. cudaMemcpyDefault lets the
 * source sit on another GPU (peer copy through unified addressing). */
static void cuda_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (!bytes) return;
    pp__cuda_enter(c);
    PP_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, c->stream));
    PP_CUDA_CHECK(cudaStreamSynchronize(c->stream));
}

static void cuda_sync(void *ctx)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    pp__cuda_enter(c);
    PP_CUDA_CHECK(cudaStreamSynchronize(c->stream));
}

/* ---- timers -------------------------------------------------------------------------------------------- */

/* Marks time zero of a step on the stream; handles of the previous step are recycled. */
static void cuda_timer_epoch(void *ctx)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    pp__cuda_enter(c);
    PP_CUDA_CHECK(cudaEventRecord(c->base, c->stream));
    c->base_recorded = 1;
    c->ev_used = 0;
}

static int cuda_timer_begin(void *ctx)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    pp__cuda_enter(c);
    if (c->ev_used == c->ev_pairs) {
        int np = c->ev_pairs ? 2 * c->ev_pairs : 256;
        c->ev = (cudaEvent_t *)pp__xrealloc(c->ev, (size_t)np * 2 * sizeof(cudaEvent_t));
        for (int i = 2 * c->ev_pairs; i < 2 * np; i++) PP_CUDA_CHECK(cudaEventCreate(&c->ev[i]));
        c->ev_pairs = np;
    }
    int h = c->ev_used++;
    PP_CUDA_CHECK(cudaEventRecord(c->ev[2 * h], c->stream));
    return h;
}

static void cuda_timer_end(void *ctx, int handle)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (handle < 0 || handle >= c->ev_used) return;
    pp__cuda_enter(c);
    PP_CUDA_CHECK(cudaEventRecord(c->ev[2 * handle + 1], c->stream));
}

/* 0 and the op's start and end in seconds since the epoch; -1 when the handle is unknown or no epoch was set.
 * Waits for the events, so call it once the step's work is queued. */
static int cuda_timer_read(void *ctx, int handle, double *start_s, double *end_s)
{
    pp_cuda_ctx *c = ctx_of(ctx);
    if (handle < 0 || handle >= c->ev_used || !c->base_recorded) return -1;
    pp__cuda_enter(c);
    float a = 0.0f, b = 0.0f;
    PP_CUDA_CHECK(cudaEventSynchronize(c->ev[2 * handle + 1]));
    PP_CUDA_CHECK(cudaEventElapsedTime(&a, c->base, c->ev[2 * handle]));
    PP_CUDA_CHECK(cudaEventElapsedTime(&b, c->base, c->ev[2 * handle + 1]));
    *start_s = a * 1e-3;
    *end_s = b * 1e-3;
    return 0;
}

static const char *cuda_describe(void *ctx) { return ctx_of(ctx)->desc; }

/* ---- open / close -------------------------------------------------------------------------------------- */

/* The device count, or -1 with the CUDA reason in err ("no CUDA device: use --backend cpu (reason)"). */
static int cuda_device_count(char *err, size_t errlen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
        const char *why = e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices";
        (void)cudaGetLastError();
        if (err && errlen) snprintf(err, errlen, "no CUDA device: use --backend cpu (%s)", why);
        return -1;
    }
    return n;
}

pp_backend *pp__backend_cuda_open(int rank, int nranks, char *err, size_t errlen)
{
    int ndev = cuda_device_count(err, errlen);
    if (ndev < 0) return NULL;
    if (nranks < 1) nranks = 1;
    pp_cuda_ctx *c = (pp_cuda_ctx *)pp__xcalloc(1, sizeof *c);
    c->rank = rank;
    c->nranks = nranks;
    c->dev = rank % ndev;
    cudaError_t e = cudaSetDevice(c->dev);
    if (e == cudaSuccess) e = cudaFree(0); /* creates the primary context now, not inside the first timed op */
    if (e != cudaSuccess) {
        if (err && errlen)
            snprintf(err, errlen, "no CUDA device: use --backend cpu (device %d: %s)", c->dev, cudaGetErrorString(e));
        (void)cudaGetLastError();
        free(c);
        return NULL;
    }
    cudaDeviceProp prop;
    PP_CUDA_CHECK(cudaGetDeviceProperties(&prop, c->dev));

    /* keep freed blocks in the pool instead of returning them to the driver at every sync */
    cudaMemPool_t pool;
    PP_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, c->dev));
    uint64_t keep = UINT64_MAX;
    PP_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));

    /* ranks on this device: dev, dev + ndev, ...; this rank is the local-th of them */
    int share = (nranks - c->dev + ndev - 1) / ndev, local = rank / ndev;
    c->share.sms_total = prop.multiProcessorCount;
    c->share.sms = prop.multiProcessorCount;
    c->share.ranks_on_device = share;
    pp__cuda_green_open(c->dev, local, share, &c->share, &c->stream);
    if (!c->stream) PP_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));

    PP_CUBLAS_CHECK(cublasCreate(&c->blas));
    PP_CUBLAS_CHECK(cublasSetStream(c->blas, c->stream));
    const char *tf = getenv("PP_CUDA_TF32");
    c->tf32 = tf && strcmp(tf, "1") == 0;
    PP_CUDA_CHECK(cudaEventCreate(&c->base));

    if (c->share.green)
        snprintf(c->desc, sizeof c->desc, "%s (GPU %d, %d SMs): green context, %d of %d SMs (%d ranks share the GPU), "
                 "%s GEMM", prop.name, c->dev, c->share.sms_total, c->share.sms, c->share.sms_total, share,
                 c->tf32 ? "TF32" : "fp32");
    else
        snprintf(c->desc, sizeof c->desc, "%s (GPU %d, %d SMs): stream, all %d SMs shared by %d rank%s (%s), %s GEMM",
                 prop.name, c->dev, c->share.sms_total, c->share.sms_total, share, share == 1 ? "" : "s",
                 c->share.why, c->tf32 ? "TF32" : "fp32");

    pp_backend *be = (pp_backend *)pp__xcalloc(1, sizeof *be);
    be->ops = &pp__backend_cuda_ops;
    be->ctx = c;
    return be;
}

void pp__backend_cuda_close(pp_backend *be)
{
    if (!be) return;
    pp_cuda_ctx *c = ctx_of(be->ctx);
    pp__cuda_enter(c);
    PP_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    if (c->scratch) PP_CUDA_CHECK(cudaFreeAsync(c->scratch, c->stream));
    PP_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    for (int i = 0; i < 2 * c->ev_pairs; i++) PP_CUDA_CHECK(cudaEventDestroy(c->ev[i]));
    free(c->ev);
    PP_CUDA_CHECK(cudaEventDestroy(c->base));
    PP_CUBLAS_CHECK(cublasDestroy(c->blas));
    if (c->share.green) pp__cuda_green_close(&c->share, c->stream);
    else PP_CUDA_CHECK(cudaStreamDestroy(c->stream));
    free(c);
    free(be);
}

/* Designated, as the cpu table (C++20): every slot is named, and -Wextra refuses one left out. */
const pp_backend_ops pp__backend_cuda_ops = {
    .name = "cuda",
    .alloc = cuda_alloc,
    .free = cuda_free,
    .zero = cuda_zero,
    .to_host = cuda_to_host,
    .from_host = cuda_from_host,
    .copy = cuda_copy,
    .sync = cuda_sync,
    .gemm = pp__cuda_gemm,
    .embedding_fwd = pp__cuda_embedding_fwd,
    .embedding_bwd = pp__cuda_embedding_bwd,
    .layernorm_fwd = pp__cuda_layernorm_fwd,
    .layernorm_bwd = pp__cuda_layernorm_bwd,
    .bias_add = pp__cuda_bias_add,
    .bias_grad = pp__cuda_bias_grad,
    .gelu_fwd = pp__cuda_gelu_fwd,
    .gelu_bwd = pp__cuda_gelu_bwd,
    .axpy = pp__cuda_axpy,
    .fill = pp__cuda_fill,
    .xent_fwd = pp__cuda_xent_fwd,
    .xent_bwd = pp__cuda_xent_bwd,
    .sgd = pp__cuda_sgd,
    .adamw = pp__cuda_adamw,
    .attn_fwd = pp__cuda_attn_fwd,
    .attn_bwd = pp__cuda_attn_bwd,
    .timer_epoch = cuda_timer_epoch,
    .timer_begin = cuda_timer_begin,
    .timer_end = cuda_timer_end,
    .timer_read = cuda_timer_read,
    .describe = cuda_describe,
    .alloc_uninit = nullptr, /* the pool's blocks are zeroed on the stream, which costs next to nothing there */
};
