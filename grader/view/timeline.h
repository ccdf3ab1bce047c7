/* timeline.h: the terminal picture of a run: one row per rank, one fixed-width cell per unit of virtual time,
 * built only from the ranks' traces (trace.h). Used by `pplab run --timeline` and the grading report. */
#ifndef PP_TIMELINE_H
#define PP_TIMELINE_H

#include <stdio.h>
#include "lanes.h"
#include "trace.h"

/* Prints the timeline of the P traces to out.
 *
 * Rows are labelled "GPU r:"; a cell is one time unit = the smallest compute-op duration in the trace
 * (normally 1, one forward of one layer group), so an op of cost k fills k cells, each showing its label:
 * op letter + micro-batch ("F0", "B12"), with the local chunk when v > 1 ("F3.1" = micro-batch 3, chunk 1).
 * Idle cells are ".". Every cell has the width of the longest label, cells are separated by one space and never
 * squeezed: when a row would pass `width` columns, the block of rows wraps, each block headed by "t=NN" (the
 * virtual time its first cell starts at) and separated from the next by a blank line.
 *
 * forward_only: only F ops are shown, laid on their own clock: each rank runs its F ops in trace order, each
 * starting when both the rank and its input (the same micro-batch's F on the previous virtual stage, plus the
 * comm latency seen in the trace) are ready. For GPipe this is exactly the forward phase of the run.
 *
 * Under the rows: a legend line for the notation, then the last line "Idle fraction: NN%",
 * round(100 * (1 - busy / (P * span))) over the shown ops, span = latest shown end (time starts at 0).
 * color != 0 adds ANSI colours (F green, B blue, W yellow, idle dim). Reads traces only; owns nothing. */
void pp__timeline_print(FILE *out, const pp_trace *traces, int P, int v, int forward_only, int width, int color);

/* The timeline of a run's lanes (lanes.h): every lane a row, a shard's under its stage (--tp) with its sums as
 * cells of their own, a rank's reduce lane under its row; as above otherwise. src stays the caller's. */
void pp__timeline_print_lanes(FILE *out, const pp_lanes_src *src, int v, int forward_only, int width, int color);

/* The idle fraction pp__timeline_print reports, in [0, 1] (not rounded). */
double pp__timeline_idle(const pp_trace *traces, int P, int forward_only);

#endif /* PP_TIMELINE_H */
