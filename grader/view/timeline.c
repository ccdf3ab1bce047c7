/* timeline.c: draws a run's lanes (lanes.h) as a fixed-width text timeline, one row per lane, one column per cell
 * of the grid every cell boundary falls on, optionally compressed to the forward ops alone, and the idle fraction
 * of what it shows. */
#include "timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* One op as shown: its place on the shown clock (the trace's, or the forward-only replay's). */
typedef struct {
    int rank;
    int ev;          /* the op's index in its rank's trace */
    int mb, vstage;
    double s, e;
} tl_op;

/* Times closer than this are one boundary: 2.9999999 and 3 cut no column between them. */
#define TL_EPS 1e-6
/* Cells so narrow next to the step would need millions of columns; cap the picture. */
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
            ops[n++] = (tl_op){r, i, e->mb, e->vstage, e->vstart, e->vend};
        }
        qsort(ops + from, (size_t)(n - from), sizeof *ops, cmp_start);
    }
    if (forward_only) replay_forward(ops, n, P);
    *n_out = n;
    return ops;
}

/* The forward-only picture's traces: each group of P ranks (a replica of a shard) keeps its F ops alone, replayed
 * on their own clock; every other op is dropped, reduces included. n traces in groups of P; free with
 * forward_free. */
static pp_trace *forward_traces(const pp_trace *tr, int P, int n) {
    pp_trace *out = pp__xcalloc((size_t)n + 1, sizeof *out);
    for (int g = 0; P > 0 && g + P <= n; g += P) {
        int nops;
        tl_op *ops = collect(tr + g, P, 1, &nops);
        for (int i = 0; i < nops; i++) {
            pp_event e = tr[g + ops[i].rank].ev[ops[i].ev];
            e.vstart = ops[i].s, e.vend = ops[i].e;
            pp__trace_add(&out[g + ops[i].rank], &e);
        }
        free(ops);
    }
    return out;
}

static void forward_free(pp_trace *t, int n) {
    for (int i = 0; t && i < n; i++) pp__trace_clear(&t[i]);
    free(t);
}

/* The columns a timeline is drawn on: column j runs from t[j] to t[j + 1], t[n] being the step. unit > 0: every
 * column is unit long; 0: columns are cut at whole units and at cells' boundaries, and a ruler row gives their
 * starts. cw: the characters of the widest column (a label, or a ruler time). */
typedef struct tl_cols {
    double *t;
    int n;
    double unit;
    int cw;
} tl_cols;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether every cell boundary of L is a whole multiple of u. */
static int on_grid(const pp_lanes *L, double u) {
    for (int i = 0; i < L->n; i++)
        for (int j = 0; j < L->lane[i].n; j++) {
            const pp_cell *c = &L->lane[i].cells[j];
            if (fabs(c->s - u * round(c->s / u)) > TL_EPS || fabs(c->e - u * round(c->e / u)) > TL_EPS) return 0;
        }
    return 1;
}

/* Every whole unit up to the step and every cell boundary, sorted, those closer than TL_EPS merged: the cut
 * columns' starts, the step last. Returns their count. */
static int cut_times(const pp_lanes *L, double **out) {
    int whole = (int)ceil(L->step - TL_EPS), cap = whole + 2, n = 0;
    for (int i = 0; i < L->n; i++) cap += 2 * L->lane[i].n;
    double *t = pp__xmalloc((size_t)cap * sizeof *t);
    for (int k = 0; k < whole; k++) t[n++] = k;
    t[n++] = L->step;
    for (int i = 0; i < L->n; i++)
        for (int j = 0; j < L->lane[i].n; j++) t[n++] = L->lane[i].cells[j].s, t[n++] = L->lane[i].cells[j].e;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || t[i] - t[m - 1] > TL_EPS) t[m++] = t[i];
    if (m > 1 && L->step - t[m - 1] <= TL_EPS) t[m - 1] = L->step; /* the step, not a boundary just short of it */
    *out = t;
    return m;
}

/* The columns of L. Uniform cells need no ruler, so they are drawn wherever a unit of the ladder holds every
 * boundary and costs at most twice the columns of the cut grid; otherwise the cut grid, which never puts a
 * boundary inside a column and never rounds one away. */
static void cols_build(tl_cols *g, const pp_lanes *L) {
    static const double ladder[] = {1, 0.5, 0.25, 0.2, 0.1, 0.05, 0.04, 0.02, 0.01};
    double *cut;
    int ncut = cut_times(L, &cut) - 1;
    if (ncut > TL_MAX_CELLS) ncut = TL_MAX_CELLS;
    *g = (tl_cols){.cw = 1};
    for (size_t k = 0; k < sizeof ladder / sizeof *ladder; k++) {
        double u = ladder[k], cells = round(L->step / u);
        if (cells > 2.0 * (ncut > 1 ? ncut : 1) || cells > TL_MAX_CELLS || !on_grid(L, u)) continue;
        g->unit = u, g->n = (int)cells;
        g->t = pp__xmalloc(((size_t)g->n + 1) * sizeof *g->t);
        for (int j = 0; j <= g->n; j++) g->t[j] = j * u;
        free(cut);
        return;
    }
    g->t = cut, g->n = ncut > 0 ? ncut : 0;
    g->t[g->n] = L->step;
}

/* The column t starts in: the last whose start is not after t. */
static int col_of(const tl_cols *g, double t) {
    int lo = 0, hi = g->n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (g->t[mid] <= t + TL_EPS) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

static char *text_dup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(pp__xmalloc(n), s, n);
}

/* A cell's text: its label (pp__cell_label), a sum whose ring crossed nodes marked with a '*'. */
static void cell_text(const pp_cell *c, int v, char *buf, size_t len) {
    char lab[40];
    pp__cell_label(c, v, 1, lab, sizeof lab);
    snprintf(buf, len, "%s%s", lab, c->kind == PP_CELL_SUM && c->across == 1 ? "*" : "");
}

/* A ruler time: four decimals at most, no trailing zeros ("12", "1.0946"). */
static void time_text(double t, char *buf, size_t len) {
    snprintf(buf, len, "%.4f", t);
    char *end = buf + strlen(buf) - 1;
    while (*end == '0') *end-- = 0;
    if (*end == '.') *end = 0;
    if (!strcmp(buf, "-0")) snprintf(buf, len, "0");
}

/* cell[j]: the index in l of the cell covering column j, or -1 where the lane is idle; widens g to the labels. */
static int *lane_fill(tl_cols *g, const pp_lane *l, int v) {
    int *cell = pp__xmalloc(((size_t)g->n + 1) * sizeof *cell);
    for (int j = 0; j < g->n; j++) cell[j] = -1;
    for (int i = 0; i < l->n && g->n > 0; i++) {
        const pp_cell *c = &l->cells[i];
        for (int j = col_of(g, c->s); j < g->n && g->t[j] < c->e - TL_EPS; j++) cell[j] = i;
        char lab[48];
        cell_text(c, v, lab, sizeof lab);
        if ((int)strlen(lab) > g->cw) g->cw = (int)strlen(lab);
    }
    return cell;
}

/* The terminal's colours: F green, B blue, I bright blue, W yellow, R orange, S red, AR magenta. */
static const char *cell_ansi(pp_cell_kind k) {
    static const char *const ansi[PP_CELL_KINDS] = {"\x1b[32m", "\x1b[34m", "\x1b[94m", "\x1b[33m",
                                                    "\x1b[38;5;208m", "\x1b[31m", "\x1b[35m"};
    return k < PP_CELL_KINDS ? ansi[k] : "";
}

/* Prints one row's columns [c0, c1), text[j] being column j's (NULL: idle) and kind[j] its kind; padding is held
 * back until something visible follows, so rows carry no trailing spaces. */
static void print_cols(FILE *out, char *const *text, const int *kind, int c0, int c1, int cw, int color) {
    int pending = 0;
    for (int c = c0; c < c1; c++) {
        if (c > c0) pending++;
        const char *lab = text[c] ? text[c] : ".";
        fprintf(out, "%*s", pending, "");
        if (color) fprintf(out, "%s%s\x1b[0m", text[c] ? cell_ansi((pp_cell_kind)kind[c]) : "\x1b[2m", lab);
        else fputs(lab, out);
        pending = cw - (int)strlen(lab);
    }
    fputc('\n', out);
}

/* One row of text per lane (text[lane][col], NULL where idle; kind beside it) and, for a cut grid, the ruler's
 * (text[L->n]). Free with rows_free. */
typedef struct tl_rows {
    char ***text;
    int **kind;
    int n, ncols;
} tl_rows;

static void rows_build(tl_rows *r, tl_cols *g, const pp_lanes *L, int v) {
    r->n = L->n + 1, r->ncols = g->n;
    r->text = pp__xcalloc((size_t)r->n, sizeof *r->text);
    r->kind = pp__xcalloc((size_t)r->n, sizeof *r->kind);
    for (int i = 0; i < r->n; i++) {
        r->text[i] = pp__xcalloc((size_t)g->n + 1, sizeof **r->text);
        r->kind[i] = pp__xcalloc((size_t)g->n + 1, sizeof **r->kind);
    }
    for (int i = 0; i < L->n; i++) {
        int *cell = lane_fill(g, &L->lane[i], v);
        for (int j = 0; j < g->n; j++) {
            if (cell[j] < 0) continue;
            char lab[48];
            const pp_cell *c = &L->lane[i].cells[cell[j]];
            cell_text(c, v, lab, sizeof lab);
            r->text[i][j] = text_dup(lab);
            r->kind[i][j] = c->kind;
        }
        free(cell);
    }
    for (int j = 0; j < g->n && !g->unit; j++) {
        char t[32];
        time_text(g->t[j], t, sizeof t);
        r->text[L->n][j] = text_dup(t);
        if ((int)strlen(t) > g->cw) g->cw = (int)strlen(t);
    }
}

static void rows_free(tl_rows *r) {
    for (int i = 0; i < r->n; i++) {
        for (int j = 0; j < r->ncols; j++) free(r->text[i][j]);
        free(r->text[i]);
        free(r->kind[i]);
    }
    free(r->text);
    free(r->kind);
}

/* The widest lane name: the row prefix is that name, ':' and a space. */
static int name_width(const pp_lanes *L) {
    int w = 2; /* "AR" */
    for (int i = 0; i < L->n; i++)
        if (L->lane[i].kind == PP_LANE_COMPUTE && (int)strlen(L->lane[i].name) > w) w = (int)strlen(L->lane[i].name);
    return w;
}

/* Every lane's row (a reduce lane as "AR" under its rank's rows), in blocks that fit `width` columns, each headed
 * by "t=START" when there are several, and by the ruler row "t: ..." on a cut grid. */
static void print_blocks(FILE *out, const tl_cols *g, const tl_rows *r, const pp_lanes *L, int width, int color) {
    int w = name_width(L), per_block = (width - (w + 2) + 1) / (g->cw + 1);
    if (per_block < 1) per_block = 1;
    int wrap = g->n > per_block;
    for (int c0 = 0; c0 < g->n || c0 == 0; c0 += per_block) {
        int c1 = c0 + per_block < g->n ? c0 + per_block : g->n;
        if (c0 > 0) fputc('\n', out);
        if (wrap) {
            char t[32];
            time_text(g->t[c0], t, sizeof t);
            fprintf(out, "t=%s\n", t);
        }
        if (!g->unit && g->n > 0) {
            fprintf(out, "%*s: ", w, "t");
            print_cols(out, r->text[L->n], r->kind[L->n], c0, c1, g->cw, 0);
        }
        for (int i = 0; i < L->n; i++) {
            char name[80];
            if (L->lane[i].kind == PP_LANE_REDUCE) {
                fprintf(out, "%*s: ", w, "AR");
            } else {
                snprintf(name, sizeof name, "%s:", L->lane[i].name);
                fprintf(out, "%-*s ", w + 1, name);
            }
            print_cols(out, r->text[i], r->kind[i], c0, c1, g->cw, color);
        }
        if (g->n == 0) break;
    }
}

/* The idle fraction over shard 0's compute lanes: 1 - busy / (lanes * span), span the latest end on them. */
static double lanes_idle(const pp_lanes *L) {
    double busy = 0, span = 0;
    int lanes = 0;
    for (int i = 0; i < L->n; i++) {
        const pp_lane *l = &L->lane[i];
        if (l->kind != PP_LANE_COMPUTE || l->shard != 0) continue;
        lanes++;
        for (int j = 0; j < l->n; j++) {
            busy += l->cells[j].e - l->cells[j].s;
            if (l->cells[j].e > span) span = l->cells[j].e;
        }
    }
    return span > 0 && lanes > 0 ? 1.0 - busy / (lanes * span) : 0.0;
}

/* A legend line being written: phrases joined by separators, continued on a line of its own (indented two spaces)
 * before a phrase that would pass `width` (less one, for the separator a break leaves), so no phrase is cut. */
typedef struct tl_note {
    FILE *out;
    int col, width;
} tl_note;

static void note_add(tl_note *n, const char *sep, const char *phrase) {
    int len = (int)strlen(phrase);
    if (n->col > 2 && n->col + (int)strlen(sep) + len >= n->width) {
        fprintf(n->out, "%.*s\n  ", (int)strcspn(sep, " "), sep);
        n->col = 2;
    } else {
        fputs(sep, n->out);
        n->col += (int)strlen(sep);
    }
    fputs(phrase, n->out);
    n->col += len;
}

static void note_end(tl_note *n) {
    fputc('\n', n->out);
    n->col = 0;
}

/* The legend's kinds of cell, as they occur, and how a label reads. */
static void print_legend_kinds(tl_note *n, const pp_lanes *L, int v, int dual) {
    const char *sep = "Legend: ";
    for (int k = 0; k < PP_CELL_KINDS; k++) {
        if (!L->has[k]) continue;
        note_add(n, sep, pp__cell_legend((pp_cell_kind)k));
        sep = ", ";
    }
    note_add(n, sep, ". = idle");
    if (dual) note_add(n, "; ", "a cell reads its letter, micro-batch m and the stage's copy (Fma the first, Fmb the second)");
    else if (v > 1) note_add(n, "; ", "a cell reads its letter, micro-batch m and local chunk c (Fm.c)");
    else note_add(n, "; ", "a cell reads its letter then its micro-batch m");
    if (L->across_sums) note_add(n, "; ", "S..* = sums whose ring crossed nodes");
    if (L->has[PP_CELL_REDUCE]) note_add(n, "; ", "on an AR row, Rc is local chunk c's all-reduce");
    note_end(n);
}

/* The grid's line: what a cell is worth, and the step every lane spans. */
static void print_legend_grid(tl_note *n, const tl_cols *g, double step, int forward_only) {
    char t[32], phrase[160];
    if (g->unit == 1) {
        note_add(n, "", "One cell = 1 time unit (one layer's forward)");
        note_add(n, ": ", "an op of cost k fills k cells");
    } else if (g->unit > 0) {
        snprintf(phrase, sizeof phrase, "One cell = %g time units (1 unit = one layer's forward)", g->unit);
        note_add(n, "", phrase);
        snprintf(phrase, sizeof phrase, "an op of cost k fills k/%g cells", g->unit);
        note_add(n, ": ", phrase);
    } else {
        note_add(n, "", "Cells are cut where an op starts or ends between whole units");
        note_add(n, "; ", "narrow cells are shorter than a unit (one layer's forward)");
        note_add(n, "; ", "row t gives each cell's start time");
    }
    time_text(step, t, sizeof t);
    snprintf(phrase, sizeof phrase, "every lane spans the step, 0 to %s", t);
    note_add(n, "; ", phrase);
    if (forward_only) note_add(n, "; ", "forward ops only, each rank's forwards replayed on their own clock");
    note_end(n);
}

/* Under --tp: the sums' time on shard 0's lanes (L->sums) against their busy time, and the links they took. */
static void print_legend_sums(FILE *out, const pp_lanes *L) {
    double busy = 0, across = 0;
    for (int i = 0; i < L->n; i++) {
        const pp_lane *l = &L->lane[i];
        if (l->kind != PP_LANE_COMPUTE || l->shard != 0) continue;
        for (int j = 0; j < l->n; j++) {
            busy += l->cells[j].e - l->cells[j].s;
            if (l->cells[j].kind == PP_CELL_SUM && l->cells[j].across == 1) across += l->cells[j].e - l->cells[j].s;
        }
    }
    fprintf(out, "Shards' sums on shard 0's lanes: %.4f of their %.4f busy time units, %s\n", L->sums, busy,
            across <= TL_EPS ? "all inside a node" : across < L->sums - TL_EPS ? "some between nodes" : "all between nodes");
}

void pp__timeline_print_lanes(FILE *out, const pp_lanes_src *src, int v, int forward_only, int width, int color) {
    pp_lanes_src shown = *src;
    int D = src->D > 0 ? src->D : 1, R = src->P * D, T = src->shards && src->T > 1 ? src->T : 1;
    pp_trace *fw = NULL, *fws = NULL;
    if (forward_only) {
        shown.traces = fw = forward_traces(src->traces, src->P, R);
        if (T > 1) shown.shards = fws = forward_traces(src->shards, src->P, (T - 1) * R);
    }
    pp_lanes L;
    pp__lanes_build(&L, &shown);
    tl_cols g;
    cols_build(&g, &L);
    tl_rows r;
    rows_build(&r, &g, &L, v);
    print_blocks(out, &g, &r, &L, width, color);
    tl_note note = {out, 0, width};
    print_legend_kinds(&note, &L, v, src->dual);
    print_legend_grid(&note, &g, L.step, forward_only);
    if (L.has[PP_CELL_SUM]) print_legend_sums(out, &L);
    fprintf(out, "Idle fraction: %d%%\n", (int)lround(100.0 * lanes_idle(&L)));
    rows_free(&r);
    free(g.t);
    pp__lanes_free(&L);
    forward_free(fw, R);
    forward_free(fws, (T - 1) * R);
}

void pp__timeline_print(FILE *out, const pp_trace *traces, int P, int v, int forward_only, int width, int color) {
    pp_lanes_src src = {.traces = traces, .P = P, .D = 1};
    pp__timeline_print_lanes(out, &src, v, forward_only, width, color);
}
