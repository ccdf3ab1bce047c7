/* grad_mix.c: a stage's wrong gradient as a least-squares mix of the micro-batches' own (grad_mix.h). */
#include "grad_mix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Solves A x = b (n x n, row-major, destroyed) by Gaussian elimination with partial pivoting. */
static int solve(double *A, double *b, double *x, int n) {
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[p * n + k])) p = i;
        if (fabs(A[p * n + k]) < 1e-300) return -1;
        for (int j = 0; j < n; j++) {
            double t = A[k * n + j];
            A[k * n + j] = A[p * n + j];
            A[p * n + j] = t;
        }
        double t = b[k];
        b[k] = b[p];
        b[p] = t;
        for (int i = k + 1; i < n; i++) {
            double f = A[i * n + k] / A[k * n + k];
            for (int j = k; j < n; j++) A[i * n + j] -= f * A[k * n + j];
            b[i] -= f * b[k];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int j = i + 1; j < n; j++) s -= A[i * n + j] * x[j];
        x[i] = s / A[i * n + i];
    }
    return 0;
}

/* Virtual stage vs's gradient as a mix of the micro-batches' own (least squares, c[0..M)): the stage's first
 * parameter in *first, how much of the gradient the mix leaves unexplained in *resid and its squared norm in
 * *gn. 1 when the fit could be solved. */
static int stage_mix(const pp_run_result *res, const pp_reference *ref, int vs, double *c, int *first, double *resid,
                     double *gn) {
    int M = ref->M;
    /* the stage's slice of the flattened gradient: parameters are in model order, as in the reference */
    size_t off = 0, n = 0;
    *first = -1;
    for (int i = 0; i < res->nparams; i++) {
        if (res->params[i].vstage == vs) {
            if (*first < 0) *first = i;
            n += (size_t)res->params[i].count;
        } else if (*first < 0) {
            off += (size_t)res->params[i].count;
        }
    }
    float *g = pp__xmalloc(n * sizeof *g);
    size_t k = 0;
    for (int i = *first; i < res->nparams && res->params[i].vstage == vs; i++) {
        memcpy(g + k, res->params[i].grad, (size_t)res->params[i].count * sizeof(float));
        k += (size_t)res->params[i].count;
    }
    double *A = pp__xcalloc((size_t)(M * M), sizeof *A), *b = pp__xcalloc((size_t)M, sizeof *b);
    for (int i = 0; i < M; i++) {
        const float *gi = ref->mb_grad[i] + off;
        for (size_t e = 0; e < n; e++) b[i] += (double)gi[e] * g[e];
        for (int j = 0; j <= i; j++) {
            const float *gj = ref->mb_grad[j] + off;
            double s = 0;
            for (size_t e = 0; e < n; e++) s += (double)gi[e] * gj[e];
            A[i * M + j] = A[j * M + i] = s;
        }
    }
    int ok = solve(A, b, c, M) == 0;
    *resid = *gn = 0;
    for (size_t e = 0; ok && e < n; e++) {
        double fit = 0;
        for (int i = 0; i < M; i++) fit += c[i] * ref->mb_grad[i][off + e];
        *resid += (g[e] - fit) * (g[e] - fit);
        *gn += (double)g[e] * g[e];
    }
    free(A), free(b), free(g);
    return ok;
}

/* What a stage's mix of micro-batches (stage_mix) says went wrong, into msg. */
static void describe_mix(const double *c, int M, int vs, int rank, char *msg, size_t len) {
    double want = 1.0 / M, tol = 0.05 / M, lo = c[0], hi = c[0];
    for (int i = 1; i < M; i++) lo = c[i] < lo ? c[i] : lo, hi = c[i] > hi ? c[i] : hi;
    if (hi - lo < tol && fabs(lo - want) > tol) {
        snprintf(msg, len, "virtual stage %d (rank %d) gradients are %.2fx the reference: did you scale the loss "
                 "by 1/M (pp_loss_grad(r, 1.0f / M)), once?", vs, rank, lo / want);
        return;
    }
    int zero_but_last = M > 1 && fabs(c[M - 1] - want) < tol;
    for (int i = 0; i < M - 1; i++) zero_but_last &= fabs(c[i]) < tol;
    if (zero_but_last) {
        snprintf(msg, len, "virtual stage %d (rank %d) only kept the last micro-batch's gradient: were "
                 "gradients zeroed between micro-batches? Accumulate them; the library zeroes once per step",
                 vs, rank);
        return;
    }
    int len0 = snprintf(msg, len, "virtual stage %d (rank %d):", vs, rank), said = 0;
    for (int i = 0; i < M && len0 < (int)len && said < 4; i++) {
        double times = c[i] / want;
        if (fabs(times - 1) < 0.05) continue;
        said++;
        if (fabs(times) < 0.05)
            len0 += snprintf(msg + len0, len - (size_t)len0, " micro-batch %d is missing;", i);
        else
            len0 += snprintf(msg + len0, len - (size_t)len0, " micro-batch %d counted %.2f times;", i, times);
    }
    if (len0 < (int)len) snprintf(msg + len0, len - (size_t)len0, " each should count once (scaled by 1/M)");
}

void pp__grad_mix_explain(const pp_run_result *res, const pp_reference *ref, int vs, char *msg, size_t len) {
    int first;
    double resid, gn, *c = pp__xcalloc((size_t)ref->M, sizeof *c);
    int ok = stage_mix(res, ref, vs, c, &first, &resid, &gn), rank = res->params[first].rank;
    if (gn == 0)
        snprintf(msg, len, "virtual stage %d (rank %d) has all-zero gradients: its backward never added to them", vs,
                 rank);
    else if (!ok || resid > 1e-4 * gn)
        snprintf(msg, len,
                 "virtual stage %d (rank %d) gradients are no mix of the micro-batches' gradients: a stage got the "
                 "wrong input or the wrong gradient (check tags, peers and which stash each backward uses)", vs, rank);
    else
        describe_mix(c, ref->M, vs, rank, msg, len);
    free(c);
}
