/* Lab 04, second schedule: looped breadth-first (Lamy-Poirier, "Breadth-First Pipeline Parallelism", MLSys 2023;
 * PyTorch's ScheduleLoopedBFS). The placement is interleaved 1F1B's: chunk c of rank r is virtual stage c*P + r,
 * the ranks form a ring. The order is the other extreme: where the depth-first order sends a small group of
 * micro-batches through every chunk before the next group starts, the breadth-first order sends every
 * micro-batch through a chunk before any of them starts the next one, and runs no backward before the last
 * forward. In which order a chunk's micro-batches run each way, what that costs in stashes and where it wins
 * are docs/04-interleaved.md's section 7. Any M works, not only multiples of P. Grade with
 * `make grade LAB=loopedbfs`. */
#include <stdlib.h>

#include "pp.h"


void pp_loopedbfs_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), me = pp_rank_id(r);

    /* TODO 1: every chunk-forward, chunk after chunk. A chunk's input comes from the ring's previous rank, even
     * on rank 0 past its first chunk: which virtual stage sent it (pp_virtual_stage helps)? */

    /* TODO 2: every chunk-backward. Which chunk's gradients can come first, and which of its micro-batches has the
     * last virtual stage just finished? */

    /* TODO 3: wait for outstanding sends, then one optimizer step. */
    (void)P, (void)M, (void)v, (void)me;
}
