/* runner.h: runs one graded test. Each test has its own supervising process, forked from the grader: a child
 * subreaper that leads its own process group and writes only raw data (the run's results, or the warm-up's
 * answers) to a file of the grader's. The student's code never runs there: it runs in schedule drivers (one
 * process per rank, sandboxed: sandbox/host/host.c), or, with the mpi transport, in the drivers of an
 * `mpirun pplab grade-one` that the supervisor starts. Once the supervisor has killed and reaped every
 * descendant, the grader reads the file and computes the reference, every check and the score itself. A crash,
 * a hang or a deadlock in one test never stops the others. */
#ifndef PP_RUNNER_H
#define PP_RUNNER_H

#include <stdint.h>
#include <sys/types.h>

#include "grade.h"
#include "impl.h"
#include "reference.h"
#include "runtime.h"

typedef struct pp_sandbox pp_sandbox;

/* The uids this process's tests were given (as root), newest last, and how many: for the kit's tests, which
 * check that nothing of them is left. At most the last 256. */
const uid_t *pp__runner_uids(int *n);

/* How later tests run their drivers (uid, limits, lockdown); copied. The default is pp__sandbox_defaults(). */
void pp__runner_set_sandbox(const pp_sandbox *sb);

/* Picks how later tests run: "threads" (the default: every rank a thread of the supervisor, serving its driver)
 * or "mpi" (the supervisor starts `mpirun -np P pplab_exe grade-one ...`; pplab_exe must stay valid). The
 * warm-up, which has no ranks, never uses MPI. Returns -1 for an unknown transport. */
int pp__runner_set_transport(const char *transport, const char *pplab_exe);
/* Under mpi, the host file each test's mpirun is given (NULL: none, this machine alone); must stay valid. */
void pp__runner_set_hostfile(const char *hostfile);

/* When dir is set, every test whose run completes also draws its timeline above the canonical one as
 * dir/<test name>.png (gnuplot; the folder must exist). */
void pp__runner_set_plot_dir(const char *dir);

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

/* The unsafe debugging mode (pplab grade --in-process): schedules run inside each test's supervisor, from
 * the lab's shared object, unsandboxed. For debugging the grader and for measuring what the sandbox costs. */
void pp__runner_set_in_process(int on);

/* The run of test tc (without recomputation when plain) from the lab built as impl, on `transport`,
 * its raw results written to path stamped with token: the work of a supervisor, and of every process of
 * `pplab grade-one` (where rank 0 alone writes). deadline_s > 0 overrides the mpi transport's deadlock deadline.
 * Returns 0, or 1 when the file could not be written. */
int pp__runner_execute(const pp_test_config *tc, const pp_impl *impl, const char *backend, const char *transport,
                       double deadline_s, int plain, uint64_t token, const char *path);

/* Grades a finished run against the full-batch reference and the theory: the checks of grader/grade/checks.c, and the
 * timeline picture when a plot folder is set. plain is the same run without recomputation (recomputation configs
 * only), else NULL. ref is the reference computed for rc, which this call takes over (emptied), or NULL to
 * compute it here. */
void pp__runner_check(const pp_test_config *tc, const pp_run_config *rc, const pp_run_result *res,
                      const pp_run_result *plain, pp_reference *ref, pp_test_result *out);

#endif /* PP_RUNNER_H */
