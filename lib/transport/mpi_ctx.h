/* mpi_ctx.h: the mpi transport's state (one context per process, from init to fini) and the calls its files make of
 * each other; nothing outside lib/transport/mpi*.c includes it. */
#ifndef PP_MPI_CTX_H
#define PP_MPI_CTX_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

#include "comm.h"
#include "deadlock.h"
#include "nccl_api.h"
#include "rank.h"
#include "reduce.h"

/* What travels in front of the bytes of every message. */
typedef struct mp_header {
    int32_t rows, cols, dtype;
    int32_t api;             /* the sender's call, for reports: 1 for pp_isend (pp__mpi_api_name) */
    int32_t tag;             /* the pp tag (the MPI tag may be remapped) */
    int32_t pad;
    double ready;            /* virtual time the sent tensor was ready */
} mp_header;

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

static inline mp_ctx *ctx_of(pp_world *w) { return (mp_ctx *)w->tp_ctx; }

/* The report of ranks lost, once rank 0's watch wrote one (NULL before, and on every other rank). */
static inline const char *watch_lost(const mp_ctx *c) { return __atomic_load_n(&c->lost, __ATOMIC_ACQUIRE); }

/* Seconds on a monotonic clock (pp__now, the runtime's clock). */
static inline double mp_now(void) { return pp__now(); }

/* ---- mpi_p2p.c: messages ----------------------------------------------------------------------------- */

/* The call a message's header names (mp_header.api): "pp_send" or, for 1, "pp_isend". */
const char *pp__mpi_api_name(int api);
/* A received header's shape, worded as pp__tensor_describe words a tensor, into buf. */
const char *pp__mpi_shape_describe(int rows, int cols, int dtype, char *buf, size_t len);
/* comm.h's post: a send (header and bytes packed into one buffer) or a receive of the expected shape. A tag this
 * MPI cannot carry aborts the posting rank. */
void pp__mpi_post(pp_world *w, pp_request *req);
/* Tests one posted request; completes it (and its pp_request) when MPI says it is done, checking a received
 * header against the expected tensor (a mismatch aborts the rank, naming both ranks and both ops). */
void pp__mpi_req_test(pp_world *w, mp_ctx *c, pp_request *req);

/* ---- mpi_reduce.c: the replicas' reduces and the shards' sums ------------------------------------------ */

/* comm.h's reduce_post and tp_post: this rank's part joins its group's allgather of reduce (sum) part->k. */
void pp__mpi_reduce_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *grads);
void pp__mpi_tp_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *data);
/* Move the step's reduces (sums) as far as they go without waiting; a done one completes its request. */
void pp__mpi_reduce_progress(pp_world *w, mp_ctx *c);
void pp__mpi_tp_progress(mp_ctx *c);
/* At step end: finish what is still moving (the sums' members first agree on how many there were, padding the ones
 * that stopped early) and clear the slots for the next step. */
void pp__mpi_reduce_step_end(pp_world *w, mp_ctx *c);
void pp__mpi_tp_step_end(pp_world *w, mp_ctx *c);

/* ---- mpi_watch.c: the watch and the deadlock confirmation ---------------------------------------------- */

/* Completes the n requests q (their statuses into st, or MPI_STATUSES_IGNORE), polling where a blocking call
 * would wait; returns -1 at once, leaving them, when rank 0's watch found ranks lost: without them no collective
 * can complete, and the lost ones are the report. Every collective of a step's end and of the run's results goes
 * through it, so that rank 0 is never stuck in one. */
int pp__mpi_waitall(const mp_ctx *c, int n, MPI_Request *q, MPI_Status *st);
/* Starts the watch thread (when MPI's thread level allows it), having gathered every process's host name for the
 * reports; stops it, every process's last beats in (after a loss, at once). */
void pp__mpi_watch_start(pp_world *w, mp_ctx *c, int threads);
void pp__mpi_watch_stop(mp_ctx *c);
/* A waiting rank's part in the rounds that confirm a stuck job: 1 when this call saw two rounds in a row find every
 * rank waiting and nothing moved. Every rank sees the same rounds in the same order. */
int pp__mpi_quiet_round(mp_ctx *c, int waiting);
/* At step end, collective: joins the rounds this rank missed and resets them. -1 when ranks were lost meanwhile. */
int pp__mpi_quiet_end(mp_ctx *c);

/* ---- mpi_wait.c: waits and failures ------------------------------------------------------------------ */

/* Tells every other process that the run failed (once per step); receives the notices that arrived (1 if any). */
void pp__mpi_notify_others(mp_ctx *c, pp_status st);
int pp__mpi_poll_notices(mp_ctx *c);
/* comm.h's wait, rank_exit, rank_failed and wake_all. */
void pp__mpi_wait(pp_world *w, int r, pp_request **reqs, int n);
void pp__mpi_rank_exit(pp_world *w, int r);
int pp__mpi_rank_failed(pp_world *w, int r);
void pp__mpi_wake_all(pp_world *w);

/* ---- mpi_step.c, mpi_nccl.c, mpi_collect.c -------------------------------------------------------------- */

/* comm.h's step_end: collective, every process once per step, failed or not. */
int pp__mpi_step_end(pp_world *w);
/* With the cuda backend: NCCL for the replicas' reduces and for the shards' sums, each group whose members have GPUs
 * of their own. 0, or -1 with the reason in w->error. */
int pp__mpi_nccl_start(pp_world *w, mp_ctx *c);
/* comm.h's launched_rank, sum and gather. */
int pp__mpi_launched_rank(void);
void pp__mpi_collect_sum(pp_world *w, double *v, int n);
void *pp__mpi_collect_gather(pp_world *w, const void *buf, size_t len, size_t *lens);

#endif /* PP_MPI_CTX_H */
