/* runtime.h: a run = P ranks executing a step function for K steps over one model. Holds the run
 * configuration, the rank and world structures behind pp.h's handles, and the results the grader and the CLI
 * read (gradients, weights, losses, traces, stash peaks). Internal: students only see pp.h. */
#ifndef PP_RUNTIME_H
#define PP_RUNTIME_H

#include <pthread.h>
#include <setjmp.h>
#include "comm.h"
#include "error.h"
#include "model.h"
#include "trace.h"

typedef enum { PP_OPT_SGD = 0, PP_OPT_ADAMW = 1 } pp_optimizer;

typedef struct pp_run_config {
    const char *schedule;   /* "naive", "gpipe", "1f1b", "interleaved": which theory applies */
    int P, M, v;            /* ranks, micro-batches, chunks per rank */
    int layers;             /* blocks in the model; must be a multiple of P*v */
    int mb_size;            /* samples per micro-batch */
    int seq, hidden, vocab; /* model and data shape */
    int steps;              /* optimizer steps */
    double comm_latency;    /* virtual cost of one boundary message */
    double edge_cost;       /* virtual cost of the embedding and of the head + loss (each) in a forward; twice
                               that in a whole backward, once in each of B and W when split */
    int eager;              /* 1: sends complete at once; 0: rendezvous (NCCL-like, the default) */
    int recompute;          /* ask schedules for activation recomputation */
    unsigned seed;
    const char *backend;    /* "cpu" or "cuda" */
    const char *transport;  /* "threads" (default) or "mpi" */
    pp_optimizer optimizer;
    float lr, weight_decay;
    double deadline_s;      /* transports without exact detection: a wait longer than this is a deadlock */
    int uncapped;           /* 1: no caps on what a step makes (pp__rank_charge): for benchmarks that loop on
                               purpose in this process, never for a student's schedule */
} pp_run_config;

/* The defaults every run starts from (P=2, M=4, v=1, gpipe, cpu, SGD...). */
void pp__config_defaults(pp_run_config *c);
/* Checks a configuration; returns 0, or -1 with a one-line reason (what is wrong and what to do) in err. */
int pp__config_check(const pp_run_config *c, char *err, size_t errlen);
/* The model shape of a run (L defaults to one block per virtual stage; the FFN is 4h). */
void pp__config_model_dims(const pp_run_config *c, pp_model_dims *d);
/* Blocks per virtual stage: layers / (P * v). */
int pp__config_blocks_per_vstage(const pp_run_config *c);

/* Stash as handed to the student: the model's stash plus the bookkeeping that catches misuse. */
struct pp_stash {
    int chunk, mb;
    pp_tensor *x, *dy;       /* the forward's input and the backward's gradient, held until the backward ends */
    int state;               /* PP__STASH_LIVE, _INPUT_DONE (B done, W pending), _DONE, _FREED */
    int checkpointed;
    size_t bytes;            /* counted now */
    pp_model_stash *ms;
    struct pp_stash *next;
};

typedef struct pp_world pp_world;
typedef struct pp_server pp_server;

struct pp_rank {
    int id;
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
    const char *blocked_in;  /* the call this rank is blocked in, for reports ("pp_send(dst=2, F mb3 vs2)") */
    int waiting_tag;         /* the tag of the receive it blocks in (pp_recv, or the first in a group), else -1 */
    char blocked_buf[160];
    /* optimizer */
    int opt_calls;           /* pp_optimizer_step calls this step */
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
    /* abort */
    jmp_buf abort_jmp;
};

struct pp_world {
    const pp_run_config *cfg;
    int P;
    int local_rank;          /* -1 with threads (all ranks local); the process's rank under MPI */
    pp_rank *ranks;          /* P entries; under MPI only ranks[local_rank] is in use */
    const pp_transport_ops *tp;
    void *tp_ctx;
    int no_params;           /* pp_program.no_params: no gradient snapshot, no weights in the result */
    pthread_mutex_t fail_lock;
    int failed;              /* set once, atomically (release); read with pp__world_failed() */
    pp_status status;
    char error[4096];        /* the first failure's message (may hold several lines for deadlocks) */
};

/* Stops the run: records the first failure (status + message + hint), wakes every rank and leaves rank r's
 * step function through its abort point. Safe from any rank thread; later failures are dropped. */
void pp__rank_abort(pp_rank *r, pp_status st, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
/* Records a failure without leaving (for transports detecting on behalf of several ranks). Returns 1 if this
 * was the first failure. */
int pp__world_fail(pp_world *w, pp_status st, const char *msg);
/* 1 once the run failed (an acquire load: safe from any rank thread without a lock). */
int pp__world_failed(const pp_world *w);
/* Leaves rank r's step function because the run already failed elsewhere. */
void pp__rank_bail(pp_rank *r) __attribute__((noreturn));
/* Bails out if the run failed; called at the entry of every pp.h function. */
void pp__rank_check(pp_rank *r);
/* Copies rank r's gradients to the host once in step 1 (at its first optimizer step, or when its step
 * function returns without one), so the grader compares what the optimizer saw. */
void pp__rank_snapshot_grads(pp_rank *r);
/* The id of the rank whose step function runs on this thread, -1 outside one (for crash reports). */
int pp__current_rank(void);
/* Seconds since an arbitrary start (monotonic). */
double pp__now(void);

/* Everything a run produced. Arrays are per rank unless said otherwise; per-parameter data follows the
 * model's parameter order (embedding, blocks, head), each tagged with its global name. */
typedef struct pp_param_result {
    char name[32];
    int vstage, rank;
    int count;
    float *grad;             /* gradient of step 1 as the optimizer saw it */
    float *weight;           /* weight after the last step */
} pp_param_result;

typedef struct pp_run_result {
    pp_status status;
    char error[4096];
    int P, v;
    pp_param_result *params;
    int nparams;
    float *loss;             /* per step: mean loss over the step's micro-batches, as the last stage saw it */
    int *opt_calls;          /* per rank, step 1 */
    int *peak_stashes;       /* per rank, step 1 */
    size_t *peak_bytes;      /* per rank, step 1 */
    size_t *peak_single;     /* per rank, step 1: the largest single stash */
    int *sent_msgs;          /* per rank, step 1 */
    int *unfreed_stashes;    /* per rank, step 1: stashes never passed to pp_stash_free */
    int *zero_scales;        /* per rank, step 1: pp_loss_grad calls with a scale of 0 */
    int *late_grad_zero;     /* per rank, step 1: pp_grad_zero calls after a backward */
    int *waiting_tag;        /* per rank, of a failed run: the receive it was waiting for (-1: none), which names
                                the op it was about to run */
    size_t act_bytes;        /* bytes of one boundary activation */
    pp_trace *traces;        /* per rank, step 1; of a failed run, the ops of the step that failed, up to the failure */
    double bubble;           /* virtual, step 1 */
    double makespan;
    double wall_s;           /* wall time of all steps */
    double *step_s;          /* per step: wall seconds from the step's start until every rank ended it */
    int dloss_calls_total;   /* step 1, all ranks */
    int loss_count;          /* micro-batch losses produced in step 1 */
} pp_run_result;

typedef void (*pp_step_fn)(pp_rank *r);

typedef struct pp_sandbox pp_sandbox;

/* What a run executes on each rank: a step function in this process (in-process: the library's own tests and
 * benchmarks, `pplab run --in-process`), or, with a sandbox, the step function `symbol` of a driver executable,
 * one process per rank (lib/server.c, lib/spawn.c). */
typedef struct pp_program {
    pp_step_fn fn;
    const pp_sandbox *sandbox;
    const char *symbol;
    int no_params; /* 1: the caller reads no gradients or weights (pplab run without --dump-grads): none are copied */
} pp_program;

/* Runs cfg->steps steps of prog on cfg->P ranks and fills res (zeroed first). Returns res->status.
 * With cfg->transport "mpi" this process runs only its own rank (the transport's MPI rank) and every process
 * must call it; rank 0's res is then the whole run's, as with threads, the others' hold only their rank.
 * Drivers start before the transport (MPI_Init), from the calling thread, which must outlive the run. */
pp_status pp__run_program(const pp_run_config *cfg, const pp_program *prog, pp_run_result *res);
/* The same for an in-process step function. */
pp_status pp__run(const pp_run_config *cfg, pp_step_fn fn, pp_run_result *res);

/* What a pp.h call makes that costs the runtime memory. */
typedef enum { PP_CHARGE_FORWARD = 0, PP_CHARGE_LOSS_GRAD, PP_CHARGE_MESSAGE } pp_charge;
/* Counts one more of `what` on rank r this step and stops the run with PP_ERR_LIMIT once the step made far more
 * than any schedule needs (forwards 4Mv + 64, loss gradients 4M + 64, posted messages 16Mv + 256): pplab's
 * memory must not be at a schedule's mercy, in a sandboxed run or in-process. */
void pp__rank_charge(pp_rank *r, pp_charge what, const char *api);
void pp__result_free(pp_run_result *res);
/* Allocates res's per-rank arrays (traces, counters, peaks) for P ranks, zeroed; freed by pp__result_free. */
void pp__result_alloc_ranks(pp_run_result *res, int P);

/* ---- one process per rank (runtime_mpi.c); collectives: every process calls them ---------------------- */

/* 1 when ok is true on every process. */
int pp__run_mpi_agree(pp_world *w, int ok);
/* Sums a step's loss and loss count over the processes, in place. */
void pp__run_mpi_loss(pp_world *w, double *loss_sum, int *count);
/* Rank 0 gathers the other processes' step-1 counters, traces, gradients and weights into res (filled with
 * its own rank's part by the runtime); on the others res keeps their own part. */
void pp__run_mpi_merge(pp_world *w, pp_run_result *res);

/* One-way latency in seconds of a tiny message (one float) through pp_send/pp_recv on `transport`, from a
 * ping-pong of iters round trips between ranks 0 and 1 (P = 2). For "mpi" every one of the 2 processes of an
 * `mpirun -np 2` calls it, once per process (MPI is finalized after it); the value is rank 0's, the other
 * process gets -1. Returns -1 on failure. */
double pp__bench_pingpong(const char *transport, int iters);
double pp__bench_mpi_pingpong(int iters);

#endif /* PP_RUNTIME_H */
