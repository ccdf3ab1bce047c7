/* cpu_kernels.h: the fp32 CPU kernels behind the `cpu` backend (backend_cpu.c), one file per op family (gemm.c,
 * embedding.c, layernorm.c, gelu.c, elementwise.c, xent.c, optim.c, attention.c), as kernels/cuda has them. Each
 * has exactly the signature of its slot in pp_backend_ops (backend.h), whose comments are the contract: row-major,
 * "+=" accumulates, "=" overwrites. ctx is unused (the CPU kernels keep no state); pointers are ordinary host
 * memory. Every kernel is deterministic: a fixed summation order and no threading of its own (GEMM runs OpenBLAS
 * on one thread). */
#ifndef PP_CPU_KERNELS_H
#define PP_CPU_KERNELS_H

#include <stddef.h>

/* On x86-64 every loop kernel is built for AVX-512, AVX2 and the baseline, picked when the library loads (GCC's
 * ifunc). Contraction is off (-std=c11) and nothing is reassociated, so every clone rounds exactly alike: a
 * result depends on the inputs only, not on the machine. Clang before 15 emits no symbol for a cloned function,
 * so its builds (make fuzz) take the baseline alone. */
#if defined(__x86_64__) && !(defined(__clang__) && __clang_major__ < 15)
#define PP_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PP_CPU_CLONES
#endif

/* C[m,n] = alpha * op(A) * op(B) + beta * C through cblas_sgemm (row-major); with beta == 0 C is not read. */
void pp__cpu_gemm(void *ctx, int tA, int tB, int m, int n, int k, float alpha, const float *A, int lda,
                  const float *B, int ldb, float beta, float *C, int ldc);

/* out[i,:] = table[tokens[i],:] (n x h). */
void pp__cpu_embedding_fwd(void *ctx, float *out, const float *table, const int *tokens, int n, int h);
/* dtable[tokens[i],:] += dout[i,:], rows in order 0..n-1 (repeated tokens accumulate). */
void pp__cpu_embedding_bwd(void *ctx, float *dtable, const float *dout, const int *tokens, int n, int h);

/* out = (x - mean) * rstd * g + b per row, eps 1e-5, biased variance; mean/rstd (n) kept for the backward. */
void pp__cpu_layernorm_fwd(void *ctx, float *out, float *mean, float *rstd, const float *x, const float *g,
                           const float *b, int n, int h);
/* dx = (overwrites, skipped when NULL); dg += sum_i dout*xhat, db += sum_i dout (each skipped when NULL). */
void pp__cpu_layernorm_bwd(void *ctx, float *dx, float *dg, float *db, const float *dout, const float *x,
                           const float *mean, const float *rstd, const float *g, int n, int h);

/* out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
void pp__cpu_gelu_fwd(void *ctx, float *out, const float *x, int count);
/* dx = gelu'(x) * dout (overwrites). */
void pp__cpu_gelu_bwd(void *ctx, float *dx, const float *x, const float *dout, int count);

/* x[i,j] += bias[j] (n x c). */
void pp__cpu_bias_add(void *ctx, float *x, const float *bias, int n, int c);
/* db[j] += sum_i dout[i,j], rows in order 0..n-1. */
void pp__cpu_bias_grad(void *ctx, float *db, const float *dout, int n, int c);
/* y += alpha * x. */
void pp__cpu_axpy(void *ctx, float *y, float alpha, const float *x, int count);
/* x = value. */
void pp__cpu_fill(void *ctx, float *x, float value, int count);

/* probs = softmax(logits) per row (max-subtracted); loss[0] = mean_i -log probs[i, targets[i]] (n x V). */
void pp__cpu_xent_fwd(void *ctx, float *loss, float *probs, const float *logits, const int *targets, int n,
                      int V);
/* dlogits = (probs - onehot(targets)) * dloss[0] / n (overwrites). */
void pp__cpu_xent_bwd(void *ctx, float *dlogits, const float *probs, const int *targets, const float *dloss,
                      int n, int V);

/* p -= lr * (g + wd * p). */
void pp__cpu_sgd(void *ctx, float *p, const float *g, float lr, float wd, int count);
/* AdamW step t >= 1: m, v updated in place, p -= lr * (mhat / (sqrt(vhat) + eps) + wd * p). */
void pp__cpu_adamw(void *ctx, float *p, const float *g, float *m, float *v, float lr, float beta1, float beta2,
                   float eps, float wd, int t, int count);

/* Causal multi-head self-attention (n = B*T rows, nh heads of hd columns, head j in columns j*hd..): out =
 * softmax(q k^T / sqrt(hd), keys t' <= t) v per (sequence, head), overwritten; att (B x nh x T x T) the
 * probabilities, zero above the diagonal. Products through cblas_sgemm on each head's columns in place. */
void pp__cpu_attn_fwd(void *ctx, float *out, float *att, const float *q, const float *k, const float *v, int B,
                      int T, int nh, int hd);
/* dq, dk, dv (overwritten) from dout and the forward's q, k, v, att; scratch: T*T floats of it are used. */
void pp__cpu_attn_bwd(void *ctx, float *dq, float *dk, float *dv, float *scratch, const float *dout,
                      const float *q, const float *k, const float *v, const float *att, int B, int T, int nh,
                      int hd);

/* The OpenBLAS kernel behind pp__cpu_gemm (blas_core.c). ISA levels are ordered: a higher one runs every lower one. */
enum { PP_ISA_UNKNOWN = -1, PP_ISA_SSE, PP_ISA_AVX, PP_ISA_AVX2, PP_ISA_AVX512 };
/* The widest vector ISA this CPU and its OS run (PP_ISA_UNKNOWN off x86). */
int pp__cpu_isa(void);
/* The ISA an OpenBLAS core name's sgemm kernel uses (case-insensitive); PP_ISA_UNKNOWN for a name not listed. */
int pp__cpu_blas_core_isa(const char *core);
/* The core to force when OpenBLAS chose `chosen` on a CPU of ISA level `isa`: NULL when the choice is as good as
 * the ISA allows or either is unknown, else the best core of that level (e.g. "SkylakeX" for AVX-512). */
const char *pp__cpu_blas_better_core(const char *chosen, int isa);
/* Call first in main, before any thread starts: when OPENBLAS_CORETYPE is unset and OpenBLAS chose a weaker core
 * than the CPU allows, re-executes the program (argv as given to main) with it set; returns otherwise, also when
 * the re-execution is impossible. */
void pp__cpu_blas_settle(char **argv);
/* One line for `pplab info` and the benchmarks: OpenBLAS's version, the kernel in use and why that one. */
void pp__cpu_blas_describe(char *buf, size_t len);

#endif /* PP_CPU_KERNELS_H */
