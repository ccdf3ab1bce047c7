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

//>> solution
typedef struct job {
    int chunk, mb;
} job;

/* The k-th chunk-forward (or chunk-backward) in rounds of R micro-batches. */
static job nth(int R, int v, int k, int backward) {
    int chunk = (k % (R * v)) / R;
    job j = {backward ? v - 1 - chunk : chunk, (k / (R * v)) * R + k % R};
    return j;
}

/* Sends are posted without blocking and waited at the end of the step, so only receives ever block: they wait
 * for data in the order the schedule consumes it, and that order can always make progress. */
typedef struct sends {
    pp_request **q;
    int n;
} sends;

static void forward(pp_rank *r, pp_stash **stash, sends *s, job j) {
    int P = pp_rank_stages(r), me = pp_rank_id(r), vs = pp_virtual_stage(r, j.chunk), S = pp_virtual_stages(r);
    int M = pp_rank_microbatches(r);
    pp_tensor *x = vs == 0 ? NULL : pp_recv(r, (me + P - 1) % P, pp_tag(PP_FWD, j.mb, vs));
    pp_tensor *y = pp_stage_forward(r, j.chunk, j.mb, x, &stash[j.chunk * M + j.mb]);
    if (vs < S - 1) s->q[s->n++] = pp_isend(r, y, (me + 1) % P, pp_tag(PP_FWD, j.mb, vs + 1));
}

static void backward(pp_rank *r, pp_stash **stash, sends *s, job j) {
    int P = pp_rank_stages(r), me = pp_rank_id(r), vs = pp_virtual_stage(r, j.chunk), S = pp_virtual_stages(r);
    int M = pp_rank_microbatches(r);
    pp_tensor *dy = vs == S - 1 ? pp_loss_grad(r, 1.0f / (float)M)
                                : pp_recv(r, (me + 1) % P, pp_tag(PP_BWD, j.mb, vs));
    pp_tensor *dx = pp_stage_backward(r, stash[j.chunk * M + j.mb], dy);
    if (vs > 0) s->q[s->n++] = pp_isend(r, dx, (me + P - 1) % P, pp_tag(PP_BWD, j.mb, vs - 1));
    pp_stash_free(r, stash[j.chunk * M + j.mb]);
}
//<< solution

void pp_interleaved_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), me = pp_rank_id(r);
    //>> solution
    int rounds = M / P > 1 ? M / P : 1, R = M / rounds;
    int total = v * M, warmup = 2 * (P - me - 1) + (v - 1) * R;
    if (warmup > total) warmup = total;
    pp_stash **stash = calloc((size_t)total, sizeof *stash);
    sends s = {calloc((size_t)(2 * total), sizeof(pp_request *)), 0};
    //<< solution

    /* TODO 1: the warm-up chunk-forwards, the steady state (one chunk-forward, one chunk-backward), the
     * cool-down. Where on the ring do a chunk's input and output live (pp_virtual_stage helps)? */
    //>> solution
    for (int k = 0; k < warmup; k++) forward(r, stash, &s, nth(R, v, k, 0));
    for (int i = 0; i < total - warmup; i++) {
        forward(r, stash, &s, nth(R, v, warmup + i, 0));
        backward(r, stash, &s, nth(R, v, i, 1));
    }
    for (int i = total - warmup; i < total; i++) backward(r, stash, &s, nth(R, v, i, 1));
    //<< solution

    /* TODO 2: wait for outstanding sends, then one optimizer step. */
    //>> solution
    pp_waitall(r, s.q, s.n);
    free(s.q);
    free(stash);
    pp_optimizer_step(r);
    //<< solution
    (void)P, (void)M, (void)v, (void)me;
}
