/* mpi_wait.c: the mpi transport's waits and failures. No process sees the others' queues, so a wait polls its
 * requests, and once it has waited cfg->deadline_s it asks whether the whole job is stuck (mpi_watch.c's rounds) and
 * gives up only when it is. A rank's failure (shape mismatch, misuse, pp_fail) is announced to every other process on
 * a control communicator; each one runs on, and a wait of its gives up, without the deadline, once every process waits
 * and nothing moves (what the failed rank posted before it failed may still arrive). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deadlock.h"
#include "mpi_ctx.h"

/* ---- failure notices --------------------------------------------------------------------------------- */

/* Tells every other process that the run failed (once per step), so they stop waiting at their next poll. */
void pp__mpi_notify_others(mp_ctx *c, pp_status st) {
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
int pp__mpi_poll_notices(mp_ctx *c) {
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
 * (pp__mpi_rank_exit writes its line). */
static void stop_waiting(pp_world *w, mp_ctx *c, int r, int kind, pp_request **reqs, int n) {
    c->kind = kind;
    stuck_record(w, c, r, reqs, n);
    pp__rank_bail(&w->ranks[r]);
}

/* Polls rank r's n requests until all are done. Tight polling first (a neighbour usually answers within
 * microseconds), then yielding, then short sleeps: with more processes than cores the partner may need this
 * very core. Leaves through pp__rank_bail when the run failed anywhere or the deadline passed. */
void pp__mpi_wait(pp_world *w, int r, pp_request **reqs, int n) {
    mp_ctx *c = ctx_of(w);
    double t0 = mp_now(), deadline = w->cfg->deadline_s > 0 ? w->cfg->deadline_s : 10.0;
    for (unsigned it = 0;; it++) {
        int left = 0;
        pp__mpi_reduce_progress(w, c);
        if (c->T > 1) pp__mpi_tp_progress(c);
        for (int k = 0; k < n; k++) {
            if (!reqs[k]->done && !reqs[k]->is_reduce) pp__mpi_req_test(w, c, reqs[k]);
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
        if (it % 16 == 0) pp__mpi_poll_notices(c);
        if (it < 256) continue;
        double t = mp_now() - t0;
        if (c->peer_failed && pp__mpi_quiet_round(c, 1)) stop_waiting(w, c, r, MP_RANK_BAILED, reqs, n);
        if (!c->peer_failed && t > deadline && pp__mpi_quiet_round(c, 1)) {
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
void pp__mpi_rank_exit(pp_world *w, int r) {
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
                 mp_now() - w->ranks[r].blocked_since);
    } else if (!pp__world_failed(w) && !w->ranks[r].failed && c->kind == MP_RANK_OK) {
        snprintf(c->state, sizeof c->state, "%s returned from its step function", who);
        c->stuck.state = PP_STUCK_EXITED;
    }
}

/* This process's rank failed (misuse, mismatch, pp_fail): the others hear of it and run on until they return,
 * fail or wait on what can no longer come; step_end then reports the failure earliest on the clock. */
int pp__mpi_rank_failed(pp_world *w, int r) {
    mp_ctx *c = ctx_of(w);
    c->kind = MP_RANK_FAILED;
    pp__mpi_notify_others(c, w->ranks[r].fail_status);
    return 1;
}

/* A failure of the whole run (this rank's deadline) is announced to the other processes. */
void pp__mpi_wake_all(pp_world *w) {
    mp_ctx *c = ctx_of(w);
    if (!c) return;
    pp__mpi_notify_others(c, w->status);
}
