/* canonical.h: the kit's generators of what the labs grade about a schedule: each row's canonical order, the
 * stash peaks of that order and its bubble in closed form (canonical.c). answers_generated.c serves them through
 * answers.h; nothing else includes this header, and a student handout has neither file. */
#ifndef PP_CANONICAL_H
#define PP_CANONICAL_H

#include "schedules.h"

/* A row's generators. */
typedef struct pp_canonical {
    const char *name; /* the row's name in the schedule table */
    /* Rank r's canonical order into ops (room for PP_SCHED_ROOM(M, v) ops); returns the number of ops. */
    int (*order)(int P, int M, int v, int r, pp_sched_op *ops);
    /* The most stashes rank r holds at once in that order. */
    int (*peak)(int P, int M, int v, int r);
    /* The bubble of that order with no latency and no edge cost, in closed form; -1 where the row has none at
     * (P, M, v); NULL where it has none at all. */
    double (*bubble)(int P, int M, int v);
} pp_canonical;

/* The generators of the row called name, or NULL. */
const pp_canonical *pp__canonical(const char *name);

/* Rank r's order of full DualPipe for P ranks (even) and M micro-batches (even, at least 2P) into ops (room for
 * 3M ops); returns the number of ops. Chunk 0 of rank r is stage r of the pipeline fed at rank 0, which carries
 * micro-batches 0..M/2-1; chunk 1 is stage P-1-r of the pipeline fed at rank P-1, which carries M/2..M-1. An
 * overlapped forward-and-backward pair is its forward, then its whole backward (the dualpipe row's order). */
int pp__schedule_dualpipe_order(int P, int M, int r, pp_sched_op *ops);

#endif /* PP_CANONICAL_H */
