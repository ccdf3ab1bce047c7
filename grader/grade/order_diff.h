/* order_diff.h: where a run's compute order parts from the canonical one, said as the mistake it looks like (a
 * whole backward where the order holds its weight half back, a warm-up of the wrong length, a weight half too early
 * or too late), for the bubble and peak checks' messages. */
#ifndef PP_ORDER_DIFF_H
#define PP_ORDER_DIFF_H

#include <stddef.h>

#include "config.h"
#include "trace.h"

/* The first place where a rank's compute order (F, B, W) differs from the canonical schedule's, as one line into
 * msg ("rank 0 op 4 is F mb1 chunk 1; the canonical order runs F mb1 chunk 0 there"), or "" when it does not;
 * rank prefer (-1: none) is looked at first. traces may be a failed run's ops so far, and waiting (NULL: none)
 * each rank's receive it failed in, which names the op it was about to run. */
void pp__order_diff(const pp_run_config *c, const pp_trace *traces, const int *waiting, int prefer, char *msg,
                    size_t len);

/* The q-th rank a diagnosis looks at (q = 0..P): the preferred one first (the rank a check found at fault, or -1
 * for none), then the others in order; -1 for a turn to skip. */
int pp__order_diff_rank(int q, int prefer, int P);

#endif /* PP_ORDER_DIFF_H */
