/* Lab 06, part 1: ZBV, zero bubble on a V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 6;
 * PyTorch's ScheduleZBVZeroBubble).
 *
 * Every rank holds two chunks: chunk 0 is virtual stage r, chunk 1 is virtual stage 2P-1-r (pp_virtual_stage says
 * so). Activations go down the ranks through chunk 0, turn on rank P-1 and come back up through chunk 1, so rank 0
 * holds both the embedding and the loss, and the turn needs no message: on rank P-1 chunk 0's output is chunk 1's
 * input, and chunk 1's input gradient is chunk 0's output gradient. Every backward is split into its input half
 * and its weight half. Read the order (warm-up, steady state, cool-down) off docs/06-vshape.md's timelines and
 * `build/pplab run --canonical --schedule zbv ... --timeline`; the grader holds your bubble and chunk-stash peaks to
 * the canonical order's, and compares your order with it op by op only when one of them falls short.
 *
 * Grade with `make grade LAB=zbv`. */
#include <stdlib.h>

#include "pp.h"


void pp_zbv_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    /* TODO 1: rank me's order of forwards, input halves and weight halves, chunk by chunk, as the timelines of
     * docs/06-vshape.md show it for every P and M. */

    /* TODO 2: run it: where does each input come from and each output go, for chunk 0 and chunk 1, and what
     * changes on rank P-1? Then one optimizer step. */
    (void)P, (void)M, (void)me;
}
