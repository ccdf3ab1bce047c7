/* Lab 06, part 2: DualPipeV, DeepSeek-V3's DualPipe folded onto a V (PyTorch's ScheduleDualPipeV).
 *
 * The placement and the turn of part 1. DualPipeV's main phase pairs a forward of one chunk with a backward of the
 * other, which a GPU overlaps (the forward's message hides behind the backward's compute); here a pair is the
 * forward, then the whole backward. The cool-down splits the second half of its backwards into input and weight
 * halves to fill the drain. Read the order off docs/06-vshape.md's timeline and `build/pplab run --canonical
 * --schedule dualpipev ... --timeline` (it needs M >= 2P); the grader holds your bubble and chunk-stash peaks to
 * the canonical order's, and compares your order with it op by op only when one of them falls short.
 *
 * Start from your part 1's runner. Grade with `make grade LAB=dualpipev`. */
#include <stdlib.h>

#include "pp.h"


void pp_dualpipev_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    /* TODO 1: rank me's order, phase by phase as the timelines show it: which backwards are whole, which split? */

    /* TODO 2: run it: where does each input come from and each output go, for chunk 0 and chunk 1, and what
     * changes on rank P-1? Then one optimizer step. */
    (void)P, (void)M, (void)me;
}
