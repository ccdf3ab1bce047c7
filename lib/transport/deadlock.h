/* deadlock.h: the deadlock report, written from a snapshot of what each rank waits on, so that every transport
 * words one deadlock the same: threads take the snapshot under their lock the moment no rank can move
 * (transport/threads.c), MPI from every process's part once its ranks agreed that none can (transport/mpi_step.c).
 *
 * The report names each blocked rank's call, the wait-for structure (rank a waits for rank b when the first
 * operation a's wait still misses names b: a cycle, or a chain ending at a rank that returned), the near misses (a
 * send and a receive between the same two ranks whose tags differ in one field) and one hint. The snapshot is
 * plain fixed-size fields, so that it travels between processes as bytes. */
#ifndef PP_DEADLOCK_H
#define PP_DEADLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "rank.h"

/* A posted operation that did not complete. */
typedef struct pp_stuck_op {
    int32_t is_send, is_reduce;
    int32_t rank;            /* the world rank that posted it */
    int32_t peer;            /* a message's world rank at the other end; a reduce's member it waits for (-1:
                              * none known) */
    int32_t named_peer;      /* the peer as the program named it, within its replica */
    int32_t tag;
    int32_t chunk, k;        /* a reduce's chunk, and its place among its rank's reduces of the step */
    char api[24];            /* the call that posted it ("pp_isend", "pp_grad_reduce", ...) */
} pp_stuck_op;

/* What one rank was doing when the run stopped moving. */
typedef enum { PP_STUCK_RUNNING = 0, PP_STUCK_BLOCKED, PP_STUCK_EXITED } pp_stuck_state;
typedef struct pp_stuck_rank {
    int32_t state;           /* pp_stuck_state */
    int32_t pending;         /* operations of its wait not done */
    pp_stuck_op first;       /* the first of them, in the order the wait named them */
    char blocked_in[160];    /* the call it is blocked in, as pp__rank_blocked_in says it ("" : first's) */
} pp_stuck_rank;

/* The snapshot's stuck op for request q. */
void pp__deadlock_op(const pp_request *q, pp_stuck_op *op);
/* 1 when ranks[0..P) can never move again: every rank that did not exit waits, each on an operation not done
 * (the transport vouches that nothing in flight can complete one: threads match at post time, MPI agreed on it). */
int pp__deadlock_final(const pp_stuck_rank *ranks, int P);
/* Writes the report of a final state into out (cap bytes): ranks[0..P) indexed by world rank, posted[0..nposted)
 * every posted message not matched, ordered by rank and, within a rank, as it posted them. */
void pp__deadlock_report(const pp_world *w, const pp_stuck_rank *ranks, int P, const pp_stuck_op *posted, int nposted,
                         char *out, size_t cap);

#endif /* PP_DEADLOCK_H */
