/* attention.c: causal multi-head self-attention, forward and backward, one (sequence, head) at a time.
 *
 * Every matrix product is an OpenBLAS sgemm on the head's columns in place: a head of q is a T x hd matrix whose
 * rows lie nh*hd floats apart, so it is addressed with that row stride and never copied. The causal mask is kept by
 * not computing what it hides: rows go in blocks of PP__ATTN_ROWS, and a block's products stop at its last row's
 * diagonal, which does 0.56 of the full T x T work at T = 256 (a whole product per head would do all of it, half
 * thrown away). The softmax loops have no branch on the data and their reductions run in fixed lanes, so GCC
 * vectorises them once per ISA (PP_CPU_CLONES) and every clone rounds exactly alike. A row is worked on in whole
 * lanes, those past its diagonal masked, rather than ending in a scalar remainder: at T = 64 the remainders, and
 * the scalar stores of a mask that the next vector load then waited on, cost a third of the forward. */
#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "cpu/cpu_kernels.h"
#include "cpu/cpu_exp.h"

/* Rows per block: fewer rows skip more of the masked work, but each block costs its own sgemm calls, whose fixed
 * cost shows at the small shapes (T = 64, hd = 16). 32 measured best over T = 64 .. 256, hd = 16 .. 64 (16 and 64
 * were up to 10% slower). */
#define PP__ATTN_ROWS 32
/* Lanes of the row loops: a multiple of every vector width, so that the lanes are whole registers. */
#define PP__ATTN_LANES 16
/* A row is read in whole lanes up to its diagonal rounded up, which stays inside the columns its block's product
 * wrote (a block ends on a multiple of the lanes, or at T): the lanes past the diagonal hold real logits, masked. */
_Static_assert(PP__ATTN_ROWS % PP__ATTN_LANES == 0, "a row block must end on whole lanes");
/* Below e^-64 a probability is written as 0: what that drops (under T e^-64 of a row sum >= 1) is far below a
 * float's rounding of the sum, and every probability stays a normal float after the division by a sum of up to T
 * terms (a subnormal operand slows every later product that reads it, many times over on x86). */
#define PP__ATTN_EXP_MIN (-64.0f)

/* Where row work in whole lanes ends: n rounded up to whole lanes, or down where that would pass the row's T. */
static inline int lanes_len(int n, int T) {
    int up = (n + PP__ATTN_LANES - 1) / PP__ATTN_LANES * PP__ATTN_LANES;
    return up <= T ? up : T / PP__ATTN_LANES * PP__ATTN_LANES;
}

/* exp(z) for the softmax, where z = logit - row max <= 0, or -inf in a masked lane: 0 below PP__ATTN_EXP_MIN, and
 * a NaN stays NaN (a NaN logit makes its whole row NaN, as it would in exact arithmetic, rather than vanishing).
 * The clamp keeps pp__cpu_exp_core's float-to-int conversion in range. */
static inline __attribute__((always_inline)) float attn_exp(float z) {
    float e = pp__cpu_exp_core(z > PP__ATTN_EXP_MIN ? z : PP__ATTN_EXP_MIN);
    e = z < PP__ATTN_EXP_MIN ? 0.0f : e;
    return z != z ? z : e;
}

/* The sum of the lanes, folded in halves: a few vector steps rather than a chain of PP__ATTN_LANES dependent adds
 * (a fifth of the softmax's time at T = 128), in a fixed order, so every clone rounds alike. */
static inline __attribute__((always_inline)) float fold_sum(float *lane) {
#pragma GCC unroll 16
    for (int w = PP__ATTN_LANES / 2; w > 0; w /= 2)
#pragma GCC unroll 16
        for (int l = 0; l < w; l++) lane[l] += lane[l + w];
    return lane[0];
}

/* The largest of the lanes, folded as fold_sum. */
static inline __attribute__((always_inline)) float fold_max(float *lane) {
#pragma GCC unroll 16
    for (int w = PP__ATTN_LANES / 2; w > 0; w /= 2)
#pragma GCC unroll 16
        for (int l = 0; l < w; l++) lane[l] = lane[l + w] > lane[l] ? lane[l + w] : lane[l];
    return lane[0];
}

/* The largest of x[0..n), read in whole lanes up to len (lanes past n are masked), then one by one up to n. A NaN
 * is passed over here; its own exp below makes the row NaN. */
static inline __attribute__((always_inline)) float row_max(const float *x, int n, int len) {
    float lane[PP__ATTN_LANES];
    for (int l = 0; l < PP__ATTN_LANES; l++) lane[l] = -INFINITY;
    int j = 0;
    for (; j + PP__ATTN_LANES <= len; j += PP__ATTN_LANES)
        for (int l = 0, valid = n - j; l < PP__ATTN_LANES; l++) {
            float v = x[j + l]; /* loaded whatever the mask: a load under a condition does not vectorise */
            v = l < valid ? v : -INFINITY;
            lane[l] = v > lane[l] ? v : lane[l];
        }
    for (; j < n; j++) lane[0] = x[j] > lane[0] ? x[j] : lane[0];
    return fold_max(lane);
}

/* x[j] = exp(x[j] - mx) for j < n, 0 for the masked lanes up to len; returns the sum. The sum is in float, in
 * PP__ATTN_LANES lanes folded pairwise: each lane adds T/16 terms <= 1, so the sum is within ~(T/16 + 4) ulps,
 * 1e-6 at T = 256, where the probabilities are floats anyway. Double lanes made the whole forward 7% slower at
 * T = 64 (the conversions, and a fold twice as long) for no accuracy the float probabilities keep. */
static inline __attribute__((always_inline)) float row_exp_sum(float *x, int n, int len, float mx) {
    float lane[PP__ATTN_LANES] = {0};
    int j = 0;
    for (; j + PP__ATTN_LANES <= len; j += PP__ATTN_LANES)
        for (int l = 0, valid = n - j; l < PP__ATTN_LANES; l++) {
            float z = x[j + l] - mx;
            float e = attn_exp(l < valid ? z : -INFINITY);
            x[j + l] = e;
            lane[l] += e;
        }
    for (; j < n; j++) {
        x[j] = attn_exp(x[j] - mx);
        lane[0] += x[j];
    }
    return fold_sum(lane);
}

/* sum over j < n of a[j] * b[j], in lanes up to len as row_exp_sum (masked past n, which also keeps a NaN of a
 * later key's value out of an earlier row). */
static inline __attribute__((always_inline)) float row_dot(const float *a, const float *b, int n, int len) {
    float lane[PP__ATTN_LANES] = {0};
    int j = 0;
    for (; j + PP__ATTN_LANES <= len; j += PP__ATTN_LANES)
        for (int l = 0, valid = n - j; l < PP__ATTN_LANES; l++) {
            float t = a[j + l] * b[j + l];
            lane[l] += l < valid ? t : 0.0f;
        }
    for (; j < n; j++) lane[0] += a[j] * b[j];
    return fold_sum(lane);
}

/* Rows i0..i1-1 of one head's T x T logits in att (row i computed in columns 0..i1-1) become probabilities: minus
 * the row's max, exp, divided by the sum; columns i+1..T-1 are zeroed, as the contract and the backward's products
 * over whole blocks want. No row is read past what its block's product wrote. */
PP_CPU_CLONES static void softmax_rows(float *att, int i0, int i1, int T) {
    for (int i = i0; i < i1; i++) {
        float *s = att + (size_t)i * T;
        int n = i + 1, len = lanes_len(n, T), end = len > n ? len : n;
        float mx = row_max(s, n, len);
        float inv = 1.0f / row_exp_sum(s, n, len, mx);
        for (int j = 0; j < end; j++) s[j] *= inv;
        memset(s + end, 0, (size_t)(T - end) * sizeof(float));
    }
}

/* Rows i0..i1-1 of dS = P o (dP - rowsum(dP o P)), in place over dP in ds (row i computed in columns 0..i1-1);
 * columns i+1..i1-1 are zeroed, the part of the diagonal block that the products for dq and dk read. */
PP_CPU_CLONES static void softmax_bwd_rows(float *ds, const float *att, int i0, int i1, int T) {
    for (int i = i0; i < i1; i++) {
        float *d = ds + (size_t)i * T;
        const float *p = att + (size_t)i * T;
        int n = i + 1, len = lanes_len(n, T), end = len > n ? len : n;
        float c = row_dot(d, p, n, len);
        for (int j = 0; j < end; j++) d[j] = j < n ? p[j] * (d[j] - c) : 0.0f;
        for (int j = end; j < i1; j++) d[j] = 0.0f;
    }
}

/* One head: q, k, v, out are T x hd with row stride ld, att its T x T probabilities. Per row block [i0, i1):
 * S = scale Q K^T over keys 0..i1-1, the softmax, then out = P V over the same keys. */
static void attn_fwd_head(float *out, float *att, const float *q, const float *k, const float *v, int T, int ld,
                          int hd, float scale) {
    for (int i0 = 0; i0 < T; i0 += PP__ATTN_ROWS) {
        int i1 = i0 + PP__ATTN_ROWS < T ? i0 + PP__ATTN_ROWS : T, m = i1 - i0;
        float *s = att + (size_t)i0 * T;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, i1, hd, scale, q + (size_t)i0 * ld, ld, k, ld, 0.0f,
                    s, T);
        softmax_rows(att, i0, i1, T);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, hd, i1, 1.0f, s, T, v, ld, 0.0f,
                    out + (size_t)i0 * ld, ld);
    }
}

/* out = softmax(q k^T / sqrt(hd), causal) v per (sequence, head), overwritten; att the probabilities, zero above
 * the diagonal. q, k, v, out are (B*T) x (nh*hd), head j in columns j*hd.., att B x nh x T x T. */
void pp__cpu_attn_fwd(void *ctx, float *out, float *att, const float *q, const float *k, const float *v, int B,
                      int T, int nh, int hd) {
    if (B <= 0 || T <= 0 || nh <= 0 || hd <= 0) return;
    int ld = nh * hd;
    float scale = 1.0f / sqrtf((float)hd);
    for (int b = 0; b < B; b++)
        for (int j = 0; j < nh; j++) {
            size_t col = (size_t)b * T * ld + (size_t)j * hd;
            attn_fwd_head(out + col, att + ((size_t)b * nh + j) * T * T, q + col, k + col, v + col, T, ld, hd,
                          scale);
        }
}

/* One head's backward (layout as attn_fwd_head; ds is T x T scratch). dV = P^T dO and dK = scale dS^T Q go by
 * blocks of their own rows, each product starting at the block's first key (P and dS are zero above the
 * diagonal); dP = dO V^T, dS and dQ = scale dS K by row blocks, as the forward. */
static void attn_bwd_head(float *dq, float *dk, float *dv, float *ds, const float *dout, const float *q,
                          const float *k, const float *v, const float *att, int T, int ld, int hd, float scale) {
    for (int c0 = 0; c0 < T; c0 += PP__ATTN_ROWS) {
        int m = (c0 + PP__ATTN_ROWS < T ? c0 + PP__ATTN_ROWS : T) - c0;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, hd, T - c0, 1.0f, att + (size_t)c0 * T + c0, T,
                    dout + (size_t)c0 * ld, ld, 0.0f, dv + (size_t)c0 * ld, ld);
    }
    for (int i0 = 0; i0 < T; i0 += PP__ATTN_ROWS) {
        int i1 = i0 + PP__ATTN_ROWS < T ? i0 + PP__ATTN_ROWS : T, m = i1 - i0;
        float *d = ds + (size_t)i0 * T;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, i1, hd, 1.0f, dout + (size_t)i0 * ld, ld, v, ld,
                    0.0f, d, T);
        softmax_bwd_rows(ds, att, i0, i1, T);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, hd, i1, scale, d, T, k, ld, 0.0f,
                    dq + (size_t)i0 * ld, ld);
    }
    for (int c0 = 0; c0 < T; c0 += PP__ATTN_ROWS) {
        int m = (c0 + PP__ATTN_ROWS < T ? c0 + PP__ATTN_ROWS : T) - c0;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, hd, T - c0, scale, ds + (size_t)c0 * T + c0, T,
                    q + (size_t)c0 * ld, ld, 0.0f, dk + (size_t)c0 * ld, ld);
    }
}

/* dq, dk, dv (overwritten) from dout and the forward's q, k, v, att. Of the scratch (B*nh*T*T floats by the
 * contract) one head's T x T is used, head after head: reused, it stays in cache. */
void pp__cpu_attn_bwd(void *ctx, float *dq, float *dk, float *dv, float *scratch, const float *dout,
                      const float *q, const float *k, const float *v, const float *att, int B, int T, int nh,
                      int hd) {
    if (B <= 0 || T <= 0 || nh <= 0 || hd <= 0) return;
    int ld = nh * hd;
    float scale = 1.0f / sqrtf((float)hd);
    for (int b = 0; b < B; b++)
        for (int j = 0; j < nh; j++) {
            size_t col = (size_t)b * T * ld + (size_t)j * hd;
            attn_bwd_head(dq + col, dk + col, dv + col, scratch, dout + col, q + col, k + col, v + col,
                          att + ((size_t)b * nh + j) * T * T, T, ld, hd, scale);
        }
}
