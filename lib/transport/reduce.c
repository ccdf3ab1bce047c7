/* reduce.c: the gradient all-reduce's rules (the judgement, the lane, the sum in replica order), which every
 * transport applies to the parts it gathers, and the meeting place of the parts for ranks that are threads of
 * one process: one slot per group and reduce, filled under a lock; the member whose part completes a slot judges
 * it, sums it and completes every member's request. */
#include "reduce.h"

#include <stdio.h>
#include <string.h>

#include "request.h"

/* ---- the groups ------------------------------------------------------------------------------------------ */

/* A group is numbered t*P + q, q being its stage (or the lower of DualPipe's two): each shard's groups apart. */
int pp__reduce_group(const pp_run_config *c, int rank) {
    int p = pp__config_rank_pipe(c, rank), t = pp__config_rank_tp(c, rank);
    return t * c->P + (pp__config_dual(c) && c->P - 1 - p < p ? c->P - 1 - p : p);
}

int pp__reduce_member(const pp_run_config *c, int rank) {
    int d = pp__config_rank_replica(c, rank);
    return pp__config_dual(c) ? 2 * d + (pp__config_rank_pipe(c, rank) != pp__reduce_group(c, rank) % c->P) : d;
}

int pp__reduce_member_rank(const pp_run_config *c, int g, int m) {
    int t = g / c->P, q = g % c->P;
    if (!pp__config_dual(c)) return pp__config_rank_of(c, t, m, q);
    return pp__config_rank_of(c, t, m / 2, m % 2 ? c->P - 1 - q : q);
}

/* ---- the rules ------------------------------------------------------------------------------------------- */

pp_reduce_verdict pp__reduce_judge(const pp_reduce_part *parts, int D, int me, int *other, int *other_chunk) {
    const pp_reduce_part *mine = &parts[me];
    int left = -1, returned = -1;
    for (int d = 0; d < D; d++) {
        const pp_reduce_part *p = &parts[d];
        if (p->kind == PP_PART_CALL && (p->stage != mine->stage || p->floats != mine->floats)) {
            *other = d, *other_chunk = p->chunk;
            return PP_REDUCE_MISMATCH;
        }
        if (p->kind == PP_PART_LEFT && left < 0) left = d;
        if (p->kind == PP_PART_RETURNED && returned < 0) returned = d;
    }
    *other = left >= 0 ? left : returned, *other_chunk = -1;
    if (left >= 0) return PP_REDUCE_STOPPED;
    if (returned >= 0) return PP_REDUCE_MISSED;
    return PP_REDUCE_DONE;
}

void pp__reduce_place(const pp_run_config *c, int group, const pp_reduce_part *parts, int D, double lane,
                      double *start, double *end) {
    double latest = parts[0].clock;
    for (int d = 1; d < D; d++)
        if (parts[d].clock > latest) latest = parts[d].clock;
    *start = latest > lane ? latest : lane;
    int *members = pp__xcalloc((size_t)D, sizeof *members);
    for (int m = 0; m < D; m++) members[m] = pp__reduce_member_rank(c, group, m);
    *end = *start + pp__config_ring_cost(c, members, D, (double)parts[0].floats * sizeof(float));
    free(members);
}

void pp__reduce_sum(const float *const *contrib, int D, size_t n, float *sum) {
    memcpy(sum, contrib[0], n * sizeof(float));
    for (int d = 1; d < D; d++)
        for (size_t i = 0; i < n; i++) sum[i] += contrib[d][i];
}

size_t pp__reduce_chunk_floats(const pp_rank *r, int chunk) {
    size_t n = 0;
    const pp_stage_model *m = &r->chunks[chunk];
    for (int i = 0; i < m->nparams; i++) n += (size_t)m->params[i].g->rows * m->params[i].g->cols;
    return n;
}

void pp__reduce_grads_out(pp_rank *r, int chunk, float *dst) {
    pp_stage_model *m = &r->chunks[chunk];
    for (int i = 0; i < m->nparams; i++) {
        pp__tensor_to_host(m->params[i].g, dst);
        dst += (size_t)m->params[i].g->rows * m->params[i].g->cols;
    }
}

void pp__reduce_grads_in(pp_rank *r, int chunk, const float *src) {
    pp_stage_model *m = &r->chunks[chunk];
    for (int i = 0; i < m->nparams; i++) {
        pp__tensor_from_host(m->params[i].g, src);
        src += (size_t)m->params[i].g->rows * m->params[i].g->cols;
    }
}

/* ---- the parts of ranks in this process ------------------------------------------------------------------ */

/* One group's reduce k of the current step. */
typedef struct slot {
    int step;                /* the step it belongs to; a slot of an earlier step is free */
    int known;               /* parts in */
    pp_reduce_part *parts;   /* [D], kind 0 until known */
    float **contrib;         /* [D]: a call's gradients (D > 1) */
    pp_request **reqs;       /* [D]: a call's request */
    float *sum;              /* a done reduce's sum (D > 1), which the members copy when they wait */
    double lane_end;         /* when the group's lane is free after it: its end if done, else its own start */
} slot;

struct pp_reduce_world {
    pthread_mutex_t lock;
    int D, P, v;             /* D: the members of a group */
    slot *slots;             /* [g * v + k]: group g's reduce k */
    /* the tensor-parallel groups (T > 1): the T shards of stage p of replica d, group d*P + p; their k-th sums of
     * the step, as many as the model makes, each slot allocated on its own (a slot's address outlives the lock) */
    int T, ntp;
    slot ***tp_slots;        /* [group][k] */
    int *tp_cap;             /* [group]: slots made */
};

void pp__reduce_world_init(pp_world *w) {
    struct pp_reduce_world *g = pp__xcalloc(1, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
    /* one group per stage (and shard): P*T of them, each with v reduces a step */
    g->D = pp__config_reduce_members(w->cfg), g->P = w->cfg->P * (w->cfg->T > 1 ? w->cfg->T : 1), g->v = w->cfg->v;
    g->slots = pp__xcalloc((size_t)(g->P * g->v), sizeof *g->slots);
    for (int i = 0; i < g->P * g->v; i++) {
        g->slots[i].step = -1;
        g->slots[i].parts = pp__xcalloc((size_t)g->D, sizeof *g->slots[i].parts);
        g->slots[i].contrib = pp__xcalloc((size_t)g->D, sizeof *g->slots[i].contrib);
        g->slots[i].reqs = pp__xcalloc((size_t)g->D, sizeof *g->slots[i].reqs);
    }
    g->T = w->cfg->T > 1 ? w->cfg->T : 1;
    g->ntp = g->T > 1 ? w->cfg->D * w->cfg->P : 0;
    g->tp_slots = pp__xcalloc((size_t)g->ntp + 1, sizeof *g->tp_slots);
    g->tp_cap = pp__xcalloc((size_t)g->ntp + 1, sizeof *g->tp_cap);
    w->reduce = g;
}

static void slot_clear(int D, slot *s) {
    for (int d = 0; d < D; d++) free(s->contrib[d]), s->contrib[d] = NULL, s->reqs[d] = NULL;
    memset(s->parts, 0, (size_t)D * sizeof *s->parts);
    free(s->sum);
    s->sum = NULL;
    s->known = 0;
    s->lane_end = 0;
}

void pp__reduce_world_free(pp_world *w) {
    struct pp_reduce_world *g = w->reduce;
    if (!g) return;
    for (int i = 0; i < g->P * g->v; i++) {
        slot_clear(g->D, &g->slots[i]);
        free(g->slots[i].parts);
        free(g->slots[i].contrib);
        free(g->slots[i].reqs);
    }
    free(g->slots);
    for (int i = 0; i < g->ntp; i++) {
        for (int k = 0; k < g->tp_cap[i]; k++) {
            slot *s = g->tp_slots[i][k];
            slot_clear(g->T, s);
            free(s->parts), free(s->contrib), free(s->reqs), free(s);
        }
        free(g->tp_slots[i]);
    }
    free(g->tp_slots);
    free(g->tp_cap);
    pthread_mutex_destroy(&g->lock);
    free(g);
    w->reduce = NULL;
}

/* Under the lock: each waiting member's peer becomes the lowest member still missing, for deadlock reports. */
static void slot_point_waiters(const pp_run_config *c, const struct pp_reduce_world *g, const slot *s, int group) {
    int missing = -1;
    for (int d = 0; d < g->D && missing < 0; d++)
        if (!s->parts[d].kind) missing = d;
    int peer = missing < 0 ? -1 : pp__reduce_member_rank(c, group, missing);
    for (int d = 0; d < g->D; d++)
        if (s->reqs[d]) __atomic_store_n(&s->reqs[d]->peer, peer, __ATOMIC_RELEASE);
}

void pp__reduce_local_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *grads,
                           void (*complete)(pp_world *w, pp_request *q)) {
    struct pp_reduce_world *g = w->reduce;
    const pp_rank *r = &w->ranks[rank];
    int group = pp__reduce_group(w->cfg, rank), me = pp__reduce_member(w->cfg, rank);
    slot *s = &g->slots[group * g->v + part->k];
    pthread_mutex_lock(&g->lock);
    if (s->step != r->step) {
        slot_clear(g->D, s);
        s->step = r->step;
    }
    PP_ASSERT(!s->parts[me].kind);
    s->parts[me] = *part;
    s->contrib[me] = grads;
    s->reqs[me] = q;
    slot_point_waiters(w->cfg, g, s, group);
    if (++s->known < g->D) {
        pthread_mutex_unlock(&g->lock);
        return;
    }
    /* the last part: every member posts its reduces in order, so the group's reduce k-1 was decided before */
    double lane = part->k > 0 ? g->slots[group * g->v + part->k - 1].lane_end : 0;
    int other, other_chunk, done = 0;
    for (int d = 0; d < g->D; d++)
        if (s->parts[d].kind == PP_PART_CALL) {
            done = pp__reduce_judge(s->parts, g->D, d, &other, &other_chunk) == PP_REDUCE_DONE;
            break;
        }
    double start = lane, end = lane;
    if (done) pp__reduce_place(w->cfg, group, s->parts, g->D, lane, &start, &end);
    s->lane_end = end;
    pthread_mutex_unlock(&g->lock);
    /* the slot is whole and nobody writes it any more: the sum needs no lock */
    if (done && g->D > 1) {
        s->sum = pp__xmalloc((size_t)s->parts[0].floats * sizeof(float) + 1);
        pp__reduce_sum((const float *const *)s->contrib, g->D, (size_t)s->parts[0].floats, s->sum);
    }
    for (int d = 0; d < g->D; d++) {
        pp_request *m = s->reqs[d];
        if (!m) continue;
        m->red.verdict = (int)pp__reduce_judge(s->parts, g->D, d, &m->red.other, &m->red.other_chunk);
        m->red.start = start, m->red.end = end;
        m->red.sum = s->sum;
        complete(w, m);
    }
}

/* Under the lock: tensor-parallel group tg's slot k, made on first use, cleared when it holds an earlier step. */
static slot *tp_slot(struct pp_reduce_world *g, int tg, int k, int step) {
    if (k >= g->tp_cap[tg]) {
        int cap = k + 1 > 2 * g->tp_cap[tg] ? k + 1 : 2 * g->tp_cap[tg];
        g->tp_slots[tg] = pp__xrealloc(g->tp_slots[tg], (size_t)cap * sizeof *g->tp_slots[tg]);
        for (int i = g->tp_cap[tg]; i < cap; i++) {
            slot *s = g->tp_slots[tg][i] = pp__xcalloc(1, sizeof *s);
            s->step = -1;
            s->parts = pp__xcalloc((size_t)g->T, sizeof *s->parts);
            s->contrib = pp__xcalloc((size_t)g->T, sizeof *s->contrib);
            s->reqs = pp__xcalloc((size_t)g->T, sizeof *s->reqs);
        }
        g->tp_cap[tg] = cap;
    }
    slot *s = g->tp_slots[tg][k];
    if (s->step != step) slot_clear(g->T, s), s->step = step;
    return s;
}

void pp__reduce_tp_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *data,
                        void (*complete)(pp_world *w, pp_request *q)) {
    struct pp_reduce_world *g = w->reduce;
    const pp_run_config *c = w->cfg;
    const pp_rank *r = &w->ranks[rank];
    int t = pp__config_rank_tp(c, rank), tg = pp__config_rank_replica(c, rank) * c->P + pp__config_rank_pipe(c, rank);
    pthread_mutex_lock(&g->lock);
    slot *s = tp_slot(g, tg, part->k, r->step);
    PP_ASSERT(!s->parts[t].kind);
    s->parts[t] = *part;
    s->contrib[t] = data;
    s->reqs[t] = q;
    int missing = -1;
    for (int m = 0; m < g->T && missing < 0; m++)
        if (!s->parts[m].kind) missing = m;
    int peer = missing < 0 ? -1 : pp__config_rank_of(c, missing, r->replica, r->pipe);
    for (int m = 0; m < g->T; m++)
        if (s->reqs[m]) __atomic_store_n(&s->reqs[m]->peer, peer, __ATOMIC_RELEASE);
    if (++s->known < g->T) {
        pthread_mutex_unlock(&g->lock);
        return;
    }
    pthread_mutex_unlock(&g->lock);
    /* whole, and nobody writes it any more; each member gets a sum of its own, which it frees once it has it */
    int other, other_chunk, done = 0;
    for (int m = 0; m < g->T; m++)
        if (s->parts[m].kind == PP_PART_CALL) {
            done = pp__reduce_judge(s->parts, g->T, m, &other, &other_chunk) == PP_REDUCE_DONE;
            break;
        }
    size_t n = done ? (size_t)s->parts[0].floats : 0;
    float *sum = done ? pp__xmalloc(n * sizeof(float) + 1) : NULL;
    if (done) pp__reduce_sum((const float *const *)s->contrib, g->T, n, sum);
    for (int m = 0; m < g->T; m++) {
        pp_request *mq = s->reqs[m];
        free(s->contrib[m]), s->contrib[m] = NULL;
        if (!mq) continue;
        mq->red.verdict = (int)pp__reduce_judge(s->parts, g->T, m, &mq->red.other, &mq->red.other_chunk);
        mq->red.start = mq->red.end = 0;
        float *own = done ? pp__xmalloc(n * sizeof(float) + 1) : NULL;
        if (own) memcpy(own, sum, n * sizeof(float));
        mq->red.sum = own;
        complete(w, mq);
    }
    free(sum);
}

/* ---- a rank's reduces -------------------------------------------------------------------------------------- */

void pp__reduce_rank_init(pp_rank *r) {
    r->reduced = pp__xcalloc((size_t)r->cfg->v, sizeof *r->reduced);
}

void pp__reduce_rank_reset(pp_rank *r) {
    r->reduces = r->tp_sums = r->tp_calls = 0;
    r->tp_bytes = r->tp_time = 0;
    for (int c = 0; r->reduced && c < r->cfg->v; c++) r->reduced[c] = 0;
}

void pp__reduce_rank_free(pp_rank *r) {
    free(r->reduced);
    r->reduced = NULL;
}

const pp_request *pp__reduce_in_flight(const pp_rank *r, int chunk) {
    for (const pp_request *q = r->requests; q; q = q->all_next)
        if (q->is_reduce && !q->waited && (chunk < 0 || q->red.chunk == chunk)) return q;
    return NULL;
}
