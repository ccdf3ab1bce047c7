/* Lab 05, part 3: interleaved zero bubble, PyTorch's ScheduleInterleavedZeroBubble: lab 04's chunks with every
 * backward split as in parts 1 and 2.
 *
 * Each rank owns v chunks on lab 04's ring (chunk c of rank r is virtual stage c*P + r). The chunk order is lab
 * 04's depth-first one, in rounds: the micro-batches go through the chunks R at a time, where the M micro-batches
 * make max(1, M div P) equal rounds of R (pplab refuses a count that does not divide evenly, before your code
 * runs). Then 1F1B's shape over chunk ops, as in lab 04, with each backward split into its input half and its
 * weight half as in ZB-H1. docs/05-zerobubble.md's section 6 asks how long the warm-up must be now, which weight
 * halves each rank holds back and for how long, and what the chunks do to the bubble's floor.
 *
 * Grade with `make grade LAB=zbinterleaved`. */
#include <stdlib.h>

#include "pp.h"


void pp_zbinterleaved_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), me = pp_rank_id(r);

    /* TODO 1: the warm-up chunk-forwards. Lab 04's warm-up waited for the first gradient and for the messages;
     * which of the two does a zero-bubble order still need to wait for? */

    /* TODO 2: the steady state and the cool-down, op by op: a chunk-forward while any is left, then a chunk's
     * input half, then the oldest held weight half once this rank holds back as many as it should. */

    /* TODO 3: the weight halves still held back, then one optimizer step. */
    (void)P, (void)M, (void)v, (void)me;
}
