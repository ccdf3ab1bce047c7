/* order_csv.h: a run's order as PyTorch writes one, the compute-only CSV of torch.distributed.pipelining's
 * _PipelineScheduleRuntime (_dump_csv, _load_csv): one row per rank, one cell per compute action, "SkN" with S the
 * action's stage (the kit's virtual stage), k its kind and N its micro-batch. The kinds: F a forward, I an input
 * half whose weight half is an action of its own, W that weight half, B a whole backward. */
#ifndef PP_ORDER_CSV_H
#define PP_ORDER_CSV_H

#include <stddef.h>

#include "replay.h"
#include "trace.h"

/* Writes the compute ops of traces[0..P-1], each rank's in the order it ran them, to path, rows ended by "\r\n"
 * as Python's csv module writes them. A run of D replicas passes its first P traces (replica 0). Returns 0, or -1
 * with the one-line reason in err (a name not ending in .csv, a file that cannot be written). */
int pp__order_csv_write(const pp_trace *traces, int P, const char *path, char *err, size_t errlen);

/* 0 when path ends in ".csv", else -1 with the reason in err: checked before a run. */
int pp__order_csv_name_check(const char *path, char *err, size_t errlen);

/* Reads an order in that format from path into s: one rank per row, its cells in order. An empty cell (torch's
 * padding) is skipped; an overlapped pair, "(0F3;5B1)OVERLAP_F_B", is its two actions in order; an I is a 'B'
 * whose W comes later, a B a whole backward. The placement is the file's: rank r holding stages r, r + P, ...
 * (looped) or r and 2P - 1 - r (a V), prefer_vshape's (1: the V) where both fit; anything else is refused. s->M is the largest micro-batch plus one. Every
 * cell is checked for its form and its range; the order itself is not (a run diagnoses it as it would code).
 * Returns 0, or -1 with "FILE:ROW:CELL: what is wrong, and what to do" in err. */
int pp__order_csv_read(const char *path, int prefer_vshape, pp_schedule *s, char *err, size_t errlen);
/* The same for text[0..len) (NULs in it refused), name standing for the file in messages. */
int pp__order_csv_parse(const char *name, const char *text, size_t len, int prefer_vshape, pp_schedule *s, char *err,
                        size_t errlen);

#endif /* PP_ORDER_CSV_H */
