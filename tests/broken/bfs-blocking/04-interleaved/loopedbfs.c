/* BROKEN ON PURPOSE (bfs-blocking): breadth-first with plain blocking pp_send instead of pp_isend: rank 0 is
 * still sending its first chunk's forwards when the ring's last rank sends it the first input of its second
 * chunk, and every rank ends up blocked in a send. */
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

/* Sends are posted without blocking and waited at the end of the step: a rank's forwards of one chunk go out
 * while the ring's last rank is still sending it the first micro-batch of its next chunk, so a blocking send
 * would wait on a rank that is itself waiting to send. */
typedef struct sends {
    pp_request **q;
    int n;
} sends;

static void forward(pp_rank *r, pp_stash **stash, sends *s, int chunk, int mb) {
    int P = pp_rank_stages(r), me = pp_rank_id(r), vs = pp_virtual_stage(r, chunk), S = pp_virtual_stages(r);
    int M = pp_rank_microbatches(r);
    pp_tensor *x = vs == 0 ? NULL : pp_recv(r, (me + P - 1) % P, pp_tag(PP_FWD, mb, vs));
    pp_tensor *y = pp_stage_forward(r, chunk, mb, x, &stash[chunk * M + mb]);
    if (vs < S - 1) pp_send(r, y, (me + 1) % P, pp_tag(PP_FWD, mb, vs + 1));
}

static void backward(pp_rank *r, pp_stash **stash, sends *s, int chunk, int mb) {
    int P = pp_rank_stages(r), me = pp_rank_id(r), vs = pp_virtual_stage(r, chunk), S = pp_virtual_stages(r);
    int M = pp_rank_microbatches(r);
    pp_tensor *dy = vs == S - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, (me + 1) % P, pp_tag(PP_BWD, mb, vs));
    pp_tensor *dx = pp_stage_backward(r, stash[chunk * M + mb], dy);
    if (vs > 0) pp_send(r, dx, (me + P - 1) % P, pp_tag(PP_BWD, mb, vs - 1));
    pp_stash_free(r, stash[chunk * M + mb]);
}

void pp_loopedbfs_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), me = pp_rank_id(r);
    pp_stash **stash = calloc((size_t)(v * M), sizeof *stash);
    sends s = {calloc((size_t)(2 * v * M), sizeof(pp_request *)), 0};

    /* TODO 1: every chunk-forward, chunk after chunk. A chunk's input comes from the ring's previous rank, even
     * on rank 0 past its first chunk: which virtual stage sent it (pp_virtual_stage helps)? */
    for (int chunk = 0; chunk < v; chunk++)
        for (int mb = 0; mb < M; mb++) forward(r, stash, &s, chunk, mb);

    /* TODO 2: every chunk-backward. Which chunk's gradients can come first, and which of its micro-batches has the
     * last virtual stage just finished? */
    for (int chunk = v - 1; chunk >= 0; chunk--)
        for (int mb = M - 1; mb >= 0; mb--) backward(r, stash, &s, chunk, mb);

    /* TODO 3: wait for outstanding sends, then one optimizer step. */
    pp_waitall(r, s.q, s.n);
    free(s.q);
    free(stash);
    pp_optimizer_step(r);
    (void)P, (void)M, (void)v, (void)me;
}
