/* mpi_watch.c: how the mpi transport tells a stuck job from a slow one. A watch thread per process beats to rank 0,
 * which reports the ranks gone silent (their node or network lost); and a wait past the deadline joins rounds of a
 * nonblocking allreduce that confirm, from every process at once, that all of them wait and nothing moves. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_ctx.h"
#include "text.h"

/* Completes the n requests q (their statuses into st, or MPI_STATUSES_IGNORE), polling where a blocking call
 * would wait; returns -1 at once, leaving them, when rank 0's watch found ranks lost: without them no collective
 * can complete, and the lost ones are the report. Every collective of a step's end and of the run's results goes
 * through it, so that rank 0 is never stuck in one. */
int pp__mpi_waitall(const mp_ctx *c, int n, MPI_Request *q, MPI_Status *st) {
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

/* Open MPI's value of an integer MCA parameter as this process sees it (mpirun passes its OMPI_MCA_ variables and
 * --mca values to every process it starts), or dflt where it is not set. */
static long mca_long(const char *name, long dflt) {
    char var[96];
    snprintf(var, sizeof var, "OMPI_MCA_%s", name);
    const char *v = getenv(var);
    char *end;
    long n = v && *v ? strtol(v, &end, 10) : dflt;
    return v && *v && *end ? dflt : n;
}

/* How long rank 0 waits for a silent process before it calls it lost: the deadline (at least WATCH_SILENT_MIN_S),
 * shortened to a second before Open MPI's own daemon could give the node up. That daemon's OOB connection drops
 * a node once oob_tcp_keepalive_probes keepalives, oob_tcp_keepalive_intvl seconds apart, went unanswered, which
 * is intvl * probes seconds after the cut at the soonest; mpirun then ends the whole job, rank 0 included, and
 * a report not printed by then is never printed. Open MPI's defaults (300 s idle, 20 s, 9 probes) leave the
 * deadline alone. */
static double watch_silence(const pp_world *w, int rank) {
    double silent = w->cfg->deadline_s > 0 ? w->cfg->deadline_s : 10.0, soonest = -1;
    if (mca_long("oob_tcp_keepalive_time", 300) > 0) {
        soonest = (double)mca_long("oob_tcp_keepalive_intvl", 20) * (double)mca_long("oob_tcp_keepalive_probes", 9);
        if (silent > soonest - 1) silent = soonest - 1;
    }
    if (silent < WATCH_SILENT_MIN_S) silent = WATCH_SILENT_MIN_S;
    /* keepalives this short would end the job before any report: said once, where the report would be */
    if (rank == 0 && soonest >= 0 && silent >= soonest)
        fprintf(stderr, "pplab run: Open MPI's keepalive (oob_tcp_keepalive_intvl x oob_tcp_keepalive_probes = %.0f s) "
                "gives a lost node up before pplab can report it (after %.0f s of silence): make that product %.0f s "
                "or more\n", soonest, silent, silent + 1);
    return silent;
}

static void *watch_run(void *arg) {
    pp_world *w = arg;
    mp_ctx *c = ctx_of(w);
    double silent = watch_silence(w, c->rank);
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
                c->heard[st.MPI_SOURCE] = mp_now();
                if (st.MPI_TAG == WATCH_TAG_BYE) byes[st.MPI_SOURCE] = v + 1;
                else got[st.MPI_SOURCE]++;
            }
            done = stopping;
            for (int r = 1; r < c->size && done; r++) done = byes[r] && got[r] == byes[r] - 1;
            /* stopping after a loss: the lost ones never say goodbye */
            if (stopping && __atomic_load_n(&c->lost, __ATOMIC_ACQUIRE)) done = 1;
            double t = mp_now();
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
void pp__mpi_watch_start(pp_world *w, mp_ctx *c, int threads) {
    c->hosts = pp__xcalloc((size_t)c->size, sizeof *c->hosts);
    char mine[64] = "";
    gethostname(mine, sizeof mine - 1);
    MPI_Allgather(mine, (int)sizeof mine, MPI_CHAR, c->hosts, (int)sizeof mine, MPI_CHAR, c->ctl);
    if (threads < MPI_THREAD_MULTIPLE || c->size < 2) return;
    MPI_Comm_dup(MPI_COMM_WORLD, &c->beat);
    c->heard = pp__xcalloc((size_t)c->size, sizeof *c->heard);
    for (int r = 0; r < c->size; r++) c->heard[r] = mp_now();
    c->watching = pthread_create(&c->watch, NULL, watch_run, w) == 0;
    if (!c->watching) MPI_Comm_free(&c->beat);
    /* named, so that top, gdb and a test can tell a process whose watch is running (its start-up is behind it) */
    else pthread_setname_np(c->watch, "pp-watch");
}

/* Ends the watch: every process's last beats reach rank 0 before the thread returns (after a loss, rank 0 stops
 * at once). */
void pp__mpi_watch_stop(mp_ctx *c) {
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
int pp__mpi_quiet_round(mp_ctx *c, int waiting) {
    if (c->round_active) {
        int flag = 0;
        MPI_Test(&c->round_req, &flag, MPI_STATUS_IGNORE);
        if (!flag) return 0;
        c->round_active = 0;
        int all_waiting = c->round_out[0] == 0;
        int stuck = all_waiting && c->have_prev && c->round_out[1] == c->prev_sum;
        c->have_prev = all_waiting;
        c->prev_sum = c->round_out[1];
        c->round_done_at = mp_now();
        c->polls_after = 0;
        return stuck;
    }
    if (!waiting) return 0;
    if (c->size < 2) return 1; /* alone, a waiting process waits for itself */
    if (c->rounds > 0 && (++c->polls_after < QUIET_GAP_POLLS || mp_now() - c->round_done_at < QUIET_GAP_S)) return 0;
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
int pp__mpi_quiet_end(mp_ctx *c) {
    int most = 0;
    MPI_Request r;
    MPI_Iallreduce(&c->rounds, &most, 1, MPI_INT, MPI_MAX, c->ctl, &r);
    if (pp__mpi_waitall(c, 1, &r, MPI_STATUSES_IGNORE)) return -1;
    int pad = most - c->rounds, n = 0;
    MPI_Request *q = pp__xcalloc((size_t)pad + 1, sizeof *q);
    long(*vote)[2] = pp__xcalloc((size_t)pad + 1, sizeof *vote), (*out)[2] = pp__xcalloc((size_t)pad + 1, sizeof *out);
    if (c->round_active) q[n++] = c->round_req;
    for (int k = 0; k < pad; k++, n++) {
        vote[k][0] = 1;
        MPI_Iallreduce(vote[k], out[k], 2, MPI_LONG, MPI_SUM, c->quiet, &q[n]);
    }
    int lost = pp__mpi_waitall(c, n, q, MPI_STATUSES_IGNORE);
    free(q);
    free(vote);
    free(out);
    c->round_active = 0;
    c->rounds = 0;
    c->have_prev = 0;
    c->progress = 0;
    return lost;
}
