/* Lab 06, part 3: full DualPipe, DeepSeek-V3's schedule as its report draws it: two pipelines at once.
 *
 * Chunk 0 of rank r is stage r of a pipeline fed at rank 0 with micro-batches 0..M/2-1; chunk 1 is stage P-1-r of
 * a second pipeline, fed at rank P-1 with micro-batches M/2..M-1. pp_virtual_stage numbers them as the V does
 * (r and 2P-1-r), so the first pipeline is virtual stages 0..P-1 and the second P..2P-1: virtual stages 0 and P
 * read tokens, P-1 (rank P-1) and 2P-1 (rank 0) hold the losses, and nothing crosses between the two. Each
 * stage of the model now lives twice, once in each pipeline: the two copies must step with one gradient, the sum
 * of both pipelines', or they drift apart.
 *
 * Each half of the ranks runs your part 2's order for P/2 ranks on M/2 micro-batches a direction, rank r as its
 * mirror min(r, P-1-r) would. Which of rank r's chunks plays part 2's chunk 0, and what replaces part 2's turn on
 * its last rank? Read it off `build/pplab run --canonical --schedule dualpipe --stages 4 --microbatches 8
 * --timeline` and docs/06-vshape.md ("Full DualPipe"); the grader holds your bubble and stash peaks to the
 * canonical order's.
 *
 * Start from your part 2. Grade with `make grade LAB=dualpipe`. */
#include <stdlib.h>

#include "pp.h"


void pp_dualpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    /* TODO 1: rank me's order: which rank of a DualPipeV half is it, which chunk runs towards the middle, and
     * which micro-batches does each chunk carry? */

    /* TODO 2: run it: where does each chunk's input come from and its output go, where are the two losses? */

    /* TODO 3: the copies. Rank me's chunk c and rank P-1-me's chunk 1-c hold the same stage, each with the gradient
     * of its own pipeline's half of the batch. What must happen before the optimizer step, and in which order must
     * partners do it so that they meet? */
    (void)P, (void)M, (void)me;
}
