/* sched_ilp_absent.c: lab 09's optimum where the build has no GLPK (the Makefile's HAVE_GLPK is 0): no integer
 * program, so every call says so (sched_problem.h). sched_ilp.c is the real one. */
#include <string.h>

#include "sched_kit.h"

const int pp__sched_ilp_built = 0;

int pp__sched_optimum(const pp_sched_problem *pb, double limit_s, pp_schedule *s, double *makespan) {
    (void)pb, (void)limit_s;
    if (s) memset(s, 0, sizeof *s);
    if (makespan) *makespan = -1;
    return -1;
}
