/* Lab 03: 1F1B (one forward, one backward), as PipeDream and Megatron-LM schedule it.
 *
 * Rank r first runs warmup = min(P-r-1, M) forwards, then alternates one forward and one backward (the steady
 * state) until every forward ran, then runs the remaining backwards (cooldown). The bubble is GPipe's, but a
 * stash is freed as soon as its backward ran, so rank r never holds more than min(P-r, M) stashes instead of M.
 *
 * Sends block until the neighbour posts the matching receive (rendezvous, like NCCL). In the steady state a
 * rank sends forward while its neighbour sends backward to it: if both block in pp_send, neither reaches its
 * receive. Post each send together with the receive that follows it, in one pp_group_start/pp_group_end pair.
 * Read docs/03-1f1b.md; grade with `make grade LAB=1f1b`. */
#include <stdlib.h>

#include "pp.h"

void pp_1f1b_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    int first = me == 0, last = me == P - 1;

    /* TODO 1: warmup: forwards 0..warmup-1, each: recv x (unless first), forward, send (unless last). */

    /* TODO 2: steady state, i = 0..M-warmup-1: forward of micro-batch warmup+i, then backward of micro-batch
     * i. Send the forward output while receiving the gradient for micro-batch i in one group; send dx while
     * receiving the next forward input in one group (the last iteration only sends). */

    /* TODO 3: cooldown: the remaining backwards, then one optimizer step. */
    (void)P, (void)M, (void)first, (void)last;
}
