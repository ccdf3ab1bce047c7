/* Lab 04: interleaved 1F1B (Megatron-LM). Each rank owns v chunks; chunk c of rank r is virtual stage
 * c*P + r, so a micro-batch visits rank 0, 1, ..., P-1, then rank 0 again for chunk 1, and so on. Rank r runs
 * warmup = min(2(P-r-1) + (v-1)P, vM) chunk-forwards, then alternates one chunk-forward and one
 * chunk-backward, then the remaining chunk-backwards. The k-th chunk-forward of a rank runs chunk
 * (k mod Pv) div P on micro-batch (k div Pv)*P + k mod P; the k-th chunk-backward the same micro-batch with the
 * chunks in reverse (v-1 minus that). The bubble shrinks to (P-1)/(vM+P-1), paid for with v times the messages.
 * pplab runs it only with M a multiple of P (it refuses other counts itself, before your code runs). Read
 * docs/04-interleaved.md; grade with `make grade LAB=interleaved`. */
#include <stdlib.h>

#include "pp.h"


void pp_interleaved_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), me = pp_rank_id(r);

    /* TODO 1: warmup chunk-forwards, steady (one chunk-forward then one chunk-backward), cooldown
     * chunk-backwards. Neighbours: the previous virtual stage lives on rank (me-1+P)%P, the next on (me+1)%P. */

    /* TODO 2: wait for outstanding sends, then one optimizer step. */
    (void)P, (void)M, (void)v, (void)me;
}
