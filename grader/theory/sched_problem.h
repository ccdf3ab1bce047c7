/* sched_problem.h: lab 09's problem, a pipeline's costs, links and memory cap for which a student's scheduler
 * writes each rank's order, and what the grader measures of an order for it. The order is the kit's representation
 * (replay.h's pp_schedule, read from the CSV that --export-order writes): every micro-batch's F, then its backward
 * either whole (B) or as an input half (I) and a weight half (W), on the rank that holds each virtual stage. (Not
 * sched.h: with -Igrader/theory that name would stand for the system's <sched.h>, which pthread.h includes.)
 *
 * The engine (sched_check.c: the problem's costs, the checks of an order, its replay) is in every build. What finds
 * good orders is the kit's alone (a handout records their figures for its public configurations instead): the
 * reference heuristic (sched_greedy.c) and the integer program's optimum (sched_ilp.c, GLPK), declared in the kit's
 * sched_kit.h. */
#ifndef PP_THEORY_SCHED_PROBLEM_H
#define PP_THEORY_SCHED_PROBLEM_H

#include <stddef.h>

#include "replay.h"

#define PP_SCHED_MAX_P 8
#define PP_SCHED_MAX_VS (2 * PP_SCHED_MAX_P)

/* The problem. Virtual stage s of P * v: with v = 1 stage s on rank s; with v = 2 in a V (placement.h), rank r
 * holding r and 2P - 1 - r. Costs are per virtual stage; a whole backward costs i + w. */
typedef struct pp_sched_problem {
    int P, M, v;
    double f[PP_SCHED_MAX_VS]; /* a forward */
    double i[PP_SCHED_MAX_VS]; /* a backward's input half */
    double w[PP_SCHED_MAX_VS]; /* its weight half */
    double latency;            /* a message between two ranks (a V's turn on one rank costs none) */
    int cap;                   /* live activation stashes per rank, at most, at every instant: a stash lives from
                                  its F's start to the end of its W (or its whole B) */
} pp_sched_problem;

/* 0 when pb is a problem the lab poses (1 <= P <= PP_SCHED_MAX_P, 1 <= M <= 64, v 1 or 2, every cost > 0 and
 * finite, latency >= 0, cap >= 1), else -1 with the one-line reason in err. */
int pp__sched_problem_check(const pp_sched_problem *pb, char *err, size_t len);

/* pb's key, "P=4 M=8 v=1 cap=3 latency=0.5 f=1,1,1,2 i=... w=...": what a record names a problem by. */
void pp__sched_problem_key(const pp_sched_problem *pb, char *buf, size_t len);

/* pb's costs for a replay (replay.h): f, b = i + w and bi = i per virtual stage, pb's latency. Free with
 * pp__costs_free. */
void pp__sched_costs(const pp_sched_problem *pb, pp_costs *k);

/* What the grader measures of a valid order. */
typedef struct pp_sched_measure {
    double makespan;            /* the end of the last op, on the virtual clock */
    double bubble;              /* 1 - busy / (P * makespan) */
    int peak[PP_SCHED_MAX_P];   /* live stashes at most, per rank */
    int idle_rank;              /* the rank and the gap (its start and length) where one rank waits longest */
    double idle_at, idle_len;
} pp_sched_measure;

/* Checks order s against pb: its shape (P ranks, pb's placement, micro-batches 0..M-1), each (stage, micro-batch)
 * once forward and once backward (B, or I then W on its rank), each op after what it needs on its own rank (a
 * backward after its forward, a W after its I), that it completes (no rank waits forever), and the cap at every
 * op's start. Returns 0 with *m filled (may be NULL), 1 when the order breaks the cap (m filled, err names the rank,
 * the op and the count), or -1 when it is not a valid order (err: the first thing wrong, naming rank and op). */
int pp__sched_verify(const pp_sched_problem *pb, const pp_schedule *s, pp_sched_measure *m, char *err, size_t len);

/* An empty order of pb's shape (P ranks, pb's placement, room for every op), allocated as pp__schedule_build allocates
 * one, so that pp__schedule_free frees it. */
void pp__sched_alloc(const pp_sched_problem *pb, pp_schedule *s);

/* The makespan of s under pb's costs (the virtual clock's replay), -1 when it cannot complete. No other check. */
double pp__sched_makespan(const pp_sched_problem *pb, const pp_schedule *s);

/* Writes s as CSV text (one row per rank, "SkN" cells: S the virtual stage, k F, I, W or B, N the micro-batch;
 * rows ended by "\n") into buf; returns the length, or -1 when it does not fit. */
int pp__sched_csv(const pp_schedule *s, char *buf, size_t len);

/* What an order is graded against, for one problem. */
#define PP_SCHED_MAX_REFS 6
typedef struct pp_sched_refs {
    char floor_name[32];        /* the order whose makespan earns the first point: 1F1B (or ZBV in a V) where it
                                   holds the cap, else "serial" (one micro-batch through the pipeline at a time) */
    double floor;
    int n;                      /* the kit's canonical orders that hold the cap, by title, with their makespans */
    char name[PP_SCHED_MAX_REFS][16];
    double makespan[PP_SCHED_MAX_REFS];
    double greedy;              /* the reference heuristic's makespan */
    double optimum;             /* the integer program's proved optimum; -1 where none is known */
    double best;                /* the best known: the optimum, else the least of the above */
} pp_sched_refs;

/* pb's references: in the kit computed (sched_refs.c: canonical orders, the heuristic, the optimum recorded or, when
 * solve is set and pb is small, solved for a few seconds), in a handout read from its record (sched_refs_recorded.c:
 * its public configurations). Returns 0, or -1 with the reason in err where this build holds none for pb. */
int pp__sched_refs(const pp_sched_problem *pb, int solve, pp_sched_refs *r, char *err, size_t len);

/* r as a record's value ("floor=1F1B:26 greedy=23 optimum=22.5 canon=1F1B:26,ZB-H1:24"), and back: 0, or -1 when
 * text is not one. */
void pp__sched_refs_format(const pp_sched_refs *r, char *buf, size_t len);
int pp__sched_refs_parse(const char *text, pp_sched_refs *r);

#endif /* PP_THEORY_SCHED_PROBLEM_H */
