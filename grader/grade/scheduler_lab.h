/* scheduler_lab.h: lab 09, where the student writes the scheduler: the problem a test poses and the grading of the
 * order a file answers with (its kind, pp__scheduler_lab, is labkind.h's). */
#ifndef PP_SCHEDULER_LAB_H
#define PP_SCHEDULER_LAB_H

#include "grade.h"
#include "labkind.h"
#include "runtime.h"
#include "sched_problem.h"

/* The problem test tc poses: its P, M and v (1, or 2 in a V), its stages' costs by the virtual clock's rule (its
 * layout and edge cost: a heavier first and last stage), its latency and its cap (none given: P * v), and rc, the
 * run that trains the model with an order for it. Returns 0, or -1 with the one-line reason in err. */
int pp__scheduler_problem(const pp_test_config *tc, pp_sched_problem *pb, pp_run_config *rc, char *err, size_t len);

/* Grades text, what pp_scheduler_order wrote for tc's problem and returned (ret; missing: the file does not define
 * it), into out: a valid order, the cap held, the gradients of the order run on the model (where this build has the
 * order interpreter) and its makespan against the references (sched_problem.h's pp__sched_refs). */
void pp__scheduler_grade_text(const pp_test_config *tc, int missing, int ret, const char *text, pp_test_result *out);

#endif /* PP_SCHEDULER_LAB_H */
