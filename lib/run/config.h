/* config.h: what a run is asked to do (pp_run_config): schedule, ranks, micro-batches, model and data shape,
 * costs of the virtual clock, optimizer; its defaults and its checks (config.c). */
#ifndef PP_CONFIG_H
#define PP_CONFIG_H

#include <stddef.h>

#include "model.h"

typedef enum { PP_OPT_SGD = 0, PP_OPT_ADAMW = 1 } pp_optimizer;

typedef struct pp_run_config {
    const struct pp_schedule_def *schedule; /* its row of the schedule table (schedules.h): which order and theory apply */
    int P, M, v;            /* pipeline stages (ranks of one replica), micro-batches per replica, chunks per rank */
    int T;                  /* tensor-parallel ranks per stage: every stage's blocks cut over T ranks (model.h's
                               pp_tp_shard), a run being T*D*P ranks (pp__config_rank_of) */
    double tp_alpha;        /* a shards' sum's cost per message (a ring's step), virtual units */
    double tp_beta;         /* ... and per byte (pp__config_tp_sum_cost) */
    int node_size;          /* G ranks per node (0: no topology): every message is then priced by the link it
                               crosses, inside a node (tp_alpha, tp_beta) or between nodes (reduce_alpha,
                               reduce_beta), the point-to-point ones, the reduces' and the shards' sums alike */
    const char *placement;  /* how ranks fill the nodes: the axes t, d, p, fastest first ("tdp", Megatron-LM's
                               order, by default: a stage's shards side by side, then its replicas, then the
                               stages); NULL or "": "tdp" */
    const int *place;       /* lab 08's grid: the global rank (node slot) that plays world rank id, from the
                               submission's mapping (grid.h); NULL: the placement's axes decide */
    int D;                  /* data-parallel replicas of the pipeline: D*P ranks, rank (d, p) holds stage p of
                               replica d, which takes micro-batches d*M..d*M+M-1 of the global batch */
    double reduce_alpha;    /* the gradient all-reduce's cost per message (a ring's step), virtual units */
    double reduce_beta;     /* ... and per byte: a ring over D ranks costs 2(D-1)a + 2(D-1)/D * bytes * b */
    int layers;             /* blocks in the model; 0: one per virtual stage (or the layout's sum) */
    const char *layout;     /* blocks per virtual stage (pp__config_layout); NULL or "": as even as possible */
    int mb_size;            /* samples per micro-batch */
    int seq, hidden, vocab; /* model and data shape */
    int heads;              /* attention heads per block; 0: pp__config_heads chooses */
    const char *corpus;     /* a text file whose bytes are the data (data.h: windows of its training part, vocab 256);
                               NULL: the synthetic task every graded run uses */
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

/* The ranks of a run, T*D*P, and where rank (t, d, p) sits among them: (t*D + d)*P + p, so that tensor-parallel
 * shard t of the whole grid is one block of D*P ranks, shard 0's being the ranks of a run without --tp; and the
 * t, d and p of a rank. */
int pp__config_world(const pp_run_config *c);
int pp__config_rank_of(const pp_run_config *c, int t, int d, int p);
int pp__config_rank_tp(const pp_run_config *c, int rank);
int pp__config_rank_replica(const pp_run_config *c, int rank);
int pp__config_rank_pipe(const pp_run_config *c, int rank);
/* The defaults every run starts from (P=2, M=4, v=1, gpipe, cpu, SGD...). */
void pp__config_defaults(pp_run_config *c);
/* Checks a configuration; returns 0, or -1 with a one-line reason (what is wrong and what to do) in err. */
int pp__config_check(const pp_run_config *c, char *err, size_t errlen);
/* Gives c the schedule table's row called name: the configuration carries the row, and every fact of the schedule
 * is read from it. 0, or -1 with "unknown schedule 'name': use ..." (the table's names) in err. */
int pp__config_schedule(pp_run_config *c, const char *name, char *err, size_t errlen);
/* What running c (not replaying its canonical order) needs of this build beyond a valid configuration: the library's
 * own tensor-parallel block for --tp on a schedule of whole-stage ops (answers.h; a handout has none). Returns 0,
 * or -1 with a one-line reason in err. */
int pp__config_runnable(const pp_run_config *c, char *err, size_t errlen);
/* The model shape of a run (L defaults to one block per virtual stage; the FFN is 4h). */
void pp__config_model_dims(const pp_run_config *c, pp_model_dims *d);
/* The attention heads of each block: --heads, or where it is 0 the smallest multiple of the shards (--tp) from 4
 * up that divides --width, else the largest multiple of the shards that does; 0 when no count fits (refused). */
int pp__config_heads(const pp_run_config *c);
/* The most virtual stages a layout may name one by one, and the longest layout text. */
#define PP_LAYOUT_MAX 256
/* Blocks on each of the model's stages (P*v virtual stages, P for dual), into blocks[] (room for P*v). The layout names stages' counts:
 * "first:K", "last:K", both ("first:K,last:K"), or every stage's ("4,4,4,3"); the blocks of --layers that it
 * does not place go to the other stages as evenly as possible, the earlier stages taking one more where they
 * do not divide. Without a layout every stage is such a stage. Returns 0, or -1 with a one-line reason. */
int pp__config_layout(const pp_run_config *c, int *blocks, char *err, size_t errlen);
/* Blocks of virtual stage vstage, and the index of its first block in the model (c must pass the check); a
 * layout names the model's stages (pp__config_model_stages), which dual's virtual stages hold twice. */
int pp__config_blocks(const pp_run_config *c, int vstage);
int pp__config_first_block(const pp_run_config *c, int vstage);
/* Blocks in the whole model. */
int pp__config_layers(const pp_run_config *c);
/* 1 when every virtual stage has as many blocks as the others (the closed bubble formulas hold). */
int pp__config_even(const pp_run_config *c);
/* Where c's virtual stages live (placement.h; the schedule's row says which placement): the virtual stage of
 * rank's chunk, and the rank and chunk of virtual stage vs. */
int pp__config_vshape(const pp_run_config *c);
/* 1 for full DualPipe's two pipelines (placement.h): the V's numbering, every stage of the model twice. */
int pp__config_dual(const pp_run_config *c);
/* The model's stages (what a layout names): P*v, or P when dual, whose 2P virtual stages hold each twice. */
int pp__config_model_stages(const pp_run_config *c);
/* The model's stage that virtual stage vs holds; the virtual stages before and after vs on its path (-1 at a
 * path's first and last: the embedding and the loss); whether micro-batch mb travels through vs (placement.h). */
int pp__config_stage(const pp_run_config *c, int vs);
int pp__config_prev(const pp_run_config *c, int vs);
int pp__config_next(const pp_run_config *c, int vs);
int pp__config_carries(const pp_run_config *c, int vs, int mb);
int pp__config_vstage(const pp_run_config *c, int rank, int chunk);
int pp__config_vstage_rank(const pp_run_config *c, int vs);
int pp__config_vstage_chunk(const pp_run_config *c, int vs);

/* Which part of a backward a cost is asked for: the whole, its input half (B, which makes dx), its weight half (W). */
typedef enum { PP_BWD_WHOLE, PP_BWD_INPUT, PP_BWD_WEIGHT } pp_bwd_part;
/* The virtual clock's one cost rule, used by the live clock (stage.c) and every replay (grader/theory/replay.c): a
 * forward of a virtual stage costs its blocks (pp__config_blocks), plus edge_cost for the embedding (stage 0) and for the head and
 * loss (the last stage), plus, with --tp, PP_TP_SUMS_PER_BLOCK shards' sums per block (pp__config_tp_sums_cost_of);
 * a backward costs that compute once per half it runs (both for a whole one, one for its input or its weight half)
 * and the blocks' sums once, in the input half, which makes the gradients they sum; plus one more forward when it
 * first rebuilds a checkpointed stash. */
double pp__config_forward_cost(const pp_run_config *c, int vstage);
double pp__config_backward_cost(const pp_run_config *c, int vstage, pp_bwd_part part, int rebuilt);
/* One tensor-parallel sum of a block's activation (micro-batch x seq x width floats) over the T shards, a ring on
 * the shards' link: 2(T-1)*tp_alpha + 2(T-1)/T * bytes * tp_beta; 0 without --tp. With a topology, the ring's
 * slowest link prices it: pp__config_tp_sum_cost_of for the shards of world rank `rank`, and
 * pp__config_tp_sum_cost for those of replica 0's stages in shard 0 (what a replay prices every stage by). */
double pp__config_tp_sum_cost(const pp_run_config *c);
double pp__config_tp_sum_cost_of(const pp_run_config *c, int rank);
/* The same ring for a sum of `bytes` (a schedule's own block may sum other tensors than the activation). */
double pp__config_tp_sum_cost_bytes(const pp_run_config *c, int rank, double bytes);
/* The shards' sums of a block in each forward and in each backward's input half, Megatron-LM's count: one per half
 * of the block, attention's and the MLP's, each after the half's row-cut linear in the forward and after its
 * column-cut one's input gradient in the backward. */
#define PP_TP_SUMS_PER_BLOCK 2
/* The virtual time of one pass's shards' sums over virtual stage vstage's blocks on world rank `rank`'s shards:
 * PP_TP_SUMS_PER_BLOCK per block, each pp__config_tp_sum_cost_of. */
double pp__config_tp_sums_cost_of(const pp_run_config *c, int rank, int vstage);
/* A forward's own work, without sums: its blocks, and edge_cost for the embedding and for the head and loss. */
double pp__config_compute_cost(const pp_run_config *c, int vstage);
/* 1 when the ring of world rank `rank`'s shards crosses nodes (a topology's placement put them apart). */
int pp__config_tp_crosses(const pp_run_config *c, int rank);
/* The cost rule for world rank `rank`'s own ops: as above, its shards' sums priced by their ring. */
double pp__config_forward_cost_of(const pp_run_config *c, int rank, int vstage);
double pp__config_backward_cost_of(const pp_run_config *c, int rank, int vstage, pp_bwd_part part, int rebuilt);

/* ---- topology ---- */
/* The node of world rank `rank` (0 without a topology): its slot divided by the node size, the slot being the
 * grid lab's mapping's or, without one, the placement's (answers.h: where the axes of --placement put it). */
int pp__config_node(const pp_run_config *c, int rank);
/* The placement's axes, fastest first: --placement, or "tdp" (Megatron-LM's) when none is given. */
const char *pp__config_placement(const pp_run_config *c);
/* A point-to-point message of `bytes` from world rank a to world rank b: nothing to itself; --comm-latency
 * without a topology; with one, the link's alpha + bytes * beta. */
double pp__config_message_cost(const pp_run_config *c, int a, int b, double bytes);
/* A ring all-reduce of `bytes` over n world ranks (members, in ring order): 2(n-1)*alpha + 2(n-1)/n * bytes *
 * beta, alpha and beta the slowest link's the ring crosses (inside a node, or between nodes). With no topology,
 * between nodes: the reduce's link. */
double pp__config_ring_cost(const pp_run_config *c, const int *members, int n, double bytes);
/* The members of a gradient reduce's group: the D replicas of a stage, times the two copies DualPipe holds of it
 * (transport/reduce.h). */
int pp__config_reduce_members(const pp_run_config *c);
/* The virtual cost of one gradient all-reduce of `bytes` over its group's D members (a ring): 2(D-1)*alpha +
 * 2(D-1)/D * bytes * beta; 0 with one member, where there is nothing to reduce. */
double pp__config_reduce_cost(const pp_run_config *c, double bytes);
/* Bytes of the weight gradients of virtual stage vstage on one shard (what its chunk's reduce moves). */
double pp__config_grad_bytes(const pp_run_config *c, int vstage);
/* The defaults of --reduce-alpha and --reduce-beta: at the default width a chunk's reduce over two replicas costs
 * about three block forwards, almost all of it bandwidth (a bandwidth-bound grid). */
#define PP_REDUCE_ALPHA_DEFAULT 0.05
#define PP_REDUCE_BETA_DEFAULT 1.5e-5
/* The defaults of --tp-alpha and --tp-beta: the shards of a stage share a server, whose NVLink gives each GPU about
 * 450 GB/s a direction, nine times the 50 GB/s of a 400 Gb/s network port (the reduce's link above), at a fifth of
 * its per-message cost. At the default width a block's sum over two shards costs about 0.05 block forwards. */
#define PP_TP_ALPHA_DEFAULT 0.01
#define PP_TP_BETA_DEFAULT (PP_REDUCE_BETA_DEFAULT / 9)

#endif /* PP_CONFIG_H */
