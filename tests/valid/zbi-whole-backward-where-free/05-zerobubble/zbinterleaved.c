/* VALID (zbi-whole-backward-where-free): interleaved zero bubble with rank 0's backwards of virtual stage 0 whole:
 * rank 0 runs every weight half right after its input half, and nobody waits for stage 0's input gradient, so
 * pp_stage_backward is the same op as its two halves there. (Its other chunks send theirs to rank P-1: whole, they
 * would make it wait; tests/broken/zbi-whole-backward.) */
/* Lab 05, part 3: interleaved zero bubble, PyTorch's ScheduleInterleavedZeroBubble: lab 04's chunks with every
 * backward split as in parts 1 and 2.
 *
 * Each rank owns v chunks on lab 04's ring (chunk c of rank r is virtual stage c*P + r). The chunk order is lab
 * 04's depth-first one, in rounds: the micro-batches go through the chunks R at a time, where the M micro-batches
 * make max(1, M div P) equal rounds of R (pplab refuses a count that does not divide evenly, before your code
 * runs). Then 1F1B's shape over chunk ops, as in lab 04, with each backward split into its input half and its
 * weight half as in ZB-H1. docs/05-zerobubble.md's section 6 asks how long the warm-up must be now, which weight
 * halves each rank holds back and for how long, and what the chunks do to the bubble's floor.
 *
 * Grade with `make grade LAB=zbinterleaved`. */
#include <stdlib.h>

#include "pp.h"

/* The step's state on one rank: its stashes, the sends in flight, each chunk's next forward and input half, and
 * the input halves run so far in order, whose weight halves follow in the same order. */
typedef struct izb_state {
    pp_rank *r;
    int P, M, v, me, R;
    pp_stash **stash;
    pp_request **sends;
    int nsends;
    int next_f[16], next_b[16];
    int *done_b, nb, nw; /* done_b[i]: the stash index (chunk * M + mb) of the i-th input half */
    char whole[16 * 1024];  /* whole[i]: the i-th backward ran whole, its weight half with it */
} izb_state;

static void forward(izb_state *s, int k) {
    pp_rank *r = s->r;
    int chunk = (k / s->R) % s->v, mb = s->next_f[chunk]++, P = s->P, me = s->me;
    int vs = pp_virtual_stage(r, chunk), S = pp_virtual_stages(r);
    pp_tensor *x = vs == 0 ? NULL : pp_recv(r, (me + P - 1) % P, pp_tag(PP_FWD, mb, vs));
    pp_tensor *y = pp_stage_forward(r, chunk, mb, x, &s->stash[chunk * s->M + mb]);
    if (vs < S - 1) s->sends[s->nsends++] = pp_isend(r, y, (me + 1) % P, pp_tag(PP_FWD, mb, vs + 1));
}

/* The input half of the k-th op's backward (k counted from the end of the warm-up, w ops in). */
static void backward_input(izb_state *s, int k, int w) {
    pp_rank *r = s->r;
    int chunk = s->v - 1 - ((k - w) / s->R) % s->v, mb = s->next_b[chunk]++, P = s->P, me = s->me;
    int vs = pp_virtual_stage(r, chunk), S = pp_virtual_stages(r);
    pp_tensor *dy = vs == S - 1 ? pp_loss_grad(r, 1.0f / (float)s->M)
                                : pp_recv(r, (me + 1) % P, pp_tag(PP_BWD, mb, vs));
    pp_tensor *dx = vs == 0 ? pp_stage_backward(r, s->stash[chunk * s->M + mb], dy)
                            : pp_stage_backward_input(r, s->stash[chunk * s->M + mb], dy);
    s->whole[s->nb] = vs == 0;
    if (vs > 0) s->sends[s->nsends++] = pp_isend(r, dx, (me + P - 1) % P, pp_tag(PP_BWD, mb, vs - 1));
    s->done_b[s->nb++] = chunk * s->M + mb;
}

/* The oldest weight half still held back. */
static void backward_weight(izb_state *s) {
    int whole = s->whole[s->nw], at = s->done_b[s->nw++];
    if (whole) {
        pp_stash_free(s->r, s->stash[at]);
        return;
    }
    pp_stage_backward_weight(s->r, s->stash[at]);
    pp_stash_free(s->r, s->stash[at]);
}

void pp_zbinterleaved_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), me = pp_rank_id(r);
    int rounds = M / P > 1 ? M / P : 1, total = v * M;
    izb_state s = {.r = r, .P = P, .M = M, .v = v, .me = me, .R = M / rounds,
                   .stash = calloc((size_t)total, sizeof *s.stash),
                   .sends = calloc((size_t)(2 * total), sizeof *s.sends),
                   .done_b = calloc((size_t)total, sizeof *s.done_b)};
    int warmup = (v - 1) * s.R + P - 1 - me;
    if (warmup > total) warmup = total;

    /* TODO 1: the warm-up chunk-forwards. Lab 04's warm-up waited for the first gradient and for the messages;
     * which of the two does a zero-bubble order still need to wait for? */
    for (int k = 0; k < warmup; k++) forward(&s, k);

    /* TODO 2: the steady state and the cool-down, op by op: a chunk-forward while any is left, then a chunk's
     * input half, then the oldest held weight half once this rank holds back as many as it should. */
    for (int k = warmup; k < total + warmup; k++) {
        if (k < total) forward(&s, k);
        backward_input(&s, k, warmup);
        if (k - warmup >= me) backward_weight(&s);
    }

    /* TODO 3: the weight halves still held back, then one optimizer step. */
    while (s.nw < s.nb) backward_weight(&s);
    pp_waitall(r, s.sends, s.nsends);
    free(s.sends);
    free(s.stash);
    free(s.done_b);
    pp_optimizer_step(r);
    (void)P, (void)M, (void)v, (void)me;
}
