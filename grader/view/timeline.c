/* timeline.c: renders the ranks' traces as a fixed-width text timeline (rows = ranks, cells = time units),
 * optionally compressed to the forward ops alone, and the idle fraction of what it shows. */
#include "timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* One op as shown: its place on the shown clock (the trace's, or the forward-only replay's). */
typedef struct {
    int rank;
    pp_op_kind op;
    int mb, chunk, vstage;
    double s, e;
    int split;       /* a B that is only its input half (its W is an op of its own) */
    double tp;       /* the shards' sums inside it (--tp) */
    int tp_across;   /* ... over a ring that crossed nodes */
} tl_op;

/* Cells are found with floor(t / unit + TL_EPS) so that 2.9999999 lands on cell 3, not 2. */
#define TL_EPS 1e-6
/* A trace whose smallest op is tiny next to its span would need millions of cells; cap the picture. */
#define TL_MAX_CELLS 100000


static int cmp_start(const void *a, const void *b) {
    const tl_op *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return 0;
}

/* Lays the F ops (already in ops[0..n), grouped by rank, each rank sorted by start) on a clock of their own:
 * an op starts when its rank is free and its input (same micro-batch, previous virtual stage) has arrived.
 * The comm latency is the smallest gap the trace shows between a cross-rank input's end and its consumer's
 * start: every rank's first forward waits exactly that long, so the estimate is the run's latency. */
static void replay_forward(tl_op *ops, int n, int P) {
    int nmb = 0, nvs = 0;
    for (int i = 0; i < n; i++) {
        if (ops[i].mb + 1 > nmb) nmb = ops[i].mb + 1;
        if (ops[i].vstage + 1 > nvs) nvs = ops[i].vstage + 1;
    }
    if (nmb <= 0 || nvs <= 0) return;
    /* who[mb * nvs + vs]: index of that op in ops, or -1 */
    int *who = pp__xmalloc((size_t)nmb * nvs * sizeof *who);
    for (int i = 0; i < nmb * nvs; i++) who[i] = -1;
    for (int i = 0; i < n; i++)
        if (ops[i].mb >= 0 && ops[i].vstage >= 0) who[ops[i].mb * nvs + ops[i].vstage] = i;

    double latency = INFINITY;
    for (int i = 0; i < n; i++) {
        if (ops[i].mb < 0 || ops[i].vstage <= 0) continue;
        int p = who[ops[i].mb * nvs + ops[i].vstage - 1];
        if (p >= 0 && ops[p].rank != ops[i].rank && ops[i].s - ops[p].e < latency) latency = ops[i].s - ops[p].e;
    }
    if (!isfinite(latency) || latency < 0) latency = 0;

    int *first = pp__xcalloc((size_t)P + 1, sizeof *first); /* rank r's ops are ops[first[r]..first[r+1]) */
    for (int i = 0; i < n; i++) first[ops[i].rank + 1]++;
    for (int r = 0; r < P; r++) first[r + 1] += first[r];
    int *next = pp__xmalloc((size_t)P * sizeof *next);
    double *clock = pp__xcalloc((size_t)P, sizeof *clock);
    char *done = pp__xcalloc((size_t)n + 1, 1);
    double *cost = pp__xmalloc(((size_t)n + 1) * sizeof *cost);
    for (int i = 0; i < n; i++) cost[i] = ops[i].e - ops[i].s;
    for (int r = 0; r < P; r++) next[r] = first[r];

    for (int placed = 0; placed < n;) {
        int progress = 0;
        for (int r = 0; r < P; r++) {
            while (next[r] < first[r + 1]) {
                tl_op *o = &ops[next[r]];
                int p = (o->mb >= 0 && o->vstage > 0) ? who[o->mb * nvs + o->vstage - 1] : -1;
                if (p >= 0 && !done[p]) break;
                double start = clock[r];
                if (p >= 0) {
                    double ready = ops[p].e + (ops[p].rank != r ? latency : 0);
                    if (ready > start) start = ready;
                }
                o->s = start;
                o->e = start + cost[next[r]];
                clock[r] = o->e;
                done[next[r]] = 1;
                next[r]++;
                placed++;
                progress = 1;
            }
        }
        if (!progress) {
            /* Only a trace whose forwards wait on each other in a cycle gets here; show it rather than hang:
             * run the lowest rank's next op as if its input were there. */
            for (int r = 0; r < P; r++)
                if (next[r] < first[r + 1]) {
                    tl_op *o = &ops[next[r]];
                    o->s = clock[r];
                    o->e = o->s + cost[next[r]];
                    clock[r] = o->e;
                    done[next[r]++] = 1;
                    placed++;
                    break;
                }
        }
    }
    free(who);
    free(first);
    free(next);
    free(clock);
    free(done);
    free(cost);
}

/* The ops to show, grouped by rank and sorted by start on each rank; caller frees. */
static tl_op *collect(const pp_trace *traces, int P, int forward_only, int *n_out) {
    int n = 0;
    for (int r = 0; r < P; r++) n += traces[r].n;
    tl_op *ops = pp__xmalloc(((size_t)n + 1) * sizeof *ops);
    n = 0;
    for (int r = 0; r < P; r++) {
        int from = n;
        for (int i = 0; i < traces[r].n; i++) {
            const pp_event *e = &traces[r].ev[i];
            if (!pp__op_is_compute(e->op) || (forward_only && e->op != PP_OP_F)) continue;
            ops[n++] = (tl_op){r,        e->op,   e->mb,      e->chunk,    e->vstage,
                               e->vstart, e->vend, (e->flags & PP_EV_SPLIT) != 0, e->tp_time, e->tp_across};
        }
        qsort(ops + from, (size_t)(n - from), sizeof *ops, cmp_start);
    }
    if (forward_only) replay_forward(ops, n, P);
    *n_out = n;
    return ops;
}

static double busy_of(const tl_op *ops, int n) {
    double busy = 0;
    for (int i = 0; i < n; i++) busy += ops[i].e - ops[i].s;
    return busy;
}

static double idle_of(const tl_op *ops, int n, int P) {
    double busy = 0, span = 0;
    for (int i = 0; i < n; i++) {
        busy += ops[i].e - ops[i].s;
        if (ops[i].e > span) span = ops[i].e;
    }
    return (span > 0 && P > 0) ? 1.0 - busy / (P * span) : 0.0;
}

double pp__timeline_idle(const pp_trace *traces, int P, int forward_only) {
    int n;
    tl_op *ops = collect(traces, P, forward_only, &n);
    double idle = idle_of(ops, n, P);
    free(ops);
    return idle;
}

static int cell_of(double t, double unit) {
    double c = floor(t / unit + TL_EPS);
    if (c < 0) return 0;
    return c > TL_MAX_CELLS ? TL_MAX_CELLS : (int)c;
}

static void label_of(const tl_op *o, int v, char *buf, size_t len) {
    if (o->op == PP_OP_REDUCE) snprintf(buf, len, "R%d", o->chunk);
    else if (v > 1) snprintf(buf, len, "%s%d.%d", pp__op_name(o->op), o->mb, o->chunk);
    else snprintf(buf, len, "%s%d", pp__op_name(o->op), o->mb);
}

static const char *color_of(pp_op_kind op) {
    switch (op) {
    case PP_OP_F: return "\x1b[32m";
    case PP_OP_B: return "\x1b[34m";
    case PP_OP_W: return "\x1b[33m";
    case PP_OP_REDUCE: return "\x1b[35m";
    default: return "";
    }
}

/* Prints one row's cells [c0, c1); padding is held back until something visible follows, so rows carry no
 * trailing spaces. */
static void print_row(FILE *out, const int *cell, const tl_op *ops, int c0, int c1, int cw, int v, int color) {
    int pending = 0;
    for (int c = c0; c < c1; c++) {
        if (c > c0) pending++;
        char lab[48];
        if (cell[c] >= 0) label_of(&ops[cell[c]], v, lab, sizeof lab);
        else snprintf(lab, sizeof lab, ".");
        fprintf(out, "%*s", pending, "");
        pending = 0;
        if (color) fprintf(out, "%s%s\x1b[0m", cell[c] >= 0 ? color_of(ops[cell[c]].op) : "\x1b[2m", lab);
        else fputs(lab, out);
        pending = cw - (int)strlen(lab);
    }
    fputc('\n', out);
}

/* The grid a timeline is drawn on: one cell is `unit` of virtual time, ncells of them, each cw characters wide. */
typedef struct tl_grid {
    double unit;
    int ncells, cw;
} tl_grid;

/* The shortest op's duration (one cell), which kinds of op occur (has), and how many backwards are input halves
 * and how many whole. */
static double grid_unit(const tl_op *ops, int n, int *has, int *halves, int *wholes) {
    double unit = INFINITY;
    for (int i = 0; i < n; i++) {
        double d = ops[i].e - ops[i].s;
        if (d > 1e-12 && d < unit) unit = d;
        has[ops[i].op] = 1;
        *halves += ops[i].op == PP_OP_B && ops[i].split;
        *wholes += ops[i].op == PP_OP_B && !ops[i].split;
    }
    return isfinite(unit) ? unit : 1;
}

/* Widens g to hold the ops: their last cell and their longest label. */
static void grid_fit_ops(tl_grid *g, const tl_op *ops, int n, int v) {
    for (int i = 0; i < n; i++) {
        int end = cell_of(ops[i].e, g->unit), beg = cell_of(ops[i].s, g->unit);
        if (end <= beg) end = beg + 1;
        if (end > g->ncells) g->ncells = end;
        char lab[48];
        label_of(&ops[i], v, lab, sizeof lab);
        if ((int)strlen(lab) > g->cw) g->cw = (int)strlen(lab);
    }
}

/* The gradient reduces (lab 07), each rank's drawn on a lane of its own under its compute row (none when
 * forward_only): into *nr of them, g widened to hold them. */
static tl_op *collect_reduces(const pp_trace *traces, int P, int forward_only, tl_grid *g, int *nr) {
    int count = 0;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < traces[r].n; i++) count += traces[r].ev[i].op == PP_OP_REDUCE;
    tl_op *rops = pp__xmalloc(((size_t)count + 1) * sizeof *rops);
    *nr = 0;
    for (int r = 0; r < P && !forward_only; r++)
        for (int i = 0; i < traces[r].n; i++) {
            const pp_event *e = &traces[r].ev[i];
            if (e->op != PP_OP_REDUCE) continue;
            rops[(*nr)++] = (tl_op){r, e->op, -1, e->chunk, e->vstage, e->vstart, e->vend, 0, 0, 0};
            int end = cell_of(e->vend, g->unit), beg = cell_of(e->vstart, g->unit);
            if (end <= beg) end = beg + 1;
            if (end > g->ncells) g->ncells = end;
            if (g->cw < 2 + (e->chunk > 9)) g->cw = 2 + (e->chunk > 9);
        }
    return rops;
}

/* cells[r * ncells + c]: the index of the op of rank r in cell c, or -1 when the rank is idle there; lane (NULL:
 * none) marks each rank that has an op. */
static int *fill_cells(const tl_op *ops, int n, int P, const tl_grid *g, int *lane) {
    int *cells = pp__xmalloc(((size_t)P * g->ncells + 1) * sizeof *cells);
    for (size_t i = 0; i < (size_t)P * g->ncells; i++) cells[i] = -1;
    for (int i = 0; i < n; i++) {
        int beg = cell_of(ops[i].s, g->unit), end = cell_of(ops[i].e, g->unit);
        if (end <= beg) end = beg + 1;
        if (lane) lane[ops[i].rank] = 1;
        for (int c = beg; c < end && c < g->ncells; c++) cells[(size_t)ops[i].rank * g->ncells + c] = i;
    }
    return cells;
}

/* Every rank's row (and its reduce lane, where it has one), wrapped into blocks that fit `width` columns. */
static void print_rows(FILE *out, const tl_grid *g, int P, const int *cells, const tl_op *ops, const int *rcells,
                       const tl_op *rops, const int *lane, int v, int width, int color) {
    int digits = 1;
    for (int x = P - 1; x >= 10; x /= 10) digits++;
    int prefix = 4 + digits + 2; /* "GPU " + number + ": " */
    int per_block = (width - prefix + 1) / (g->cw + 1);
    if (per_block < 1) per_block = 1;
    int ncells = g->ncells, wrap = ncells > per_block;
    for (int c0 = 0; c0 < ncells || c0 == 0; c0 += per_block) {
        int c1 = c0 + per_block < ncells ? c0 + per_block : ncells;
        if (c0 > 0) fputc('\n', out);
        if (wrap) fprintf(out, "t=%g\n", c0 * g->unit);
        for (int r = 0; r < P; r++) {
            fprintf(out, "GPU %*d: ", digits, r);
            print_row(out, cells + (size_t)r * ncells, ops, c0, c1, g->cw, v, color);
            if (lane[r]) {
                fprintf(out, "%*s: ", 4 + digits, "AR");
                print_row(out, rcells + (size_t)r * ncells, rops, c0, c1, g->cw, v, color);
            }
        }
        if (ncells == 0) break;
    }
}

/* The legend's kinds of op, as they occur; returns the separator the legend goes on with. */
static const char *print_legend_ops(FILE *out, const int *has, int halves, int wholes, int v) {
    fprintf(out, "Legend: ");
    const char *sep = "";
    static const char *const what[] = {"forward", "backward", "weight-gradient half of the backward"};
    for (int k = PP_OP_F; k <= PP_OP_W; k++) {
        if (!has[k]) continue;
        /* a B is the input half where its W is an op of its own, the whole backward where it is not */
        const char *name = k == PP_OP_B && halves && !wholes ? "input-gradient half of the backward" : what[k];
        fprintf(out, "%s%s%s = %s of micro-batch m%s", sep, pp__op_name((pp_op_kind)k), v > 1 ? "m.c" : "m", name,
                v > 1 ? " on local chunk c" : "");
        if (k == PP_OP_B && halves && wholes)
            fprintf(out, " (its input-gradient half where a W of it follows, else the whole backward)");
        sep = ", ";
    }
    return sep;
}

/* The rest of the legend (the cell's unit, the shards' sums, the reduce lane) and the idle fraction. */
static void print_notes(FILE *out, const tl_op *ops, int n, int P, double unit, const char *sep, int forward_only,
                        int nr) {
    /* a comm latency or edge cost can put op boundaries between cells; say so rather than draw false detail */
    int off_grid = 0;
    for (int i = 0; i < n && !off_grid; i++) {
        double a = ops[i].s / unit, b = ops[i].e / unit;
        off_grid = fabs(a - floor(a + 0.5)) > TL_EPS || fabs(b - floor(b + 0.5)) > TL_EPS;
    }
    /* the unit is the one the warm-up, the figures and the costs (--comm-latency, --edge-cost) all use */
    if (unit == 1)
        fprintf(out, "%s. = idle; one cell = 1 time unit (one layer's forward): an op of cost k fills k cells", sep);
    else
        fprintf(out, "%s. = idle; one cell = %g time units (1 unit = one layer's forward): an op of cost k fills k/%g "
                "cells", sep, unit, unit);
    fprintf(out, "%s%s\n", off_grid ? " (times between cells rounded down)" : "",
            forward_only ? "; forward ops only, each rank's forwards replayed on their own clock" : "");
    double tp = 0, tp_across = 0;
    for (int i = 0; i < n; i++) tp += ops[i].tp, tp_across += ops[i].tp_across ? ops[i].tp : 0;
    if (tp > 0)
        fprintf(out, "Each F, and each B's input half, holds the shards' sums of its blocks (--tp): %.1f of the %.1f "
                "busy units, %s (--trace gives each op's share and link)\n", tp, busy_of(ops, n),
                tp_across == 0 ? "all inside a node" : tp_across < tp ? "some of them between nodes" : "all between nodes");
    if (nr)
        fprintf(out, "AR = the rank's reduce lane: Rc = the gradient all-reduce of local chunk c over its data-parallel "
                "group, from its start to its end\n");
    fprintf(out, "Idle fraction: %d%%\n", (int)lround(100.0 * idle_of(ops, n, P)));
}

void pp__timeline_print(FILE *out, const pp_trace *traces, int P, int v, int forward_only, int width, int color) {
    int n, nr, has[PP_OP_COUNT] = {0}, halves = 0, wholes = 0;
    tl_op *ops = collect(traces, P, forward_only, &n);
    tl_grid g = {grid_unit(ops, n, has, &halves, &wholes), 0, 1};
    grid_fit_ops(&g, ops, n, v);
    tl_op *rops = collect_reduces(traces, P, forward_only, &g, &nr);
    if (g.ncells > TL_MAX_CELLS) g.ncells = TL_MAX_CELLS;
    int *lane = pp__xcalloc((size_t)P + 1, sizeof *lane);
    int *rcells = fill_cells(rops, nr, P, &g, lane), *cells = fill_cells(ops, n, P, &g, NULL);
    print_rows(out, &g, P, cells, ops, rcells, rops, lane, v, width, color);
    print_notes(out, ops, n, P, g.unit, print_legend_ops(out, has, halves, wholes, v), forward_only, nr);
    free(cells);
    free(rcells);
    free(rops);
    free(lane);
    free(ops);
}

void pp__timeline_print_lanes(FILE *out, const pp_lanes_src *src, int v, int forward_only, int width, int color) {
    pp__timeline_print(out, src->traces, src->P * src->D, v, forward_only, width, color);
}
