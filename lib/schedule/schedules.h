/* schedules.h: the one table of pipeline schedules. A row says what the kit knows of a schedule besides its
 * answers: its name and lab (folder, file, step function) and the rules a configuration of it must meet. The
 * configuration check, the grader's replay and checks, and the labs' build read it from here; its canonical order,
 * its stash peaks and its closed bubble are answers, asked of answers.h. */
#ifndef PP_SCHEDULES_H
#define PP_SCHEDULES_H

#include <stddef.h>

/* One op of an order. */
typedef struct pp_sched_op {
    char kind;   /* 'F', 'B' (a whole backward, or its input half when a 'W' follows), 'W' (the weight half) */
    int mb;
    int chunk;
    double cost; /* the op's virtual cost; 0: the costs' default for its kind and virtual stage */
    int split;   /* a 'B' whose weight half is a 'W' of the same order (set by pp__schedule_build) */
} pp_sched_op;

/* Where a data-parallel row's canonical order reduces each chunk's gradients (the lab 07 rows; reduce.h). */
typedef enum {
    PP_REDUCE_NONE = 0,        /* no data parallelism: the row refuses --dp above 1 */
    PP_REDUCE_AT_END,          /* after the rank's last op, one blocking reduce per chunk in chunk order */
    PP_REDUCE_OVERLAP,         /* each chunk's reduce started right after its last backward, waited at the end */
} pp_reduce_mode;

typedef struct pp_schedule_def {
    const char *name;          /* --schedule, and the lab's name */
    const char *title;         /* how messages name it ("interleaved 1F1B") */
    const char *folder;        /* the lab's folder under labs/ and solutions/ */
    const char *file;          /* the student's file in it, without ".c" */
    const char *symbol;        /* the step function that file defines */
    int chunked;               /* 1: v >= 1 chunks per rank; 0: v = 1 only */
    int one_microbatch;        /* 1: M = 1 (the whole batch at once) */
    int microbatches_per_rank; /* 1: M must be a multiple of P */
    int microbatches_2v;       /* 1: M must be at least the 2P virtual stages (DualPipeV) */
    int microbatches_rounds;   /* 1: M must be a multiple of its rounds, max(1, M div P), each of M / rounds
                                  micro-batches (PyTorch's interleaved 1F1B and zero bubble) */
    int free_phases;           /* 1: the order inside the forward phase and inside the backward phase is free,
                                  and a weight half may wait (only the phases are graded: GPipe) */
    int weight_halves;         /* 1: the order says where each backward is split into 'B' and 'W' and where each
                                  W runs (the zero-bubble schedules); 0: whole backwards, a weight half follows its
                                  input half at once */
    int vshape;                /* 1: two chunks per rank placed in a V (placement.h): rank r holds virtual stages
                                  r and 2P-1-r; 0: looped, chunk c of rank r is c*P + r */
    int dual;                  /* 1 (with vshape): full DualPipe's two pipelines on the V's numbering, each stage
                                  of the model held twice, its copies' gradients summed (placement.h) */
    int own_blocks;            /* 1: the schedule runs each stage's blocks itself, layer by layer, tensor parallel
                                  (pp_stage_forward_begin ... _end: lab 08's tpblock and tpgrid); 0: whole-stage ops */
    int grid;                  /* 1: the submission maps global ranks to (t, p, d) and builds the groups (lab 08's
                                  tpgrid, grid.h): the run is placed on the nodes by its mapping */
    pp_reduce_mode reduce;     /* the canonical order's reduces: none for a single pipeline */
    /* What a run holding more stashes than the canonical peak should change (the memory check's hint); NULL:
     * none. */
    const char *peak_hint;
} pp_schedule_def;

/* Room an order needs: an F, a B and a W per micro-batch and chunk. */
#define PP_SCHED_ROOM(M, v) (3 * (M) * (v))

/* The rows, in the labs' order. */
extern const pp_schedule_def pp__schedules[];
extern const int pp__nschedules;

/* The rounds a row with microbatches_rounds runs its M micro-batches in on P ranks: max(1, M div P), each of
 * M / rounds micro-batches when they divide M (the configuration check refuses an M they do not). */
int pp__schedule_rounds(int P, int M);

/* The row called name, or NULL. */
const pp_schedule_def *pp__schedule_def(const char *name);
/* The chunks per rank a configuration of d has when it names none: two for a row that takes chunks (interleaved,
 * the V schedules), else one. */
int pp__schedule_default_chunks(const pp_schedule_def *d);
/* The schedule names joined for a message or a usage line: ", " and " or " give "naive, gpipe, 1f1b or
 * interleaved"; "|" and "|" give "naive|gpipe|1f1b|interleaved". Returns buf. */
const char *pp__schedule_names(char *buf, size_t len, const char *sep, const char *last);
/* The same for the rows that take --chunks. */
const char *pp__schedule_names_chunked(char *buf, size_t len, const char *sep, const char *last);

#endif /* PP_SCHEDULES_H */
