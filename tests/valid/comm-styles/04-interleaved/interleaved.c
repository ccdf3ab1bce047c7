/* VALID ON PURPOSE (comm-styles): interleaved 1F1B whose receives are pp_irecv requests waited at once, and whose
 * sends are pp_isend requests waited one by one, newest first, at the end of the step instead of one
 * pp_waitall. pp.h makes these the same; it keeps full marks: tests/test_grader.c asserts it. */
#include <stdlib.h>

#include "pp.h"

typedef struct {
    pp_rank *r;
    pp_stash **stash;
    pp_request **q;
    int n, P, M, v, me, R; /* R: the micro-batches of a round, M / max(1, M div P) */
} state;

static pp_tensor *recv_now(pp_rank *r, int src, int tag) {
    pp_tensor *t = NULL;
    pp_wait(r, pp_irecv(r, src, tag, &t));
    return t;
}

static void forward(state *s, int k) {
    int chunk = (k % (s->R * s->v)) / s->R, mb = (k / (s->R * s->v)) * s->R + k % s->R;
    int vs = pp_virtual_stage(s->r, chunk), S = pp_virtual_stages(s->r);
    pp_tensor *x = vs == 0 ? NULL : recv_now(s->r, (s->me + s->P - 1) % s->P, pp_tag(PP_FWD, mb, vs));
    pp_tensor *y = pp_stage_forward(s->r, chunk, mb, x, &s->stash[chunk * s->M + mb]);
    if (vs < S - 1) s->q[s->n++] = pp_isend(s->r, y, (s->me + 1) % s->P, pp_tag(PP_FWD, mb, vs + 1));
}

static void backward(state *s, int k) {
    int chunk = s->v - 1 - (k % (s->R * s->v)) / s->R, mb = (k / (s->R * s->v)) * s->R + k % s->R;
    int vs = pp_virtual_stage(s->r, chunk), S = pp_virtual_stages(s->r);
    pp_tensor *dy = vs == S - 1 ? pp_loss_grad(s->r, 1.0f / (float)s->M)
                                : recv_now(s->r, (s->me + 1) % s->P, pp_tag(PP_BWD, mb, vs));
    pp_tensor *dx = pp_stage_backward(s->r, s->stash[chunk * s->M + mb], dy);
    pp_stash_free(s->r, s->stash[chunk * s->M + mb]);
    if (vs > 0) s->q[s->n++] = pp_isend(s->r, dx, (s->me + s->P - 1) % s->P, pp_tag(PP_BWD, mb, vs - 1));
}

void pp_interleaved_step(pp_rank *r) {
    state s = {r, NULL, NULL, 0, pp_rank_stages(r), pp_rank_microbatches(r), pp_rank_chunks(r), pp_rank_id(r)};
    s.R = s.M / (s.M / s.P > 1 ? s.M / s.P : 1);
    int total = s.v * s.M, warmup = 2 * (s.P - s.me - 1) + (s.v - 1) * s.R;
    if (warmup > total) warmup = total;
    s.stash = calloc((size_t)total, sizeof *s.stash);
    s.q = calloc((size_t)(2 * total), sizeof *s.q);
    for (int k = 0; k < warmup; k++) forward(&s, k);
    for (int i = 0; i < total - warmup; i++) {
        forward(&s, warmup + i);
        backward(&s, i);
    }
    for (int i = total - warmup; i < total; i++) backward(&s, i);
    while (s.n > 0) pp_wait(r, s.q[--s.n]);
    free(s.q);
    free(s.stash);
    pp_optimizer_step(r);
}
