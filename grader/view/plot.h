/* plot.h: figures as gnuplot pairs: a .dat with the numbers (columns documented in its first lines) and a .gp
 * script that renders it headless into .png and .svg, so a reader can re-run or tweak `gnuplot NAME.gp` in the
 * figure's folder. Gantt charts of traces, x/y curves (measured points on theory lines), clustered bars. */
#ifndef PP_PLOT_H
#define PP_PLOT_H

#include "config.h"
#include "lanes.h"
#include "trace.h"

/* How a series is drawn: measured data as points, theory as lines. */
enum { PP_PLOT_POINTS = 0, PP_PLOT_LINES = 1, PP_PLOT_LINESPOINTS = 2 };

/* One curve: n points (x[i], y[i]) named name in the key. The arrays stay the caller's. */
typedef struct {
    const char *name;
    const double *x, *y;
    int n;
    int style; /* PP_PLOT_POINTS, PP_PLOT_LINES or PP_PLOT_LINESPOINTS */
    int color; /* 0: a colour of its own; k > 0: colour k, shared to pair a theory line with its points */
} pp_plot_series;

/* 1 when a gnuplot executable is on PATH, else 0. */
int pp__plot_available(void);

/* Every function below writes out_prefix.dat and out_prefix.gp, then runs gnuplot in out_prefix's folder to
 * make out_prefix.png (pngcairo when gnuplot has it, else png) and out_prefix.svg. Returns 0, or -1 after one
 * line on stderr saying what failed (a file that cannot be written, gnuplot missing or failing). The .dat and
 * .gp are written even when gnuplot is missing. Strings and arrays stay the caller's. */

/* The Gantt chart of a run's lanes (lanes.h): every lane a row named as the lane (with its node when src->node is
 * set; a dashed line parts lanes on different nodes), every cell a box from its start to its end exactly, coloured by
 * kind (pp__cell_color; sums that crossed nodes hatched), labelled (pp__cell_label) where the label fits, with a
 * legend entry (pp__cell_legend) per kind that occurs. The .dat lists the lanes in its header and gives each cell's
 * lane (column 1) and kind letter (column 7). title may be NULL. src stays the caller's. */
int pp__plot_gantt_lanes(const pp_lanes_src *src, const char *title, const char *out_prefix);
/* Two such panels on one time axis, the student's run above the reference's, each as tall as its lanes need: for
 * grading reports (index 0 and 1 of the .dat). */
int pp__plot_gantt_pair_lanes(const pp_lanes_src *student, const pp_lanes_src *reference, const char *out_prefix);

/* The same charts for traces alone (no shards): P ranks of one pipeline, or D replicas of P ranks (trace d*P + p is
 * rank p of replica d) with a reduce lane under every rank once any rank reduced. node: as pp__plot_nodes gives it,
 * or NULL. */
int pp__plot_gantt(const pp_trace *traces, int P, const char *title, const char *out_prefix);
int pp__plot_gantt_replicas(const pp_trace *traces, int P, int D, const char *title, const char *out_prefix,
                            const int *node);
int pp__plot_gantt_pair(const pp_trace *student, const pp_trace *reference, int P, const char *out_prefix,
                        const int *node);
/* Under a topology (--node-size), the node of each of shard 0's first `ranks` ranks (trace d*P + p), for the
 * charts' node argument. NULL without a topology; free it. */
int *pp__plot_nodes(const pp_run_config *c, int ranks);

/* x/y plot of nseries curves (a series with n == 0 is skipped). title, xlabel, ylabel may be NULL. */
int pp__plot_xy(const char *out_prefix, const char *title, const char *xlabel, const char *ylabel,
                const pp_plot_series *series, int nseries);

/* Clustered bars: ngroups clusters on the x axis named groups[g] (e.g. "GPU 0"), one bar per series named
 * names[s] (a schedule's name, say) of height values[s * ngroups + g]. title and ylabel may be NULL. */
int pp__plot_bars(const char *out_prefix, const char *title, const char *ylabel, const char *const *groups,
                  int ngroups, const char *const *names, const double *values, int nseries);

#endif /* PP_PLOT_H */
