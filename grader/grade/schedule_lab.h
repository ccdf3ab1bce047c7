/* schedule_lab.h: the run a schedule lab's supervisor makes (its kind, pp__schedule_lab, is in labkind.h). */
#ifndef PP_SCHEDULE_LAB_H
#define PP_SCHEDULE_LAB_H

#include <stdint.h>

#include "grade.h"
#include "impl.h"
#include "labkind.h"

/* The run of test tc (without recomputation when plain) of the lab built as impl from lab's step function, on
 * `transport`, its raw results written to path stamped with token: the work of a supervisor, and of every process
 * of `pplab grade-one` (where rank 0 alone writes). deadline_s > 0 overrides the mpi transport's deadlock
 * deadline. Returns 0, or 1 when the file could not be written. */
int pp__schedule_lab_execute(const pp_lab_info *lab, const pp_test_config *tc, const pp_impl *impl, const char *backend,
                             const char *transport, double deadline_s, int plain, uint64_t token, const char *path);

#endif /* PP_SCHEDULE_LAB_H */
