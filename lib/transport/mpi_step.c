/* mpi_step.c: the mpi transport's step end. Collective: every process joins it, failed or not, drains what was
 * never received (counted with an all-to-all, so nothing is guessed from probes), and rank 0 writes the one report of
 * the run (the failure earliest on the virtual clock first, a deadlock as threads word it, or each rank's last
 * operation), which every process then shares. Every collective is polled, so rank 0 is never stuck in one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deadlock.h"
#include "mpi_ctx.h"
#include "text.h"

/* ---- step end ---------------------------------------------------------------------------------------- */

/* Waits for MPI request q, polling, up to limit seconds; on expiry this process cannot continue: it says so
 * and aborts the job (a peer died or hangs outside any wait). Returns 0, or -1 at once when ranks were lost
 * (the request is left: the job cannot end cleanly any more). */
static int wait_or_abort(pp_world *w, mp_ctx *c, MPI_Request *q, double deadline, double limit, const char *what) {
    double t0 = mp_now();
    for (unsigned it = 0;; it++) {
        int flag = 0;
        if (watch_lost(c)) return -1;
        /* a member of this rank's group may still wait for the gradients of a reduce this rank called */
        pp__mpi_reduce_progress(w, c);
        MPI_Test(q, &flag, MPI_STATUS_IGNORE);
        if (flag) return 0;
        pp__mpi_poll_notices(c);
        if (it < 256) continue;
        /* a rank that has returned counts as waiting: it can answer nobody; after a failure at once, so that the
         * ranks still waiting learn without a deadline whether anything can still reach them */
        if (c->peer_failed || c->kind == MP_RANK_FAILED || mp_now() - t0 > deadline) pp__mpi_quiet_round(c, 1);
        if (mp_now() - t0 > limit) {
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
static pp_status report_compose(const pp_world *w, const mp_ctx *c, const mp_report *all, double deadline, char *out,
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

/* The messages nothing matched, in post order (the list is newest first), into this rank's report part, for a
 * deadlock report; a request no wait looked at since its partner matched it is done, as threads have it the moment
 * it matches. */
static void unmatched_record(pp_world *w, mp_ctx *c, mp_report *mine) {
    for (mp_req *m = c->reqs; m; m = m->next)
        if (m->active) pp__mpi_req_test(w, c, m->req);
    for (mp_req *m = c->reqs; m; m = m->next) mine->nposted += m->active && !m->req->done;
    pp_request **oldest = pp__xcalloc((size_t)mine->nposted + 1, sizeof *oldest);
    int at = mine->nposted;
    for (mp_req *m = c->reqs; m; m = m->next)
        if (m->active && !m->req->done) oldest[--at] = m->req;
    for (int k = 0; k < mine->nposted && k < MP_POSTED; k++) pp__deadlock_op(oldest[k], &mine->posted[k]);
    free(oldest);
}

/* Receives still posted (the step failed) are cancelled; one that matched meanwhile consumed its message. -1 when
 * ranks were lost. */
static int receives_cancel(mp_ctx *c) {
    for (mp_req *m = c->reqs; m; m = m->next)
        if (m->active && !m->req->is_send) {
            MPI_Status st;
            MPI_Cancel(&m->mq);
            if (pp__mpi_waitall(c, 1, &m->mq, &st)) return -1;
            int cancelled = 0;
            MPI_Test_cancelled(&st, &cancelled);
            if (!cancelled) c->recv_from[m->req->peer]++;
            m->active = 0;
        }
    return 0;
}

/* One message from p that no receive consumed, drained; its line into this rank's part unless the step failed
 * anywhere (all_failed). -1 when ranks were lost. */
static int leftover_drain(pp_world *w, mp_ctx *c, int p, int all_failed, mp_report *mine, size_t *len) {
    MPI_Message msg;
    MPI_Status st;
    MPI_Request q;
    int count = 0, found = 0;
    while (!found) {
        MPI_Improbe(p, MPI_ANY_TAG, c->data, &found, &msg, &st);
        if (!found && watch_lost(c)) return -1;
    }
    MPI_Get_count(&st, MPI_BYTE, &count);
    unsigned char *buf = pp__xmalloc(count > 0 ? (size_t)count : 1);
    MPI_Imrecv(buf, count, MPI_BYTE, &msg, &q);
    if (pp__mpi_waitall(c, 1, &q, MPI_STATUSES_IGNORE)) {
        free(buf);
        return -1;
    }
    if (!all_failed && (size_t)count >= sizeof(mp_header)) {
        mp_header h;
        memcpy(&h, buf, sizeof h);
        char op[96], sz[48], who[48];
        if (mine->leftovers++ < MP_MAX_LEFTOVER_LINES)
            *len = pp__text_append(mine->text, sizeof mine->text, *len, "message never received: %s %s, %s\n",
                                   pp__rank_label(w, p, who, sizeof who),
                                   pp__op_describe(pp__mpi_api_name(h.api), 1, c->rank % w->cfg->P, h.tag, op,
                                                   sizeof op),
                                   pp__mpi_shape_describe(h.rows, h.cols, h.dtype, sz, sizeof sz));
    }
    free(buf);
    return 0;
}

/* Messages sent to this rank that no receive consumed: exactly sent - received (an all-to-all of the counts), so
 * each is drained for sure; then every send is matched, and completed. -1 when ranks were lost. */
static int leftovers_drain(pp_world *w, mp_ctx *c, mp_report *mine) {
    int P = c->size;
    long *expect = pp__xcalloc((size_t)P, sizeof *expect);
    int any_failed = pp__world_failed(w) || pp__world_rank_failed(w) || c->peer_failed, all_failed = 0;
    MPI_Request q[2];
    MPI_Ialltoall(c->sent_to, 1, MPI_LONG, expect, 1, MPI_LONG, c->ctl, &q[0]);
    MPI_Iallreduce(&any_failed, &all_failed, 1, MPI_INT, MPI_MAX, c->ctl, &q[1]);
    int lost = pp__mpi_waitall(c, 2, q, MPI_STATUSES_IGNORE);
    size_t len = 0;
    for (int p = 0; p < P && !lost; p++)
        for (long k = c->recv_from[p]; k < expect[p] && !lost; k++)
            lost = leftover_drain(w, c, p, all_failed, mine, &len);
    free(expect);
    for (mp_req *m = c->reqs; m && !lost; m = m->next)
        if (m->active) {
            if (pp__mpi_waitall(c, 1, &m->mq, MPI_STATUSES_IGNORE)) return -1;
            m->active = 0;
        }
    return lost ? -1 : 0;
}

/* Failure notices: the ones still in flight are received, this rank's own completed. -1 when ranks were lost. */
static int notices_settle(mp_ctx *c) {
    int P = c->size, *notified = pp__xcalloc((size_t)P, sizeof *notified), lost = 0;
    MPI_Request q;
    MPI_Iallgather(&c->notified, 1, MPI_INT, notified, 1, MPI_INT, c->ctl, &q);
    lost = pp__mpi_waitall(c, 1, &q, MPI_STATUSES_IGNORE);
    for (int p = 0; p < P && !lost; p++)
        if (p != c->rank && notified[p] && !c->notice_from[p]) {
            int v;
            MPI_Irecv(&v, 1, MPI_INT, p, MP_NOTICE_TAG, c->ctl, &q);
            lost = pp__mpi_waitall(c, 1, &q, MPI_STATUSES_IGNORE);
        }
    free(notified);
    if (!lost && c->notice_reqs) lost = pp__mpi_waitall(c, P, c->notice_reqs, MPI_STATUSES_IGNORE);
    return lost ? -1 : 0;
}

/* This rank's part of the run's report: its own failure, why it stopped, or its state line. */
static void report_part(const pp_world *w, const mp_ctx *c, mp_report *mine) {
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
}

/* Every part gathered on rank 0, which composes the report; every process gets it, and a failure fails its world.
 * -1 when ranks were lost. */
static int outcome_share(pp_world *w, mp_ctx *c, const mp_report *mine, double deadline) {
    struct {
        int32_t status;
        char text[sizeof w->error];
    } *out = pp__xcalloc(1, sizeof *out);
    mp_report *all = c->rank == 0 ? pp__xcalloc((size_t)c->size, sizeof *all) : NULL;
    MPI_Request q;
    MPI_Igather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, 0, c->ctl, &q);
    int lost = pp__mpi_waitall(c, 1, &q, MPI_STATUSES_IGNORE);
    if (!lost && c->rank == 0) out->status = (int32_t)report_compose(w, c, all, deadline, out->text, sizeof out->text);
    if (!lost) MPI_Ibcast(out, (int)sizeof *out, MPI_BYTE, 0, c->ctl, &q);
    if (!lost) lost = pp__mpi_waitall(c, 1, &q, MPI_STATUSES_IGNORE);
    if (!lost && out->status != PP_OK) {
        __atomic_store_n(&w->failed, 1, __ATOMIC_RELEASE);
        w->status = (pp_status)out->status;
        snprintf(w->error, sizeof w->error, "%s", out->text);
    }
    free(out);
    free(all);
    return lost ? -1 : 0;
}

/* The per-step state cleared for the next step. */
static void step_reset(mp_ctx *c) {
    int P = c->size;
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
}

/* Collective: every process calls it once per step, failed or not. Cancels receives left posted, drains the
 * messages nobody received (reporting them when the step otherwise succeeded), completes every send, agrees
 * on the outcome (rank 0 writes the report, every process gets it) and resets the step. Returns 0 when clean. */
int pp__mpi_step_end(pp_world *w) {
    mp_ctx *c = ctx_of(w);
    double deadline = w->cfg->deadline_s > 0 ? w->cfg->deadline_s : 10.0;
    MPI_Request bar;
    MPI_Ibarrier(c->ctl, &bar);
    int lost = wait_or_abort(w, c, &bar, deadline, 2 * deadline + 5, "the end of the step") < 0 ||
               pp__mpi_quiet_end(c);
    if (!lost) {
        pp__mpi_reduce_step_end(w, c);
        pp__mpi_tp_step_end(w, c);
        lost = watch_lost(c) != NULL;
    }
    mp_report *mine = lost ? NULL : pp__xcalloc(1, sizeof *mine);
    if (!lost) unmatched_record(w, c, mine);
    lost = lost || receives_cancel(c) || leftovers_drain(w, c, mine) || notices_settle(c);
    if (!lost) report_part(w, c, mine);
    lost = lost || outcome_share(w, c, mine, deadline);
    free(mine);
    if (lost) {
        /* without the lost ranks no collective can complete: rank 0 reports them, alone, and the run ends (what is
         * still posted stays so: MPI is left unfinished) */
        pp__world_fail(w, PP_ERR_LOST, watch_lost(c));
        return -1;
    }
    step_reset(c);
    return pp__world_failed(w) ? -1 : 0;
}
