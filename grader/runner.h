/* runner.h: runs one graded test in a forked child with a time limit. The child's result returns over a pipe,
 * stamped with a token chosen by the parent; what the student's code prints is captured to a file and only its
 * tail is kept. A crash, a hang or a deadlock in one test never stops the others. With the mpi transport the
 * child execs `mpirun -np P pplab grade-one ...` instead, whose rank 0 writes the stamped result to a file; the
 * grading process itself never calls MPI. */
#ifndef PP_RUNNER_H
#define PP_RUNNER_H

#include "grade.h"
#include "runtime.h"

/* Runs test tc of the lab implemented by so_path (NULL when it failed to build: build_err says why, and every
 * check scores 0) on `backend`; fills out (zeroed first). Never initialises CUDA in this process. */
void pp__runner_test(const pp_test_config *tc, const char *so_path, const char *build_err, const char *backend,
                     pp_test_result *out);

/* Grades a finished run against the full-batch reference (computed here) and the theory: the checks of
 * grader/checks.c, and the timeline picture when a plot folder is set. plain is the same run without
 * recomputation (recomputation configs only), else NULL. */
void pp__runner_check(const pp_test_config *tc, const pp_run_config *rc, const pp_run_result *res,
                      const pp_run_result *plain, pp_test_result *out);

/* Kills every test in flight (their whole process groups) and removes their temporary files. Only
 * async-signal-safe calls: for SIGINT/SIGTERM handlers of the grading command. */
void pp__runner_abort_all(void);

/* When dir is set, every test whose run completes also draws its timeline above the canonical one as
 * dir/<test name>.png (gnuplot; the folder must exist). */
void pp__runner_set_plot_dir(const char *dir);

/* Picks how later tests run: "threads" (the default: every rank a thread of the forked child) or "mpi" (one
 * mpirun per test, started from the forked child, running pplab_exe grade-one on P processes; pplab_exe must
 * stay valid). The warm-up, which has no ranks, always runs in the child. Returns -1 for an unknown transport. */
int pp__runner_set_transport(const char *transport, const char *pplab_exe);

/* Grades test tc in this process and fills out (the body of the forked child, and of `pplab grade-one`).
 * transport "threads" runs every rank here, plus the run without recomputation for recomputation configs.
 * "mpi": every process of the mpirun calls it; each runs its rank, rank 0 alone runs the reference and the
 * checks and fills out, and since MPI initialises once per process the run without recomputation is the
 * caller's (plain_given: only its status and peak_bytes are read; NULL when that run failed). deadline_s > 0
 * overrides the run's deadlock deadline. Returns 1 when out was filled, 0 on the other MPI ranks. */
int pp__runner_grade(const pp_test_config *tc, const char *so_path, const char *backend, const char *transport,
                     double deadline_s, const pp_run_result *plain_given, pp_test_result *out);

/* The same in two halves, so several tests can run at once: start forks the test's process and returns at
 * once (NULL when there is nothing to wait for: out is already final), finish waits for it (within its time
 * limit, counted from its start) and completes out. Each started job is finished exactly once. */
typedef struct pp_runner_job pp_runner_job;
pp_runner_job *pp__runner_start(const pp_test_config *tc, const char *so_path, const char *build_err,
                                const char *backend, pp_test_result *out);
void pp__runner_finish(pp_runner_job *job, pp_test_result *out);

#endif /* PP_RUNNER_H */
