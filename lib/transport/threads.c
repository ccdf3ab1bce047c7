/* threads.c: the `threads` transport. Ranks are threads of one process; messages match on (source,
 * destination, tag), oldest posted first, and are copied device to device with the receiver's backend. In
 * rendezvous mode (the default, as NCCL) a send completes only when a receive matches it; in eager mode it
 * completes at once and its bytes wait in a buffer the transport owns.
 *
 * One mutex guards the whole world (queues and per-rank state): simple, and a round trip still costs only a
 * few microseconds. Each rank sleeps on its own condition variable so a match wakes just the ranks involved.
 *
 * Deadlock detection is exact because matching happens only at post time: once every rank that has not exited
 * sits in wait() and no waiting rank has all its requests done, nothing can ever complete. A gradient reduce is
 * waited here like a message: reduce.c completes it when its group's last part is posted, by a running rank or
 * by one leaving its step (before this transport hears of the exit), so the rule holds for it too. A rank that failed
 * has exited, and the others run on until they reach that state too; then, if some rank failed, the waiting
 * ones are stopped (they only waited on the failure) and the runtime reports it; if none did, the rank (or the
 * exiting thread) that sees the state writes one report (blocked ops, the wait-for cycle or the chain that ends
 * at an exited rank, near-miss tags, a hint) and fails the run. */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "deadlock.h"
#include "rank.h"
#include "reduce.h"
#include "tensor.h"
#include "text.h"
#include "transport.h"

typedef struct tp_rank {
    pthread_cond_t cv;       /* this rank's sleep in wait() */
    int blocked;             /* inside wait() on reqs[0..nreqs) */
    int exited;              /* its step function returned or aborted this step */
    pp_request **reqs;
    int nreqs;
} tp_rank;

/* A FIFO of posted, unmatched requests of one kind, in post order (linked through pp_request.next). */
typedef struct tp_queue {
    pp_request *head, *tail;
} tp_queue;

typedef struct tp_ctx {
    pthread_mutex_t mu;
    int P;
    tp_rank *ranks;
    tp_queue sends;          /* unmatched sends (eager ones already done, their bytes in ->tp) */
    tp_queue recvs;          /* unmatched receives */
    int dead;                /* a deadlock was reported: every waiter bails out */
    int spin;                /* spin briefly before sleeping: only when every rank can have its own core */
} tp_ctx;

/* How long a waiter spins before it sleeps: a condition-variable wake-up can cost tens of microseconds, a spin
 * a fraction of one, and a pipeline's partner usually answers within this window. */
#define TP_SPIN_NS 20000

#define TP_REPORT_LEN 4096

/* ---- small helpers ----------------------------------------------------------------------------------- */


static tp_ctx *ctx_of(pp_world *w) { return (tp_ctx *)w->tp_ctx; }

/* "pp_send(dst=1, tag F mb2 vs1)": the op as the student wrote it. */

typedef struct tp_text {
    char buf[TP_REPORT_LEN];
    size_t len;
} tp_text;

/* Appends to a report (pp__text_vappend: the lines that fit). */
static void text_add(tp_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(tp_text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    t->len = pp__text_vappend(t->buf, sizeof t->buf, t->len, fmt, ap);
    va_end(ap);
}

static void queue_push(tp_queue *q, pp_request *req) {
    req->next = NULL;
    if (q->tail) q->tail->next = req;
    else q->head = req;
    q->tail = req;
}

/* The oldest request in q that pairs with req (its peer posted it, towards req's rank, same tag); *prev gets
 * its predecessor for queue_remove. */
static pp_request *queue_find(tp_queue *q, const pp_request *req, pp_request **prev) {
    pp_request *p = NULL;
    for (pp_request *c = q->head; c; p = c, c = c->next) {
        if (c->rank == req->peer && c->peer == req->rank && c->tag == req->tag) {
            *prev = p;
            return c;
        }
    }
    return NULL;
}

static void queue_remove(tp_queue *q, pp_request *prev, pp_request *c) {
    if (prev) prev->next = c->next;
    else q->head = c->next;
    if (q->tail == c) q->tail = prev;
    c->next = NULL;
}

static void wake_rank(tp_ctx *c, int r) {
    if (r >= 0 && r < c->P) pthread_cond_signal(&c->ranks[r].cv);
}

static void wake_everyone(tp_ctx *c) {
    for (int i = 0; i < c->P; i++) pthread_cond_signal(&c->ranks[i].cv);
}

/* Drops both queues (freeing eager buffers) and every rank's flags: the next step starts clean. */
static void state_reset(tp_ctx *c) {
    for (pp_request *q = c->sends.head, *n; q; q = n) {
        n = q->next;
        if (q->tp) pp__tensor_free((pp_tensor *)q->tp);
        q->tp = NULL;
        q->next = NULL;
    }
    for (pp_request *q = c->recvs.head, *n; q; q = n) {
        n = q->next;
        q->next = NULL;
    }
    c->sends.head = c->sends.tail = NULL;
    c->recvs.head = c->recvs.tail = NULL;
    for (int i = 0; i < c->P; i++) {
        c->ranks[i].blocked = c->ranks[i].exited = 0;
        c->ranks[i].reqs = NULL;
        c->ranks[i].nreqs = 0;
    }
    c->dead = 0;
}

/* ---- matching ---------------------------------------------------------------------------------------- */

/* Delivers send s into receive v: the receiver's backend copies the bytes, the receive learns when the data
 * was ready, both complete and their ranks wake up. Called under the lock. */
static void deliver(pp_world *w, tp_ctx *c, pp_request *s, pp_request *v) {
    pp_backend *be = w->ranks[v->rank].be;
    pp_tensor *src = s->tp ? (pp_tensor *)s->tp : s->t;
    if (v->t->bytes) be->ops->copy(be->ctx, v->t->data, src->data, v->t->bytes);
    /* the copy may be asynchronous (a device stream): the sender may reuse its tensor once the send is done */
    if (be->ops->sync) be->ops->sync(be->ctx);
    v->msg_ready = src->ready;
    s->msg_ready = src->ready;
    if (s->tp) {
        pp__tensor_free((pp_tensor *)s->tp);
        s->tp = NULL;
    }
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&v->done, 1, __ATOMIC_RELEASE);
    wake_rank(c, s->rank);
    wake_rank(c, v->rank);
}

/* An eager send keeps its bytes in a transport-owned copy, on the sender's device, so the sender may reuse its
 * tensor at once. */
static void eager_stash(pp_world *w, pp_request *s) {
    pp_backend *be = w->ranks[s->rank].be;
    pp_tensor *t = s->t;
    pp_tensor *buf = pp__tensor_new(be, NULL, t->rows, t->cols, t->dtype, s->rank);
    if (t->bytes) be->ops->copy(be->ctx, buf->data, t->data, t->bytes);
    if (be->ops->sync) be->ops->sync(be->ctx); /* the receiver reads it from another stream */
    buf->ready = t->ready;
    s->tp = buf;
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}

/* Posts req for its rank: matches it with the oldest posted peer request or queues it. On a shape or dtype
 * mismatch both complete, the receive with the line naming both ranks and both ops that its rank fails with. */
static void threads_post(pp_world *w, pp_request *req) {
    tp_ctx *c = ctx_of(w);
    req->done = 0;
    req->next = NULL;
    req->tp = NULL;
    pthread_mutex_lock(&c->mu);
    tp_queue *other = req->is_send ? &c->recvs : &c->sends;
    pp_request *prev = NULL;
    pp_request *peer = queue_find(other, req, &prev);
    if (peer) {
        pp_request *s = req->is_send ? req : peer;
        pp_request *v = req->is_send ? peer : req;
        const pp_tensor *st = s->tp ? (const pp_tensor *)s->tp : s->t;
        if (st->rows != v->t->rows || st->cols != v->t->cols || st->dtype != v->t->dtype) {
            /* the receiver fails, when it waits for this receive: the same rank at the same point of its program
             * whichever of the two posted first (as under MPI, where only the receiver can tell) */
            char so[96], vo[96], sd[48], vd[48], msg[400];
            pp__request_describe(s, so, sizeof so);
            pp__request_describe(v, vo, sizeof vo);
            pp__tensor_describe(st, sd, sizeof sd);
            pp__tensor_describe(v->t, vd, sizeof vd);
            char sw[48], vw[48];
            snprintf(msg, sizeof msg, "%s %s sent %s but %s %s expects %s", pp__rank_label(w, s->rank, sw, sizeof sw),
                     so, sd, pp__rank_label(w, v->rank, vw, sizeof vw), vo, vd);
            v->error = strdup(msg);
            PP_ASSERT(v->error);
            v->error_status = PP_ERR_SHAPE;
            queue_remove(other, prev, peer);
            /* st is the eager copy when there is one: read it before it goes */
            v->msg_ready = s->msg_ready = st->ready;
            if (s->tp) pp__tensor_free((pp_tensor *)s->tp);
            s->tp = NULL;
            __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
            __atomic_store_n(&v->done, 1, __ATOMIC_RELEASE);
            wake_rank(c, s->rank);
            wake_rank(c, v->rank);
            pthread_mutex_unlock(&c->mu);
            return;
        }
        queue_remove(other, prev, peer);
        deliver(w, c, s, v);
    } else {
        if (req->is_send && w->cfg->eager) eager_stash(w, req);
        queue_push(req->is_send ? &c->sends : &c->recvs, req);
    }
    pthread_mutex_unlock(&c->mu);
}

/* ---- deadlock detection ------------------------------------------------------------------------------ */

/* The first request rank i waits on that is not done, or NULL. */
static const pp_request *first_pending(const tp_rank *tr) {
    for (int k = 0; k < tr->nreqs; k++)
        if (!__atomic_load_n(&tr->reqs[k]->done, __ATOMIC_ACQUIRE)) return tr->reqs[k];
    return NULL;
}

/* Spins without the lock until reqs are all done, the run failed, or TP_SPIN_NS passed. Reads `done` and the
 * failure flags atomically: they are written under the lock, which the caller takes again before trusting
 * anything. */
static void spin_briefly(pp_world *w, tp_ctx *c, pp_request **reqs, int n) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned it = 1;; it++) {
        int k = 0;
        while (k < n && __atomic_load_n(&reqs[k]->done, __ATOMIC_ACQUIRE)) k++;
        if (k == n || __atomic_load_n(&w->failed, __ATOMIC_ACQUIRE) || __atomic_load_n(&c->dead, __ATOMIC_ACQUIRE))
            return;
        if (it % 64 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            long ns = (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec);
            if (ns > TP_SPIN_NS) return;
            /* past a quick answer, the partner may be waiting for this very core (other processes hold the
             * rest): hand it over rather than burn the slice */
            if (ns > TP_SPIN_NS / 4) sched_yield();
        }
    }
}

/* 1 when no rank can ever make progress again: every rank that has not exited waits, and each waiting rank
 * still misses at least one request. Matching happens only at post time, so this state is final. */
static int is_deadlocked(const tp_ctx *c) {
    int waiting = 0;
    for (int i = 0; i < c->P; i++) {
        const tp_rank *tr = &c->ranks[i];
        if (tr->exited) continue;
        if (!tr->blocked) return 0;
        if (!first_pending(tr)) return 0; /* woken, not yet running */
        waiting++;
    }
    return waiting > 0;
}

/* Under the lock, in a deadlocked state: deadlock.h's snapshot of it (every rank, and the messages still in the
 * queues by rank and, within a rank, in post order, which is each queue's order for one rank), and its report. */
static void report_deadlock(pp_world *w, tp_ctx *c, char *out, size_t cap) {
    int P = c->P, n = 0;
    pp_stuck_rank *ranks = pp__xcalloc((size_t)P, sizeof *ranks);
    for (int i = 0; i < P; i++) {
        const tp_rank *tr = &c->ranks[i];
        pp_stuck_rank *sr = &ranks[i];
        sr->state = tr->exited ? PP_STUCK_EXITED : tr->blocked ? PP_STUCK_BLOCKED : PP_STUCK_RUNNING;
        if (sr->state != PP_STUCK_BLOCKED) continue;
        for (int k = 0; k < tr->nreqs; k++) sr->pending += !__atomic_load_n(&tr->reqs[k]->done, __ATOMIC_ACQUIRE);
        if (first_pending(tr)) pp__deadlock_op(first_pending(tr), &sr->first);
        const char *in = pp__rank_blocked_in(&w->ranks[i]);
        snprintf(sr->blocked_in, sizeof sr->blocked_in, "%s", in ? in : "");
    }
    for (const pp_request *q = c->recvs.head; q; q = q->next) n++;
    for (const pp_request *q = c->sends.head; q; q = q->next) n++;
    pp_stuck_op *posted = pp__xcalloc((size_t)n + 1, sizeof *posted);
    n = 0;
    for (int i = 0; i < P; i++) {
        for (const pp_request *q = c->recvs.head; q; q = q->next)
            if (q->rank == i) pp__deadlock_op(q, &posted[n++]);
        for (const pp_request *q = c->sends.head; q; q = q->next)
            if (q->rank == i) pp__deadlock_op(q, &posted[n++]);
    }
    pp__deadlock_report(w, ranks, P, posted, n, out, cap);
    free(posted);
    free(ranks);
}

/* Under the lock: once no rank can make progress, decides what that is, once. When some rank failed (or its
 * driver died while it waited), the ranks still waiting only wait on what that failure left undone: they are
 * stopped (c->dead) and the runtime reports the failure; returns NULL. Otherwise it is a deadlock: claims the
 * report and returns it (malloc'd; the caller fails the world with it after unlocking). */
static char *detect(pp_world *w, tp_ctx *c) {
    if (c->dead || pp__world_failed(w) || !is_deadlocked(c)) return NULL;
    __atomic_store_n(&c->dead, 1, __ATOMIC_RELEASE);
    char how[1024], line[1100];
    pp_status st;
    for (int i = 0; i < c->P && w->driver_death; i++)
        if (!c->ranks[i].exited && w->driver_death(w, i, &st, how, sizeof how)) {
            /* recorded as the rank's own failure, at its clock: it is blocked, so its fields are still */
            char who[48];
            snprintf(line, sizeof line, "%s: %s", pp__rank_label(w, i, who, sizeof who), how);
            pp__rank_fail(&w->ranks[i], st, line);
        }
    if (pp__world_rank_failed(w)) {
        wake_everyone(c);
        return NULL;
    }
    char *msg = pp__xmalloc(TP_REPORT_LEN);
    report_deadlock(w, c, msg, TP_REPORT_LEN);
    return msg;
}

/* Fails the world with a deadlock report and wakes every rank; called without the lock. */
static void fail_deadlock(pp_world *w, tp_ctx *c, char *msg) {
    pp__world_fail(w, PP_ERR_DEADLOCK, msg);
    free(msg);
    pthread_mutex_lock(&c->mu);
    wake_everyone(c);
    pthread_mutex_unlock(&c->mu);
}

/* ---- the ops ----------------------------------------------------------------------------------------- */

static int threads_init(pp_world *w) {
    tp_ctx *c = pp__xcalloc(1, sizeof *c);
    c->P = w->P;
    c->spin = sysconf(_SC_NPROCESSORS_ONLN) >= w->P;
    c->ranks = pp__xcalloc((size_t)w->P, sizeof *c->ranks);
    pthread_mutex_init(&c->mu, NULL);
    for (int i = 0; i < w->P; i++) pthread_cond_init(&c->ranks[i].cv, NULL);
    w->tp_ctx = c;
    return 0;
}

/* Blocks rank r until its n requests are done; leaves through pp__rank_bail when the run failed or deadlocks
 * (the rank that sees the deadlock reports it for everyone). */
static void threads_wait(pp_world *w, int r, pp_request **reqs, int n) {
    tp_ctx *c = ctx_of(w);
    tp_rank *tr = &c->ranks[r];
    pthread_mutex_lock(&c->mu);
    tr->reqs = reqs;
    tr->nreqs = n;
    for (;;) {
        if (pp__world_failed(w) || c->dead) break;
        if (!first_pending(tr)) break;
        if (!tr->blocked) {
            tr->blocked = 1;
            char *msg = detect(w, c);
            if (msg) {
                tr->blocked = 0;
                pthread_mutex_unlock(&c->mu);
                fail_deadlock(w, c, msg);
                pp__rank_bail(&w->ranks[r]);
            }
            if (c->dead) continue;
            if (c->spin) {
                pthread_mutex_unlock(&c->mu);
                spin_briefly(w, c, reqs, n);
                pthread_mutex_lock(&c->mu);
                continue;
            }
        }
        pthread_cond_wait(&tr->cv, &c->mu);
    }
    int failed = pp__world_failed(w) || c->dead;
    tr->blocked = 0;
    tr->reqs = NULL;
    tr->nreqs = 0;
    pthread_mutex_unlock(&c->mu);
    if (failed) pp__rank_bail(&w->ranks[r]);
}

/* Rank r left its step function: ranks waiting on it may now form a dead chain. */
static void threads_rank_exit(pp_world *w, int r) {
    tp_ctx *c = ctx_of(w);
    pthread_mutex_lock(&c->mu);
    c->ranks[r].exited = 1;
    c->ranks[r].blocked = 0;
    c->ranks[r].reqs = NULL;
    c->ranks[r].nreqs = 0;
    char *msg = detect(w, c);
    /* After a failure the runtime skips step_end and frees requests and backends before fini: the last rank
     * to leave drops the queues (and eager buffers) while everything they point to still exists. */
    int all_exited = 1;
    for (int i = 0; i < c->P; i++) all_exited &= c->ranks[i].exited;
    if (all_exited && (pp__world_failed(w) || c->dead || pp__world_rank_failed(w))) state_reset(c);
    pthread_mutex_unlock(&c->mu);
    if (msg) fail_deadlock(w, c, msg);
}

/* Reports every message sent but never received (and receives never matched), then resets the step. */
static int threads_step_end(pp_world *w) {
    tp_ctx *c = ctx_of(w);
    pthread_mutex_lock(&c->mu);
    char *msg = NULL;
    if (!pp__world_failed(w) && (c->sends.head || c->recvs.head)) {
        tp_text *t = pp__xcalloc(1, sizeof *t);
        int nsend = 0, nrecv = 0;
        for (const pp_request *s = c->sends.head; s; s = s->next) nsend++;
        for (const pp_request *v = c->recvs.head; v; v = v->next) nrecv++;
        int lines = 0;
        for (const pp_request *s = c->sends.head; s; s = s->next) {
            if (lines++ == 16) {
                text_add(t, "(%d more)\n", nsend + nrecv - 16);
                break;
            }
            char d[96], sz[48];
            text_add(t, "message never received: %s %s, %s\n", PP_RANK_LABEL(w, s->rank), pp__request_describe(s, d, sizeof d),
                     pp__tensor_describe(s->tp ? (const pp_tensor *)s->tp : s->t, sz, sizeof sz));
        }
        for (const pp_request *v = c->recvs.head; v && lines <= 16; v = v->next) {
            if (lines++ == 16) {
                text_add(t, "(%d more)\n", nsend + nrecv - 16);
                break;
            }
            char d[96];
            text_add(t, "receive never matched: %s %s\n", PP_RANK_LABEL(w, v->rank), pp__request_describe(v, d, sizeof d));
        }
        text_add(t, "HINT: every pp_send needs a pp_recv on the destination with the same source and tag in the "
                    "same step (and vice versa): check loop bounds and tags");
        msg = strdup(t->buf);
        free(t);
        PP_ASSERT(msg);
    }
    state_reset(c);
    pthread_mutex_unlock(&c->mu);
    if (!msg) return pp__world_failed(w) ? -1 : 0;
    pp__world_fail(w, PP_ERR_UNCONSUMED, msg);
    free(msg);
    return -1;
}

static void threads_wake_all(pp_world *w) {
    tp_ctx *c = ctx_of(w);
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    wake_everyone(c);
    pthread_mutex_unlock(&c->mu);
}

/* The others run on: matching is exact, so a rank that waits on the failed one is found stuck (detect). */
static int threads_rank_failed(pp_world *w, int r) { return 1; }

/* A reduce decided in memory (reduce.c): done under the lock, so that a waiter checking its requests before it
 * sleeps cannot miss the wake-up. */
static void threads_complete(pp_world *w, pp_request *q) {
    tp_ctx *c = ctx_of(w);
    pthread_mutex_lock(&c->mu);
    __atomic_store_n(&q->done, 1, __ATOMIC_RELEASE);
    wake_rank(c, q->rank);
    pthread_mutex_unlock(&c->mu);
}

/* The ranks share this process: the parts meet in memory. */
static void threads_reduce_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *grads) {
    pp__reduce_local_post(w, rank, q, part, grads, threads_complete);
}

static void threads_tp_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *data) {
    pp__reduce_tp_post(w, rank, q, part, data, threads_complete);
}

static void threads_fini(pp_world *w) {
    tp_ctx *c = ctx_of(w);
    if (!c) return;
    /* the queues are empty here (step_end or the last rank_exit emptied them); their requests are gone */
    for (int i = 0; i < c->P; i++) pthread_cond_destroy(&c->ranks[i].cv);
    pthread_mutex_destroy(&c->mu);
    free(c->ranks);
    free(c);
    w->tp_ctx = NULL;
}

/* The threads transport (see comm.h for each op's contract). The world owns the context (w->tp_ctx) from
 * init to fini; requests stay owned by their rank, the transport only links them while they are posted. */
const pp_transport_ops pp__transport_threads = {
    .name = "threads",
    .caps = PP_TRANSPORT_THREADS_CAPS,
    .init = threads_init,
    .post = threads_post,
    .wait = threads_wait,
    .rank_exit = threads_rank_exit,
    .step_end = threads_step_end,
    .wake_all = threads_wake_all,
    .fini = threads_fini,
    .rank_failed = threads_rank_failed,
    .reduce_post = threads_reduce_post,
    .tp_post = threads_tp_post,
};
