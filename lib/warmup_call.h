/* warmup_call.h: one warm-up call, from its arguments on the wire to its answer on the wire (rpc.h,
 * PP_WARMUP_*). The schedule driver answers the grader's calls with it; pplab's in-process debugging mode calls
 * it on a loaded object. The functions are whatever the student's file defines (NULL when it does not). */
#ifndef PP_WARMUP_CALL_H
#define PP_WARMUP_CALL_H

#include "wire.h"

typedef struct pp_warmup_fns {
    double (*bubble)(const char *schedule, int P, int M, int v);
    int (*peak)(const char *schedule, int P, int M, int v, int rank);
    int (*order)(const char *schedule, int P, int M, int rank, char *out, int cap);
    int (*partition)(int nlayers, const double *cost, int P, int *first);
} pp_warmup_fns;

/* Reads one call (function and arguments) from r, calls it, and writes the answer to w. */
void pp__warmup_call(const pp_warmup_fns *f, pp_wire_in *r, pp_wire *w);

#endif /* PP_WARMUP_CALL_H */
