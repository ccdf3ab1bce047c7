/* mpi.c: the `mpi` transport. One process per rank (under mpirun or srun); a boundary tensor travels as
 * one MPI message (a small header: shape, dtype, the sender's call, the virtual time the data was ready; then
 * the bytes, staged through host memory). Matching is MPI's own: (source, tag, communicator), oldest posted
 * first, the same rule as the threads transport. Rendezvous mode sends with MPI_Issend, which completes only
 * once the receiver has posted the matching receive, as NCCL; eager mode sends with MPI_Isend and lets the
 * pp_send return at once (the packed copy belongs to the transport until the step ends).
 *
 * No process sees the others' queues, so deadlocks are found by deadline: a wait polls its requests with
 * MPI_Test, and once it has waited cfg->deadline_s it asks whether the whole job is stuck (see quiet_round: a
 * slow or descheduled peer is not a deadlock) and gives up only when it is. A rank's failure (shape mismatch,
 * misuse, pp_fail) is announced to every other process on a control communicator; each one runs on, and a wait
 * of its gives up, without the deadline, once every process waits and nothing moves (what the failed rank posted
 * before it failed may still arrive). step_end is collective: every process joins it, failed or not, drains what
 * was never received (counted with an all-to-all, so nothing is guessed from probes), and rank 0 writes the one
 * report of the run (the failure earliest on the virtual clock first, or each rank's last operation), which every
 * process then shares.
 *
 * The gradient reduce (reduce.h's rules) meets as collectives on the rank's data-parallel group: each member's
 * part of reduce k joins an allgather when the member calls it or leaves its step without it, every member
 * judges the same gathered parts, and a done reduce's gradients follow in a second allgather, summed in replica
 * order by each member alike. Waits and the step's end move them along (reduce_progress), so a member blocked in
 * a message still answers its group.
 *
 * Also here: the plain collectives the runtime uses to merge results on rank 0 (declared in transport.h), so
 * that no other file needs mpi.h. */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "deadlock.h"
#include "nccl_groups.h"
#include "plugin.h"
#include "rank.h"
#include "reduce.h"
#include "tensor.h"
#include "text.h"
#include "transport.h"

/* What travels in front of the bytes of every message. */
typedef struct mp_header {
    int32_t rows, cols, dtype;
    int32_t api;             /* index into api_names: the sender's call, for reports */
    int32_t tag;             /* the pp tag (the MPI tag may be remapped) */
    int32_t pad;
    double ready;            /* virtual time the sent tensor was ready */
} mp_header;

static const char *const api_names[] = {"pp_send", "pp_isend"};

/* Transport-private state of one request (pp_request.tp), kept on the context's list until the step ends. */
typedef struct mp_req {
    pp_request *req;
    MPI_Request mq;
    int active;              /* the MPI request has not completed yet */
    size_t len;              /* header + payload bytes of buf */
    unsigned char *buf;
    struct mp_req *next;
} mp_req;

/* What this rank contributes to the run's report at step end. */
enum { MP_RANK_OK = 0, MP_RANK_FAILED, MP_RANK_DEADLINE, MP_RANK_BAILED };

#define MP_TEXT 4096
#define MP_NOTICE_TAG 1
#define MP_MAX_LEFTOVER_LINES 16
#define MP_POSTED 64             /* a rank's unmatched messages a deadlock report weighs as near misses */

typedef struct mp_report {
    int32_t kind;            /* MP_RANK_* */
    int32_t status;          /* pp_status of an own failure */
    int32_t leftovers;       /* messages sent to this rank and never received */
    int32_t pad;
    double clock;            /* an own failure's virtual time: the rank's clock when it failed */
    char text[MP_TEXT];      /* the failure, or this rank's state line, then leftover lines */
    char blocked[160];       /* the call it stayed blocked in when it was stopped, or "" */
    /* deadlock.h's snapshot of this rank: rank 0 words a deadlock the way threads do */
    pp_stuck_rank stuck;
    int32_t reduces;         /* its reduces called when it stopped waiting: whom a stuck reduce waits for */
    int32_t nposted;         /* its unmatched messages, the first MP_POSTED of them in post order */
    pp_stuck_op posted[MP_POSTED];
} mp_report;

/* This rank's part in its data-parallel group's reduce k of the step (reduce.h): the parts meet by an allgather
 * on one communicator; when they make a done reduce, the gradients by an allgather on another, posted in the
 * same order by every member since each one judges the same parts. */
enum { MP_SLOT_IDLE = 0, MP_SLOT_PARTS, MP_SLOT_GRADS, MP_SLOT_DECIDED };
typedef struct mp_slot {
    int state;
    pp_reduce_part mine, *parts; /* parts: [D], once gathered */
    pp_request *req;         /* this rank's request, when it called it */
    float *grads, *all;      /* its gradients at the call; everyone's, [D][floats] */
    float *sum;
    double start, end;
    MPI_Request pq, gq;
    void *nccl_op;           /* ... or, with the cuda backend, the gradients' gather and sum on NCCL */
} mp_slot;

/* This rank's part in its tensor-parallel group's sum k of the step (the shards of its stage, ranked by shard): as
 * a reduce's, the parts meet by an allgather, then a done sum's tensors by another; the slots grow with the step's
 * sums, whose number no rank knows in advance. */
typedef struct mp_tslot {
    int state;               /* MP_SLOT_* */
    pp_reduce_part mine, *parts; /* parts: [T], once gathered */
    pp_request *req;         /* this rank's request, when it called the sum */
    float *data, *all;       /* its tensor at the call; everyone's, [T][floats] */
    MPI_Request pq, gq;
    void *nccl_op;           /* ... or, with the cuda backend, their gather and sum on NCCL */
} mp_tslot;

typedef struct mp_ctx {
    MPI_Comm data;           /* boundary messages */
    MPI_Comm ctl;            /* failure notices and the runtime's collectives */
    int rank, size;
    int tag_ub;
    int owns_mpi;            /* this transport called MPI_Init, so it finalizes */
    /* per step */
    mp_req *reqs;            /* every request posted this step */
    long *sent_to, *recv_from;
    int notified;            /* this rank announced a failure to the others */
    int peer_failed;         /* a notice came: another rank failed, so a wait may never complete */
    MPI_Request *notice_reqs;
    int notice_status;
    int *notice_from;        /* notices received, per sender */
    int kind;                /* MP_RANK_* */
    char state[512];         /* this rank's line for a deadlock report */
    pp_stuck_rank stuck;     /* ... and what it was doing then (deadlock.h) */
    int stuck_reduces;       /* ... and its reduces called by then */
    /* deadlock confirmation (quiet_round) */
    MPI_Comm quiet;
    MPI_Comm dp_parts, dp_grads; /* this rank's reduce group (reduce.h: the ranks of its stage, ranked as members),
                              * twice: the reduces' parts, and their gradients */
    int D, replica;          /* the group's members, and this rank's place among them */
    mp_slot *slots;          /* [v]: the group's reduces of this step */
    int parts_next, grads_next; /* slots whose parts, and whose gradients, are not yet in (each in order) */
    double lane;             /* the group's lane is free from here */
    MPI_Comm tp_parts, tp_data, tp_ctl; /* this rank's tensor-parallel group (--tp): its sums' parts, their tensors,
                              * and the step end's agreement on how many sums there were */
    int T, shard;            /* the group's members, and this rank's place among them */
    void *nccl_tp;           /* with the cuda backend (and NCCL): the sums' tensors go over this communicator */
    mp_tslot *ts;            /* [ts_cap]: the group's sums of this step, ts_n of them posted by this rank */
    int ts_n, ts_cap, ts_parts_next, ts_data_next;
    const pp_nccl_api *nccl; /* with the cuda backend (and the plugin built with NCCL): the reduce's gradients */
    void *nccl_dp;           /* ... go over this communicator of the group's GPUs */
    /* the watch (watch_run): a thread of its own, beats from every process to rank 0 */
    MPI_Comm beat;
    pthread_t watch;
    int watching;            /* the thread runs (MPI gave MPI_THREAD_MULTIPLE) */
    int stop;                /* atomic: the thread is to end */
    double *heard;           /* rank 0: when each process last beat */
    char (*hosts)[64];       /* each process's host name, for the report of a loss */
    char *lost;              /* atomic pointer: rank 0's report of ranks gone silent, once; the main thread
                              * fails the run with it at its next wait */
    long progress;           /* operations this rank posted or completed this step */
    int rounds;              /* rounds joined this step */
    int round_active;
    MPI_Request round_req;
    long round_vote[2], round_out[2];
    int have_prev;           /* the last round found every rank waiting */
    long prev_sum;
    double round_done_at;
    unsigned polls_after;
} mp_ctx;

static mp_ctx *ctx_of(pp_world *w) { return (mp_ctx *)w->tp_ctx; }

/* The report of ranks lost, once rank 0's watch wrote one (NULL before, and on every other rank). */
static const char *watch_lost(const mp_ctx *c) { return __atomic_load_n(&c->lost, __ATOMIC_ACQUIRE); }

/* Completes the n requests q (their statuses into st, or MPI_STATUSES_IGNORE), polling where a blocking call
 * would wait; returns -1 at once, leaving them, when rank 0's watch found ranks lost: without them no collective
 * can complete, and the lost ones are the report. Every collective of a step's end and of the run's results goes
 * through it, so that rank 0 is never stuck in one. */
static int mp_waitall(const mp_ctx *c, int n, MPI_Request *q, MPI_Status *st) {
    for (unsigned it = 0;; it++) {
        int flag = 0;
        MPI_Testall(n, q, &flag, st);
        if (flag) return 0;
        if (watch_lost(c)) return -1;
        if (it < 256) continue;
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

/* Seconds on a monotonic clock (pp__now is in runtime.c; same clock). */
static double now(void) { return pp__now(); }


static const char *shape_describe(int rows, int cols, int dtype, char *buf, size_t len) {
    pp_tensor t;
    memset(&t, 0, sizeof t);
    t.rows = rows;
    t.cols = cols;
    t.dtype = (pp_dtype)dtype;
    return pp__tensor_describe(&t, buf, len);
}

/* The MPI tag carrying pp tag `tag`: itself when the library's tag bound allows (Open MPI's ob1: 2^31-1),
 * else a dense code (direction, virtual stage < 1024, micro-batch < 1024 in 21 bits; raw tags above them).
 * -1 when this MPI cannot carry it. */
static int mpi_tag(const mp_ctx *c, int tag) {
    if (tag <= c->tag_ub) return tag;
    int dir, mb, vs;
    if (pp__tag_split(tag, &dir, &mb, &vs)) {
        if (mb < 1024 && vs < 1024) return (dir << 20) | (vs << 10) | mb;
        return -1;
    }
    long raw = (1L << 21) + tag;
    return raw <= c->tag_ub ? (int)raw : -1;
}

/* ---- failure notices --------------------------------------------------------------------------------- */

/* Tells every other process that the run failed (once per step), so they stop waiting at their next poll. */
static void notify_others(mp_ctx *c, pp_status st) {
    if (c->notified || c->size < 2) return;
    c->notified = 1;
    c->notice_status = (int)st;
    c->notice_reqs = pp__xcalloc((size_t)c->size, sizeof *c->notice_reqs);
    for (int q = 0; q < c->size; q++) {
        c->notice_reqs[q] = MPI_REQUEST_NULL;
        if (q != c->rank) MPI_Isend(&c->notice_status, 1, MPI_INT, q, MP_NOTICE_TAG, c->ctl, &c->notice_reqs[q]);
    }
}

/* Receives the failure notices that have arrived; returns 1 if any did. */
static int poll_notices(mp_ctx *c) {
    int got = 0;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MP_NOTICE_TAG, c->ctl, &flag, &st);
        if (!flag) return got;
        int v;
        MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, MP_NOTICE_TAG, c->ctl, MPI_STATUS_IGNORE);
        c->notice_from[st.MPI_SOURCE]++;
        c->peer_failed = 1;
        got = 1;
    }
}

/* ---- posting and completing -------------------------------------------------------------------------- */

static mp_req *req_track(mp_ctx *c, pp_request *req, size_t len) {
    mp_req *m = pp__xcalloc(1, sizeof *m);
    m->req = req;
    m->len = len;
    m->buf = pp__xmalloc(len);
    m->mq = MPI_REQUEST_NULL;
    m->next = c->reqs;
    c->reqs = m;
    req->tp = m;
    return m;
}

/* Posts a send (header + bytes packed into one buffer) or a receive of the expected shape. A tag this MPI cannot
 * carry aborts the posting rank. */
static void mpi_post(pp_world *w, pp_request *req) {
    mp_ctx *c = ctx_of(w);
    pp_rank *r = &w->ranks[req->rank];
    req->done = 0;
    req->next = NULL;
    int mtag = mpi_tag(c, req->tag);
    if (mtag < 0) {
        char tb[32];
        pp__rank_abort(r, PP_ERR_USAGE, "use pp_tag() with micro-batches and virtual stages below 1024",
                       "%s: tag %s does not fit this MPI's tag range (MPI_TAG_UB = %d)", req->api,
                       pp__tag_describe(req->tag, tb, sizeof tb), c->tag_ub);
    }
    pp_tensor *t = req->t;
    mp_req *m = req_track(c, req, sizeof(mp_header) + t->bytes);
    if (req->is_send) {
        mp_header h = {.rows = t->rows, .cols = t->cols, .dtype = (int32_t)t->dtype,
                       .api = req->api && !strcmp(req->api, "pp_isend") ? 1 : 0, .tag = req->tag,
                       .ready = t->ready};
        memcpy(m->buf, &h, sizeof h);
        if (t->bytes) pp__tensor_to_host(t, m->buf + sizeof h);
        int rc = w->cfg->eager ? MPI_Isend(m->buf, (int)m->len, MPI_BYTE, req->peer, mtag, c->data, &m->mq)
                               : MPI_Issend(m->buf, (int)m->len, MPI_BYTE, req->peer, mtag, c->data, &m->mq);
        if (rc != MPI_SUCCESS)
            pp__rank_abort(r, PP_ERR_BACKEND, "check the MPI installation (ompi_info) and the launcher's log",
                           "%s: MPI refused the send (error %d)", req->api, rc);
        m->active = 1;
        c->progress++;
        c->sent_to[req->peer]++;
        if (w->cfg->eager) {
            /* the packed copy is the transport's: the caller may reuse its tensor now */
            req->msg_ready = t->ready;
            req->done = 1;
        }
    } else {
        int rc = MPI_Irecv(m->buf, (int)m->len, MPI_BYTE, req->peer, mtag, c->data, &m->mq);
        if (rc != MPI_SUCCESS)
            pp__rank_abort(r, PP_ERR_BACKEND, "check the MPI installation (ompi_info) and the launcher's log",
                           "%s: MPI refused the receive (error %d)", req->api, rc);
        m->active = 1;
        c->progress++;
    }
}

/* A receive completed with status st: checks the sender's header against the expected tensor and unpacks it.
 * A mismatch aborts this rank naming both ranks and both ops. */
static void recv_finish(pp_world *w, mp_ctx *c, pp_request *req, mp_req *m, const MPI_Status *st, int rc) {
    pp_rank *r = &w->ranks[req->rank];
    c->recv_from[req->peer]++;
    char mine[96], theirs[96], want[48], got[48], sender[48], receiver[48];
    int local = req->rank % w->cfg->P; /* the receiver as the sender's program names it */
    pp__request_describe(req, mine, sizeof mine);
    pp__rank_label(w, req->peer, sender, sizeof sender);
    pp__rank_label(w, req->rank, receiver, sizeof receiver);
    pp__tensor_describe(req->t, want, sizeof want);
    int count = 0;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (rc == MPI_ERR_TRUNCATE || (rc == MPI_SUCCESS && (size_t)count < sizeof(mp_header))) {
        pp__op_describe("pp_send", 1, local, req->tag, theirs, sizeof theirs);
        pp__rank_abort(r, PP_ERR_SHAPE,
                       "send exactly the tensor the receiver expects: pp_recv() receives one activation "
                       "(micro-batch size x seq rows, hidden columns), forward or backward",
                       "%s %s sent %d bytes but %s %s expects %s (%zu bytes)", sender, theirs,
                       count > (int)sizeof(mp_header) ? count - (int)sizeof(mp_header) : count, receiver, mine,
                       want, req->t->bytes);
    }
    if (rc != MPI_SUCCESS)
        pp__rank_abort(r, PP_ERR_BACKEND, "check the MPI installation (ompi_info) and the launcher's log",
                       "%s: MPI failed the receive (error %d)", req->api, rc);
    mp_header h;
    memcpy(&h, m->buf, sizeof h);
    if (h.rows != req->t->rows || h.cols != req->t->cols || h.dtype != (int32_t)req->t->dtype) {
        pp__op_describe(api_names[h.api == 1], 1, local, h.tag, theirs, sizeof theirs);
        pp__rank_abort(r, PP_ERR_SHAPE,
                       "send exactly the tensor the receiver expects: pp_recv() receives one activation "
                       "(micro-batch size x seq rows, hidden columns), forward or backward",
                       "%s %s sent %s but %s %s expects %s", sender, theirs,
                       shape_describe(h.rows, h.cols, h.dtype, got, sizeof got), receiver, mine, want);
    }
    if (req->t->bytes) pp__tensor_from_host(req->t, m->buf + sizeof h);
    req->msg_ready = h.ready;
}

/* Tests one request; completes it (and its pp_request) when MPI says it is done. */
static void req_test(pp_world *w, mp_ctx *c, pp_request *req) {
    mp_req *m = req->tp;
    if (!m || !m->active) return;
    int flag = 0;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc = MPI_Test(&m->mq, &flag, &st);
    if (!flag && rc == MPI_SUCCESS) return;
    m->active = 0;
    c->progress++;
    if (req->is_send) {
        req->msg_ready = req->t->ready;
    } else {
        recv_finish(w, c, req, m, &st, rc);
    }
    req->done = 1;
}

/* ---- the gradient reduce (reduce.h's rules; the parts meet by collectives) -------------------------------- */

/* A judged slot: this rank's request gets its verdict, the lane's times and the sum, and is done. */
static void slot_decide(mp_ctx *c, mp_slot *s) {
    s->state = MP_SLOT_DECIDED;
    c->progress++;
    if (!s->req) return;
    s->req->red.verdict = (int)pp__reduce_judge(s->parts, c->D, c->replica, &s->req->red.other,
                                                &s->req->red.other_chunk);
    s->req->red.start = s->start, s->req->red.end = s->end;
    s->req->red.sum = s->sum;
    s->req->done = 1;
}

/* Moves the step's reduces as far as they go without waiting: the parts of each slot in order, then, for a done
 * reduce, its gradients. The lane runs in the order of the parts, which fix each reduce's place. */
static void reduce_progress(pp_world *w, mp_ctx *c) {
    for (int moved = 1; moved;) {
        moved = 0;
        mp_slot *s = c->parts_next < w->cfg->v ? &c->slots[c->parts_next] : NULL;
        int flag = 0;
        if (s && s->state == MP_SLOT_PARTS && (MPI_Test(&s->pq, &flag, MPI_STATUS_IGNORE), flag)) {
            moved = 1;
            c->parts_next++;
            int first_call = -1, other, other_chunk;
            for (int d = 0; d < c->D && first_call < 0; d++)
                if (s->parts[d].kind == PP_PART_CALL) first_call = d;
            int done = first_call >= 0 &&
                       pp__reduce_judge(s->parts, c->D, first_call, &other, &other_chunk) == PP_REDUCE_DONE;
            s->start = s->end = c->lane;
            if (done) pp__reduce_place(w->cfg, pp__reduce_group(w->cfg, c->rank), s->parts, c->D, c->lane, &s->start,
                                       &s->end);
            c->lane = s->end;
            if (done && c->D > 1 && c->nccl_dp) {
                char err[512];
                s->nccl_op = c->nccl->sum_start(c->nccl_dp, c->D, s->grads, (size_t)s->mine.floats, err, sizeof err);
                if (!s->nccl_op) PP_DIE("check the GPUs with nvidia-smi; NCCL_DEBUG=INFO says more", "%s", err);
                s->state = MP_SLOT_GRADS;
                c->progress++;
            } else if (done && c->D > 1) {
                size_t n = (size_t)s->mine.floats;
                PP_ASSERT(n < (size_t)1 << 28);
                s->all = pp__xmalloc((size_t)c->D * n * sizeof(float) + 1);
                MPI_Iallgather(s->grads, (int)n, MPI_FLOAT, s->all, (int)n, MPI_FLOAT, c->dp_grads, &s->gq);
                s->state = MP_SLOT_GRADS;
                c->progress++;
            } else {
                slot_decide(c, s);
            }
        }
        mp_slot *g = c->grads_next < c->parts_next ? &c->slots[c->grads_next] : NULL;
        int nccl_done = g && g->state == MP_SLOT_GRADS && g->nccl_op ? c->nccl->sum_test(g->nccl_op) : 0;
        if (nccl_done < 0) PP_DIE("check the GPUs with nvidia-smi; NCCL_DEBUG=INFO says more",
                                  "the gradient reduce of chunk %d failed on NCCL", g->mine.chunk);
        if (g && g->state == MP_SLOT_DECIDED) {
            c->grads_next++, moved = 1;
        } else if (nccl_done) {
            g->sum = pp__xmalloc((size_t)g->mine.floats * sizeof(float) + 1);
            c->nccl->sum_end(g->nccl_op, g->sum);
            g->nccl_op = NULL;
            slot_decide(c, g);
            c->grads_next++, moved = 1;
        } else if (g && g->state == MP_SLOT_GRADS && !g->nccl_op && (MPI_Test(&g->gq, &flag, MPI_STATUS_IGNORE), flag)) {
            size_t n = (size_t)g->mine.floats;
            const float **contrib = pp__xcalloc((size_t)c->D, sizeof *contrib);
            for (int d = 0; d < c->D; d++) contrib[d] = g->all + (size_t)d * n;
            g->sum = pp__xmalloc(n * sizeof(float) + 1);
            pp__reduce_sum(contrib, c->D, n, g->sum);
            free(contrib);
            slot_decide(c, g);
            c->grads_next++, moved = 1;
        }
    }
}

/* reduce_post: this rank's part joins its group's allgather of reduce part->k. A member posts its parts in order
 * (its calls, then what it left undone), so every member's collectives come in the same order. */
static void mpi_reduce_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *grads) {
    mp_ctx *c = ctx_of(w);
    mp_slot *s = &c->slots[part->k];
    PP_ASSERT(s->state == MP_SLOT_IDLE);
    s->mine = *part, s->req = q, s->grads = grads;
    s->parts = pp__xcalloc((size_t)c->D, sizeof *s->parts);
    MPI_Iallgather(&s->mine, (int)sizeof s->mine, MPI_BYTE, s->parts, (int)sizeof s->mine, MPI_BYTE, c->dp_parts,
                   &s->pq);
    s->state = MP_SLOT_PARTS;
    c->progress++;
    reduce_progress(w, c);
}

/* ---- the shards' sums (--tp) ------------------------------------------------------------------------------ */

static void tp_decide(mp_ctx *c, mp_tslot *s, float *sum) {
    s->state = MP_SLOT_DECIDED;
    c->progress++;
    if (!s->req) {
        free(sum);
        return;
    }
    s->req->red.verdict = (int)pp__reduce_judge(s->parts, c->T, c->shard, &s->req->red.other,
                                                &s->req->red.other_chunk);
    s->req->red.start = s->req->red.end = 0; /* a sum's time is the op's (stage.c) */
    s->req->red.sum = sum;
    s->req->done = 1;
}

/* Moves the step's sums as far as they go without waiting, in order: the parts, then a done sum's tensors, added
 * in shard order as the threads transport adds them (reduce.c), so every transport gives the same bits. */
static void tp_progress(mp_ctx *c) {
    for (int moved = 1; moved;) {
        moved = 0;
        int flag = 0;
        mp_tslot *s = c->ts_parts_next < c->ts_n ? &c->ts[c->ts_parts_next] : NULL;
        if (s && s->state == MP_SLOT_PARTS && (MPI_Test(&s->pq, &flag, MPI_STATUS_IGNORE), flag)) {
            moved = 1;
            c->ts_parts_next++;
            int first_call = -1, other, other_chunk;
            for (int m = 0; m < c->T && first_call < 0; m++)
                if (s->parts[m].kind == PP_PART_CALL) first_call = m;
            int done = first_call >= 0 &&
                       pp__reduce_judge(s->parts, c->T, first_call, &other, &other_chunk) == PP_REDUCE_DONE;
            if (done && c->nccl_tp) {
                char err[512];
                s->nccl_op = c->nccl->sum_start(c->nccl_tp, c->T, s->data, (size_t)s->mine.floats, err, sizeof err);
                if (!s->nccl_op) PP_DIE("check the GPUs with nvidia-smi; NCCL_DEBUG=INFO says more", "%s", err);
                s->state = MP_SLOT_GRADS;
                c->progress++;
            } else if (done) {
                size_t n = (size_t)s->mine.floats;
                PP_ASSERT(n < (size_t)1 << 28);
                s->all = pp__xmalloc((size_t)c->T * n * sizeof(float) + 1);
                MPI_Iallgather(s->data, (int)n, MPI_FLOAT, s->all, (int)n, MPI_FLOAT, c->tp_data, &s->gq);
                s->state = MP_SLOT_GRADS;
                c->progress++;
            } else {
                tp_decide(c, s, NULL);
            }
        }
        mp_tslot *g = c->ts_data_next < c->ts_parts_next ? &c->ts[c->ts_data_next] : NULL;
        int nccl_done = g && g->state == MP_SLOT_GRADS && g->nccl_op ? c->nccl->sum_test(g->nccl_op) : 0;
        if (nccl_done < 0) PP_DIE("check the GPUs with nvidia-smi; NCCL_DEBUG=INFO says more",
                                  "a shards' sum failed on NCCL");
        if (g && g->state == MP_SLOT_DECIDED) {
            c->ts_data_next++, moved = 1;
        } else if (nccl_done) {
            float *sum = pp__xmalloc((size_t)g->mine.floats * sizeof(float) + 1);
            c->nccl->sum_end(g->nccl_op, sum);
            g->nccl_op = NULL;
            tp_decide(c, g, sum);
            c->ts_data_next++, moved = 1;
        } else if (g && g->state == MP_SLOT_GRADS && !g->nccl_op &&
                   (MPI_Test(&g->gq, &flag, MPI_STATUS_IGNORE), flag)) {
            size_t n = (size_t)g->mine.floats;
            const float **contrib = pp__xcalloc((size_t)c->T, sizeof *contrib);
            for (int m = 0; m < c->T; m++) contrib[m] = g->all + (size_t)m * n;
            float *sum = pp__xmalloc(n * sizeof(float) + 1);
            pp__reduce_sum(contrib, c->T, n, sum);
            free(contrib);
            tp_decide(c, g, sum);
            c->ts_data_next++, moved = 1;
        }
    }
}

/* The part with which this rank joins its group's sum part->k: a call, or, when it leaves its step, that it will
 * make no more. Every member posts its parts in order, so every member's collectives come in the same order; the
 * step end pads the members that stopped early (tp_step_end). */
static void mpi_tp_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *data) {
    (void)rank;
    mp_ctx *c = ctx_of(w);
    PP_ASSERT(part->k == c->ts_n);
    if (c->ts_n == c->ts_cap) {
        c->ts_cap = c->ts_cap ? 2 * c->ts_cap : 64;
        c->ts = pp__xrealloc(c->ts, (size_t)c->ts_cap * sizeof *c->ts);
    }
    mp_tslot *s = &c->ts[c->ts_n++];
    memset(s, 0, sizeof *s);
    s->mine = *part, s->req = q, s->data = data;
    s->parts = pp__xcalloc((size_t)c->T, sizeof *s->parts);
    MPI_Iallgather(&s->mine, (int)sizeof s->mine, MPI_BYTE, s->parts, (int)sizeof s->mine, MPI_BYTE, c->tp_parts,
                   &s->pq);
    s->state = MP_SLOT_PARTS;
    c->progress++;
    tp_progress(c);
}

/* At step end: the members agree on how many sums the step had (one that stopped early posted fewer), the short
 * ones pad with parts that say they returned, and every sum still moving finishes; the slots are cleared. */
static void tp_step_end(pp_world *w, mp_ctx *c) {
    if (c->T <= 1) return;
    int most = c->ts_n;
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, c->tp_ctl);
    while (c->ts_n < most) {
        pp_reduce_part pad = {.kind = PP_PART_RETURNED, .k = c->ts_n, .chunk = -1};
        mpi_tp_post(w, c->rank, NULL, &pad, NULL);
    }
    while (c->ts_data_next < c->ts_n && !watch_lost(c)) {
        tp_progress(c);
        if (c->ts_data_next < c->ts_n) sched_yield();
    }
    for (int k = 0; k < c->ts_n; k++) {
        mp_tslot *s = &c->ts[k];
        free(s->parts), free(s->data), free(s->all);
    }
    c->ts_n = c->ts_parts_next = c->ts_data_next = 0;
}

/* At step end every member has posted all its parts: the reduces still moving finish (a done one's gradients are
 * still gathered, though nobody may wait for it), and the slots are cleared for the next step. */
static void reduce_step_end(pp_world *w, mp_ctx *c) {
    while (c->grads_next < w->cfg->v && !watch_lost(c)) {
        reduce_progress(w, c);
        if (c->grads_next < w->cfg->v) sched_yield();
    }
    for (int k = 0; k < w->cfg->v; k++) {
        mp_slot *s = &c->slots[k];
        free(s->parts), free(s->grads), free(s->all), free(s->sum);
        memset(s, 0, sizeof *s);
    }
    c->parts_next = c->grads_next = 0;
    c->lane = 0;
}

/* ---- the watch: ranks that went silent --------------------------------------------------------------------- */

/* A process whose node died or whose network was cut answers nothing, not even a deadline's quiet round, so the
 * waits alone could only hang. Each process therefore runs a thread that sends rank 0 a beat every WATCH_BEAT_S,
 * whatever its rank is doing (a slow rank beats too). Rank 0's thread notes when each one was last heard; one
 * silent for the deadline (at least WATCH_SILENT_MIN_S) is lost, and rank 0 fails the run with a report naming the lost ranks and their hosts.
 * The job cannot end cleanly without them, so rank 0 then leaves MPI unfinished (mpi_fini), and the launcher
 * ends the rest. Rank 0 itself must be alive to report: it runs where the run was started (a hostfile's first
 * host). */
#define WATCH_BEAT_S 0.1
/* A short --deadline (a test's 0.1 s) must not call a process lost that a loaded machine kept off its core for
 * a moment: silence counts from this long, twenty beats. */
#define WATCH_SILENT_MIN_S 2.0
#define WATCH_TAG_BEAT 1
#define WATCH_TAG_BYE 2

static void *watch_run(void *arg) {
    pp_world *w = arg;
    mp_ctx *c = ctx_of(w);
    double silent = w->cfg->deadline_s > 0 ? w->cfg->deadline_s : 10.0;
    if (silent < WATCH_SILENT_MIN_S) silent = WATCH_SILENT_MIN_S;
    int beat = 0, beats = 0, *byes = c->rank == 0 ? pp__xcalloc((size_t)c->size, sizeof *byes) : NULL;
    long *got = c->rank == 0 ? pp__xcalloc((size_t)c->size, sizeof *got) : NULL;
    MPI_Request q = MPI_REQUEST_NULL;
    for (int done = 0; !done;) {
        int stopping = __atomic_load_n(&c->stop, __ATOMIC_ACQUIRE);
        if (c->rank != 0) {
            /* one beat in flight at most: towards a lost rank 0 a send may never complete */
            int flag = 1;
            if (q != MPI_REQUEST_NULL) MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
            if (flag && stopping) {
                /* the last word says how many beats came before it, so that rank 0 receives them all */
                MPI_Send(&beats, 1, MPI_INT, 0, WATCH_TAG_BYE, c->beat);
                done = 1;
            } else if (flag) {
                beats++;
                MPI_Isend(&beat, 1, MPI_INT, 0, WATCH_TAG_BEAT, c->beat, &q);
            }
        } else {
            for (int flag = 1; flag;) {
                MPI_Status st;
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->beat, &flag, &st);
                if (!flag) break;
                int v;
                MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, c->beat, MPI_STATUS_IGNORE);
                c->heard[st.MPI_SOURCE] = now();
                if (st.MPI_TAG == WATCH_TAG_BYE) byes[st.MPI_SOURCE] = v + 1;
                else got[st.MPI_SOURCE]++;
            }
            done = stopping;
            for (int r = 1; r < c->size && done; r++) done = byes[r] && got[r] == byes[r] - 1;
            /* stopping after a loss: the lost ones never say goodbye */
            if (stopping && __atomic_load_n(&c->lost, __ATOMIC_ACQUIRE)) done = 1;
            double t = now();
            int lost = 0;
            for (int r = 1; r < c->size; r++) lost += !byes[r] && t - c->heard[r] > silent;
            if (lost && !__atomic_load_n(&c->lost, __ATOMIC_ACQUIRE)) {
                char *text = pp__xmalloc(MP_TEXT);
                size_t len = pp__text_append(text, MP_TEXT, 0, "nothing heard for %.1f s from", silent);
                for (int r = 1, k = 0; r < c->size; r++)
                    if (!byes[r] && t - c->heard[r] > silent) {
                        char who[48];
                        len = pp__text_append(text, MP_TEXT, len, "%s %s (on %s)", k++ ? "," : "",
                                       pp__rank_label(w, r, who, sizeof who), c->hosts[r]);
                    }
                pp__text_append(text, MP_TEXT, len, ": %s node or its network failed, or %s stopped\nHINT: check the "
                         "node and the link to it (ping it from %s); the schedule itself is not at fault",
                         lost > 1 ? "their" : "its", lost > 1 ? "their processes were" : "its process was", c->hosts[0]);
                __atomic_store_n(&c->lost, text, __ATOMIC_RELEASE);
            }
        }
        if (!done) {
            struct timespec ts = {0, (long)(WATCH_BEAT_S * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    free(byes);
    free(got);
    return NULL;
}

/* Starts the watch (when MPI allows a second thread to call it): every process's host name is gathered first,
 * for the report. */
static void watch_start(pp_world *w, mp_ctx *c, int threads) {
    c->hosts = pp__xcalloc((size_t)c->size, sizeof *c->hosts);
    char mine[64] = "";
    gethostname(mine, sizeof mine - 1);
    MPI_Allgather(mine, (int)sizeof mine, MPI_CHAR, c->hosts, (int)sizeof mine, MPI_CHAR, c->ctl);
    if (threads < MPI_THREAD_MULTIPLE || c->size < 2) return;
    MPI_Comm_dup(MPI_COMM_WORLD, &c->beat);
    c->heard = pp__xcalloc((size_t)c->size, sizeof *c->heard);
    for (int r = 0; r < c->size; r++) c->heard[r] = now();
    c->watching = pthread_create(&c->watch, NULL, watch_run, w) == 0;
    if (!c->watching) MPI_Comm_free(&c->beat);
    /* named, so that top, gdb and a test can tell a process whose watch is running (its start-up is behind it) */
    else pthread_setname_np(c->watch, "pp-watch");
}

/* Ends the watch: every process's last beats reach rank 0 before the thread returns (after a loss, rank 0 stops
 * at once). */
static void watch_stop(mp_ctx *c) {
    if (c->watching) {
        __atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
        pthread_join(c->watch, NULL);
        if (!watch_lost(c)) MPI_Comm_free(&c->beat);
    }
    free(c->heard);
    free(c->hosts);
    free(c->lost);
}

/* ---- deadlock confirmation ---------------------------------------------------------------------------- */

/* Between two rounds a waiting rank keeps polling this long (and this many times), so that a message already
 * matched has every chance to complete before "nothing moved" is concluded. */
#define QUIET_GAP_S 0.1
#define QUIET_GAP_POLLS 64u

/* A rank that has waited past the deadline joins a round: a nonblocking allreduce on its own communicator of
 * (ranks not waiting, operations posted or completed). Only a rank in a wait (or at the end of its step) joins,
 * so a round completes only once every rank is waiting; a rank busy computing holds it open, as it should. Two
 * rounds in a row that find every rank waiting with the same total mean that from the end of the first round
 * (when every rank had joined it) to each rank's joining of the second, no rank posted or completed anything:
 * the job is stuck. Returns 1 when this call saw that confirmed. Every rank sees the same rounds in the same
 * order, so they all conclude alike; step_end pads the rounds so that each rank joins as many. */
static int quiet_round(mp_ctx *c, int waiting) {
    if (c->round_active) {
        int flag = 0;
        MPI_Test(&c->round_req, &flag, MPI_STATUS_IGNORE);
        if (!flag) return 0;
        c->round_active = 0;
        int all_waiting = c->round_out[0] == 0;
        int stuck = all_waiting && c->have_prev && c->round_out[1] == c->prev_sum;
        c->have_prev = all_waiting;
        c->prev_sum = c->round_out[1];
        c->round_done_at = now();
        c->polls_after = 0;
        return stuck;
    }
    if (!waiting) return 0;
    if (c->size < 2) return 1; /* alone, a waiting process waits for itself */
    if (c->rounds > 0 && (++c->polls_after < QUIET_GAP_POLLS || now() - c->round_done_at < QUIET_GAP_S)) return 0;
    c->round_vote[0] = 0;
    c->round_vote[1] = c->progress;
    MPI_Iallreduce(c->round_vote, c->round_out, 2, MPI_LONG, MPI_SUM, c->quiet, &c->round_req);
    c->round_active = 1;
    c->rounds++;
    return 0;
}

/* At step end, once every rank has left its waits: joins, voting "not waiting", the rounds other ranks joined and
 * this one did not, completes them all, and resets the rounds for the next step. Collective; -1 when ranks were
 * lost meanwhile. */
static int quiet_end(mp_ctx *c) {
    int most = 0;
    MPI_Request r;
    MPI_Iallreduce(&c->rounds, &most, 1, MPI_INT, MPI_MAX, c->ctl, &r);
    if (mp_waitall(c, 1, &r, MPI_STATUSES_IGNORE)) return -1;
    int pad = most - c->rounds, n = 0;
    MPI_Request *q = pp__xcalloc((size_t)pad + 1, sizeof *q);
    long(*vote)[2] = pp__xcalloc((size_t)pad + 1, sizeof *vote), (*out)[2] = pp__xcalloc((size_t)pad + 1, sizeof *out);
    if (c->round_active) q[n++] = c->round_req;
    for (int k = 0; k < pad; k++, n++) {
        vote[k][0] = 1;
        MPI_Iallreduce(vote[k], out[k], 2, MPI_LONG, MPI_SUM, c->quiet, &q[n]);
    }
    int lost = mp_waitall(c, n, q, MPI_STATUSES_IGNORE);
    free(q);
    free(vote);
    free(out);
    c->round_active = 0;
    c->rounds = 0;
    c->have_prev = 0;
    c->progress = 0;
    return lost;
}

/* A reduce that ended because a member left first: it never completed, and the rank leaves its step over it. */
static int stopped_reduce(const pp_request *q) { return q->is_reduce && q->red.verdict == PP_REDUCE_STOPPED; }

/* What rank r missed of its wait on reqs[0..n) as it left it, for a deadlock report (deadlock.h), and how many
 * reduces it had called then (leaving its step answers the rest). */
static void stuck_record(pp_world *w, mp_ctx *c, int r, pp_request **reqs, int n) {
    pp_stuck_rank *sr = &c->stuck;
    memset(sr, 0, sizeof *sr);
    sr->state = PP_STUCK_BLOCKED;
    for (int k = 0; k < n; k++)
        if ((!reqs[k]->done || stopped_reduce(reqs[k])) && !sr->pending++) pp__deadlock_op(reqs[k], &sr->first);
    const char *in = pp__rank_blocked_in(&w->ranks[r]);
    snprintf(sr->blocked_in, sizeof sr->blocked_in, "%s", in ? in : "");
    c->stuck_reduces = w->ranks[r].reduces;
}

/* Records why this rank stopped waiting on reqs[0..n) and what it still missed, and leaves its step function
 * (mpi_rank_exit writes its line). */
static void stop_waiting(pp_world *w, mp_ctx *c, int r, int kind, pp_request **reqs, int n) {
    c->kind = kind;
    stuck_record(w, c, r, reqs, n);
    pp__rank_bail(&w->ranks[r]);
}

/* Polls rank r's n requests until all are done. Tight polling first (a neighbour usually answers within
 * microseconds), then yielding, then short sleeps: with more processes than cores the partner may need this
 * very core. Leaves through pp__rank_bail when the run failed anywhere or the deadline passed. */
static void mpi_wait(pp_world *w, int r, pp_request **reqs, int n) {
    mp_ctx *c = ctx_of(w);
    double t0 = now(), deadline = w->cfg->deadline_s > 0 ? w->cfg->deadline_s : 10.0;
    for (unsigned it = 0;; it++) {
        int left = 0;
        reduce_progress(w, c);
        if (c->T > 1) tp_progress(c);
        for (int k = 0; k < n; k++) {
            if (!reqs[k]->done && !reqs[k]->is_reduce) req_test(w, c, reqs[k]);
            left += !reqs[k]->done;
        }
        if (!left) {
            /* the rank leaves its step over a reduce a member left first (comm.c): it stayed blocked in it */
            for (int k = 0; k < n; k++)
                if (stopped_reduce(reqs[k])) {
                    stuck_record(w, c, r, reqs, n);
                    break;
                }
            return;
        }
        if (watch_lost(c)) pp__world_fail(w, PP_ERR_LOST, watch_lost(c));
        if (pp__world_failed(w)) stop_waiting(w, c, r, MP_RANK_BAILED, reqs, n);
        /* another rank failed: this wait may still complete (what it posted before failing still matches), so
         * it goes on until every process waits and nothing moves, without the deadline */
        if (it % 16 == 0) poll_notices(c);
        if (it < 256) continue;
        double t = now() - t0;
        if (c->peer_failed && quiet_round(c, 1)) stop_waiting(w, c, r, MP_RANK_BAILED, reqs, n);
        if (!c->peer_failed && t > deadline && quiet_round(c, 1)) {
            char line[512], who[48];
            snprintf(line, sizeof line, "%s blocked in %s for %.1f s", pp__rank_label(w, r, who, sizeof who),
                     pp__rank_blocked_in(&w->ranks[r]) ? pp__rank_blocked_in(&w->ranks[r]) : "a wait", t);
            c->kind = MP_RANK_DEADLINE;
            pp__world_fail(w, PP_ERR_DEADLOCK, line);
            stop_waiting(w, c, r, MP_RANK_DEADLINE, reqs, n);
        }
        if (t < 0.002) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
}

/* The line a deadlock report shows for a rank that left its step function normally. */
static void mpi_rank_exit(pp_world *w, int r) {
    mp_ctx *c = ctx_of(w);
    char who[48];
    pp__rank_label(w, r, who, sizeof who);
    /* a wait left while still blocked (at the deadline, after a failure elsewhere, or in a reduce whose member
     * failed first): one line whichever of those stopped it, so that a report differs from run to run in its
     * wall times alone */
    const char *blocked = pp__rank_blocked_in(&w->ranks[r]);
    if (!w->ranks[r].failed && blocked) {
        if (c->kind == MP_RANK_OK) c->kind = MP_RANK_BAILED;
        snprintf(c->state, sizeof c->state, "%s blocked in %s for %.1f s", who, blocked,
                 now() - w->ranks[r].blocked_since);
    } else if (!pp__world_failed(w) && !w->ranks[r].failed && c->kind == MP_RANK_OK) {
        snprintf(c->state, sizeof c->state, "%s returned from its step function", who);
        c->stuck.state = PP_STUCK_EXITED;
    }
}

/* This process's rank failed (misuse, mismatch, pp_fail): the others hear of it and run on until they return,
 * fail or wait on what can no longer come; step_end then reports the failure earliest on the clock. */
static int mpi_rank_failed(pp_world *w, int r) {
    mp_ctx *c = ctx_of(w);
    c->kind = MP_RANK_FAILED;
    notify_others(c, w->ranks[r].fail_status);
    return 1;
}

/* A failure of the whole run (this rank's deadline) is announced to the other processes. */
static void mpi_wake_all(pp_world *w) {
    mp_ctx *c = ctx_of(w);
    if (!c) return;
    notify_others(c, w->status);
}

/* ---- step end ---------------------------------------------------------------------------------------- */

/* Waits for MPI request q, polling, up to limit seconds; on expiry this process cannot continue: it says so
 * and aborts the job (a peer died or hangs outside any wait). Returns 0, or -1 at once when ranks were lost
 * (the request is left: the job cannot end cleanly any more). */
static int wait_or_abort(pp_world *w, mp_ctx *c, MPI_Request *q, double deadline, double limit, const char *what) {
    double t0 = now();
    for (unsigned it = 0;; it++) {
        int flag = 0;
        if (watch_lost(c)) return -1;
        /* a member of this rank's group may still wait for the gradients of a reduce this rank called */
        reduce_progress(w, c);
        MPI_Test(q, &flag, MPI_STATUS_IGNORE);
        if (flag) return 0;
        poll_notices(c);
        if (it < 256) continue;
        /* a rank that has returned counts as waiting: it can answer nobody; after a failure at once, so that the
         * ranks still waiting learn without a deadline whether anything can still reach them */
        if (c->peer_failed || c->kind == MP_RANK_FAILED || now() - t0 > deadline) quiet_round(c, 1);
        if (now() - t0 > limit) {
            fprintf(stderr,
                    "pplab: rank %d: the other processes did not reach %s within %.0f s: aborting the job\n"
                    "HINT: one process hangs outside pplab's waits or died; run it alone or under a debugger\n",
                    c->rank, what, limit);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

/* Rank 0, once a rank's deadline found every process waiting with nothing moving: the report threads give of
 * that state (deadlock.h), from every rank's snapshot. 1 when the snapshots make a deadlock; 0 when they do not
 * (a rank ran on, or left its wait for another reason), and the deadline's report stands. */
static int deadlock_report(const pp_world *w, const mp_ctx *c, const mp_report *all, char *out, size_t cap) {
    int N = c->size, n = 0;
    pp_stuck_rank *ranks = pp__xcalloc((size_t)N, sizeof *ranks);
    pp_stuck_op *posted = pp__xcalloc((size_t)N * MP_POSTED + 1, sizeof *posted);
    for (int q = 0; q < N; q++) {
        ranks[q] = all[q].stuck;
        for (int k = 0; k < all[q].nposted && k < MP_POSTED; k++) posted[n++] = all[q].posted[k];
        /* whom a stuck reduce waits for: the lowest member of its group that has not called it yet (threads
         * keep that as the parts come in; an MPI collective cannot tell) */
        pp_stuck_op *f = &ranks[q].first;
        if (ranks[q].state == PP_STUCK_BLOCKED && f->is_reduce) {
            f->peer = -1;
            int g = pp__reduce_group(w->cfg, q);
            for (int m = 0; m < pp__config_reduce_members(w->cfg) && f->peer < 0; m++) {
                int member = pp__reduce_member_rank(w->cfg, g, m);
                if (all[member].reduces <= f->k) f->peer = member;
            }
        }
    }
    int final = pp__deadlock_final(ranks, N);
    if (final) pp__deadlock_report(w, ranks, N, posted, n, out, cap);
    free(posted);
    free(ranks);
    return final;
}

/* Rank 0: the run's one report from every rank's contribution. Returns the status (PP_OK when clean). */
static pp_status compose(const pp_world *w, const mp_ctx *c, const mp_report *all, double deadline, char *out,
                         size_t cap) {
    size_t len = 0;
    out[0] = 0;
    /* a rank failed: the report threads give, from the same ends (rank.c) */
    pp_rank_end *ends = pp__xcalloc((size_t)c->size, sizeof *ends);
    for (int q = 0; q < c->size; q++)
        ends[q] = (pp_rank_end){.failed = all[q].kind == MP_RANK_FAILED, .status = (pp_status)all[q].status,
                                .clock = all[q].clock, .msg = all[q].text,
                                .blocked_in = all[q].blocked[0] ? all[q].blocked : NULL};
    pp_status lead = pp__rank_report(w, ends, c->size, out, cap);
    free(ends);
    if (lead != PP_OK) return lead;
    int deadlines = 0, sends = 0, blocked = 0, reduces = 0;
    for (int q = 0; q < c->size; q++) {
        deadlines += all[q].kind == MP_RANK_DEADLINE;
        if (all[q].kind == MP_RANK_DEADLINE || all[q].kind == MP_RANK_BAILED) {
            blocked++;
            sends += strstr(all[q].blocked, "pp_send(") == all[q].blocked;
            reduces += strstr(all[q].blocked, "reduce(") != NULL;
        }
    }
    if (deadlines && deadlock_report(w, c, all, out, cap)) return PP_ERR_DEADLOCK;
    if (deadlines) {
        len = pp__text_append(out, cap, len,
                       "deadlock: a rank waited %.1f s (the deadline) for an operation that never completed; "
                       "each rank's last operation:\n", deadline);
        for (int q = 0; q < c->size; q++) len = pp__text_append(out, cap, len, "  %s\n", all[q].text);
        if (reduces)
            pp__text_append(out, cap, len, "HINT: a rank waits in a gradient reduce for a replica's rank that may wait, "
                                    "through its own pipeline, on this one: start the reduce with pp_grad_ireduce "
                                    "and wait for it after the step's last message, or reduce only once the rank's "
                                    "last backward and its sends are done");
        else if (blocked > 1 && sends == blocked)
            pp__text_append(out, cap, len, "HINT: every blocked rank is in a send (rendezvous, as NCCL): let one of them "
                                    "receive first, or use pp_group_start/pp_group_end or pp_isend/pp_irecv");
        else
            pp__text_append(out, cap, len, "HINT: check that every pp_send has a pp_recv with the same ranks and tag, "
                                    "posted in an order that lets one side finish first (a rank that returned "
                                    "cannot answer)");
        return PP_ERR_DEADLOCK;
    }
    int leftovers = 0;
    for (int q = 0; q < c->size; q++)
        if (all[q].leftovers) {
            leftovers += all[q].leftovers;
            len = pp__text_append(out, cap, len, "%s", all[q].text);
        }
    if (leftovers) {
        pp__text_append(out, cap, len, "HINT: every pp_send needs a pp_recv on the destination with the same source and "
                                "tag in the same step (and vice versa): check loop bounds and tags");
        return PP_ERR_UNCONSUMED;
    }
    return PP_OK;
}

/* Collective: every process calls it once per step, failed or not. Cancels receives left posted, drains the
 * messages nobody received (reporting them when the step otherwise succeeded), completes every send, agrees
 * on the outcome (rank 0 writes the report, every process gets it) and resets the step. Returns 0 when clean. */
static int mpi_step_end(pp_world *w) {
    mp_ctx *c = ctx_of(w);
    int P = c->size;
    double deadline = w->cfg->deadline_s > 0 ? w->cfg->deadline_s : 10.0;
    long *expect = NULL;
    int *notified = NULL;
    mp_report *mine = NULL, *all = NULL;
    struct {
        int32_t status;
        char text[sizeof w->error];
    } *out = NULL;
    MPI_Request bar, q[2];
    MPI_Ibarrier(c->ctl, &bar);
    if (wait_or_abort(w, c, &bar, deadline, 2 * deadline + 5, "the end of the step") < 0 || quiet_end(c)) goto lost;
    reduce_step_end(w, c);
    tp_step_end(w, c);
    if (watch_lost(c)) goto lost;

    /* the messages nothing matched, in post order (the list is newest first), for a deadlock report; a request
     * no wait looked at since its partner matched it is done, as threads have it the moment it matches */
    for (mp_req *m = c->reqs; m; m = m->next)
        if (m->active) req_test(w, c, m->req);
    mine = pp__xcalloc(1, sizeof *mine);
    for (mp_req *m = c->reqs; m; m = m->next) mine->nposted += m->active && !m->req->done;
    pp_request **oldest = pp__xcalloc((size_t)mine->nposted + 1, sizeof *oldest);
    int at = mine->nposted;
    for (mp_req *m = c->reqs; m; m = m->next)
        if (m->active && !m->req->done) oldest[--at] = m->req;
    for (int k = 0; k < mine->nposted && k < MP_POSTED; k++) pp__deadlock_op(oldest[k], &mine->posted[k]);
    free(oldest);

    /* receives still posted (the step failed): cancel them; one that matched meanwhile consumed its message */
    for (mp_req *m = c->reqs; m; m = m->next)
        if (m->active && !m->req->is_send) {
            MPI_Status st;
            MPI_Cancel(&m->mq);
            if (mp_waitall(c, 1, &m->mq, &st)) goto lost;
            int cancelled = 0;
            MPI_Test_cancelled(&st, &cancelled);
            if (!cancelled) c->recv_from[m->req->peer]++;
            m->active = 0;
        }

    /* messages sent to this rank that no receive consumed: exactly sent - received, so drain them for sure */
    expect = pp__xcalloc((size_t)P, sizeof *expect);
    int any_failed = pp__world_failed(w) || pp__world_rank_failed(w) || c->peer_failed, all_failed = 0;
    MPI_Ialltoall(c->sent_to, 1, MPI_LONG, expect, 1, MPI_LONG, c->ctl, &q[0]);
    MPI_Iallreduce(&any_failed, &all_failed, 1, MPI_INT, MPI_MAX, c->ctl, &q[1]);
    if (mp_waitall(c, 2, q, MPI_STATUSES_IGNORE)) goto lost;
    size_t len = 0;
    for (int p = 0; p < P; p++)
        for (long k = c->recv_from[p]; k < expect[p]; k++) {
            MPI_Message msg;
            MPI_Status st;
            int count = 0, found = 0;
            while (!found) {
                MPI_Improbe(p, MPI_ANY_TAG, c->data, &found, &msg, &st);
                if (!found && watch_lost(c)) goto lost;
            }
            MPI_Get_count(&st, MPI_BYTE, &count);
            unsigned char *buf = pp__xmalloc(count > 0 ? (size_t)count : 1);
            MPI_Imrecv(buf, count, MPI_BYTE, &msg, &q[0]);
            if (mp_waitall(c, 1, q, MPI_STATUSES_IGNORE)) {
                free(buf);
                goto lost;
            }
            if (!all_failed && (size_t)count >= sizeof(mp_header)) {
                mp_header h;
                memcpy(&h, buf, sizeof h);
                char op[96], sz[48], who[48];
                if (mine->leftovers++ < MP_MAX_LEFTOVER_LINES)
                    len = pp__text_append(mine->text, sizeof mine->text, len, "message never received: %s %s, %s\n",
                                   pp__rank_label(w, p, who, sizeof who),
                                   pp__op_describe(api_names[h.api == 1], 1, c->rank % w->cfg->P, h.tag, op, sizeof op),
                                   shape_describe(h.rows, h.cols, h.dtype, sz, sizeof sz));
            }
            free(buf);
        }
    /* every send is matched now */
    for (mp_req *m = c->reqs; m; m = m->next)
        if (m->active) {
            if (mp_waitall(c, 1, &m->mq, MPI_STATUSES_IGNORE)) goto lost;
            m->active = 0;
        }

    /* failure notices: receive the ones still in flight, complete our own */
    notified = pp__xcalloc((size_t)P, sizeof *notified);
    MPI_Iallgather(&c->notified, 1, MPI_INT, notified, 1, MPI_INT, c->ctl, &q[0]);
    if (mp_waitall(c, 1, q, MPI_STATUSES_IGNORE)) goto lost;
    for (int p = 0; p < P; p++)
        if (p != c->rank && notified[p] && !c->notice_from[p]) {
            int v;
            MPI_Irecv(&v, 1, MPI_INT, p, MP_NOTICE_TAG, c->ctl, &q[0]);
            if (mp_waitall(c, 1, q, MPI_STATUSES_IGNORE)) goto lost;
        }
    if (c->notice_reqs && mp_waitall(c, P, c->notice_reqs, MPI_STATUSES_IGNORE)) goto lost;

    /* this rank's part of the report */
    const pp_rank *me = &w->ranks[c->rank];
    if (me->failed) {
        mine->kind = MP_RANK_FAILED;
        mine->status = (int32_t)me->fail_status;
        mine->clock = me->fail_clock;
        snprintf(mine->text, sizeof mine->text, "%s", me->fail_msg);
    } else if (pp__world_failed(w) || c->kind != MP_RANK_OK) {
        mine->kind = c->kind == MP_RANK_OK ? MP_RANK_BAILED : c->kind;
        mine->status = (int32_t)w->status;
        snprintf(mine->text, sizeof mine->text, "%s", c->state[0] ? c->state : "stopped");
    } else if (!mine->leftovers) {
        mine->kind = MP_RANK_OK;
        snprintf(mine->text, sizeof mine->text, "%s", c->state);
    }
    if (pp__world_failed(w) && !mine->leftovers && mine->kind == MP_RANK_OK) mine->kind = MP_RANK_BAILED;
    if (pp__rank_blocked_in(me)) snprintf(mine->blocked, sizeof mine->blocked, "%s", pp__rank_blocked_in(me));
    mine->stuck = c->stuck;
    mine->reduces = c->stuck_reduces;
    all = c->rank == 0 ? pp__xcalloc((size_t)P, sizeof *all) : NULL;
    MPI_Igather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, 0, c->ctl, &q[0]);
    if (mp_waitall(c, 1, q, MPI_STATUSES_IGNORE)) goto lost;
    out = pp__xcalloc(1, sizeof *out);
    if (c->rank == 0) out->status = (int32_t)compose(w, c, all, deadline, out->text, sizeof out->text);
    MPI_Ibcast(out, (int)sizeof *out, MPI_BYTE, 0, c->ctl, &q[0]);
    if (mp_waitall(c, 1, q, MPI_STATUSES_IGNORE)) goto lost;
    if (out->status != PP_OK) {
        __atomic_store_n(&w->failed, 1, __ATOMIC_RELEASE);
        w->status = (pp_status)out->status;
        snprintf(w->error, sizeof w->error, "%s", out->text);
    }
    free(expect), free(notified), free(out), free(all), free(mine);

    /* reset for the next step */
    for (mp_req *m = c->reqs, *n; m; m = n) {
        n = m->next;
        m->req->tp = NULL;
        free(m->buf);
        free(m);
    }
    c->reqs = NULL;
    memset(c->sent_to, 0, (size_t)P * sizeof *c->sent_to);
    memset(c->recv_from, 0, (size_t)P * sizeof *c->recv_from);
    memset(c->notice_from, 0, (size_t)P * sizeof *c->notice_from);
    free(c->notice_reqs);
    c->notice_reqs = NULL;
    c->notified = 0;
    c->peer_failed = 0;
    c->kind = MP_RANK_OK;
    c->state[0] = 0;
    memset(&c->stuck, 0, sizeof c->stuck);
    c->stuck_reduces = 0;
    return pp__world_failed(w) ? -1 : 0;

lost:
    /* without the lost ranks no collective can complete: rank 0 reports them, alone, and the run ends (what is
     * still posted stays so: MPI is left unfinished) */
    free(expect), free(notified), free(out), free(all), free(mine);
    pp__world_fail(w, PP_ERR_LOST, watch_lost(c));
    return -1;
}

/* ---- setup ------------------------------------------------------------------------------------------- */

/* With the cuda backend, when the plugin has NCCL: the reduce's gradients travel between the group's GPUs on a
 * communicator of their own (nccl_groups.c agrees on it over MPI). Without NCCL, or when two members of a group
 * share a GPU (NCCL refuses that), they go over MPI through host memory, as on the CPU: the same bits either way.
 * 0, or -1 with the reason in w->error. */
/* An NCCL communicator for the group of n members that comm ranks (this rank its `member`), into *out, when no
 * two members share a GPU; else *out stays NULL and the group's sums go over MPI through host memory. 0, or -1
 * with the reason in w->error. */
static int nccl_group(pp_world *w, mp_ctx *c, MPI_Comm comm, int member, int n, int ndev, void **out) {
    char err[512] = "";
    /* a member's GPU: its host (by name) and device; the group uses NCCL only when no two are the same */
    struct {
        char host[64];
        int device;
    } mine, *group = pp__xcalloc((size_t)n, sizeof *group);
    memset(&mine, 0, sizeof mine);
    snprintf(mine.host, sizeof mine.host, "%s", c->hosts[c->rank]);
    mine.device = w->node_rank % ndev;
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, group, (int)sizeof mine, MPI_BYTE, comm);
    int shared = 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < a; b++) shared |= group[a].device == group[b].device && !strcmp(group[a].host, group[b].host);
    free(group);
    if (shared) return 0;
    if (pp__nccl_group_init(comm, member, n, mine.device, c->nccl, out, err, sizeof err)) {
        snprintf(w->error, sizeof w->error, "%s", err);
        return -1;
    }
    return 0;
}

/* With the cuda backend: NCCL for the replicas' reduces and for the shards' sums, each group whose members have
 * GPUs of their own. */
static int nccl_start(pp_world *w, mp_ctx *c) {
    c->nccl = (const pp_nccl_api *)pp__plugin_symbol("pp__nccl_api", NULL, 0);
    if (!c->nccl || (c->D < 2 && c->T < 2)) return 0;
    char err[512] = "";
    int ndev = c->nccl->device_count(err, sizeof err), ok = ndev > 0, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c->ctl);
    if (!all) {
        snprintf(w->error, sizeof w->error, "%s", err[0] ? err : "another process sees no GPU: use --backend cpu");
        return -1;
    }
    if (c->D > 1 && nccl_group(w, c, c->dp_grads, c->replica, c->D, ndev, &c->nccl_dp)) return -1;
    if (c->T > 1 && nccl_group(w, c, c->tp_data, c->shard, c->T, ndev, &c->nccl_tp)) return -1;
    return 0;
}

static void mpi_fini(pp_world *w);

static int mpi_init(pp_world *w) {
    int inited = 0, finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
        snprintf(w->error, sizeof w->error,
                 "MPI was already finalized in this process: the mpi transport runs once per process (start a "
                 "new mpirun for each run)");
        return -1;
    }
    MPI_Initialized(&inited);
    int owns = 0;
    if (!inited) {
        int provided = 0;
        /* one thread calls MPI for the run; the watch, a second one, needs MPI_THREAD_MULTIPLE */
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
            snprintf(w->error, sizeof w->error,
                     "MPI_Init failed: start pplab with mpirun -np P (or srun) and check the MPI installation");
            return -1;
        }
        owns = 1;
    }
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != w->P) {
        const char *launcher = pp__mpi_env_launcher();
        snprintf(w->error, sizeof w->error, "%s started %d processes but --stages %s%sis %d: use %s %d",
                 launcher ? launcher : "mpirun", size, w->cfg->D > 1 ? "x --dp " : "", w->cfg->T > 1 ? "x --tp " : "",
                 w->P,
                 launcher && !strcmp(launcher, "srun") ? "srun -n" : "mpirun -np", w->P);
        if (owns) MPI_Finalize();
        return -1;
    }
    mp_ctx *c = pp__xcalloc(1, sizeof *c);
    c->rank = rank;
    c->size = size;
    c->owns_mpi = owns;
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    c->tag_ub = flag && ub ? *ub : 32767; /* 32767: the least the MPI standard guarantees */
    MPI_Comm_dup(MPI_COMM_WORLD, &c->data);
    MPI_Comm_dup(MPI_COMM_WORLD, &c->ctl);
    MPI_Comm_dup(MPI_COMM_WORLD, &c->quiet);
    /* the reduce group (reduce.h) is the color, its members ranked in the summation order */
    c->D = pp__config_reduce_members(w->cfg);
    c->replica = pp__reduce_member(w->cfg, rank);
    MPI_Comm_split(MPI_COMM_WORLD, pp__reduce_group(w->cfg, rank), c->replica, &c->dp_parts);
    MPI_Comm_dup(c->dp_parts, &c->dp_grads);
    c->slots = pp__xcalloc((size_t)w->cfg->v, sizeof *c->slots);
    /* the tensor-parallel group: the shards of this rank's stage, ranked by shard (the sums' order) */
    c->T = w->cfg->T > 1 ? w->cfg->T : 1;
    c->shard = pp__config_rank_tp(w->cfg, rank);
    if (c->T > 1) {
        int tg = pp__config_rank_replica(w->cfg, rank) * w->cfg->P + pp__config_rank_pipe(w->cfg, rank);
        MPI_Comm_split(MPI_COMM_WORLD, tg, c->shard, &c->tp_parts);
        MPI_Comm_dup(c->tp_parts, &c->tp_data);
        MPI_Comm_dup(c->tp_parts, &c->tp_ctl);
    }
    /* a receive shorter than the message must come back as an error we can report, not abort the job */
    MPI_Comm_set_errhandler(c->data, MPI_ERRORS_RETURN);
    c->sent_to = pp__xcalloc((size_t)size, sizeof *c->sent_to);
    c->recv_from = pp__xcalloc((size_t)size, sizeof *c->recv_from);
    c->notice_from = pp__xcalloc((size_t)size, sizeof *c->notice_from);
    w->tp_ctx = c;
    w->local_rank = rank;
    /* a process's GPU follows its rank on its node, not in the world */
    pp__nccl_node_rank(MPI_COMM_WORLD, &w->node_rank, &w->node_size);
    int threads = MPI_THREAD_SINGLE;
    MPI_Query_thread(&threads);
    watch_start(w, c, threads);
    if (w->cfg->backend && !strcmp(w->cfg->backend, "cuda") && nccl_start(w, c)) {
        mpi_fini(w);
        return -1;
    }
    return 0;
}

/* How long a process that lost ranks waits at its exit for the launcher to end the job. */
static double linger_s;

/* At the exit of a process that lost ranks, once its report is out: an mpirun whose rank exits while a node is
 * lost holds on to that node until its own keepalive gives the node up (oob_tcp_keepalive_*), and then ends the
 * job, this process with it; if it has not done so after linger_s, this process ends anyway. */
static void linger(void) {
    fflush(NULL);
    struct timespec ts = {(time_t)linger_s, 0};
    nanosleep(&ts, NULL);
}

static void mpi_fini(pp_world *w) {
    mp_ctx *c = ctx_of(w);
    if (!c) return;
    int lost = watch_lost(c) != NULL;
    watch_stop(c);
    if (lost) {
        /* MPI cannot end without the lost ranks: this process leaves it unfinished, and the launcher ends the
         * job once the node is given up (see linger) */
        free(c->slots), free(c->ts), free(c->sent_to), free(c->recv_from), free(c->notice_from), free(c);
        w->tp_ctx = NULL;
        linger_s = 3 * (w->cfg->deadline_s > 0 ? w->cfg->deadline_s : 10.0);
        atexit(linger);
        return;
    }
    if (c->nccl_dp) c->nccl->comm_free(c->nccl_dp);
    if (c->nccl_tp) c->nccl->comm_free(c->nccl_tp);
    MPI_Comm_free(&c->data);
    MPI_Comm_free(&c->ctl);
    MPI_Comm_free(&c->quiet);
    MPI_Comm_free(&c->dp_parts);
    MPI_Comm_free(&c->dp_grads);
    if (c->T > 1) MPI_Comm_free(&c->tp_parts), MPI_Comm_free(&c->tp_data), MPI_Comm_free(&c->tp_ctl);
    free(c->ts);
    free(c->slots);
    free(c->sent_to);
    free(c->recv_from);
    free(c->notice_from);
    int owns = c->owns_mpi;
    free(c);
    w->tp_ctx = NULL;
    /* after this, fork() (gnuplot, compilers) is safe again */
    if (owns) MPI_Finalize();
}

/* ---- the runtime's collectives (comm.h's sum and gather) ------------------------------------------------ */

/* launched_rank: the launcher's environment says it (launcher.h). */
static int mpi_launched_rank(void) { return pp__mpi_env_rank(); }

static void mpi_sum(pp_world *w, double *v, int n) {
    mp_ctx *c = ctx_of(w);
    if (!c || n <= 0) return;
    MPI_Request q;
    MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, c->ctl, &q);
    if (mp_waitall(c, 1, &q, MPI_STATUSES_IGNORE)) pp__world_fail(w, PP_ERR_LOST, watch_lost(c));
}

static void *mpi_gather(pp_world *w, const void *buf, size_t len, size_t *lens) {
    mp_ctx *c = ctx_of(w);
    if (!c) return NULL;
    int P = c->size, mylen = (int)len;
    PP_ASSERT(len < (size_t)1 << 30);
    int *counts = c->rank == 0 ? pp__xcalloc((size_t)P, sizeof *counts) : NULL;
    MPI_Request q;
    MPI_Igather(&mylen, 1, MPI_INT, counts, 1, MPI_INT, 0, c->ctl, &q);
    if (mp_waitall(c, 1, &q, MPI_STATUSES_IGNORE)) {
        pp__world_fail(w, PP_ERR_LOST, watch_lost(c));
        free(counts);
        return NULL;
    }
    int *displs = NULL;
    unsigned char *all = NULL;
    if (c->rank == 0) {
        displs = pp__xcalloc((size_t)P, sizeof *displs);
        size_t total = 0;
        for (int q = 0; q < P; q++) {
            displs[q] = (int)total;
            total += (size_t)counts[q];
            lens[q] = (size_t)counts[q];
        }
        PP_ASSERT(total < (size_t)1 << 31);
        all = pp__xmalloc(total ? total : 1);
    }
    MPI_Igatherv(buf, mylen, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, c->ctl, &q);
    int lost = mp_waitall(c, 1, &q, MPI_STATUSES_IGNORE);
    free(counts);
    free(displs);
    if (lost) {
        pp__world_fail(w, PP_ERR_LOST, watch_lost(c));
        free(all);
        return NULL;
    }
    return all;
}

/* The mpi transport (see comm.h for each op's contract). The world owns the context from init to fini; the
 * transport owns each request's packed buffer (pp_request.tp) until step_end. */
const pp_transport_ops pp__transport_mpi = {
    .name = "mpi",
    .caps = PP_TRANSPORT_MPI_CAPS,
    .init = mpi_init,
    .post = mpi_post,
    .wait = mpi_wait,
    .rank_exit = mpi_rank_exit,
    .step_end = mpi_step_end,
    .wake_all = mpi_wake_all,
    .fini = mpi_fini,
    .rank_failed = mpi_rank_failed,
    .reduce_post = mpi_reduce_post,
    .tp_post = mpi_tp_post,
    .launched_rank = mpi_launched_rank,
    .sum = mpi_sum,
    .gather = mpi_gather,
};
