/* reduce.c: pp_grad_reduce and pp_grad_ireduce, for ranks that share a process (the threads transport). A
 * member's call copies its chunk's gradients to the group's slot for its k-th reduce of the step; the member
 * that arrives last sums the slot in replica order and fixes the reduce's place on the virtual clock; each
 * member, when it waits, copies the sum back into its own gradients (on its own thread, so on its own device).
 * Under the mpi transport (one rank per process) a call only records its gradients and its clock, and the wait
 * completes every reduce up to the one waited, in the order they were started, on the group's communicator:
 * replica 0's rank gathers the members' gradients, sums them in replica order and places the reduce on the
 * lane as the threads do, then broadcasts the sum and the times, so that both transports give the same bits. */
#include "reduce.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "comm.h"
#include "transport.h"

/* One of a group's reduces in the current step. */
typedef struct slot {
    int step;                /* the step it belongs to; a slot of an earlier step is free */
    int chunk;               /* the chunk the first member named */
    int arrived;
    int *member_step;        /* per replica: step + 1 once that member called it this step */
    double clock_max;        /* latest member clock at its call */
    int done;
    double start, end;       /* on the virtual clock */
    double wall_s;           /* wall seconds the sum took */
    size_t n;                /* floats of the chunk's gradients */
    float **contrib;         /* per replica: its gradients at its call */
    float *sum;
} slot;

/* Under MPI, rank r's k-th reduce of the step, from its call to its completion. */
typedef struct mpi_rec {
    int chunk, done;
    double clock, start, end;
    size_t n;
    float *grads;            /* at the call; the sum once done */
} mpi_rec;

/* What a gathered or broadcast part starts with, before the floats. */
typedef struct mpi_head {
    double chunk, clock, start, end;
} mpi_head;

struct pp_reduce_world {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int D, P, v;
    slot *slots;             /* [p * v + k]: group p's reduce k */
    mpi_rec *mpi;            /* under MPI: the local rank's reduces of the step, [k] */
    int mpi_done;            /* ... how many of them are complete */
    double mpi_lane;         /* ... the end of the last complete one (replica 0's rank: the group's lane) */
};

void pp__reduce_world_init(pp_world *w) {
    struct pp_reduce_world *g = pp__xcalloc(1, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->D = w->cfg->D, g->P = w->cfg->P, g->v = w->cfg->v;
    g->slots = pp__xcalloc((size_t)(g->P * g->v), sizeof *g->slots);
    for (int i = 0; i < g->P * g->v; i++) {
        g->slots[i].step = -1;
        g->slots[i].member_step = pp__xcalloc((size_t)g->D, sizeof(int));
        g->slots[i].contrib = pp__xcalloc((size_t)g->D, sizeof(float *));
    }
    g->mpi = pp__xcalloc((size_t)g->v, sizeof *g->mpi);
    w->reduce = g;
}

void pp__reduce_world_free(pp_world *w) {
    struct pp_reduce_world *g = w->reduce;
    if (!g) return;
    for (int i = 0; i < g->P * g->v; i++) {
        for (int d = 0; d < g->D; d++) free(g->slots[i].contrib[d]);
        free(g->slots[i].contrib);
        free(g->slots[i].member_step);
        free(g->slots[i].sum);
    }
    free(g->slots);
    for (int k = 0; k < g->v; k++) free(g->mpi[k].grads);
    free(g->mpi);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->lock);
    free(g);
    w->reduce = NULL;
}

void pp__reduce_rank_init(pp_rank *r) {
    r->reduced = pp__xcalloc((size_t)r->cfg->v, sizeof *r->reduced);
}

void pp__reduce_rank_reset(pp_rank *r) {
    struct pp_reduce_world *g = r->world->reduce;
    if (g && r->world->local_rank >= 0) g->mpi_done = 0, g->mpi_lane = 0;
    r->reduces = 0;
    r->step_returned = 0;
    for (int c = 0; r->reduced && c < r->cfg->v; c++) r->reduced[c] = 0;
}

void pp__reduce_rank_free(pp_rank *r) {
    free(r->reduced);
    free(r->wait_scratch);
    r->reduced = NULL, r->wait_scratch = NULL;
}

void pp__reduce_rank_returned(pp_rank *r) {
    struct pp_reduce_world *g = r->world->reduce;
    if (!g) return;
    pthread_mutex_lock(&g->lock);
    __atomic_store_n(&r->step_returned, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lock);
}

/* Floats of chunk's gradients on rank r. */
static size_t chunk_floats(const pp_rank *r, int chunk) {
    size_t n = 0;
    const pp_stage_model *m = &r->chunks[chunk];
    for (int i = 0; i < m->nparams; i++) n += (size_t)m->params[i].g->rows * m->params[i].g->cols;
    return n;
}

static void grads_out(pp_rank *r, int chunk, float *dst) {
    pp_stage_model *m = &r->chunks[chunk];
    for (int i = 0; i < m->nparams; i++) {
        pp__tensor_to_host(m->params[i].g, dst);
        dst += (size_t)m->params[i].g->rows * m->params[i].g->cols;
    }
}

static void grads_in(pp_rank *r, int chunk, const float *src) {
    pp_stage_model *m = &r->chunks[chunk];
    for (int i = 0; i < m->nparams; i++) {
        pp__tensor_from_host(m->params[i].g, src);
        src += (size_t)m->params[i].g->rows * m->params[i].g->cols;
    }
}

/* The last member in: the sum in replica order (the same bits whoever came last) and the reduce's place on the
 * lane: after every member's call and after the group's previous reduce. */
static void slot_finish(struct pp_reduce_world *g, const pp_rank *r, slot *s, int k) {
    double t0 = pp__now();
    if (g->D > 1) {
        memcpy(s->sum, s->contrib[0], s->n * sizeof(float));
        for (int d = 1; d < g->D; d++)
            for (size_t i = 0; i < s->n; i++) s->sum[i] += s->contrib[d][i];
    }
    s->wall_s = pp__now() - t0;
    double lane = k > 0 ? g->slots[r->pipe * g->v + k - 1].end : 0;
    s->start = s->clock_max > lane ? s->clock_max : lane;
    double bytes = (double)s->n * sizeof(float);
    s->end = s->start + pp__config_reduce_cost(r->cfg, bytes);
    s->done = 1;
}

static void add_event(pp_rank *r, pp_request *q, int chunk, size_t n);

static pp_request *reduce_start(pp_rank *r, int chunk, const char *api) {
    pp__rank_check(r);
    const pp_run_config *c = r->cfg;
    if (chunk < 0 || chunk >= c->v)
        pp__rank_abort(r, PP_ERR_USAGE, "chunks are numbered 0..v-1 on every rank", "%s: chunk %d does not exist "
                       "(v = %d)", api, chunk, c->v);
    if (r->in_group)
        pp__rank_abort(r, PP_ERR_USAGE, "call pp_group_end() first: groups hold point-to-point messages only",
                       "%s: called inside pp_group_start()/pp_group_end()", api);
    if (r->reduced[chunk])
        pp__rank_abort(r, PP_ERR_USAGE, "reduce each chunk once per step, after its last backward: a second reduce "
                       "would sum the sums", "%s: chunk %d was already reduced this step", api, chunk);
    struct pp_reduce_world *g = r->world->reduce;
    int k = r->reduces;
    r->reduced[chunk]++, r->reduces++;
    pp_request *q = pp__xcalloc(1, sizeof *q);
    q->is_reduce = 1, q->chunk = chunk, q->reduce_k = k;
    q->rank = r->id, q->peer = -1, q->tag = -1, q->api = api;
    q->wall_post = pp__now() - r->wall0;
    q->all_next = r->requests;
    r->requests = q;
    size_t n = chunk_floats(r, chunk);
    if (r->world->local_rank >= 0) {
        mpi_rec *m = &g->mpi[k];
        free(m->grads);
        *m = (mpi_rec){.chunk = chunk, .clock = r->clock, .n = n, .grads = pp__xmalloc(n * sizeof(float) + 1)};
        grads_out(r, chunk, m->grads);
        add_event(r, q, chunk, n);
        return q;
    }
    slot *s = &g->slots[r->pipe * g->v + k];
    float *mine = NULL;
    if (g->D > 1) {
        mine = pp__xmalloc(n * sizeof(float));
        grads_out(r, chunk, mine);
    }
    pthread_mutex_lock(&g->lock);
    if (s->step != r->step) {
        s->step = r->step, s->chunk = chunk, s->arrived = 0, s->clock_max = 0, s->done = 0, s->n = n;
        free(s->sum);
        s->sum = g->D > 1 ? pp__xmalloc(n * sizeof(float)) : NULL;
    }
    if (s->chunk != chunk) {
        int other = -1;
        for (int d = 0; d < g->D && other < 0; d++)
            if (s->member_step[d] == r->step + 1) other = d;
        int theirs = s->chunk;
        pthread_mutex_unlock(&g->lock);
        free(mine);
        pp__rank_abort(r, PP_ERR_USAGE, "every replica reduces its chunks in the same order (a collective matches "
                       "by order: NCCL would hang)", "%s: chunk %d is this rank's reduce %d of the step, but replica "
                       "%d's reduce %d is chunk %d", api, chunk, k, other, k, theirs);
    }
    free(s->contrib[r->replica]);
    s->contrib[r->replica] = mine;
    s->member_step[r->replica] = r->step + 1;
    if (r->clock > s->clock_max || s->arrived == 0) s->clock_max = r->clock;
    if (++s->arrived == g->D) {
        slot_finish(g, r, s, k);
        pthread_cond_broadcast(&g->cv);
    }
    pthread_mutex_unlock(&g->lock);
    add_event(r, q, chunk, n);
    return q;
}

/* The event sits where the call was, among the rank's ops, so that a backward of the chunk after it shows; its
 * times are the lane's, set when it completes. */
static void add_event(pp_rank *r, pp_request *q, int chunk, size_t n) {
    const pp_run_config *c = r->cfg;
    pp_event e = {.rank = r->id,
                  .op = PP_OP_REDUCE,
                  .mb = -1,
                  .chunk = chunk,
                  .vstage = pp__config_vstage(c, r->pipe, chunk),
                  .peer = -1,
                  .tag = -1,
                  .timer = -1,
                  .bytes = n * sizeof(float),
                  .wall_start = q->wall_post,
                  .wall_end = q->wall_post,
                  .vstart = r->clock,
                  .vend = r->clock};
    q->reduce_ev = r->trace.n;
    pp__trace_add(&r->trace, &e);
}

pp_request *pp_grad_ireduce(pp_rank *r, int chunk) { return reduce_start(r, chunk, "pp_grad_ireduce"); }

void pp_grad_reduce(pp_rank *r, int chunk) {
    pp_request *q = reduce_start(r, chunk, "pp_grad_reduce");
    q->api = "pp_grad_reduce";
    pp_wait(r, q);
}

const pp_request *pp__reduce_in_flight(const pp_rank *r, int chunk) {
    for (const pp_request *q = r->requests; q; q = q->all_next)
        if (q->is_reduce && !q->waited && (chunk < 0 || q->chunk == chunk)) return q;
    return NULL;
}

/* Under MPI: completes the local rank's reduce k (all before it being complete) with its group. */
static void mpi_complete(pp_rank *r, struct pp_reduce_world *g, int k, const char *api) {
    mpi_rec *m = &g->mpi[k];
    size_t part = sizeof(mpi_head) + m->n * sizeof(float);
    unsigned char *mine = pp__xmalloc(part), *all = r->replica == 0 ? pp__xmalloc(part * (size_t)g->D) : NULL;
    mpi_head h = {.chunk = m->chunk, .clock = m->clock};
    memcpy(mine, &h, sizeof h);
    memcpy(mine + sizeof h, m->grads, m->n * sizeof(float));
    int failed = pp__mpi_dp_gather(r->world, mine, part, all);
    if (!failed && r->replica == 0) {
        /* the same sum and the same lane as the threads' slot_finish */
        float *sum = (float *)(mine + sizeof h);
        double clock_max = h.clock;
        for (int d = 1; d < g->D && !failed; d++) {
            mpi_head hd;
            memcpy(&hd, all + (size_t)d * part, sizeof hd);
            if ((int)hd.chunk != m->chunk) failed = 2;
            if (hd.clock > clock_max) clock_max = hd.clock;
            const float *theirs = (const float *)(all + (size_t)d * part + sizeof hd);
            for (size_t i = 0; i < m->n; i++) sum[i] += theirs[i];
        }
        h.start = clock_max > g->mpi_lane ? clock_max : g->mpi_lane;
        h.end = h.start + pp__config_reduce_cost(r->cfg, (double)m->n * sizeof(float));
        h.chunk = failed == 2 ? -1 : m->chunk;
        memcpy(mine, &h, sizeof h);
    }
    if (failed != 1) failed = pp__mpi_dp_bcast(r->world, mine, part) ? 1 : 0;
    free(all);
    if (!failed) memcpy(&h, mine, sizeof h);
    if (!failed && (int)h.chunk != m->chunk) failed = 2;
    if (!failed) {
        memcpy(m->grads, mine + sizeof h, m->n * sizeof(float));
        m->start = h.start, m->end = h.end, m->done = 1;
        g->mpi_lane = h.end;
        g->mpi_done = k + 1;
    }
    free(mine);
    if (failed == 2)
        pp__rank_abort(r, PP_ERR_USAGE, "every replica reduces its chunks in the same order (a collective matches "
                       "by order: NCCL would hang)", "%s: reduce %d of the step is chunk %d here, another chunk in "
                       "another replica", api, k, m->chunk);
    if (failed)
        pp__rank_abort(r, PP_ERR_DEADLOCK, "every rank of a stage's data-parallel group reduces each of its chunks "
                       "once per step, in the same order", "%s(chunk %d): the other replicas' ranks of stage %d did "
                       "not all join this reduce (one failed, or none came within --deadline %g s)", api, m->chunk,
                       r->pipe, r->cfg->deadline_s);
}

/* 1 when no rank of the world can still move: each has failed, left its step, or waits (on a message or a
 * reduce). After a failure that is how a reduce whose member waits on the failed rank ends; the threads
 * transport's own deadlock check cannot see it, since a rank waiting here is not waiting on the transport. */
static int world_stuck(const pp_world *w) {
    for (int i = 0; i < w->P; i++) {
        const pp_rank *m = &w->ranks[i];
        if (!m->cfg || __atomic_load_n(&m->failed, __ATOMIC_ACQUIRE) ||
            __atomic_load_n(&m->step_returned, __ATOMIC_ACQUIRE) || pp__rank_blocked_in(m))
            continue;
        return 0;
    }
    return 1;
}

/* Polls of world_stuck in a row (20 ms apart) before a waiter gives up: a rank between a match and its wake-up
 * still shows as waiting for a moment. */
#define STUCK_POLLS 5

void pp__reduce_wait(pp_rank *r, pp_request *q) {
    struct pp_reduce_world *g = r->world->reduce;
    if (r->world->local_rank >= 0) {
        snprintf(r->blocked_buf, sizeof r->blocked_buf, "%s(chunk %d)", q->api, q->chunk);
        pp__rank_set_blocked_in(r, r->blocked_buf);
        while (g->mpi_done <= q->reduce_k) mpi_complete(r, g, g->mpi_done, q->api);
        pp__rank_set_blocked_in(r, NULL);
        mpi_rec *m = &g->mpi[q->reduce_k];
        grads_in(r, q->chunk, m->grads);
        pp_event *e = &r->trace.ev[q->reduce_ev];
        e->vstart = m->start, e->vend = m->end;
        e->wall_end = pp__now() - r->wall0;
        if (m->end > r->clock) r->clock = m->end;
        q->waited = 1;
        return;
    }
    slot *s = &g->slots[r->pipe * g->v + q->reduce_k];
    snprintf(r->blocked_buf, sizeof r->blocked_buf, "%s(chunk %d)", q->api, q->chunk);
    pp__rank_set_blocked_in(r, r->blocked_buf);
    double t0 = pp__now();
    int stuck = 0;
    pthread_mutex_lock(&g->lock);
    while (!(s->step == r->step && s->done)) {
        if (pp__world_failed(r->world)) {
            pthread_mutex_unlock(&g->lock);
            pp__rank_bail(r);
        }
        /* after a failure, a reduce that nobody left running can join ends here: the failure is the cause, and
         * this rank is reported as one that stayed blocked */
        stuck = pp__world_rank_failed(r->world) && world_stuck(r->world) ? stuck + 1 : 0;
        if (stuck >= STUCK_POLLS) {
            pthread_mutex_unlock(&g->lock);
            pp__rank_bail(r);
        }
        /* a member that left its step without this reduce will never join it */
        for (int d = 0; d < g->D; d++) {
            pp_rank *m = &r->world->ranks[d * g->P + r->pipe];
            if (s->member_step[d] == r->step + 1 || !__atomic_load_n(&m->step_returned, __ATOMIC_ACQUIRE)) continue;
            pthread_mutex_unlock(&g->lock);
            if (__atomic_load_n(&m->failed, __ATOMIC_ACQUIRE)) pp__rank_bail(r); /* its failure is the cause */
            pp__rank_abort(r, PP_ERR_USAGE, "every rank of a stage's data-parallel group reduces each of its chunks "
                           "once per step, in the same order", "%s(chunk %d): replica %d's rank %d ended its step "
                           "without joining this reduce (its reduce %d of the step)", q->api, q->chunk, d, r->pipe,
                           q->reduce_k);
        }
        if (pp__now() - t0 > r->cfg->deadline_s) {
            pthread_mutex_unlock(&g->lock);
            pp__rank_abort(r, PP_ERR_DEADLOCK, "every replica must reach its reduce: a blocking pp_grad_reduce in "
                           "the middle of the pipeline can wait on a rank that waits on this one",
                           "%s(chunk %d) waited %g s for the other replicas (--deadline)", q->api, q->chunk,
                           r->cfg->deadline_s);
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&g->cv, &g->lock, &ts);
    }
    double start = s->start, end = s->end;
    pthread_mutex_unlock(&g->lock);
    pp__rank_set_blocked_in(r, NULL);
    if (g->D > 1) grads_in(r, q->chunk, s->sum);
    pp_event *e = &r->trace.ev[q->reduce_ev];
    e->vstart = start, e->vend = end;
    e->wall_end = pp__now() - r->wall0;
    if (end > r->clock) r->clock = end;
    q->waited = 1;
}
