/* lanes.h: what every view of a run draws (the text timeline, the gnuplot Gantt chart, the Perfetto trace), built
 * once from its traces so that the three agree: lanes of cells on the virtual clock. A pipeline rank has a compute
 * lane per shard (one without --tp), each shard's sums drawn as cells of their own inside the ops that made them,
 * and a reduce lane under them once any reduce took time. Every cell's start and end are the trace's, exactly: a
 * view may scale them, never round them. */
#ifndef PP_LANES_H
#define PP_LANES_H

#include "config.h"
#include "runtime.h"
#include "trace.h"

/* What a cell is. B is a whole backward, I the input half of a split one (its W is a cell of its own), RECOMPUTE the
 * forward a backward ran again first to rebuild a dropped stash, SUM the shards' sums of one pass (--tp), REDUCE a
 * chunk's gradient all-reduce on its rank's reduce lane. */
typedef enum {
    PP_CELL_F = 0,
    PP_CELL_B,
    PP_CELL_I,
    PP_CELL_W,
    PP_CELL_RECOMPUTE,
    PP_CELL_SUM,
    PP_CELL_REDUCE,
    PP_CELL_KINDS
} pp_cell_kind;

typedef struct pp_cell {
    pp_cell_kind kind;
    int mb;         /* micro-batch, -1 for a reduce */
    int chunk;      /* the rank's local chunk */
    int vstage;     /* virtual stage */
    int copy;       /* DualPipe: 0 for the first copy of a stage, 1 for the second; -1 elsewhere */
    int across;     /* a SUM or REDUCE whose ring crossed nodes (1), stayed inside one (0); -1 for compute */
    int event;      /* the index of the op's event in its rank's trace */
    double s, e;    /* virtual start and end, as the trace has them */
} pp_cell;

typedef enum { PP_LANE_COMPUTE = 0, PP_LANE_REDUCE } pp_lane_kind;

typedef struct pp_lane {
    pp_lane_kind kind;
    int rank;       /* the world rank whose trace the lane draws, (shard*D + replica)*P + pipe */
    int pipe, replica, shard;
    int node;       /* its node under a topology, else -1 */
    char name[64];  /* "GPU 1", "replica 1, GPU 0", "GPU 0, shard 1 (rank 4)", "reduce" */
    pp_cell *cells; /* in start order */
    int n;
} pp_lane;

/* Where the lanes come from: the traces of the P*D ranks of shard 0 (trace d*P + p: rank p of replica d), and under
 * --tp those of shards 1..T-1 (shards[(t-1)*P*D + d*P + p]; NULL draws shard 0 alone). node[g] is world rank g's node
 * (NULL: no topology); dual says that chunk 1 holds a stage's second copy (DualPipe). Arrays stay the caller's. */
typedef struct pp_lanes_src {
    const pp_trace *traces;
    int P, D;
    const pp_trace *shards;
    int T;
    const int *node;
    int dual;
} pp_lanes_src;

typedef struct pp_lanes {
    pp_lane *lane;
    int n;
    int P, D, T, v;
    double step;                 /* the latest end of any cell: the run's virtual step */
    double sums;                 /* the SUM cells' total time on shard 0's lanes: the run's reported sum time */
    int has[PP_CELL_KINDS];      /* which kinds of cell occur */
    int across_sums;             /* SUM cells whose ring crossed nodes, on every lane */
} pp_lanes;

/* Builds L from src: for each replica d and pipeline rank p, the compute lane of each shard (t = 0 first) then, when
 * any reduce of the run took time (a free one draws nothing), that rank's reduce lane. An op becomes one cell, or,
 * under --tp, its compute then its sums (an op's sums are drawn where its pass ends: a forward's after its forward,
 * a backward's after its input-gradient work), a rebuilt stash's forward (with its own sums) first. No cell is
 * rounded; empty ones are left out. Free L with pp__lanes_free. */
void pp__lanes_build(pp_lanes *L, const pp_lanes_src *src);

/* The source of a run's lanes: its result and configuration (both stay the caller's; node is allocated: free it with
 * pp__lanes_src_free). */
void pp__lanes_src_of(pp_lanes_src *src, const pp_run_result *res, const pp_run_config *c);
void pp__lanes_src_free(pp_lanes_src *src);

void pp__lanes_free(pp_lanes *L);

/* The short name a view prints on a cell of kind k ("F", "B", "I", "W", "R" for a recomputed forward, "S" for
 * sums, "AR" for a reduce), its legend entry, and its colour ("#rrggbb"), the same in every view and the docs. */
const char *pp__cell_letter(pp_cell_kind k);
const char *pp__cell_legend(pp_cell_kind k);
const char *pp__cell_color(pp_cell_kind k);

/* The label of a cell inside a view: its letter (with_letter) then its micro-batch, its local chunk when v > 1
 * ("3.1"), its copy under DualPipe ("3b"), or the reduce's chunk ("c1"); a SUM is labelled as its op is. Returns buf. */
const char *pp__cell_label(const pp_cell *c, int v, int with_letter, char *buf, size_t len);

#endif /* PP_LANES_H */
