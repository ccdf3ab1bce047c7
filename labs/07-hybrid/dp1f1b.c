/* Lab 07, part 1: pipeline x data parallel. D replicas of a P-stage pipeline (--dp D) train on one global batch
 * of D*M micro-batches, replica d taking micro-batches d*M..d*M+M-1 (pp_rank_replica says which d you are; the
 * library feeds your micro-batch mb the right data). Each replica runs 1F1B inside itself, exactly as lab 03; then
 * the D ranks that hold the same stage must sum their weight gradients (pp_grad_reduce) before each steps its
 * optimizer, or the replicas drift apart. A reduce costs virtual time on its own lane (pp.h says how much): here
 * it runs after the last backward, so all of it shows in the step's time. docs/07-hybrid.md works out how much,
 * and part 2 hides most of it. Grade with `make grade LAB=dp1f1b`. */
#include <stdlib.h>

#include "pp.h"

void pp_dp1f1b_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r), D = pp_rank_replicas(r);
    int first = me == 0, last = me == P - 1;

    /* TODO 1: your 1F1B of lab 03 runs here unchanged within the replica, but for one number: the loss gradient's
     * scale. The D replicas' gradients are summed, not averaged: what makes the sum the mean over the global
     * batch? */


    /* TODO 2: after the last backward, the replicas must agree on the gradients before the optimizer steps:
     * when is this rank's gradient complete, and which call sums it over the replicas holding the same stage? */
    (void)P, (void)M, (void)D, (void)first, (void)last;
}
