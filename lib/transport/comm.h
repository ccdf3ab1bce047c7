/* comm.h: messages between ranks. The API layer (comm.c) checks arguments, keeps groups, moves virtual time
 * and writes the trace; a transport moves bytes and decides when a request completes:
 *   threads  ranks are threads of one process (transport/threads.c), exact deadlock detection;
 *   mpi      one process per rank (transport/mpi.c and mpi_*.c), deadlocks confirmed at a deadline (the same report);
 *   nccl     ranks are threads, one GPU each (transport/nccl.cu).
 * Matching is on (source, destination, tag), first posted first matched, as in MPI and NCCL. */
#ifndef PP_COMM_H
#define PP_COMM_H

#include <stddef.h>
#include "caps.h"
#include "request.h"
#include "tag.h"
#include "tensor.h"

typedef struct pp_world pp_world;


/* "pp_send(dst=2, tag F mb3 vs2)": an operation as reports name it (buf should hold 96 bytes). */
const char *pp__op_describe(const char *api, int is_send, int peer, int tag, char *buf, size_t len);
/* The same for a posted request (its api, or pp_send/pp_recv when unset). */
const char *pp__request_describe(const pp_request *q, char *buf, size_t len);
/* When t's memory went early, how ("when its pp_send(dst=1, tag F mb0 vs1) completed", "when the backward of
 * micro-batch 3, chunk 0 finished") into buf; NULL while t still has it. For the errors of pp.h's checks. */
const char *pp__tensor_released_why(const pp_tensor *t, char *buf, size_t len);

struct pp_reduce_part;

typedef struct pp_transport_ops {
    const char *name;
    /* PP_TRANSPORT_* bits (caps.h): what the transport can do. */
    unsigned caps;
    /* Sets up the transport for world w (called once, before any step). Returns 0, or non-zero with the reason
     * in w->error (the run then fails with it). */
    int (*init)(pp_world *w);
    /* Posts req (send or receive) for rank r. May complete it at once (a match with a posted peer request). On
     * a shape or dtype mismatch with the peer's request it aborts the run naming both ranks and both ops. */
    void (*post)(pp_world *w, pp_request *req);
    /* Blocks until all n requests of rank r (messages and reduces) are done. Never returns on failure: a
     * deadlock, or a wait that nothing can answer any more, leaves rank r through pp__rank_bail (or
     * pp__rank_abort). */
    void (*wait)(pp_world *w, int r, pp_request **reqs, int n);
    /* Rank r's step function returned (or aborted). Lets the transport see chains that end at an exited rank. */
    void (*rank_exit)(pp_world *w, int r);
    /* All ranks finished the step: reports messages sent but never received (fails the run), then resets the
     * per-step state. Returns 0 when clean. */
    int (*step_end)(pp_world *w);
    /* The run failed: wake every rank blocked in wait() so it can bail out. */
    void (*wake_all)(pp_world *w);
    /* Releases what init made. */
    void (*fini)(pp_world *w);
    /* Rank r failed (it has left its step function, or is about to). Returns 1 when the others may run on: the
     * transport then stops each rank that waits on what can no longer come, and the runtime reports the
     * failure earliest on the virtual clock. NULL, or 0: the first failure stops the run. */
    int (*rank_failed)(pp_world *w, int r);
    /* Rank's part of its group's reduce part->k (reduce.h): q is its request (NULL for a part that says how the
     * rank left its step), grads a malloc'd copy of the chunk's gradients at the call (NULL at D = 1), which the
     * transport frees. Once the group decided the reduce, the transport sets q->red and completes q; it holds
     * the sum until step_end. */
    void (*reduce_post)(pp_world *w, int rank, pp_request *q, const struct pp_reduce_part *part, float *grads);
    /* Rank's part of its tensor-parallel group's sum part->k (reduce.h's pp__reduce_tp_post): data is a malloc'd
     * copy of its partial product (NULL for a part that says how it left), which the transport frees. NULL: the
     * transport has no tensor parallelism (the configuration check refuses --tp there). */
    void (*tp_post)(pp_world *w, int rank, pp_request *q, const struct pp_reduce_part *part, float *data);
    /* PP_TRANSPORT_PROCESSES: the rank this process runs, as its launcher's environment says it (before init, so
     * that the runtime starts this rank's driver alone before the transport forbids fork). NULL: every rank is a
     * thread of this process. */
    int (*launched_rank)(void);
    /* PP_TRANSPORT_PROCESSES, collective, after init: sums v[0..n) over every process, in place. On ranks lost
     * meanwhile it fails the run (PP_ERR_LOST) and leaves v. NULL where one process holds every rank. */
    void (*sum)(pp_world *w, double *v, int n);
    /* PP_TRANSPORT_PROCESSES, collective, after init: gathers len bytes of every process on rank 0, which gets a
     * malloc'd concatenation in rank order (the caller frees it) and each part's length in lens[0..P); NULL
     * elsewhere, and on ranks lost meanwhile (the run then fails, PP_ERR_LOST). NULL where one process holds every
     * rank. */
    void *(*gather)(pp_world *w, const void *buf, size_t len, size_t *lens);
} pp_transport_ops;

struct pp_rank;
/* Rank r's step function ended (returned: it returned; else it failed or was stopped): each reduce of its group
 * that it never started gets its part saying so (comm.c), so that no member waits on it any more. */
void pp__comm_rank_left(struct pp_rank *r, int returned);
/* model.h's tensor-parallel all-reduce hook for a rank (ctx): the rank's partial product t joins its shards' next
 * sum, and the rank waits for it as for a message (a shard that failed stops it; one that returned without the
 * sum fails it), then t holds the sum. */
void pp__comm_tp_allreduce(void *ctx, pp_tensor *t);


#endif /* PP_COMM_H */
