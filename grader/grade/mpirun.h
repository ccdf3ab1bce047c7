/* mpirun.h: a schedule test's runs under mpirun (the mpi transport), started by the test's supervisor. */
#ifndef PP_MPIRUN_H
#define PP_MPIRUN_H

#include <stdint.h>

#include "grade.h"
#include "impl_build.h"

/* The test's runs under mpirun, one each: without recomputation first (when the test needs it), then graded.
 * Their time after start-up counts against the test's limit; a run past it is killed with everything below
 * this process and recorded as timed out (the grader reports it as its own timeout), so that a deadlock found
 * by the deadline always comes before the limit, however long start-up took on a loaded machine. */
void pp__mpirun_execute(const pp_test_config *tc, const pp_impl *impl, const char *backend, uint64_t token,
                        const char *res_path, const char *plain_path);

/* Seconds the grader waits for a supervisor that runs tc under mpirun: the time limit, which the supervisor holds
 * from the ranks' start, plus each run's start-up and end; past it, only a supervisor that never ends is stopped. */
double pp__mpirun_wait_s(const pp_test_config *tc);

#endif /* PP_MPIRUN_H */
