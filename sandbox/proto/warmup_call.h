/* warmup_call.h: one warm-up call, from its arguments on the wire to its answer on the wire (rpc.h,
 * PP_WARMUP_*). The schedule driver answers the grader's calls with it; pplab's in-process debugging mode calls
 * it on a loaded object. The functions are whatever the student's file defines (NULL when it does not). */
#ifndef PP_WARMUP_CALL_H
#define PP_WARMUP_CALL_H

#include "wire.h"

/* The warm-up's functions, as labs/00-warmup/warmup.c declares them (function types, so that one list declares
 * the driver's weak references, the table below and the symbols a build keeps). */
typedef double pp_wu_bubble_fn(const char *schedule, int P, int M, int v);
typedef int pp_wu_peak_fn(const char *schedule, int P, int M, int v, int rank);
typedef int pp_wu_order_fn(const char *schedule, int P, int M, int rank, char *out, int cap);
typedef int pp_wu_partition_fn(int nlayers, const double *cost, int P, int *first);
typedef int pp_wu_chunk_order_fn(const char *schedule, int P, int M, int v, int rank, char *out, int cap);
typedef int pp_wu_idle_fn(const char *schedule, int P, int M, int v, int t, int *idle);
typedef double pp_wu_uneven_fn(int P, int M, const double *f);
typedef int pp_wu_chunks_fn(int P, int M, int blocks, double latency);
typedef double pp_wu_traffic_fn(const char *schedule, int P, int M, int v, int b, int s, int h);
typedef double pp_wu_memory_fn(const char *schedule, int P, int M, int v, int rank, int b, int s, int h);
typedef int pp_wu_grid_gpus_fn(int T, int P, int D);
typedef double pp_wu_grid_pp_fn(int P, int D, int M, int v, int b, int s, int h, int elem);
typedef double pp_wu_grid_dp_fn(int T, int P, int D, double params, int elem);
typedef int pp_wu_grid_link_fn(const char *traffic, int G, int T, int P, int D);
/* lab 09's scheduler (labs/09-scheduler/scheduler.c), asked the same way */
typedef int pp_wu_scheduler_fn(int P, int M, int v, const double *f, const double *i, const double *w, double latency,
                               int cap, char *out, int outcap);

/* X(field, symbol, type): every function the grader calls in a lab's file, in the order of the exercises (and of
 * pp_warmup_fn in rpc.h, which the grader relies on to name a missing function): the warm-up's fourteen, then lab
 * 09's scheduler, whose file keeps that one alone. */
#define PP_WARMUP_FUNCTIONS(X)                                                                                 \
    X(bubble, pp_warmup_bubble, pp_wu_bubble_fn)                                                               \
    X(peak, pp_warmup_peak_stashes, pp_wu_peak_fn)                                                             \
    X(order, pp_warmup_order, pp_wu_order_fn)                                                                  \
    X(partition, pp_warmup_partition, pp_wu_partition_fn)                                                      \
    X(chunk_order, pp_warmup_chunk_order, pp_wu_chunk_order_fn)                                                \
    X(idle, pp_warmup_idle_ranks, pp_wu_idle_fn)                                                               \
    X(uneven, pp_warmup_uneven_bubble, pp_wu_uneven_fn)                                                        \
    X(chunks, pp_warmup_best_chunks, pp_wu_chunks_fn)                                                          \
    X(traffic, pp_warmup_traffic, pp_wu_traffic_fn)                                                            \
    X(memory, pp_warmup_checkpoint_bytes, pp_wu_memory_fn)                                                     \
    X(grid_gpus, pp_warmup_grid_gpus, pp_wu_grid_gpus_fn)                                                      \
    X(grid_pp, pp_warmup_grid_pp_bytes, pp_wu_grid_pp_fn)                                                      \
    X(grid_dp, pp_warmup_grid_dp_bytes, pp_wu_grid_dp_fn)                                                      \
    X(grid_link, pp_warmup_grid_link, pp_wu_grid_link_fn)                                                      \
    X(scheduler, pp_scheduler_order, pp_wu_scheduler_fn)

typedef struct pp_warmup_fns {
#define PP_WU_FIELD(field, symbol, type) type *field;
    PP_WARMUP_FUNCTIONS(PP_WU_FIELD)
#undef PP_WU_FIELD
} pp_warmup_fns;

/* Reads one call (function and arguments) from r, calls it, and writes the answer to w. */
void pp__warmup_call(const pp_warmup_fns *f, pp_wire_in *r, pp_wire *w);

#endif /* PP_WARMUP_CALL_H */
