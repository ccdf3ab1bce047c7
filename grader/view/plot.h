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

/* Gantt chart of one step: rows = ranks (rank 0 on top), x = virtual time, one box per compute op coloured by
 * kind (F, B, W) and labelled with its micro-batch ("3"; "3.1" = micro-batch 3 chunk 1 when a trace holds more
 * than one chunk). title may be NULL. */
int pp__plot_gantt(const pp_trace *traces, int P, const char *title, const char *out_prefix);
/* The same for a run of D replicas (lab 07): a row for every rank of every replica (trace d*P + p is rank p of
 * replica d, labelled "replica d, GPU p"), each with a lane under it for its gradient reduces (labelled "c2" for
 * chunk 2) once any rank reduced, and the time axis to the last op's end, a reduce's included. */
int pp__plot_gantt_replicas(const pp_trace *traces, int P, int D, const char *title, const char *out_prefix,
                            const int *node);
/* The Gantt chart of a run's lanes (lanes.h): every lane a row (a shard's under its stage, its sums as boxes of
 * their own; a reduce lane), every kind of cell in its colour with a legend entry, each box exactly as wide as its
 * cell. src stays the caller's. */
int pp__plot_gantt_lanes(const pp_lanes_src *src, const char *title, const char *out_prefix);
/* Under a topology (--node-size), the node of each of shard 0's first `ranks` ranks (trace d*P + p), for the
 * charts' node argument: a row says its node and a dashed line parts two nodes. NULL without a topology; free it. */
int *pp__plot_nodes(const pp_run_config *c, int ranks);

/* Two Gantt panels on one time axis: the student's run above the reference's, for grading reports. */
int pp__plot_gantt_pair(const pp_trace *student, const pp_trace *reference, int P, const char *out_prefix,
                        const int *node);

/* x/y plot of nseries curves (a series with n == 0 is skipped). title, xlabel, ylabel may be NULL. */
int pp__plot_xy(const char *out_prefix, const char *title, const char *xlabel, const char *ylabel,
                const pp_plot_series *series, int nseries);

/* Clustered bars: ngroups clusters on the x axis named groups[g] (e.g. "GPU 0"), one bar per series named
 * names[s] (a schedule's name, say) of height values[s * ngroups + g]. title and ylabel may be NULL. */
int pp__plot_bars(const char *out_prefix, const char *title, const char *ylabel, const char *const *groups,
                  int ngroups, const char *const *names, const double *values, int nseries);

#endif /* PP_PLOT_H */
