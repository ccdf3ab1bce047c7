/* Lab 04: interleaved 1F1B (Megatron-LM). Each rank owns v chunks; chunk c of rank r is virtual stage
 * c*P + r, so a micro-batch visits rank 0, 1, ..., P-1, then rank 0 again for chunk 1, and so on around the ring.
 * The order is 1F1B's shape over chunk ops, depth-first: a round of micro-batches goes through one chunk before
 * the next. Which (micro-batch, chunk) a rank's k-th chunk-forward runs, how many micro-batches a round holds and
 * how long the warm-up is are for you to read off docs/04-interleaved.md's timelines, which also ask what the
 * chunks buy against the messages they add. pplab runs it at every M PyTorch's ScheduleInterleaved1F1B takes: the
 * M micro-batches make max(1, M div P) rounds of equal size (it refuses a count they do not divide, before your
 * code runs). Grade with `make grade LAB=interleaved`. */
#include <stdlib.h>

#include "pp.h"


void pp_interleaved_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), me = pp_rank_id(r);

    /* TODO 1: the warm-up chunk-forwards, the steady state (one chunk-forward, one chunk-backward), the
     * cool-down. Where on the ring do a chunk's input and output live (pp_virtual_stage helps)? */

    /* TODO 2: wait for outstanding sends, then one optimizer step. */
    (void)P, (void)M, (void)v, (void)me;
}
