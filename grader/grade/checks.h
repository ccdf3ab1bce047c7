/* checks.h: the grader's checks, their points and tolerances.
 *
 * Tolerances are per-tensor relative error norms ||got - ref|| / ||ref|| in fp32 (unit roundoff u = 2^-24). The
 * pipeline sums the micro-batches' gradients one after the other while the reference takes the whole batch in
 * one GEMM, so the two differ by summation order only; docs/design.md ("Tolerances") derives each limit from how
 * that noise grows with M, depth and width, and tests/test_tolerance.c checks each against the noise and against
 * the smallest real mistake at the largest sizes the CLI accepts. */
#ifndef PP_CHECKS_H
#define PP_CHECKS_H

#include "grade.h"
#include "order_diff.h"
#include "reference.h"

#define PP_FP32_U (1.0 / 16777216.0)
/* Gradients of step 1: the noise grows like u (4 + log2 M), under 1e-6 at M = 1024, and the smallest mistake
 * (one micro-batch of M missing) moves the worst tensor by more than 1/M, 1e-3 at M = 1024. */
#define PP_GRAD_RTOL 1e-4
/* Losses: a mean over the batch's tokens accumulated in double, off by a few u whatever the size. */
#define PP_LOSS_RTOL 1e-5
/* Weights after K steps: the noise grows like 3 u sqrt(M) (the later steps' gradients are computed from weights
 * that already differ by the first step's noise); the limit is 64 u sqrt(M). */
double pp__weight_rtol(const pp_run_config *c);

#define PP_PTS_GRADS 4
#define PP_PTS_WEIGHTS 2
#define PP_PTS_ONE_F_ONE_B 1
#define PP_PTS_BUBBLE 2
#define PP_PTS_PEAK 2
#define PP_PTS_MESSAGES 1
#define PP_PTS_RECOMPUTE 2

/* ||got - ref|| / ||ref|| over n floats (NaN when got holds NaN). */
double pp__rel_err(const float *got, const float *ref, int n);

/* Errors within this fraction of the largest are ties for pp__checks_worst. */
#define PP_WORST_TIE 1e-3
/* The tensor a message names among n per-tensor errors (in model order): the first NaN, else the first whose
 * error is within PP_WORST_TIE of the largest. A mistake that scales every stage alike leaves errors that differ
 * by rounding only, and which of those is largest would depend on the machine's kernels; the first of the ties
 * does not. */
int pp__checks_worst(const double *err, int n);

/* 1 when every gradient of res is within PP_GRAD_RTOL of the reference's (the gradients check would pass). */
int pp__checks_grads_ok(const pp_run_result *res, const pp_reference *ref);

/* Grades a completed run: res (the student's), plain (the same schedule without recomputation, failed or not,
 * only for recomputation configs; NULL when that run left no report) and the reference (with per-micro-batch gradients). Adds checks to out. */
void pp__checks_run(const pp_run_config *c, const pp_run_result *res, const pp_run_result *plain,
                    const pp_reference *ref, pp_test_result *out);

/* When every gradient of res is zero (an untouched handout), adds the failed checks at once, without the cost of
 * a reference run, and returns 1; else returns 0 and adds nothing. */
int pp__checks_zero_grads(const pp_run_config *c, const pp_run_result *res, pp_test_result *out);

/* Adds the checks of a run that did not complete (all zero) and records its status and error, alone: a run that
 * failed has no bubble or peak to fall short of, so nothing of the canonical order is named (traces and waiting,
 * the ops it got through, are not read). */
void pp__checks_failed_run(const pp_run_config *c, pp_status st, const char *error, const pp_trace *traces,
                           const int *waiting, pp_test_result *out);

#endif /* PP_CHECKS_H */
