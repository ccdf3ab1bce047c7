/* schedule_lab.h: the run a schedule lab's supervisor makes (its kind, pp__schedule_lab, is in labkind.h). */
#ifndef PP_SCHEDULE_LAB_H
#define PP_SCHEDULE_LAB_H

#include <stdint.h>

#include "grade.h"
#include "impl_build.h"
#include "labkind.h"
#include "reference.h"

/* The run of test tc (without recomputation when plain) of the lab built as impl from lab's step function, on
 * `transport`, its raw results written to path stamped with token: the work of a supervisor, and of every process
 * of `pplab grade-one` (where rank 0 alone writes). deadline_s > 0 overrides the mpi transport's deadlock
 * deadline. Returns 0, or 1 when the file could not be written. */
int pp__schedule_lab_execute(const pp_lab_info *lab, const pp_test_config *tc, const pp_impl *impl, const char *backend,
                             const char *transport, double deadline_s, int plain, uint64_t token, const char *path);

/* Grades a finished run of rc against the full-batch reference and the theory, adding the checks of checks.c to
 * out: a failed run's checks at zero with its error, an all-zero run's at once, else the reference (with each
 * micro-batch's own gradients only when the gradients are wrong, to say which) and every check. plain is the same
 * run without recomputation (recomputation configs only), else NULL; given is the reference computed for rc,
 * which this call takes over (emptied), or NULL to compute it here. */
void pp__schedule_lab_check(const pp_run_config *rc, const pp_run_result *res, const pp_run_result *plain,
                            pp_reference *given, pp_test_result *out);

#endif /* PP_SCHEDULE_LAB_H */
