/* order_interp.c: an order from a file run on the kit's model (order_interp.h). */
#include "order_interp.h"

#include <pthread.h>
#include <stdlib.h>

#include "error.h"
#include "placement.h"

const int pp__order_interp_built = 1;

static const pp_schedule *order;

/* Every block a rank's step allocated, kept until the order is set again: a rank whose run fails leaves its step
 * by a jump from inside a pp.h call, past any free of its own. */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static void **kept;
static size_t nkept, capkept;

static void *keep(size_t n, size_t size) {
    void *p = pp__xcalloc(n, size);
    pthread_mutex_lock(&kept_lock);
    if (nkept == capkept) capkept = capkept ? 2 * capkept : 64, kept = pp__xrealloc(kept, capkept * sizeof *kept);
    kept[nkept++] = p;
    pthread_mutex_unlock(&kept_lock);
    return p;
}

void pp__order_interp_set(const pp_schedule *s) {
    pthread_mutex_lock(&kept_lock);
    for (size_t i = 0; i < nkept; i++) free(kept[i]);
    free(kept);
    kept = NULL, nkept = capkept = 0;
    order = s;
    pthread_mutex_unlock(&kept_lock);
}

/* What one rank holds while it runs its actions: stashes by (chunk, micro-batch), tensors passed on to itself
 * across a V's turn by (virtual stage, micro-batch), and its sends in flight. */
typedef struct rank_state {
    pp_rank *r;
    int P, M, v, S, D, me, vshape, dual;
    pp_stash **stash;
    pp_tensor **y_here, **dx_here;
    pp_request **sends;
    int nsends;
} rank_state;

static void forward(rank_state *st, const pp_sched_op *o) {
    pp_rank *r = st->r;
    int vs = pp_virtual_stage(r, o->chunk), M = st->M;
    int prev = pp__place_prev(st->P, st->dual, vs), next = pp__place_next(st->P, st->v, st->dual, vs);
    pp_tensor *x = NULL;
    if (prev >= 0) {
        int from = pp__place_rank(st->P, st->vshape, prev);
        x = from == st->me ? st->y_here[prev * M + o->mb] : pp_recv(r, from, pp_tag(PP_FWD, o->mb, vs));
    }
    pp_tensor *y = pp_stage_forward(r, o->chunk, o->mb, x, &st->stash[o->chunk * M + o->mb]);
    if (pp_rank_recompute(r)) pp_stash_checkpoint(r, st->stash[o->chunk * M + o->mb]);
    if (next < 0) return;
    int to = pp__place_rank(st->P, st->vshape, next);
    if (to == st->me) st->y_here[vs * M + o->mb] = y;
    else st->sends[st->nsends++] = pp_isend(r, y, to, pp_tag(PP_FWD, o->mb, next));
}

static void backward(rank_state *st, const pp_sched_op *o) {
    pp_rank *r = st->r;
    int vs = pp_virtual_stage(r, o->chunk), M = st->M;
    int prev = pp__place_prev(st->P, st->dual, vs), next = pp__place_next(st->P, st->v, st->dual, vs);
    pp_tensor *dy;
    if (next < 0) {
        dy = pp_loss_grad(r, 1.0f / (float)(M * st->D));
    } else {
        int from = pp__place_rank(st->P, st->vshape, next);
        dy = from == st->me ? st->dx_here[next * M + o->mb] : pp_recv(r, from, pp_tag(PP_BWD, o->mb, vs));
    }
    pp_stash **sp = &st->stash[o->chunk * M + o->mb];
    pp_tensor *dx = o->split ? pp_stage_backward_input(r, *sp, dy) : pp_stage_backward(r, *sp, dy);
    if (!o->split) pp_stash_free(r, *sp), *sp = NULL;
    if (prev < 0) return;
    int to = pp__place_rank(st->P, st->vshape, prev);
    if (to == st->me) st->dx_here[vs * M + o->mb] = dx;
    else st->sends[st->nsends++] = pp_isend(r, dx, to, pp_tag(PP_BWD, o->mb, prev));
}

static void weight(rank_state *st, const pp_sched_op *o) {
    pp_stash **sp = &st->stash[o->chunk * st->M + o->mb];
    pp_stage_backward_weight(st->r, *sp);
    pp_stash_free(st->r, *sp), *sp = NULL;
}

void pp__order_interp_step(pp_rank *r) {
    const pp_schedule *s = order;
    int me = pp_rank_id(r), P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), S = P * v;
    size_t n = (size_t)s->n[me];
    rank_state st = {.r = r, .P = P, .M = M, .v = v, .S = S, .D = pp_rank_replicas(r), .me = me, .vshape = s->vshape,
                     .dual = s->dual,
                     .stash = keep((size_t)(v * M), sizeof *st.stash),
                     .y_here = keep((size_t)(S * M), sizeof *st.y_here),
                     .dx_here = keep((size_t)(S * M), sizeof *st.dx_here),
                     .sends = keep(n + 1, sizeof *st.sends)};
    for (size_t i = 0; i < n; i++) {
        const pp_sched_op *o = &s->ops[me][i];
        if (o->kind == 'F') forward(&st, o);
        else if (o->kind == 'W') weight(&st, o);
        else backward(&st, o);
    }
    pp_waitall(r, st.sends, st.nsends);
    /* replicas sum each chunk; DualPipe's two copies of a stage sum theirs, a rank's chunks in the order of the
     * stages they hold, so that partners (rank r's chunk c and rank P-1-r's chunk 1-c) meet at the same reduce */
    if (st.D > 1 || st.dual)
        for (int i = 0; i < v; i++) {
            int ch = st.dual && pp_virtual_stage(r, 1) % P < pp_virtual_stage(r, 0) % P ? v - 1 - i : i;
            pp_grad_reduce(r, ch);
        }
    pp_optimizer_step(r);
}
