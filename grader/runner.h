/* runner.h: runs one graded test in a forked child with a time limit. The child's result returns over a pipe,
 * stamped with a token chosen by the parent; what the student's code prints is captured to a file and only its
 * tail is kept. A crash, a hang or a deadlock in one test never stops the others. */
#ifndef PP_RUNNER_H
#define PP_RUNNER_H

#include "grade.h"

/* Runs test tc of the lab implemented by so_path (NULL when it failed to build: build_err says why, and every
 * check scores 0) on `backend`; fills out (zeroed first). Never initialises CUDA in this process. */
void pp__runner_test(const pp_test_config *tc, const char *so_path, const char *build_err, const char *backend,
                     pp_test_result *out);

/* When dir is set, every test whose run completes also draws its timeline above the canonical one as
 * dir/<test name>.png (gnuplot; the folder must exist). */
void pp__runner_set_plot_dir(const char *dir);

/* The same in two halves, so several tests can run at once: start forks the test's process and returns at
 * once (NULL when there is nothing to wait for: out is already final), finish waits for it (within its time
 * limit, counted from its start) and completes out. Each started job is finished exactly once. */
typedef struct pp_runner_job pp_runner_job;
pp_runner_job *pp__runner_start(const pp_test_config *tc, const char *so_path, const char *build_err,
                                const char *backend, pp_test_result *out);
void pp__runner_finish(pp_runner_job *job, pp_test_result *out);

#endif /* PP_RUNNER_H */
