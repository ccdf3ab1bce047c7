/* BROKEN ON PURPOSE (interleaved-bwd-order): interleaved 1F1B whose backwards visit the chunks in forward order
 * (the reversal forgotten): every rank waits for a gradient nobody sends yet. docs/04-interleaved.md quotes the
 * report (scripts/doccheck.sh checks the quote). */
/* Lab 04: interleaved 1F1B (Megatron-LM). Each rank owns v chunks; chunk c of rank r is virtual stage
 * c*P + r, so a micro-batch visits rank 0, 1, ..., P-1, then rank 0 again for chunk 1, and so on. Rank r runs
 * warmup = min(2(P-r-1) + (v-1)P, vM) chunk-forwards, then alternates one chunk-forward and one
 * chunk-backward, then the remaining chunk-backwards. The k-th chunk-forward of a rank runs chunk
 * (k mod Pv) div P on micro-batch (k div Pv)*P + k mod P; the k-th chunk-backward the same micro-batch with the
 * chunks in reverse (v-1 minus that). The bubble shrinks to (P-1)/(vM+P-1), paid for with v times the messages.
 * Read docs/04-interleaved.md; grade with `make grade LAB=interleaved`. */
#include <stdlib.h>

#include "pp.h"

typedef struct job {
    int chunk, mb;
} job;

static job nth(int P, int v, int k, int backward) {
    int chunk = (k % (P * v)) / P;
    job j = {chunk, (k / (P * v)) * P + k % P};
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

void pp_interleaved_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), me = pp_rank_id(r);
    int total = v * M, warmup = 2 * (P - me - 1) + (v - 1) * P;
    if (warmup > total) warmup = total;
    pp_stash **stash = calloc((size_t)total, sizeof *stash);
    sends s = {calloc((size_t)(2 * total), sizeof(pp_request *)), 0};

    /* TODO 1: warmup chunk-forwards, steady (one chunk-forward then one chunk-backward), cooldown
     * chunk-backwards. Neighbours: the previous virtual stage lives on rank (me-1+P)%P, the next on (me+1)%P. */
    for (int k = 0; k < warmup; k++) forward(r, stash, &s, nth(P, v, k, 0));
    for (int i = 0; i < total - warmup; i++) {
        forward(r, stash, &s, nth(P, v, warmup + i, 0));
        backward(r, stash, &s, nth(P, v, i, 1));
    }
    for (int i = total - warmup; i < total; i++) backward(r, stash, &s, nth(P, v, i, 1));

    /* TODO 2: wait for outstanding sends, then one optimizer step. */
    pp_waitall(r, s.q, s.n);
    free(s.q);
    free(stash);
    pp_optimizer_step(r);
    (void)P, (void)M, (void)v, (void)me;
}
