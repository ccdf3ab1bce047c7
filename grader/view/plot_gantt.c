/* plot_gantt.c: Gantt charts of a run's lanes (lanes.h) as gnuplot pairs: a row per lane, a box per cell exactly as
 * wide as the cell, coloured by its kind as every view colours it, and a legend entry per kind that occurs. */
#include "plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "plot_gp.h"

#define GANTT_W 1200
/* Pixels of a panel's plot area across: what decides whether a cell's label fits inside its box. */
#define GANTT_PLOT_W 1000
/* gnuplot linetype of cell kind k: GANTT_LT + k. */
#define GANTT_LT 101
/* Sums whose ring crossed nodes: their red hatched in this darker red, so the two links read apart in print too. */
#define ACROSS_HATCH "#8b1a1a"
#define LEGEND_COLS 3

/* Sums by link among every lane of L: *inside (stayed in a node) and *across (crossed one). */
static void count_sums(const pp_lanes *L, int *inside, int *across) {
    *inside = *across = 0;
    for (int i = 0; i < L->n; i++)
        for (int j = 0; j < L->lane[i].n; j++) {
            const pp_cell *c = &L->lane[i].cells[j];
            if (c->kind == PP_CELL_SUM) ++*(c->across == 1 ? across : inside);
        }
}

/* ---- the .dat --------------------------------------------------------------------------------------------- */

static void dat_header(FILE *f, const char *what) {
    fprintf(f, "# %s: one row per cell of a lane (lanes.h), one block per panel (gnuplot index 0, 1, ...)\n"
               "# columns: 1 lane (its row, 0 on top), 2 x = midpoint (virtual time), 3 y = row, 4 x half-width,\n"
               "#          5 y half-height, 6 kind (0 F, 1 B, 2 I, 3 W, 4 R, 5 S, 6 AR), 7 kind letter, 8 label,\n"
               "#          9 virtual start, 10 virtual end (the trace's own: a box spans 9..10), 11 world rank,\n"
               "#          12 micro-batch (-1 for a reduce), 13 local chunk, 14 link of a sum (1 between nodes,\n"
               "#          0 inside one, -1 for the other kinds)\n"
               "# (a row with lane -1 lies outside the plot and only keeps the block non-empty)\n", what);
}

/* The lanes of one panel, as comments: what each row is. */
static void dat_lanes(FILE *f, const pp_lanes *L, int idx) {
    fprintf(f, "# index %d: %d lanes\n", idx, L->n);
    for (int i = 0; i < L->n; i++) {
        const pp_lane *l = &L->lane[i];
        fprintf(f, "#   lane %d: %s (%s, world rank %d", i, l->name, l->kind == PP_LANE_REDUCE ? "reduces" : "compute",
                l->rank);
        if (l->node >= 0) fprintf(f, ", node %d", l->node);
        fprintf(f, ")\n");
    }
}

/* Prints v as the shortest text that reads back as v exactly: a box's edges are the cell's own times. */
static void dat_num(FILE *f, double v) {
    char buf[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    fprintf(f, "%s ", buf);
}

static void dat_block(FILE *f, const pp_lanes *L) {
    for (int i = 0; i < L->n; i++) {
        const pp_lane *l = &L->lane[i];
        for (int j = 0; j < l->n; j++) {
            const pp_cell *c = &l->cells[j];
            char lab[32];
            /* a reduce is named by its chunk alone: its lane says what it is, and "R" is a rebuilt forward */
            pp__cell_label(c, L->v, c->kind != PP_CELL_REDUCE, lab, sizeof lab);
            fprintf(f, "%d ", i);
            dat_num(f, 0.5 * (c->s + c->e));
            fprintf(f, "%d ", i);
            dat_num(f, 0.5 * (c->e - c->s));
            fprintf(f, "%s %d %s \"%s\" ", l->kind == PP_LANE_REDUCE ? "0.25" : "0.4", (int)c->kind,
                    pp__cell_letter(c->kind), lab);
            dat_num(f, c->s);
            dat_num(f, c->e);
            fprintf(f, "%d %d %d %d\n", l->rank, c->mb, c->chunk,
                    c->kind == PP_CELL_SUM ? c->across : -1);
        }
    }
    /* gnuplot fails on an empty index: a row far outside the plot keeps a run without cells drawable */
    fprintf(f, "-1 -1000 -1000 0 0 0 F \"\" -1000 -1000 -1 -1 0 -1\n");
}

/* ---- the script ------------------------------------------------------------------------------------------- */

static void script_style(FILE *b) {
    for (int k = 0; k < PP_CELL_KINDS; k++)
        fprintf(b, "set linetype %d lc rgb \"%s\"\n", GANTT_LT + k, pp__cell_color((pp_cell_kind)k));
    fprintf(b, "set style fill solid 1.0 border lc rgb \"#333333\"\n"
               /* the label up against the tics and a line of room above the key: apart, they never overlap */
               "set xlabel \"virtual time (units of one layer's forward)\" offset 0,0.5\n"
               "set grid xtics\nset key outside bottom center horizontal maxcols %d samplen 2 height 1\nset mxtics\n",
            LEGEND_COLS);
}

/* Legend entries of the kinds a panel holds: the sums once per link that occurs. Returns how many. */
static int legend_entries(FILE *b, const pp_lanes *L) {
    int inside, across, n = 0;
    count_sums(L, &inside, &across);
    for (int k = 0; k < PP_CELL_KINDS; k++) {
        if (!L->has[k]) continue;
        if (k != PP_CELL_SUM) {
            if (b) fprintf(b, ", \\\n     keyentry with boxes lc %d title \"%s\"", GANTT_LT + k,
                           pp__cell_legend((pp_cell_kind)k));
            n++;
            continue;
        }
        if (inside && b)
            fprintf(b, ", \\\n     keyentry with boxes lc %d title \"%s, inside a node\"", GANTT_LT + k,
                    pp__cell_legend(PP_CELL_SUM));
        if (across && b)
            fprintf(b, ", \\\n     keyentry with boxes fs transparent pattern 4 border lc rgb \"%s\" lc rgb \"%s\" "
                       "title \"%s, between nodes (hatched)\"", ACROSS_HATCH, ACROSS_HATCH, pp__cell_legend(PP_CELL_SUM));
        n += (inside > 0) + (across > 0);
    }
    return n;
}

/* Rows of the legend under a panel: room for two entries a row, as gnuplot sets long ones out. */
static int legend_rows(const pp_lanes *L) { return (legend_entries(NULL, L) + 1) / 2; }

/* The row name of lane i: the lane's, with its node under a topology. */
static void row_name(const pp_lanes *L, int i, char *buf, size_t len) {
    if (L->lane[i].node >= 0) snprintf(buf, len, "%s, node %d", L->lane[i].name, L->lane[i].node);
    else snprintf(buf, len, "%s", L->lane[i].name);
}

/* The longest row name of L, in characters. */
static int names_width(const pp_lanes *L) {
    int w = 0;
    for (int i = 0; i < L->n; i++) {
        char name[96];
        row_name(L, i, name, sizeof name);
        if ((int)strlen(name) > w) w = (int)strlen(name);
    }
    return w;
}

/* One panel reading index idx of dat: a row per lane named as the lane (and its node), a dashed line between lanes on
 * different nodes, every cell a box from its start to its end, its label where the box is wide enough. */
static void script_panel(FILE *b, const char *dat, int idx, const pp_lanes *L, double span, const char *title) {
    if (title) {
        fprintf(b, "set title ");
        pp__plot_gp_str(b, title);
        fputc('\n', b);
    } else {
        fprintf(b, "unset title\n");
    }
    fprintf(b, "set xrange [0:%.17g]\nset yrange [%g:-0.5]\nset ytics (", span, L->n - 0.5);
    for (int i = 0; i < L->n; i++) {
        char name[96];
        row_name(L, i, name, sizeof name);
        fprintf(b, "%s", i ? ", " : "");
        pp__plot_gp_str(b, name);
        fprintf(b, " %d", i);
    }
    fprintf(b, ")\nunset arrow\n");
    for (int i = 1; i < L->n; i++)
        if (L->lane[i].node >= 0 && L->lane[i - 1].node >= 0 && L->lane[i].node != L->lane[i - 1].node)
            fprintf(b, "set arrow from 0,%g to %.17g,%g nohead dt 2 lc rgb \"#555555\" front\n", i - 0.5, span, i - 0.5);
        /* under --tp a stage's shards read as one group: a thin line between stages */
        else if (L->T > 1 && (L->lane[i].pipe != L->lane[i - 1].pipe || L->lane[i].replica != L->lane[i - 1].replica))
            fprintf(b, "set arrow from 0,%g to %.17g,%g nohead lw 0.5 lc rgb \"#999999\" back\n", i - 0.5, span, i - 0.5);
    /* boxxyerror's six-column form takes the box's edges themselves: columns 9 and 10, the cell's own times */
    fprintf(b, "plot '%s' index %d using 2:3:9:10:($3-$5):($3+$5):($6+%d) with boxxyerror lc variable notitle", dat,
            idx, GANTT_LT);
    if (L->across_sums)
        fprintf(b, ", \\\n     '' index %d using 2:($14 == 1 ? $3 : 1/0):9:10:($3-$5):($3+$5) with boxxyerror "
                   "fs transparent pattern 4 border lc rgb \"%s\" lc rgb \"%s\" notitle", idx, ACROSS_HATCH, ACROSS_HATCH);
    /* a label fits when its box is wider than its text: about 6 px a character at 8 pt, and a margin */
    fprintf(b, ", \\\n     '' index %d using 2:3:(2 * $4 * %.17g >= 6 * strlen(strcol(8)) + 4 ? strcol(8) : \"\") "
               "with labels font \",8\" notitle", idx, GANTT_PLOT_W / span);
    legend_entries(b, L);
    fprintf(b, "\n");
}

/* Pixels a panel of L needs: its rows, its title and axis, its legend. */
static int panel_height(const pp_lanes *L) { return 110 + (L->n > 8 ? 32 : 45) * (L->n ? L->n : 1) + 18 * legend_rows(L); }

/* The script's body (a memory stream the caller frees) after the style, and the name of the data file as the script
 * in out_prefix's folder sees it. */
static FILE *script_open(const char *out_prefix, char **body, size_t *len, char *dat, size_t datlen) {
    char *dir, *base;
    pp__plot_split_prefix(out_prefix, &dir, &base);
    snprintf(dat, datlen, "%s.dat", base);
    free(dir);
    free(base);
    FILE *b = open_memstream(body, len);
    script_style(b);
    return b;
}

static double span_of(const pp_lanes *L) { return L->step > 0 ? L->step : 1; }

int pp__plot_gantt_lanes(const pp_lanes_src *src, const char *title, const char *out_prefix) {
    pp_lanes L;
    pp__lanes_build(&L, src);
    int rc = -1;
    FILE *f = pp__plot_open_out(out_prefix, ".dat");
    if (!f) goto out;
    dat_header(f, "Gantt chart of one step");
    dat_lanes(f, &L, 0);
    dat_block(f, &L);
    if (pp__plot_close_out(f, out_prefix, ".dat")) goto out;

    char *body = NULL, dat[4096];
    size_t len = 0;
    FILE *b = script_open(out_prefix, &body, &len, dat, sizeof dat);
    script_panel(b, dat, 0, &L, span_of(&L), title);
    fclose(b);
    rc = pp__plot_render(out_prefix, body, GANTT_W, panel_height(&L));
    free(body);
out:
    pp__lanes_free(&L);
    return rc;
}

int pp__plot_gantt_pair_lanes(const pp_lanes_src *student, const pp_lanes_src *reference, const char *out_prefix) {
    pp_lanes S, R;
    pp__lanes_build(&S, student);
    pp__lanes_build(&R, reference);
    double span = fmax(span_of(&S), span_of(&R));
    int rc = -1;
    FILE *f = pp__plot_open_out(out_prefix, ".dat");
    if (!f) goto out;
    dat_header(f, "your run (index 0) above the reference schedule (index 1)");
    dat_lanes(f, &S, 0);
    dat_lanes(f, &R, 1);
    fprintf(f, "# index 0: your run\n");
    dat_block(f, &S);
    fprintf(f, "\n\n# index 1: reference\n");
    dat_block(f, &R);
    if (pp__plot_close_out(f, out_prefix, ".dat")) goto out;

    /* each panel as tall as its lanes need: a run under --tp has more rows than its canonical replay */
    int hs = panel_height(&S), hr = panel_height(&R);
    char *body = NULL, dat[4096];
    size_t len = 0;
    FILE *b = script_open(out_prefix, &body, &len, dat, sizeof dat);
    /* one left margin for both, wide enough for either's row names, so that their time axes line up */
    fprintf(b, "set lmargin %d\n", (int)fmax(names_width(&S), names_width(&R)) + 3);
    fprintf(b, "set multiplot\nset size 1,%.6f\nset origin 0,%.6f\n", (double)hs / (hs + hr), (double)hr / (hs + hr));
    script_panel(b, dat, 0, &S, span, "your run");
    fprintf(b, "set size 1,%.6f\nset origin 0,0\n", (double)hr / (hs + hr));
    script_panel(b, dat, 1, &R, span, "reference schedule");
    fprintf(b, "unset multiplot\n");
    fclose(b);
    rc = pp__plot_render(out_prefix, body, GANTT_W, hs + hr);
    free(body);
out:
    pp__lanes_free(&S);
    pp__lanes_free(&R);
    return rc;
}

/* ---- the charts of traces alone: lanes without shards ----------------------------------------------------- */

int pp__plot_gantt(const pp_trace *traces, int P, const char *title, const char *out_prefix) {
    return pp__plot_gantt_replicas(traces, P, 1, title, out_prefix, NULL);
}

int pp__plot_gantt_replicas(const pp_trace *traces, int P, int D, const char *title, const char *out_prefix,
                            const int *node) {
    pp_lanes_src src = {.traces = traces, .P = P, .D = D, .node = node};
    return pp__plot_gantt_lanes(&src, title, out_prefix);
}

int pp__plot_gantt_pair(const pp_trace *student, const pp_trace *reference, int P, const char *out_prefix,
                        const int *node) {
    pp_lanes_src s = {.traces = student, .P = P, .D = 1, .node = node}, r = s;
    r.traces = reference;
    return pp__plot_gantt_pair_lanes(&s, &r, out_prefix);
}

int *pp__plot_nodes(const pp_run_config *c, int ranks) {
    if (c->node_size <= 0) return NULL;
    int *node = pp__xcalloc((size_t)ranks + 1, sizeof *node);
    for (int i = 0; i < ranks; i++) node[i] = pp__config_node(c, pp__config_rank_of(c, 0, i / c->P, i % c->P));
    return node;
}
