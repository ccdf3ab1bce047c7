/* request.h: a posted message or gradient reduce (pp.h's pp_request): what the API layer (comm.c) fills in, what a
 * transport completes, and what the reduce's rules (reduce.c) decide. The struct alone, so that each of them can
 * read it without the others. */
#ifndef PP_REQUEST_H
#define PP_REQUEST_H

#include "tensor.h"

struct pp_request {
    int is_send;             /* 1 send, 0 receive */
    int rank;                /* the rank that posted it */
    int peer;                /* destination of a send, source of a receive: a rank of the world (d*P + p) */
    int named_peer;          /* ... as the program named it, within its replica (what reports show) */
    int tag;
    pp_tensor *t;            /* the data sent, or the buffer a receive fills */
    const char *api;         /* the call that posted it ("pp_send", "pp_irecv", ...), for reports */
    int done;                /* completed by the transport (under its lock) */
    int waited;              /* handed back to the caller by a wait */
    /* filled by the transport when a receive completes: the sender's view of the message */
    double msg_ready;        /* virtual time the sent tensor was ready */
    struct pp_request *next; /* transport's queue link */
    struct pp_request *all_next; /* the rank's list of requests of this step (freed at its end) */
    void *tp;                /* transport-private */
    double wall_post;        /* wall time (since the step began) at which it was posted */
    /* a receive the transport completed without data (the matched send's tensor does not fit it): the one-line
     * reason, malloc'd, and its status; the receiving rank fails with it when it waits, at its own place in its
     * program, whichever side posted first */
    char *error;
    int error_status;
    /* a gradient all-reduce (pp_grad_reduce, pp_grad_ireduce; its rules in reduce.h), waited by pp_wait and
     * pp_waitall like a message, and completed by the transport once its group decided it. Its peer is the
     * member it waits for (the lowest replica whose part is missing), read atomically, for deadlock reports. */
    int is_reduce;
    pp_tensor *tp_into;      /* a tensor-parallel sum (is_reduce too): the partial product its sum replaces */
    struct {
        int chunk, k, ev;    /* its chunk, its place among the rank's reduces of the step, its event in the trace */
        int verdict;         /* pp_reduce_verdict, set before done */
        int other, other_chunk; /* the replica a failed verdict names, and the chunk it named */
        double start, end;   /* a done reduce's time on its group's lane */
        const float *sum;    /* ... and its sum (D > 1), kept by the transport until the step ends; a
                              * tensor-parallel sum's is the request's own (malloc'd), freed once copied */
    } red;
};

#endif /* PP_REQUEST_H */
