/* testset.h: the default grading set, a part per schedule of the schedule table: the configurations every
 * course grades unless it brings its own (--config), readable by students on purpose. The grader's data, kept
 * beside the suite that turns it into tests; the schedule table says what a schedule is, not how it is graded. */
#ifndef PP_TESTSET_H
#define PP_TESTSET_H

#include "grade.h"

/* Schedule `name`'s part of the default set, in order, with its count in *n; NULL and 0 for a name without
 * one (tests/test_schedules.c holds every row of the schedule table to having one). Each row is a test's
 * configuration with its model fields set; the suite adds what every test of the set shares (its lab, the time
 * limit, the reduce's default costs). */
const pp_test_config *pp__testset(const char *name, int *n);

#endif /* PP_TESTSET_H */
