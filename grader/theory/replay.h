/* replay.h: the canonical schedules as per-rank op lists (their orders are answers: lib/schedule/answers.h), and
 * a replay of any op list under the virtual clock's rules. The reference solutions follow these orders exactly;
 * the grader replays them for theory when latency or edge costs make the closed formula inexact. */
#ifndef PP_THEORY_REPLAY_H
#define PP_THEORY_REPLAY_H

#include "runtime.h"
#include "schedules.h"

typedef struct pp_schedule {
    int P, M, v;
    int vshape;          /* the row's placement (placement.h) */
    int dual;            /* full DualPipe (the row's dual): two pipelines on the V's virtual stages,
                          * micro-batches 0..M/2-1 through 0..P-1, the others through P..2P-1, each entering at
                          * its first */
    pp_sched_op **ops;   /* ops[r] is rank r's list */
    int *n;              /* n[r] ops on rank r */
} pp_schedule;

/* Builds the canonical order of schedule `name` (its row of the schedule table, lib/schedule/schedules.c) for P ranks, M
 * micro-batches, v chunks. Returns 0, or -1 for an unknown name or a configuration whose answers this build does not
 * hold (answers.h: a handout's unrecorded ones; pp__theory_held tells which). */
int pp__schedule_build(pp_schedule *s, const char *name, int P, int M, int v);
void pp__schedule_free(pp_schedule *s);

/* Costs for a replay: per virtual stage forward and backward cost, and the latency of a message between ranks. */
typedef struct pp_costs {
    double *f, *b;       /* indexed by virtual stage: a forward, a whole backward */
    double latency;
    double *bi;          /* ... and a backward's input half (its weight half is the rest of b); NULL: half of b */
    double *lat;         /* a message's cost from rank a to rank b at [a * P + b] (a topology's links); NULL: latency
                          * between any two ranks */
    double *tp;          /* per virtual stage: the shards' sums inside a forward, and inside a backward's input half
                          * (two per block each, one per half, part of f and bi), for the ideal timeline's events;
                          * NULL: none */
    int *tp_across;      /* ... per virtual stage: 1 when those sums' ring crosses nodes */
} pp_costs;

/* The costs of a run configuration (config.h's one cost rule): F = blocks + edge cost on the first and last
 * virtual stage, B = 2F, each half F; with --tp the shards' sums join F and the input half. */
void pp__costs_from_config(pp_costs *k, const pp_run_config *c);
/* The same for replica d's pipeline in shard 0: each stage priced by its own shards' ring and each message by the
 * link between replica d's two ranks (a placement may put replicas on different links); d = 0 is the above. */
void pp__costs_from_config_replica(pp_costs *k, const pp_run_config *c, int d);
void pp__costs_free(pp_costs *k);

/* Replays s under the virtual clock (an op starts when its rank is free and its inputs are ready; a message
 * between ranks adds the latency). Fills per-rank busy time (array of P, may be NULL) and returns the makespan,
 * or -1 if the lists cannot complete (an op waits on an op that never runs: a deadlock or a missing op). */
double pp__schedule_replay(const pp_schedule *s, const pp_costs *k, double *busy);
/* The same replay, appending each op (F/B with virtual start and end) to traces[r] (P empty traces): the ideal
 * timeline a student's run is drawn beside. Returns the makespan, or -1. */
double pp__schedule_trace(const pp_schedule *s, const pp_costs *k, pp_trace *traces);
/* The bubble 1 - sum(busy)/(P*makespan) of a replay; -1 when it cannot complete. */
double pp__schedule_bubble(const pp_schedule *s, const pp_costs *k);

/* Wall-clock bubble of a run: 1 - sum(compute wall time) / (P * wall span), the span running from the first
 * compute op's start to the last one's end over all ranks. */
double pp__trace_wall_bubble(const pp_trace *traces, int P);
/* Costs measured in a run: the mean wall duration of the F ops and of the B (+W) ops of each virtual stage,
 * latency 0. Replaying the canonical schedule with them is the fair prediction of the wall bubble when stages
 * share a device or differ in speed. */
void pp__costs_from_trace(pp_costs *k, const pp_trace *traces, const pp_run_config *c);

/* Theory for a run: the row's closed formula (answers.h) when latency and edge costs are
 * zero and the row has one for this configuration, else the grid replay of the canonical schedule (every replica's
 * ranks, pp__theory_grid). *formula is set
 * to 1 when the formula was used. */
double pp__theory_bubble(const pp_run_config *c, int *formula);
/* The canonical order's step on c's virtual clock (its shards' sums and its links included, every replica on its
 * own): the grid replay's end of the last op; -1 where there is no canonical order. */
double pp__theory_step(const pp_run_config *c);

/* The canonical order of c's schedule as a finished run executed its backwards, which pp.h leaves free: a
 * backward the run split into its halves (pp_stage_backward_input, then pp_stage_backward_weight) becomes B then
 * W at once, each costing one forward; a backward that rebuilt a checkpointed stash costs one forward more, when
 * c asks for recomputation (when it does not, that cost is the run's mistake, not the theory's). *split and
 * *rebuilt count such backwards. traces NULL: no run, the canonical order as c asks for it (whole backwards,
 * each rebuilding its stash when c recomputes). Returns 0, or -1 for an unknown schedule. */
int pp__schedule_as_run(pp_schedule *s, const pp_run_config *c, const pp_trace *traces, int *split, int *rebuilt);
/* The same for replica d's pipeline, priced by its own ranks' costs, traces being replica d's P ranks' (NULL: no
 * run); pp__schedule_as_run is replica 0's. */
int pp__schedule_as_run_replica(pp_schedule *s, const pp_run_config *c, const pp_trace *traces, int d, int *split,
                                int *rebuilt);
/* The canonical order on every replica of the grid (shard 0's ranks, the ones a run's result describes), each as
 * that replica ran its backwards (traces: the run's D x P ranks, replica d's from d x P on; NULL: as c asks) and
 * each replayed on its own ranks' costs and links: what the run's figures are compared with, whatever the
 * placement. Returns the makespan over the replicas (-1 when a replay cannot complete); *busy gets the busy time
 * summed over the D x P ranks, ideal (D x P empty traces, may be NULL) each rank's ops, and *split and *rebuilt
 * the backwards split and rebuilt over all replicas (each may be NULL). */
double pp__theory_grid(const pp_run_config *c, const pp_trace *traces, double *busy, pp_trace *ideal, int *split,
                       int *rebuilt);
/* The theory a run is graded against: the bubble of pp__schedule_as_run under c's costs (the closed formula when
 * the run split and rebuilt nothing and there is neither latency nor edge cost). note gets what the theory took
 * from the run: "" or "with split backwards", "with recomputation", both. traces NULL: the canonical schedule's
 * own bubble, as pp__schedule_as_run has it. */
double pp__theory_bubble_run(const pp_run_config *c, const pp_trace *traces, int *formula, char *note, size_t len);
/* The most stashes rank r of s holds at once: a stash lives from its F to its last backward op (its W when the
 * backward is split). */
int pp__schedule_peak(const pp_schedule *s, int r);
/* Peak stash bound of the canonical schedule on rank r (in chunk stashes), an answer (answers.h); -1 where not
 * held. */
int pp__theory_peak(const pp_run_config *c, int r);
/* Boundary messages per step of c's schedule and placement, an answer (answers.h); -1 where not held. */
int pp__theory_messages(const pp_run_config *c);
/* 1 when this build holds the canonical answers of c's schedule at c's P, M and v, and, on a topology that no
 * mapping of the grid lab places, its placement (always in the kit; in a handout, for its recorded
 * configurations): every theory above needs them. */
int pp__theory_held(const pp_run_config *c);
/* Why c has no theory here (pp__theory_held is 0), in one line naming the configurations this build holds instead;
 * returns buf. */
const char *pp__theory_unheld(const pp_run_config *c, char *buf, size_t len);

#endif /* PP_THEORY_REPLAY_H */
