/* Lab 03: 1F1B (one forward, one backward), as PipeDream and Megatron-LM schedule it.
 *
 * GPipe's operations in another order: a warm-up of forwards, then one forward and one backward in turn (the
 * steady state) until every forward ran, then the remaining backwards (the cool-down). The warm-up is as long
 * as it takes rank r's first gradient to come back: its length is for you to find, from the timelines of
 * docs/03-1f1b.md, which asks what the order does to the bubble and what it saves in stashes. The grader holds
 * your bubble and stash peaks to the canonical order's; an order that differs but does no worse keeps full marks.
 *
 * Sends block until the neighbour posts the matching receive (rendezvous, like NCCL). In the steady state two
 * neighbours send to each other at the same time: find an order of calls in which neither waits for the other
 * forever (docs/03-1f1b.md section 4 shows two). Grade with `make grade LAB=1f1b`. */
#include <stdlib.h>

#include "pp.h"

void pp_1f1b_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    int first = me == 0, last = me == P - 1;

    /* TODO 1: the warm-up forwards: how many on this rank, with M possibly smaller than P? */

    /* TODO 2: the steady state, one forward then one backward: which micro-batches, and which calls let both
     * neighbours' sends complete? */

    /* TODO 3: the cool-down: the backwards still to run, then one optimizer step. */
    (void)P, (void)M, (void)first, (void)last;
}
