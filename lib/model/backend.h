/* backend.h: the compute backend interface. A backend is a table of operations plus a context (ggml style).
 * `cpu` is always built (C kernels in kernels/cpu, GEMM through OpenBLAS); `cuda` is registered when nvcc was
 * found (kernels/cuda, cuBLAS). Each rank opens its own backend instance, so a CUDA instance owns one stream.
 *
 * Conventions for every kernel: fp32, row-major, n rows; pointers are device memory of the same backend;
 * "+=" means the kernel accumulates into its output (gradients), "=" that it overwrites. Kernels may run
 * asynchronously; to_host() and sync() make results visible to the host. */
#ifndef PP_BACKEND_H
#define PP_BACKEND_H

#include <stddef.h>
#include <stdio.h>

typedef struct pp_backend_ops {
    const char *name;
    /* memory */
    void *(*alloc)(void *ctx, size_t bytes);                       /* zero-filled; never NULL (dies instead) */
    void (*free)(void *ctx, void *p);
    void (*zero)(void *ctx, void *p, size_t bytes);
    void (*to_host)(void *ctx, void *host_dst, const void *src, size_t bytes);   /* synchronous */
    void (*from_host)(void *ctx, void *dst, const void *host_src, size_t bytes); /* synchronous */
    void (*copy)(void *ctx, void *dst, const void *src, size_t bytes);          /* device to device */
    void (*sync)(void *ctx);
    /* C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C; op(X) = X^T when tX; lda/ldb/ldc row strides */
    void (*gemm)(void *ctx, int tA, int tB, int m, int n, int k, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);
    /* out[i,:] = table[tokens[i],:]  (n x h) */
    void (*embedding_fwd)(void *ctx, float *out, const float *table, const int *tokens, int n, int h);
    /* dtable[tokens[i],:] += dout[i,:] */
    void (*embedding_bwd)(void *ctx, float *dtable, const float *dout, const int *tokens, int n, int h);
    /* out = (x - mean) * rstd * g + b per row; mean[n], rstd[n] saved for the backward; eps = 1e-5 */
    void (*layernorm_fwd)(void *ctx, float *out, float *mean, float *rstd, const float *x, const float *g,
                          const float *b, int n, int h);
    /* dx = d(out)/dx^T dout (overwrites; skipped when dx is NULL); dg += sum(dout * xhat), db += sum(dout)
     * (skipped when dg/db are NULL), so the input and weight halves of a split backward can run apart */
    void (*layernorm_bwd)(void *ctx, float *dx, float *dg, float *db, const float *dout, const float *x,
                          const float *mean, const float *rstd, const float *g, int n, int h);
    /* x[i,j] += bias[j]  (n x c) */
    void (*bias_add)(void *ctx, float *x, const float *bias, int n, int c);
    /* db[j] += sum_i dout[i,j] */
    void (*bias_grad)(void *ctx, float *db, const float *dout, int n, int c);
    /* out = gelu(x), tanh approximation, count elements */
    void (*gelu_fwd)(void *ctx, float *out, const float *x, int count);
    /* dx = gelu'(x) * dout (overwrites) */
    void (*gelu_bwd)(void *ctx, float *dx, const float *x, const float *dout, int count);
    /* y += alpha * x */
    void (*axpy)(void *ctx, float *y, float alpha, const float *x, int count);
    /* x = value */
    void (*fill)(void *ctx, float *x, float value, int count);
    /* probs = softmax(logits) per row; loss[0] = mean_i -log probs[i, targets[i]]  (n x V) */
    void (*xent_fwd)(void *ctx, float *loss, float *probs, const float *logits, const int *targets, int n,
                     int V);
    /* dlogits = (probs - onehot(targets)) * dloss[0] / n  (overwrites; dloss is a 1-element device tensor) */
    void (*xent_bwd)(void *ctx, float *dlogits, const float *probs, const int *targets, const float *dloss,
                     int n, int V);
    /* p -= lr * (g + wd * p) */
    void (*sgd)(void *ctx, float *p, const float *g, float lr, float wd, int count);
    /* AdamW (decoupled weight decay), step t >= 1, bias-corrected moments m, v updated in place */
    void (*adamw)(void *ctx, float *p, const float *g, float *m, float *v, float lr, float beta1, float beta2,
                  float eps, float wd, int t, int count);
    /* Causal multi-head self-attention over B sequences of T tokens (n = B*T rows), nh heads of hd columns each:
     * q, k, v and out are n x (nh*hd), head j in columns j*hd .. j*hd+hd-1, token t of sequence b in row b*T+t.
     * out = softmax(q k^T / sqrt(hd), masked to keys t' <= t) v per (b, head), overwritten; att (B x nh x T x T,
     * row-major, index ((b*nh + j)*T + t)*T + t') receives those probabilities, zero above the diagonal, for the
     * backward. The softmax subtracts each row's maximum first, so no logit overflows. */
    void (*attn_fwd)(void *ctx, float *out, float *att, const float *q, const float *k, const float *v, int B, int T,
                     int nh, int hd);
    /* dq, dk, dv (each n x nh*hd, overwritten) from dout (n x nh*hd) and the forward's q, k, v and att; scratch
     * holds B*nh*T*T floats the kernel may overwrite (the probabilities' gradient). */
    void (*attn_bwd)(void *ctx, float *dq, float *dk, float *dv, float *scratch, const float *dout, const float *q,
                     const float *k, const float *v, const float *att, int B, int T, int nh, int hd);
    /* Optional (NULL on cpu): device-side timing of one op. timer_begin() marks the start of an op on the
     * backend's stream and returns a handle, timer_end() marks its end; timer_read() (after the step, once the
     * stream is idle) gives start and end in seconds relative to timer_epoch(), which the runtime calls at the
     * beginning of each step. Without them, ops are timed with the host clock. */
    void (*timer_epoch)(void *ctx);
    int (*timer_begin)(void *ctx);
    void (*timer_end)(void *ctx, int handle);
    int (*timer_read)(void *ctx, int handle, double *start_s, double *end_s);
    /* Optional: free-form description for `pplab info` and reports (device, SMs granted, mode). */
    const char *(*describe)(void *ctx);
    /* optional: like alloc, but the contents are undefined, for a tensor whose first operation writes every
     * element (zero-filling it first was 5% of a CPU step); NULL: alloc serves */
    void *(*alloc_uninit)(void *ctx, size_t bytes);
} pp_backend_ops;

/* Every slot of pp_backend_ops in struct order, required ones first (backend.c refuses a backend missing one), then
 * the optional ones. One list for every check: a slot added to the struct and not here fails to compile. */
#define PP_BACKEND_REQUIRED_OPS(X)                                                                             \
    X(alloc) X(free) X(zero) X(to_host) X(from_host) X(copy) X(sync) X(gemm) X(embedding_fwd)                  \
    X(embedding_bwd) X(layernorm_fwd) X(layernorm_bwd) X(bias_add) X(bias_grad) X(gelu_fwd) X(gelu_bwd)        \
    X(axpy) X(fill) X(xent_fwd) X(xent_bwd) X(sgd) X(adamw) X(attn_fwd) X(attn_bwd)
#define PP_BACKEND_OPTIONAL_OPS(X) X(timer_epoch) X(timer_begin) X(timer_end) X(timer_read) X(describe) X(alloc_uninit)
#define PP__BACKEND_COUNT_OP(slot) +1
enum {
    PP_BACKEND_NREQUIRED = 0 PP_BACKEND_REQUIRED_OPS(PP__BACKEND_COUNT_OP),
    PP_BACKEND_NSLOTS = PP_BACKEND_NREQUIRED + 0 PP_BACKEND_OPTIONAL_OPS(PP__BACKEND_COUNT_OP)
};
#ifdef __cplusplus
static_assert(sizeof(pp_backend_ops) == sizeof(const char *) + PP_BACKEND_NSLOTS * sizeof(void (*)(void)),
              "pp_backend_ops and PP_BACKEND_*_OPS in backend.h differ: add the new slot to the list");
#else
_Static_assert(sizeof(pp_backend_ops) == sizeof(const char *) + PP_BACKEND_NSLOTS * sizeof(void (*)(void)),
               "pp_backend_ops and PP_BACKEND_*_OPS in backend.h differ: add the new slot to the list");
#endif

typedef struct pp_backend {
    const pp_backend_ops *ops;
    void *ctx;
} pp_backend;

/* Opens an instance of the backend `name` ("cpu" or "cuda") for one rank of nranks; several ranks may share one
 * device. Returns NULL and writes a one-line reason into err when the backend is not compiled in or not usable
 * here (for cuda without a GPU the reason starts with "no CUDA device"). */
pp_backend *pp__backend_open(const char *name, int rank, int nranks, char *err, size_t errlen);
/* Closes an instance opened by pp__backend_open (NULL is fine). */
void pp__backend_close(pp_backend *be);

/* One line per compiled-in backend, for `pplab info`: name, usable here or why not, and any empty op slot. */
void pp__backend_describe_all(FILE *out);

/* Writes the names of the required op slots (every slot before timer_epoch) that ops leaves NULL into buf,
 * comma-separated and truncated to len, and returns how many there are. */
int pp__backend_missing_ops(const pp_backend_ops *ops, char *buf, size_t len);

/* The always-present CPU backend (kernels/cpu/backend_cpu.c). */
pp_backend *pp__backend_cpu_open(int rank, int nranks, char *err, size_t errlen);
void pp__backend_cpu_close(pp_backend *be);
extern const pp_backend_ops pp__backend_cpu_ops;

#endif /* PP_BACKEND_H */
