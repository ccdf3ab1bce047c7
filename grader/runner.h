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

#endif /* PP_RUNNER_H */
