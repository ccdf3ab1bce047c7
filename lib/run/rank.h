/* rank.h: the rank and world behind pp.h's handles (pp_rank, pp_world, pp_stash) and how a run fails (rank.c): a
 * rank that fails records its failure and leaves its step function through its abort point; the others run on
 * until they return, fail themselves or wait on what will never come, and the run then reports one failure,
 * chosen by a fixed rule (pp__world_settle), so that the report depends on the program and not on which thread
 * got there first. What the pp.h calls themselves do lives in stage.c (compute, stashes) and comm.c (messages). */
#ifndef PP_RANK_H
#define PP_RANK_H

#include <pthread.h>
#include <setjmp.h>
#include <stddef.h>

#include "config.h"
#include "error.h"
#include "model.h"
#include "rpc.h"
#include "trace.h"

struct pp_transport_ops;

/* A stash's life: forward done (live), input half done, backward done, freed; and, for a stage run layer by layer
 * (lab 08), its forward or its backward open. */
enum { PP__STASH_LIVE, PP__STASH_INPUT_DONE, PP__STASH_DONE, PP__STASH_FREED, PP__STASH_FWD_OPEN, PP__STASH_BWD_OPEN };

/* Stash as handed to the student: the model's stash plus the bookkeeping that catches misuse. */
struct pp_stash {
    int chunk, mb;
    pp_tensor *x, *dy;       /* the forward's input and the backward's gradient, held until the backward ends */
    int state;               /* PP__STASH_* */
    int checkpointed;
    size_t bytes;            /* counted now */
    pp_model_stash *ms;
    struct pp_stash *next;
    /* a stage run layer by layer (pp_stage_forward_begin ... _end, lab 08): its blocks, and the op's start */
    struct pp_block *blocks;
    int nblocks;
    int timer;               /* the backend's timer of the open op (-1: none) */
    double wall_start, ready; /* ... its wall start and the virtual time its input was ready */
    double tp_before;        /* the rank's shards' sums time when the op began */
    long block_calls;        /* block calls in the open op (capped) */
    int blocks_seen;         /* blocks of the open op that had a call so far */
};

/* Block i of a stash's stage, as pp.h's block calls take it. */
struct pp_block {
    pp_rank *r;
    pp_stash *s;
    int i;
    /* what the open op did with it, for the notes at its end (pp__block_op_end) */
    unsigned calls;          /* a bit per pp_block_api called on it */
    int seen;                /* its place among the op's blocks by first call, from 1 (0: no call yet) */
    int half;                /* the half of its last layer call (PP_HALF_ATTN, PP_HALF_MLP): whose a residual or a
                                sum is */
    unsigned residuals;      /* a bit per half that had a pp_block_residual */
    const pp_tensor *in[2];  /* the tensor each half was given: in the forward its LayerNorm's input (the block's x,
                                then the attention half's output), in the backward its output's gradient */
};

/* The block calls: pp_block_api (rpc.h, which numbers them on the wire too). */
/* The pp.h name of block call i ("pp_block_linear1"), or "?" out of range. */
const char *pp__block_api(int i);
typedef struct pp_tp_note pp_tp_note;

/* A block call given a tensor of a kind that does not fit it (pp.h, lab 08). The run goes on, as real shards
 * would, with the numbers that follow; the grader names the first note where they go wrong. */
typedef enum {
    PP_TPN_NONE = 0,
    PP_TPN_SUM_SPLIT,        /* pp_block_allreduce of a split tensor: its columns are the shard's own, not parts */
    PP_TPN_SUM_WHOLE,        /* ... of a whole one: every shard holds it, so the sum is T times it */
    PP_TPN_ADD_PARTIAL,      /* bo, b2 or the residual added to a partial tensor: once per shard that did, in the sum */
    PP_TPN_READ_PARTIAL,     /* a call that reads a whole tensor got a partial one: a sum is missing before it */
    PP_TPN_READ_SPLIT,       /* ... got a split one */
    PP_TPN_NOT_SPLIT,        /* a call that reads a split tensor got a whole or a partial one */
    PP_TPN_BLOCK_SKIPPED,    /* an op ended with a block of its stage that had no call */
    PP_TPN_BLOCK_ORDER,      /* an op's blocks had their first calls out of the stage's order (other: the block
                                the order has at that place) */
    PP_TPN_NO_RESIDUAL,      /* a half of a block ended its pass without pp_block_residual (counted where every shard
                                of the stage did so) */
    PP_TPN_RESIDUAL_INTO,    /* pp_block_residual wrote into the tensor a half was given (its x, or its dy) */
    PP_TPN_HALF_SKIPPED,     /* an op ended with a block one of whose halves had no call */
    PP_TPN_COUNT
} pp_tp_note_code;

struct pp_tp_note {
    int code;                /* pp_tp_note_code; PP_TPN_NONE: no note */
    int api;                 /* the call (pp_block_api) */
    int rank, shard;         /* where: world rank, and its shard */
    int mb, chunk, block;
    int half;                /* the half of the block the note is about (PP_HALF_ATTN, PP_HALF_MLP); -1: the block
                                or the op as a whole */
    int backward;            /* 1 in a backward */
    int shards;              /* PP_TPN_ADD_PARTIAL: how many of the stage's T shards did it */
    int other;               /* PP_TPN_BLOCK_ORDER: the block the stage's order runs where `block` ran;
                                PP_TPN_READ_PARTIAL: 1 when a bias or the residual went onto that partial tensor
                                first */
    int order;               /* the rank's notes in the order they came (not carried in a result) */
    double clock;            /* the virtual start of the op it came in (not carried) */
};
/* Notes t, an argument of block call api (block: -1 for the op's end) that must be whole, when it is not. */
void pp__block_note_whole(pp_rank *r, const pp_stash *s, int block, int api, const pp_tensor *t);
/* The open op of s ends: notes a block it never called, blocks first called out of the stage's order (the forward
 * from block 0, the backward from the last), and a block whose pass had no residual. */
void pp__block_op_end(pp_rank *r, pp_stash *s);
/* The open op of s begins (a backward after its forward): what its blocks did so far is forgotten. */
void pp__block_op_begin(pp_stash *s);

typedef struct pp_world pp_world;
typedef struct pp_server pp_server;

struct pp_rank {
    int id;                  /* the world's index of this rank, (t*D + d)*P + p (what transports address) */
    int pipe, replica;       /* p: its stage in the pipeline, 0..P-1 (pp_rank_id); d: its replica, 0..D-1 */
    int tp;                  /* t: its shard of the stage, 0..T-1 (the same program runs on every shard) */
    const pp_run_config *cfg;
    pp_world *world;
    pp_backend *be;
    pp_stage_model *chunks;  /* v stages: chunk c is virtual stage c*P + id */
    pp_arena arena;          /* tensors of the current step */
    int step;                /* 0-based */
    /* virtual clock */
    double clock;
    pp_trace trace;          /* events of the current step */
    double wall0;            /* wall time the step began */
    /* activation stashes */
    pp_stash *stashes;
    size_t live_bytes, peak_bytes;
    size_t peak_single_bytes;  /* the largest one stash got, measured after each op (F, checkpoint, B, W) */
    int live_stashes, peak_stashes;
    /* messages */
    int in_group;
    pp_request **group;
    int ngroup, group_cap;
    pp_request *requests;    /* every request of the step, freed at its end */
    int sent_msgs;
    const char *blocked_in;  /* the call this rank is blocked in, for reports ("pp_send(dst=2, F mb3 vs2)"); read
                              * by other ranks' threads: through pp__rank_blocked_in and its setter only */
    double blocked_since;    /* ... since when (pp__now), for reports that say how long */
    int waiting_tag;         /* the tag of the receive it blocks in (pp_recv, or the first in a group), else -1 */
    char blocked_buf[160];
    /* optimizer */
    int opt_calls;           /* pp_optimizer_step calls this step */
    /* gradient all-reduce (reduce.c) */
    int reduces;             /* pp_grad_reduce / pp_grad_ireduce calls this step */
    int *reduced;            /* per chunk: reduces of it this step */
    int tp_sums;             /* the shards' all-reduces this rank's model made this step (T > 1) */
    int tp_calls;            /* the shards' all-reduces the rank itself called this step */
    double tp_bytes;         /* ... their bytes */
    double tp_time;          /* ... and their virtual time (each charged inside the op that made it) */
    pp_tp_note tp_notes[PP_TPN_COUNT]; /* the first note of each code this step (lab 08's block calls) */
    pp_stash *open_op;       /* the stash whose forward or backward runs layer by layer now (lab 08), else NULL */
    const char *tp_api;      /* the pp.h call whose model op is running: what a report says a sum is blocked in */
    pp_model_stash *forming; /* the stash of a forward still running: a shards' sum that stops the rank leaves it
                              * here, freed with the step */

    int opt_t;               /* AdamW step counter */
    float **grad_snapshot;   /* per chunk per param: host copy of gradients at the first optimizer call */
    int dloss_calls;         /* pp_loss_grad calls this step */
    int zero_scales;         /* of them, with a scale of 0 (1 / M in integer arithmetic) */
    int backwards;           /* backwards (or input halves) run this step */
    int late_grad_zero;      /* pp_grad_zero calls after a backward this step: they erase its gradients */
    double last_loss_sum;    /* sum of micro-batch losses seen by this rank's last stage (double: M may be 1024) */
    int loss_count;
    /* what this step made, against the caps that keep a runaway schedule from exhausting pplab's memory */
    int made[3];             /* per pp_charge */
    /* the driver serving this rank in a sandboxed run (server.c); NULL in-process */
    pp_server *srv;
    /* this rank's own failure in the current step (pp__rank_fail), and the virtual time it happened at: the
     * rank's clock then, the end of the last op it ran */
    int failed;
    pp_status fail_status;
    double fail_clock;
    char fail_msg[4096];
    /* abort */
    jmp_buf abort_jmp;
};

struct pp_reduce_world;

struct pp_world {
    const pp_run_config *cfg;
    int P;                   /* ranks in the world: T*D*P (the replicas' pipelines one after the other, for each
                              * tensor-parallel shard) */
    struct pp_reduce_world *reduce; /* the reduce groups' and tensor-parallel groups' state (reduce.c) */
    int local_rank;          /* -1 with threads (all ranks local); the process's rank under MPI */
    int node_rank, node_size; /* under MPI: the process's rank among those of its node, and their count (which GPU
                               * it takes); -1 with threads */
    pp_rank *ranks;          /* P entries; under MPI only ranks[local_rank] is in use */
    const struct pp_transport_ops *tp;
    void *tp_ctx;
    int no_params;           /* pp_program.no_params: no gradient snapshot, no weights in the result */
    /* set by the runtime (rank.c knows neither transports nor drivers): wake_all wakes every rank blocked in the
     * transport (pp__world_fail calls it); driver_death says whether rank i's driver died, and how (1, *st and
     * msg set); rank_failed tells the transport that rank i failed and returns 1 when the others may run on,
     * 0 when the transport cannot tell a rank waiting on a failed one from a slow one (the run then stops) */
    void (*wake_all)(pp_world *w);
    int (*driver_death)(pp_world *w, int i, pp_status *st, char *msg, size_t len);
    int (*rank_failed)(pp_world *w, int i);
    pthread_mutex_t fail_lock;
    int failed;              /* set once, atomically (release); read with pp__world_failed() */
    pp_status status;
    char error[4096];        /* the first failure's message (may hold several lines for deadlocks) */
};

/* How reports name world rank i: "rank p", or "rank p of replica d" when the run has D > 1 replicas (a student
 * addresses ranks within a replica, so a world index would name a rank they cannot see), with ", shard t" after
 * it when stages are cut over T > 1 ranks. Returns buf. */
const char *pp__rank_label(const pp_world *w, int i, char *buf, size_t len);
/* pp__rank_label in a buffer of the statement's own, for a report line. */
#define PP_RANK_LABEL(w, i) pp__rank_label((w), (i), (char[48]){0}, 48)

/* Rank r failed: records the failure ("rank N: what\nHINT: hint") with r's clock (pp__rank_fail) and leaves r's
 * step function through its abort point. Call from r's own thread. */
void pp__rank_abort(pp_rank *r, pp_status st, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
/* Records rank r's failure (its first one; msg starts with "rank N: ") at r's current clock and tells the
 * transport; where the transport cannot let the other ranks run on, the run fails at once (pp__world_fail).
 * Does not leave: a transport may record the failure of a rank it found blocked (a dead driver). */
void pp__rank_fail(pp_rank *r, pp_status st, const char *msg);
/* 1 when some rank of this process recorded a failure this step. */
int pp__world_rank_failed(const pp_world *w);
/* How a rank's step ended, as the run's report reads it. */
typedef struct pp_rank_end {
    int failed;              /* it recorded a failure of its own: */
    pp_status status;
    double clock;            /* ... at this virtual time */
    const char *msg;         /* ... this one ("rank N: what\nHINT: ...") */
    const char *blocked_in;  /* else the call it stayed blocked in when it was stopped, or NULL */
} pp_rank_end;
/* The report of a step in which some rank failed, from each world rank's end (ends[0..n)), into out: the failure
 * earliest on the virtual clock, ties going to the lowest rank, in full; then, one line each, the later failures
 * in clock order and the ranks that only stayed blocked (a consequence). A deterministic choice: every rank runs
 * until it returns, fails or waits on what never comes, so each one's failure, clock and last call are a function
 * of the program. Returns the leading failure's status, or PP_OK (out untouched) when no rank failed. Both
 * transports report through it, threads here (pp__world_settle), MPI on rank 0 from every process's end. */
pp_status pp__rank_report(const pp_world *w, const pp_rank_end *ends, int n, char *out, size_t cap);
/* Once no rank can run any more: fails the run with pp__rank_report's report. Nothing when no rank failed. */
void pp__world_settle(pp_world *w);
/* Fails the whole run with msg (a deadlock, messages never received: what no single rank did), unless it
 * already failed; wakes every rank. On a deadlock, a rank whose driver died is the failure instead. Returns 1
 * if this was the run's failure. */
int pp__world_fail(pp_world *w, pp_status st, const char *msg);
/* 1 once the run failed (an acquire load: safe from any rank thread without a lock). */
int pp__world_failed(const pp_world *w);
/* Leaves rank r's step function because the run already failed elsewhere. */
void pp__rank_bail(pp_rank *r) __attribute__((noreturn));
/* Bails out if the run failed; called at the entry of every pp.h function. Stops the rank when a forward or a
 * backward run layer by layer is open (only its block calls and its end may run then). */
void pp__rank_check(pp_rank *r);
/* Bails out if the run failed, and nothing else (the block calls, and the server between requests). */
void pp__rank_alive(pp_rank *r);
/* Copies rank r's gradients to the host once in step 1 (at its first optimizer step, or when its step
 * function returns without one), so the grader compares what the optimizer saw. */
void pp__rank_snapshot_grads(pp_rank *r);
/* The id of the rank whose step function runs on this thread, -1 outside one (for crash reports). */
int pp__current_rank(void);
/* Seconds since an arbitrary start (monotonic). */
double pp__now(void);

/* A step function: what every rank runs once per step. */
typedef void (*pp_step_fn)(pp_rank *r);

/* What a pp.h call makes that costs the runtime memory. */
typedef enum { PP_CHARGE_FORWARD = 0, PP_CHARGE_LOSS_GRAD, PP_CHARGE_MESSAGE } pp_charge;
/* Counts one more of `what` on rank r this step and stops the run with PP_ERR_LIMIT once the step made far more
 * than any schedule needs (forwards 4Mv + 64, loss gradients 4M + 64, posted messages 16Mv + 256): pplab's
 * memory must not be at a schedule's mercy, in a sandboxed run or in-process. */
void pp__rank_charge(pp_rank *r, pp_charge what, const char *api);
/* The number of parameter tensors over all of rank r's chunks. */
int pp__rank_nparams(const pp_rank *r);
/* Marks the calling thread as running rank id's step function (-1: none), for pp__current_rank. */
void pp__rank_set_current(int id);

/* The call rank r is blocked in (NULL when none), as another thread may read it while r changes it. */
static inline const char *pp__rank_blocked_in(const pp_rank *r) {
    return __atomic_load_n(&r->blocked_in, __ATOMIC_ACQUIRE);
}
static inline void pp__rank_set_blocked_in(pp_rank *r, const char *what) {
    __atomic_store_n(&r->blocked_in, what, __ATOMIC_RELEASE);
}

#endif /* PP_RANK_H */
