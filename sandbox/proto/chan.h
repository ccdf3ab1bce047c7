/* chan.h: the channel between one schedule driver (the untrusted process that runs a rank's step function) and
 * the runtime thread serving that rank. It is one shared memory object: a request slot the driver fills, a reply
 * slot the runtime fills, and two sequence numbers, each bumped when its slot holds a new message. A waiting
 * side spins briefly on the number (a futex wake-up across cores costs tens of microseconds on small VMs), then
 * sleeps on it with a futex.
 *
 * The runtime treats everything in the object as hostile: it reads a request's length once, copies the request
 * out before parsing it, and never blocks on the driver without a timeout (so a dead driver is noticed). Both
 * ends are linked from this one file; it uses libc and raw futex calls only. */
#ifndef PP_CHAN_H
#define PP_CHAN_H

#include <stddef.h>
#include <stdint.h>

#define PP_CHAN_MAGIC 0x70706368u /* "ppch" */
#define PP_CHAN_MSG (64 * 1024)   /* bytes of one request or reply */
#define PP_CHAN_FD 3              /* the descriptor a driver finds its channel on */
#define PP_EXE_FD 4               /* the driver executable, for its execveat (closed by it) */
#define PP_OBJ_FD 5               /* the lab's object, which the driver loads after its lockdown */

/* What the driver runs: a rank's step function, or the warm-up's exercise functions. */
enum { PP_CHAN_SCHEDULE = 1, PP_CHAN_WARMUP = 2 };

/* Written by the runtime before the driver starts; the driver copies them once, before any student code. */
typedef struct pp_chan_facts {
    uint32_t magic;
    int32_t mode;            /* PP_CHAN_SCHEDULE or PP_CHAN_WARMUP */
    int32_t rank, P, M, v, recompute; /* rank: its pipeline index p, 0..P-1 */
    int32_t replica, D;      /* its replica d, 0..D-1, of D */
    int32_t vshape;          /* 1: virtual stages placed in a V (placement.h) */
    int32_t sandbox;         /* 1: lock down (seccomp) before any student code; 0: --unsafe-no-sandbox */
    int64_t spin_ns;         /* how long the driver spins for a reply before it sleeps */
    char symbol[48];         /* the step function to call ("pp_gpipe_step"); unused for the warm-up */
} pp_chan_facts;

typedef struct pp_chan {
    pp_chan_facts facts;
    uint32_t req_seq;        /* bumped by the driver: a new request is in req[] */
    uint32_t rep_seq;        /* set to the request's number by the runtime: its reply is in rep[] */
    uint32_t req_sleeping;   /* the runtime sleeps on req_seq: the driver must wake it */
    uint32_t rep_sleeping;   /* the driver sleeps on rep_seq */
    uint32_t req_len, rep_len;
    /* left by the driver's signal handlers before it dies (self-reported: only ever explains a failure) */
    int32_t death_signal;    /* the signal it died of, 0 when none was caught */
    int32_t refused_syscall; /* the system call the sandbox refused (SIGSYS), -1 when none */
    uint64_t death_pc;       /* where the signal hit */
    uint64_t oom_bytes;      /* the last allocation of the schedule that failed (0: none did) */
    unsigned char req[PP_CHAN_MSG];
    unsigned char rep[PP_CHAN_MSG];
} pp_chan;

/* ---- runtime side -------------------------------------------------------------------------------------- */

/* Makes a channel in a new anonymous shared memory file (close-on-exec) and maps it. Returns 0 with *c and
 * *fd set, or -1 (errno set). */
int pp__chan_create(pp_chan **c, int *fd);
/* Unmaps a channel (either side). */
void pp__chan_unmap(pp_chan *c);

/* Waits for the driver's next request after the one numbered *seq (spinning up to spin_ns first). Every
 * timeout_ms it asks alive(ctx) whether the driver still runs; returns 0 when it does not. On a request copies
 * it into buf (cap bytes, at least PP_CHAN_MSG), sets *len and *seq, and returns 1. */
int pp__chan_await_request(pp_chan *c, uint32_t *seq, int64_t spin_ns, int timeout_ms, int (*alive)(void *),
                           void *ctx, void *buf, size_t cap, size_t *len);
/* Publishes the reply to request seq, whose len bytes the caller wrote into c->rep. */
void pp__chan_reply(pp_chan *c, uint32_t seq, size_t len);

/* ---- driver side --------------------------------------------------------------------------------------- */

/* Maps the channel the runtime handed over on fd. NULL when it is not one. */
pp_chan *pp__chan_attach(int fd);
/* Publishes a request of len bytes (already written into c->req) as number seq and waits for its reply;
 * returns the reply's length (bounded by PP_CHAN_MSG). */
size_t pp__chan_call(pp_chan *c, uint32_t seq, size_t len);

#endif /* PP_CHAN_H */
