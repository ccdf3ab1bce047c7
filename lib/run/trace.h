/* trace.h: what each rank did, op by op, in wall time and in virtual time, and the bubble computed from it.
 *
 * Virtual clock (the graded one, deterministic): a compute op of cost c starts at max(the rank's clock, the
 * ready time of each input) and ends c later; the rank's clock moves to its end. A tensor that crossed from
 * another rank is ready at the sender's ready time plus the comm latency. Where the program calls send, recv or
 * wait does not move the clock: on GPUs the host runs ahead and point-to-point copies run on their own streams. */
#ifndef PP_TRACE_H
#define PP_TRACE_H

#include <stddef.h>
#include <stdio.h>

/* REDUCE: a chunk's gradient all-reduce over its data-parallel group (reduce.c), on the rank's reduce lane: its
 * event sits where the rank called it, with the lane's start and end. */
typedef enum { PP_OP_F = 0, PP_OP_B, PP_OP_W, PP_OP_SEND, PP_OP_RECV, PP_OP_REDUCE, PP_OP_COUNT } pp_op_kind;

/* 1 for the ops that compute (F, B, W) and run on the virtual clock, 0 for messages: the one test of it. */
static inline int pp__op_is_compute(pp_op_kind op) { return op == PP_OP_F || op == PP_OP_B || op == PP_OP_W; }

/* How a B op ran: the input half alone (its W comes as an op of its own), and whether it first rebuilt a stash
 * that pp_stash_checkpoint had dropped (one more forward of cost); and of any compute op, that it ran after the
 * rank's optimizer step of the same step (what it added to the gradients missed that step). */
enum { PP_EV_SPLIT = 1, PP_EV_RECOMPUTED = 2, PP_EV_AFTER_STEP = 8 };

typedef struct pp_event {
    int rank;
    pp_op_kind op;
    int mb;           /* micro-batch, -1 when none */
    int chunk;        /* the rank's local chunk 0..v-1 */
    int vstage;       /* virtual stage c*P + r */
    int peer;         /* other rank of a message, -1 for compute */
    int tag;          /* message tag, -1 for compute */
    int timer;        /* backend timer handle of a compute op, -1 when timed on the host */
    int flags;        /* PP_EV_* of a compute op, else 0 */
    size_t bytes;     /* bytes moved by a message */
    double wall_start, wall_end;   /* seconds since the step began */
    double vstart, vend;           /* virtual time */
    double tp_time;   /* of a compute op under --tp: the virtual time of the shards' sums it made (in its span) */
    int tp_across;    /* ... 1 when their ring crossed nodes, 0 when it stayed inside one */
} pp_event;

typedef struct pp_trace {
    pp_event *ev;
    int n, cap;
} pp_trace;

/* Appends e to t (grows as needed). */
void pp__trace_add(pp_trace *t, const pp_event *e);
/* Frees the events; t is empty afterwards. */
void pp__trace_clear(pp_trace *t);
/* "F", "B", "W", "SEND", "RECV". */
const char *pp__op_name(pp_op_kind op);

/* Busy time of one rank (sum of compute op durations) and the makespan of all P ranks (latest compute end). */
double pp__trace_busy(const pp_trace *t);
double pp__trace_makespan(const pp_trace *traces, int P);
/* The step's time: the latest end of a compute op or a reduce (the step ends when its last reduce is done). */
double pp__trace_step_time(const pp_trace *traces, int P);
/* 1 - sum(busy) / (P * makespan); 0 when nothing ran. */
double pp__trace_bubble(const pp_trace *traces, int P);

/* Idle share of one rank over the whole run's makespan: 1 - busy_r / makespan (the run's bubble is their mean). */
double pp__trace_rank_bubble(const pp_trace *traces, int P, int r);

/* Writes all P traces as CSV with the header
 * rank,op,microbatch,chunk,vstage,peer,bytes,virtual_start,virtual_end,wall_start,wall_end. Returns 0 or -1. */
int pp__trace_write_csv(const pp_trace *traces, int P, const char *path);

#endif /* PP_TRACE_H */
