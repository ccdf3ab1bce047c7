/* warmup_parts.h: the warm-up's parts as a table. A row is one part: its name (a test config's part=), the
 * exercise function it is about, its checks with their points, and the function that grades it. The graders ask
 * the student's functions through warmup_io.h, score against its answer keys, and draw their cases, on a graded
 * run, through warmup_draw.h. */
#ifndef PP_WARMUP_PARTS_H
#define PP_WARMUP_PARTS_H

#include "grade.h"
#include "warmup_draw.h"
#include "warmup_io.h"
#include "warmup_verdict.h"

/* Grades a part: asks its cases through io (the public ones when draw is NULL, else drawn from draw) and adds
 * one check per entry of checks (nchecks of them, named as the configuration grades them) to out. */
typedef void pp_warmup_grader(pp_warmup_io *io, pp_warmup_draw *draw, const pp_warmup_check *checks, int nchecks,
                              pp_test_result *out);

typedef struct pp_warmup_part {
    const char *part, *symbol;
    pp_warmup_grader *grade;
    const pp_warmup_check *checks, *drawn_checks; /* drawn: the names on drawn cases, where they differ */
    int nchecks;
} pp_warmup_part;

/* The parts, in the order a report lists them. */
extern const pp_warmup_part pp__warmup_parts[];

#define PP_WARMUP_COUNT(a) ((int)(sizeof a / sizeof *a))

/* The parts' graders, by the files that hold them. */
/* warmup_bubble.c: the canonical timeline's figures: bubble, stash peaks, idle ranks, uneven stages, chunks */
pp_warmup_grader pp__warmup_grade_bubble, pp__warmup_grade_peaks, pp__warmup_grade_idle, pp__warmup_grade_uneven,
    pp__warmup_grade_chunks;
/* warmup_orders.c: each rank's order, whole and in chunks */
pp_warmup_grader pp__warmup_grade_orders, pp__warmup_grade_chunk_orders;
/* warmup_bytes.c: the bytes of a step's messages, of recomputation's stashes, of a grid's traffic */
pp_warmup_grader pp__warmup_grade_traffic, pp__warmup_grade_memory, pp__warmup_grade_grid;
/* warmup_partition.c: a model's layers cut into stages */
pp_warmup_grader pp__warmup_grade_partition;

#endif /* PP_WARMUP_PARTS_H */
