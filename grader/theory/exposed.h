/* exposed.h: what the gradient reduce of a data-parallel step costs (lab 07): the reduce lane replayed over a
 * timeline, and the closed formula for the canonical dp1f1b and dpinterleaved orders. docs/07-hybrid.md, "What the
 * reduce costs", derives the formula; tests/test_schedules.c holds it to the replay over a grid of (D, P, M, v,
 * alpha, beta).
 *
 * Exposed communication is the time a step runs longer than the same order with a free reduce. */
#ifndef PP_THEORY_EXPOSED_H
#define PP_THEORY_EXPOSED_H

#include "replay.h"

/* The step's end once the reduces of `mode` (the schedule row's pp_reduce_mode) run on their lanes after the
 * compute of traces[0..n) (a replay or a run: one replica's P ranks, or every replica's, replica d's from d x P on):
 * a rank calls a chunk's reduce at the end of its last backward op (PP_REDUCE_OVERLAP) or of its last op
 * (PP_REDUCE_AT_END); the reduce starts on its stage's group lane once every member given has called it and the
 * lane is free, and costs its group's ring over the stage's gradient bytes. */
double pp__reduce_lane_end(const pp_run_config *c, pp_reduce_mode mode, const pp_trace *traces, int n);

/* The canonical order of c's schedule replayed on every replica's costs and links (pp__theory_grid): its step time with the reduce (*step) and with a
 * free one (*free_span, the compute's makespan); returns the exposed communication, *step - *free_span, or -1. */
double pp__theory_exposed_replay(const pp_run_config *c, double *step, double *free_span);

/* The closed formula: with even stages, no latency and no edge cost, the last micro-batch's backward runs down
 * the virtual stages back to back, so chunk c of rank r finishes its backwards (cP + r) backward costs b before
 * the step's end, and the lane adds up the costs C(c', r) of the reduces queued behind it:
 *     exposed = max(0, max over r, c of  sum_{c' <= c} C(c', r) - (cP + r) b).
 * -1 where the formula does not hold (the replay is the theory then). */
double pp__theory_exposed_formula(const pp_run_config *c);

/* The theory of a run: the formula where it holds, else the replay; *formula says which. */
double pp__theory_exposed(const pp_run_config *c, int *formula);

/* The free-reduce makespan of the order a run ran (its F, B and W ops on each replica's ranks, traces[0..D x P),
 * in the run's order), each replica replayed with its own links, the latest end: what the run's step would take if
 * its reduces cost nothing. -1 when the ops cannot be replayed. */
double pp__run_free_span(const pp_run_config *c, const pp_trace *traces);

#endif /* PP_THEORY_EXPOSED_H */
