/* runner.h: runs one graded test. Each test has its own supervising process, forked from the grader: a child
 * subreaper that leads its own process group and writes only raw data (the run's results, or the warm-up's
 * answers: its lab's kind decides, labkind.h) to a file of the grader's. The student's code never runs there: it
 * runs in drivers (one process per rank, sandboxed: sandbox/host/host.c), or, with the mpi transport, in the
 * drivers of an `mpirun pplab grade-one` that the supervisor starts. Once the supervisor has killed and reaped every
 * descendant, the grader reads the file and computes the reference, every check and the score itself. A crash,
 * a hang or a deadlock in one test never stops the others. */
#ifndef PP_RUNNER_H
#define PP_RUNNER_H

#include <stdint.h>
#include <sys/types.h>

#include "grade.h"
#include "impl_build.h"
#include "runopts.h"
#include "runtime.h"

/* The uids this process's tests were given (as root), newest last, and how many: for the kit's tests, which
 * check that nothing of them is left. At most the last 256. */
const uid_t *pp__runner_uids(int *n);

/* Runs test tc of the lab built as impl (NULL when the build failed: build_st and build_err say why, and every
 * check scores 0) on `backend`; fills out (zeroed first). Never initialises CUDA in this process. */
void pp__runner_test(const pp_test_config *tc, const pp_impl *impl, pp_status build_st, const char *build_err,
                     const char *backend, pp_test_result *out);

/* The same in two halves, so several tests can run at once: start forks the test's supervisor and returns at
 * once (NULL when there is nothing to wait for: out is already final), finish waits for it (within its time
 * limit, counted from its start) and completes out. Each started job is finished exactly once. */
typedef struct pp_runner_job pp_runner_job;
pp_runner_job *pp__runner_start(const pp_test_config *tc, const pp_impl *impl, pp_status build_st,
                                const char *build_err, const char *backend, pp_test_result *out);
void pp__runner_finish(pp_runner_job *job, pp_test_result *out);

/* Kills every test in flight (their whole process groups) and removes their temporary files. Only
 * async-signal-safe calls: for SIGINT/SIGTERM handlers of the grading command. */
void pp__runner_abort_all(void);

#endif /* PP_RUNNER_H */
