/* checks_dp.h: the checks of a data-parallel run (lab 07: dp1f1b, dpinterleaved), beside checks.c's: the cause of
 * wrong gradients when it is the reduce's, the reduces themselves, and the exposed communication. */
#ifndef PP_CHECKS_DP_H
#define PP_CHECKS_DP_H

#include "grade.h"
#include "reference.h"

#define PP_PTS_REDUCE 1
#define PP_PTS_EXPOSED 2

/* 1 when c's schedule is a data-parallel row (its checks apply). */
int pp__checks_dp_applies(const pp_run_config *c);
/* Wrong gradients whose cause is the reduce (a reduce missing, the loss scaled twice or not at all for the
 * replicas, a reduce before the chunk's last backward): the cause into msg and 1; 0 when none of them is. */
int pp__checks_dp_diagnose(const pp_run_config *c, const pp_run_result *res, const pp_reference *ref, char *msg,
                           size_t len);
/* The reduce checks of a run whose gradients are right. */
void pp__checks_dp(const pp_run_config *c, const pp_run_result *res, pp_test_result *out);
/* The same checks at zero, with why (the gradients or the run failed first). */
void pp__checks_dp_gated(const pp_run_config *c, pp_test_result *out, const char *why);

#endif /* PP_CHECKS_DP_H */
