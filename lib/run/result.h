/* result.h: what a run produced (pp_run_result, in runtime.h) as bytes, through the one serialiser (wire.h):
 * from the test process that ran a schedule to the grader's own process, which computes the reference and the
 * checks itself, and from every MPI rank to rank 0. */
#ifndef PP_RESULT_H
#define PP_RESULT_H

#include <stddef.h>

#include "runtime.h"
#include "wire.h"

/* One parameter's name, size, gradient and weight, as every result that carries parameters writes them (a run's,
 * the grader's reference). Decoding checks the size against the bytes left; 0, or -1 (p->grad, p->weight may
 * then be allocated: free them with the result). */
void pp__param_encode(pp_wire *w, const pp_param_result *p);
int pp__param_decode(pp_wire_in *r, pp_param_result *p);

/* Appends res (with its `steps` losses) to w. */
void pp__result_encode(pp_wire *w, const pp_run_result *res, int steps);

/* Parses a result written by pp__result_encode from r into res (freed with pp__result_free), checking that every
 * count fits a run of P ranks, v chunks and `steps` steps and the bytes that are there. The bubble and the
 * makespan are recomputed from the traces, never read. Returns 0, or -1 (res empty) for anything malformed. */
int pp__result_decode(pp_wire_in *r, int P, int v, int steps, pp_run_result *res);

#endif /* PP_RESULT_H */
