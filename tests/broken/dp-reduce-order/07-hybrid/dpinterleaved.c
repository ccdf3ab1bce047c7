/* Broken: lab 07 part 2 reducing every chunk with a blocking pp_grad_reduce after the last backward, in reverse
 * chunk order on odd replicas: a collective matches by order, so replica 1's first reduce meets replica 0's
 * first, a different chunk of a different size. */
#include <stdlib.h>

#include "pp.h"

typedef struct job {
    int chunk, mb;
} job;

static job nth(int P, int v, int k, int backward) {
    int chunk = (k % (P * v)) / P;
    job j = {backward ? v - 1 - chunk : chunk, (k / (P * v)) * P + k % P};
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

/* Returns 1 when this was the chunk's last backward of the step: its gradient is complete. */
static int backward(pp_rank *r, pp_stash **stash, sends *s, job j) {
    int P = pp_rank_stages(r), me = pp_rank_id(r), vs = pp_virtual_stage(r, j.chunk), S = pp_virtual_stages(r);
    int M = pp_rank_microbatches(r);
    pp_tensor *dy = vs == S - 1 ? pp_loss_grad(r, 1.0f / (float)(pp_rank_replicas(r) * M))
                                : pp_recv(r, (me + 1) % P, pp_tag(PP_BWD, j.mb, vs));
    pp_tensor *dx = pp_stage_backward(r, stash[j.chunk * M + j.mb], dy);
    if (vs > 0) s->q[s->n++] = pp_isend(r, dx, (me + P - 1) % P, pp_tag(PP_BWD, j.mb, vs - 1));
    pp_stash_free(r, stash[j.chunk * M + j.mb]);
    return j.mb == M - 1; /* groups of P micro-batches go through a chunk in order: M-1 is its last */
}

void pp_dpinterleaved_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), me = pp_rank_id(r);
    int total = v * M, warmup = 2 * (P - me - 1) + (v - 1) * P;
    if (warmup > total) warmup = total;
    pp_stash **stash = calloc((size_t)total, sizeof *stash);
    sends s = {calloc((size_t)(2 * total), sizeof(pp_request *)), 0};
    pp_request **reduces = calloc((size_t)v, sizeof *reduces);
    int nreduce = 0;
    (void)nreduce;

    /* TODO 1: your interleaved order of lab 04, with the loss scaled for D replicas. Then: a chunk's gradient is
     * complete at its last backward, and in the cool-down this rank's later chunks finish first. Start each
     * chunk's reduce (pp_grad_ireduce) as soon as it is complete, so that it runs while the earlier chunks'
     * backwards still compute. Which backward is a chunk's last one in your order? */
    for (int k = 0; k < warmup; k++) forward(r, stash, &s, nth(P, v, k, 0));
    for (int i = 0; i < total - warmup; i++) {
        forward(r, stash, &s, nth(P, v, warmup + i, 0));
        job j = nth(P, v, i, 1);
        backward(r, stash, &s, j);
    }
    for (int i = total - warmup; i < total; i++) {
        job j = nth(P, v, i, 1);
        backward(r, stash, &s, j);
    }

    /* TODO 2: wait for the outstanding sends and reduces, then one optimizer step. */
    pp_waitall(r, s.q, s.n);
    for (int k = 0; k < v; k++) pp_grad_reduce(r, pp_rank_replica(r) % 2 ? v - 1 - k : k);
    free(s.q);
    free(reduces);
    free(stash);
    pp_optimizer_step(r);
    (void)P, (void)M, (void)v, (void)me;
}
