/* backend_cpu.c: the `cpu` backend: host memory (64-byte aligned; zero-filled unless an op writes it whole) and
 * the C kernels of kernels/cpu, GEMM through OpenBLAS on one thread per rank. Always built; every op is
 * synchronous. */
#include <cblas.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu/cpu_kernels.h"
#include "error.h"

#define PP__CPU_ALIGN 64

typedef struct pp_cpu_ctx {
    int rank, nranks;
    char desc[200];
} pp_cpu_ctx;

static void *cpu_alloc_uninit(void *ctx, size_t bytes) {
    /* aligned_alloc wants a multiple of the alignment; 0 bytes still gets a block so the result is never NULL. */
    size_t rounded = (bytes + PP__CPU_ALIGN - 1) / PP__CPU_ALIGN * PP__CPU_ALIGN;
    if (rounded == 0) rounded = PP__CPU_ALIGN;
    void *p = aligned_alloc(PP__CPU_ALIGN, rounded);
    if (!p)
        PP_DIE("use a smaller model or micro-batch (--width, --microbatch-size), or free host memory",
               "out of memory allocating %zu bytes (%.1f MiB) for a tensor of the cpu backend", bytes,
               (double)bytes / (1 << 20));
    return p;
}

static void *cpu_alloc(void *ctx, size_t bytes) {
    void *p = cpu_alloc_uninit(ctx, bytes);
    memset(p, 0, bytes);
    return p;
}

static void cpu_free(void *ctx, void *p) { free(p); }

static void cpu_zero(void *ctx, void *p, size_t bytes) {
    if (bytes) memset(p, 0, bytes);
}

static void cpu_copy(void *ctx, void *dst, const void *src, size_t bytes) {
    if (bytes && dst != src) memmove(dst, src, bytes);
}

static void cpu_sync(void *ctx) {}

static const char *cpu_describe(void *ctx) { return ((pp_cpu_ctx *)ctx)->desc; }

const pp_backend_ops pp__backend_cpu_ops = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .zero = cpu_zero,
    .to_host = cpu_copy,
    .from_host = cpu_copy,
    .copy = cpu_copy,
    .sync = cpu_sync,
    .gemm = pp__cpu_gemm,
    .embedding_fwd = pp__cpu_embedding_fwd,
    .embedding_bwd = pp__cpu_embedding_bwd,
    .layernorm_fwd = pp__cpu_layernorm_fwd,
    .layernorm_bwd = pp__cpu_layernorm_bwd,
    .bias_add = pp__cpu_bias_add,
    .bias_grad = pp__cpu_bias_grad,
    .gelu_fwd = pp__cpu_gelu_fwd,
    .gelu_bwd = pp__cpu_gelu_bwd,
    .axpy = pp__cpu_axpy,
    .fill = pp__cpu_fill,
    .xent_fwd = pp__cpu_xent_fwd,
    .xent_bwd = pp__cpu_xent_bwd,
    .sgd = pp__cpu_sgd,
    .adamw = pp__cpu_adamw,
    .attn_fwd = pp__cpu_attn_fwd,
    .attn_bwd = pp__cpu_attn_bwd,
    /* no device timers: the runtime times cpu ops with the host clock */
    .timer_epoch = NULL,
    .timer_begin = NULL,
    .timer_end = NULL,
    .timer_read = NULL,
    .describe = cpu_describe,
    .alloc_uninit = cpu_alloc_uninit,
};

static pthread_once_t cpu_blas_once = PTHREAD_ONCE_INIT;

/* Ranks are threads (or processes) of their own: a BLAS thread pool per GEMM would oversubscribe the cores and
 * change the blocking, hence the summation order, with the core count. */
static void cpu_blas_init(void) {
    openblas_set_num_threads(1);
    /* Activations and stashes are allocated and freed op after op. Served from the heap, a freed block is
     * reused as is; served by mmap (glibc's default above 128 KiB), every allocation would fault its pages in
     * afresh, which dominated large messages and wide models. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    /* Rank threads start afresh every step; each got a heap of its own, which glibc unmapped once empty at the
     * step's end, so every step faulted its activations in again (25 MB a step at hidden 256, 2% of its time).
     * One arena for all keeps them; the lock is taken once per tensor, not per element. */
    mallopt(M_ARENA_MAX, 1);
}

/* Opens a cpu backend instance for rank of nranks; never fails (err is untouched). Close with
 * pp__backend_cpu_close. */
pp_backend *pp__backend_cpu_open(int rank, int nranks, char *err, size_t errlen) {
    pthread_once(&cpu_blas_once, cpu_blas_init);
    pp_cpu_ctx *c = pp__xcalloc(1, sizeof *c);
    c->rank = rank;
    c->nranks = nranks;
    char blas[120];
    pp__cpu_blas_describe(blas, sizeof blas);
    snprintf(c->desc, sizeof c->desc, "%s, 1 thread per rank", blas);
    pp_backend *be = pp__xcalloc(1, sizeof *be);
    be->ops = &pp__backend_cpu_ops;
    be->ctx = c;
    return be;
}

/* Closes an instance opened by pp__backend_cpu_open (NULL is fine); memory it allocated must be freed first. */
void pp__backend_cpu_close(pp_backend *be) {
    if (!be) return;
    free(be->ctx);
    free(be);
}
