/* checks.h: the grader's checks, their points and tolerances.
 *
 * Tolerances are per-tensor relative error norms ||got - ref|| / ||ref|| in fp32. The pipeline sums the
 * micro-batches' gradients one after the other while the reference takes the whole batch in one GEMM, so the two
 * differ by summation order only (measured: docs/design.md, "Tolerances"). The smallest real mistake, one
 * micro-batch skipped at the largest M of the default set, moves gradients by about 1/M; tests/test_grader.c
 * proves the threshold sits between the two. */
#ifndef PP_CHECKS_H
#define PP_CHECKS_H

#include "grade.h"
#include "reference.h"

#define PP_GRAD_RTOL 1e-4
#define PP_WEIGHT_RTOL 1e-5
#define PP_LOSS_RTOL 1e-5

#define PP_PTS_GRADS 4
#define PP_PTS_WEIGHTS 2
#define PP_PTS_OWNERSHIP 1
#define PP_PTS_BUBBLE 2
#define PP_PTS_PEAK 2
#define PP_PTS_MESSAGES 1
#define PP_PTS_RECOMPUTE 2

/* ||got - ref|| / ||ref|| over n floats (NaN when got holds NaN). */
double pp__rel_err(const float *got, const float *ref, int n);

/* 1 when every gradient of res is within PP_GRAD_RTOL of the reference's (the gradients check would pass). */
int pp__checks_grads_ok(const pp_run_result *res, const pp_reference *ref);

/* Grades a completed run: res (the student's), plain (the same schedule without recomputation, only for
 * recomputation configs, else NULL) and the reference (with per-micro-batch gradients). Adds checks to out. */
void pp__checks_run(const pp_run_config *c, const pp_run_result *res, const pp_run_result *plain,
                    const pp_reference *ref, pp_test_result *out);

/* When every gradient of res is zero (an untouched handout), adds the failed checks at once, without the cost of
 * a reference run, and returns 1; else returns 0 and adds nothing. */
int pp__checks_zero_grads(const pp_run_config *c, const pp_run_result *res, pp_test_result *out);

/* The first place where a rank's compute order (F, B, W) differs from the canonical schedule's, as one line into
 * msg ("rank 0 op 4 is F mb1 chunk 1; the canonical order runs F mb1 chunk 0 there"), or "" when it does not;
 * rank prefer (-1: none) is looked at first. traces may be a failed run's ops so far. */
void pp__order_diff(const pp_run_config *c, const pp_trace *traces, int prefer, char *msg, size_t len);

/* Adds the checks of a run that did not complete (all zero) and records its status and error. */
void pp__checks_failed_run(const pp_run_config *c, pp_status st, const char *error, pp_test_result *out);

#endif /* PP_CHECKS_H */
