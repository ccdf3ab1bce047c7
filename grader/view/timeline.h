/* timeline.h: the terminal picture of a run: one row per lane of its lanes (lanes.h), one fixed-width column per
 * piece of virtual time between cell boundaries. Used by `pplab run --timeline` and the grading report. */
#ifndef PP_TIMELINE_H
#define PP_TIMELINE_H

#include <stdio.h>
#include "lanes.h"
#include "trace.h"

/* Prints the timeline of a run's lanes (lanes.h) to out: every lane a row, labelled with its name ("GPU 1", "GPU 0,
 * shard 1", "replica 1, GPU 0"), a shard's rows under its stage's and a rank's reduce lane ("AR") under its rows.
 *
 * A column is a piece of virtual time no cell boundary falls inside, and shows the label of the cell covering it
 * (pp__cell_label: letter and micro-batch, "F3", with the chunk when v > 1, "F3.1", or the copy under DualPipe,
 * "F3b"; a sum whose ring crossed nodes ends in '*') or "." where the lane is idle. Where every boundary is a
 * multiple of a unit u of the ladder 1, 1/2, 1/4, 1/5, 1/10, ..., 1/100 (and u costs at most twice the columns of
 * the cut grid), every column is u long: an op of cost k fills k/u of them. Otherwise columns are cut at every
 * whole unit and every boundary (so none is longer than a unit), and a ruler row "t: ..." gives each column's start.
 * Nothing is rounded: every lane spans 0 to the step. Every column has the width of the widest label (or ruler
 * time), columns are separated by one space and never cut: when a row would pass `width` characters, the rows
 * wrap in blocks, each headed by "t=NN" (the time its first column starts at) and parted by a blank line.
 *
 * forward_only: only F ops (with their sums) are shown, laid on their own clock: each rank runs its F ops in trace
 * order, each starting when both the rank and its input (the same micro-batch's F on the previous virtual stage,
 * plus the comm latency seen in the trace) are ready. For GPipe this is exactly the forward phase of the run.
 *
 * Under the rows: a legend line of the kinds of cell that occur (pp__cell_legend), a line on the grid and the step,
 * under --tp the sums' total on shard 0's lanes (pp_lanes.sums), and last "Idle fraction: NN%",
 * round(100 * (1 - busy / (lanes * span))) over shard 0's compute lanes, span = their latest end. color != 0 adds
 * ANSI colours (F green, B blue, I bright blue, W yellow, R orange, S red, AR magenta, idle dim). src stays the
 * caller's. */
void pp__timeline_print_lanes(FILE *out, const pp_lanes_src *src, int v, int forward_only, int width, int color);

/* The timeline of P traces of one pipeline (no replicas, no shards): pp__timeline_print_lanes of that source. */
void pp__timeline_print(FILE *out, const pp_trace *traces, int P, int v, int forward_only, int width, int color);

#endif /* PP_TIMELINE_H */
