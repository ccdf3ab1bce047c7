/* sched_kit.h: what finds good orders for lab 09's problems (sched_problem.h), the kit's alone: the serial order and
 * the reference heuristic (sched_greedy.c), and the integer program's optimum (sched_ilp.c with GLPK, else
 * sched_ilp_absent.c). A handout has neither these files nor this header: it grades its public problems from the
 * figures the kit recorded (sched_refs_recorded.c). */
#ifndef PP_THEORY_SCHED_KIT_H
#define PP_THEORY_SCHED_KIT_H

#include "sched_problem.h"

/* The serial order: one micro-batch through the pipeline and back before the next starts (each rank's ops of it in
 * path order). Every rank holds at most v stashes, so it is valid under any cap pb allows: the orders below fall back
 * on it. Fills s (free with pp__schedule_free). */
void pp__sched_serial(const pp_sched_problem *pb, pp_schedule *s);

/* The reference heuristic: a list scheduler in the manner of the zero-bubble paper's (Qi et al.), which fills the
 * ranks' idle time with weight halves and holds each rank under the cap. Fills s (free with pp__schedule_free);
 * returns 0, or -1 when pb is not a problem. */
int pp__sched_greedy(const pp_sched_problem *pb, pp_schedule *s);

/* 1 where this build has the integer program's solver (GLPK), 0 where it does not. */
extern const int pp__sched_ilp_built;

/* The optimum of pb by an integer program (GLPK's branch and cut), within limit_s seconds: returns 1 with the best
 * order in s and its makespan in *makespan when it is proved optimal, 0 when the limit ended the search (s and
 * *makespan the best order found, or s empty and *makespan -1 when none), -1 when pb is not a problem or this build
 * has no solver. */
int pp__sched_optimum(const pp_sched_problem *pb, double limit_s, pp_schedule *s, double *makespan);

/* The same with the program bounded from above by the serial order alone (heuristic 0) or also by the kit's heuristic
 * (1, as pp__sched_optimum): with 0 the program itself must find the optimum, which is how tests/test_sched_opt.c
 * checks the formulation (the heuristic often reaches the lower bound, and then no program is solved at all). */
int pp__sched_optimum_bounded(const pp_sched_problem *pb, double limit_s, int heuristic, pp_schedule *s,
                              double *makespan);

#endif /* PP_THEORY_SCHED_KIT_H */
