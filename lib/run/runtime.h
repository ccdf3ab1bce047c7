/* runtime.h: a run = P ranks executing a step function for K steps over one model (runtime.c), and the results
 * the grader and the CLI read (gradients, weights, losses, traces, stash peaks). The configuration is config.h's,
 * the ranks behind pp.h's handles rank.h's. Internal: students only see pp.h. */
#ifndef PP_RUNTIME_H
#define PP_RUNTIME_H

#include "config.h"
#include "grid_call.h"
#include "rank.h"
#include "trace.h"

/* Everything a run produced. Arrays are per rank unless said otherwise; per-parameter data follows the
 * model's parameter order (embedding, blocks, head), each tagged with its global name. */
typedef struct pp_param_result {
    char name[32];
    int vstage, rank;
    int count;
    int rows, cols;          /* as the rank holds it: under --tp, a cut parameter's slice (count is the whole's once
                                the shards are put together) */
    int split;               /* pp_split: how the shards cut it */
    float *grad;             /* gradient of step 1 as the optimizer saw it */
    float *weight;           /* weight after the last step */
} pp_param_result;

typedef struct pp_run_result {
    pp_status status;
    char error[4096];
    int P, v;                /* P: the ranks of the run, D x the pipeline's stages (replica d's are d*P'..); v chunks */
    int D;                   /* data-parallel replicas (1: one pipeline) */
    int replica_differs;     /* the first replica d >= 1 whose weights after the run differ from replica 0's, else 0 */
    int replica_rank;        /* ... at this pipeline stage */
    char replica_param[32];  /* ... in this parameter */
    int copy_differs;        /* DualPipe: 1 when a stage's two copies (rank s's chunk 0, rank P-1-s's chunk 1) end
                                the run with different weights, else 0 */
    int copy_stage;          /* ... the first such stage */
    char copy_param[32];     /* ... in this parameter */
    int shard_differs;       /* --tp: the first shard t >= 1 whose uncut parameters (LayerNorm, b2, embedding, head)
                                end the run different from shard 0's, else 0 */
    int shard_rank;          /* ... at this rank of shard 0 (d*P + p) */
    char shard_param[32];    /* ... in this parameter */
    int grad_differs;        /* 1 when some rank's gradient of step 1, as its optimizer saw it, differs bit for bit
                                from the one params carries for it (shard t's slice of a cut parameter is replica 0's
                                shard t's; an uncut one, replica 0's shard 0's), else 0 */
    int grad_rank;           /* ... the first such world rank, (t*D + d)*P + p */
    char grad_param[32];     /* ... in this parameter */
    double grad_ratio;       /* ... its gradient's norm over the carried one's (0: all zero) */
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
    int *tp_sums;            /* per rank, step 1: the shards' all-reduces it called (under --tp) */
    double *tp_bytes;        /* per rank, step 1: ... their bytes */
    int *place;              /* lab 08's grid: the global rank that played each world rank (pp_run_config.place),
                                nplace of them; NULL otherwise */
    int nplace;
    pp_tp_note tp_note;      /* step 1: the first note of a block call given a tensor of the wrong kind, over every
                                shard (lab 08; code PP_TPN_NONE: none) */
    int *waiting_tag;        /* per rank, of a failed run: the receive it was waiting for (-1: none), which names
                                the op it was about to run */
    size_t act_bytes;        /* bytes of one boundary activation */
    pp_trace *traces;        /* per rank, step 1; of a failed run, the ops of the step that failed, up to the failure */
    pp_trace *tp_traces;     /* under --tp, step 1 of a run that completed: the other shards' ranks, world rank P + i
                                in tp_traces[i] (the views draw a lane per shard); NULL otherwise */
    int tp_ranks;            /* ... how many: (T - 1) * P */
    double bubble;           /* virtual, step 1 */
    double makespan;
    double step_time;        /* virtual, step 1: the latest end of a compute op or a gradient reduce */
    double wall_s;           /* wall time of all steps */
    double *step_s;          /* per step: wall seconds from the step's start until every rank ended it */
    int dloss_calls_total;   /* step 1, all ranks */
    int loss_count;          /* micro-batch losses produced in step 1 */
} pp_run_result;


typedef struct pp_sandbox pp_sandbox;

/* What a run executes on each rank: a step function in this process (in-process: the library's own tests and
 * benchmarks, `pplab run --in-process`), or, with a sandbox, the step function `symbol` of a driver executable,
 * one process per rank (lib/run/server.c, sandbox/host/host.c). */
typedef struct pp_program {
    pp_step_fn fn;
    const pp_sandbox *sandbox;
    const char *symbol;
    int no_params; /* 1: the caller reads no gradients or weights (pplab run without --dump-grads): none are copied */
    /* called once, by rank 0's process, when every rank is set up and the first step starts: under a launcher,
     * what the run's own time is measured from (start-up is the launcher's) */
    void (*on_ready)(void *arg);
    void *ready_arg;
    /* in-process, the grid lab's mapping (grid_call.h); a sandboxed run asks its driver instead */
    pp_grid_place_fn *grid_place;
    pp_grid_group_fn *grid_group;
    /* training's report (pplab train), NULL for every other run, which then pays nothing: called by rank 0's
     * process after each step that every rank ended, with the step (0-based), its mean loss and wall seconds, and,
     * after every weights_every-th step (0: none) and the last, the whole model's weights: replica 0's, in the
     * model's order, grad NULL (gathered from every process where ranks are processes); NULL, 0 after the others.
     * A run that reports cuts no stage over shards (--tp). */
    void (*on_step)(void *arg, int step, float loss, double step_s, const pp_param_result *weights, int n);
    void *step_arg;
    int weights_every;
} pp_program;

/* Runs cfg->steps steps of prog on cfg->P ranks and fills res (zeroed first). Returns res->status.
 * On a transport whose ranks are processes (PP_TRANSPORT_PROCESSES, as mpi's) this process runs only its own rank
 * (the one its launcher names) and every process must call it; rank 0's res is then the whole run's, as with
 * threads, the others' hold only their rank. Drivers start before the transport (MPI_Init), from the calling
 * thread, which must outlive the run. */
pp_status pp__run_program(const pp_run_config *cfg, const pp_program *prog, pp_run_result *res);
/* The same for an in-process step function. */
pp_status pp__run(const pp_run_config *cfg, pp_step_fn fn, pp_run_result *res);

void pp__result_free(pp_run_result *res);
/* Shard t's slice of a cut parameter (rows x cols, as pp_split cuts it) into the whole parameter `all`, which has
 * T times as many columns or rows. */
void pp__shard_into(float *all, const float *part, int rows, int cols, pp_split split, int T, int t);
/* Allocates res's per-rank arrays (traces, counters, peaks) for P ranks, zeroed; freed by pp__result_free. */
void pp__result_alloc_ranks(pp_run_result *res, int P);

/* ---- one process per rank (runtime_procs.c); collectives: every process calls them ---------------------- */

/* 1 when ok is true on every process. */
int pp__run_procs_agree(pp_world *w, int ok);
/* Sums a step's loss and loss count over the processes, in place. */
void pp__run_procs_loss(pp_world *w, double *loss_sum, int *count);
/* Compares the replicas' weights after the run as compare_replicas does with threads (replica d >= 1 against
 * replica 0, stage by stage, parameter by parameter; the first that differs is named in res on rank 0), by a
 * 64-bit fingerprint of each parameter's bytes gathered on rank 0. */
void pp__run_procs_replicas(pp_world *w, pp_run_result *res);
/* Rank 0 gathers the other processes' step-1 counters, traces, gradients and weights into res (filled with
 * its own rank's part by the runtime); on the others res keeps their own part. */
void pp__run_procs_merge(pp_world *w, pp_run_result *res);
/* Rank 0 gathers every process's weights, mine[0..n) (each with its virtual stage, in the model's order, grad
 * NULL), into the whole model's, returned in the model's order with their count in *total (free them with
 * pp__weights_free); NULL elsewhere, and where the run lost ranks meanwhile. */
pp_param_result *pp__run_procs_weights(pp_world *w, const pp_param_result *mine, int n, int *total);
/* Frees n parameters' weights and gradients and the array. */
void pp__weights_free(pp_param_result *p, int n);

#endif /* PP_RUNTIME_H */
