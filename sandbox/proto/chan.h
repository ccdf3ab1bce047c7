/* chan.h: the channel between one schedule driver (the untrusted process that runs a rank's step function) and
 * the runtime thread serving that rank. It is one shared memory object with two ways in:
 *   - a call: a request slot the driver fills and a reply slot the runtime fills, with two sequence numbers,
 *     each bumped when its slot holds a new message; the driver waits for the reply;
 *   - posts: a ring of small requests the driver does not wait for (every pp.h call), and a count of those the
 *     runtime has served, each one accepted. The runtime serves every post published before a call ahead of
 *     the call, so requests run in the order the schedule made them.
 * A waiting side spins briefly (a futex wake-up across cores costs tens of microseconds on small VMs), then
 * sleeps with a futex. The runtime sleeps on one word the driver bumps for a call, and before it waits on posts.
 *
 * The runtime treats everything in the object as hostile: it reads a request's length once, copies the request
 * out before parsing it, keeps its own count of posts taken, and never blocks on the driver without a timeout
 * (so a dead driver is noticed). Both ends are linked from this one file; it uses libc and raw futex calls
 * only. */
#ifndef PP_CHAN_H
#define PP_CHAN_H

#include <stddef.h>
#include <stdint.h>

#define PP_CHAN_MAGIC 0x70706368u /* "ppch" */
#define PP_CHAN_MSG (64 * 1024)   /* bytes of one request or reply */
#define PP_CHAN_POSTS 256         /* posts in flight at most: the ring's slots */
#define PP_CHAN_POST_MSG 128      /* bytes of one post */
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
    int32_t tp, T;           /* its shard t, 0..T-1, of T (--tp) */
    int32_t grid;            /* 1: this driver (rank 0's alone) asks the lab's mapping of the grid (grid.h), after
                              * PP_RPC_GRID_ASK; its first PP_RPC_NEXT carries pp__grid_ask's answer */
    int32_t blocks[16];      /* the blocks of each of its v chunks (pp_stage_blocks) */
    /* where its chunks lie, as the runtime placed them (lib/schedule/placement.h): the driver is told, never
     * computes it, so that it links no schedule code of the runtime's and cannot disagree with it */
    int32_t vstage[16];      /* the virtual stage of each of its v chunks (pp_virtual_stage) */
    int32_t prev_vstage[16]; /* the virtual stage before it on its micro-batches' path, -1 where it reads the
                              * tokens (a backward there makes no dx) */
    int32_t sandbox;         /* 1: lock down (seccomp) before any student code; 0: --unsafe-no-sandbox */
    int64_t spin_ns;         /* how long the driver spins for a reply before it sleeps */
    char symbol[48];         /* the step function to call ("pp_gpipe_step"); unused for the warm-up */
} pp_chan_facts;

typedef struct pp_chan {
    pp_chan_facts facts;
    uint32_t req_seq;        /* bumped by the driver: a new call is in req[] */
    uint32_t rep_seq;        /* set to the request's number by the runtime: its reply is in rep[] */
    uint32_t req_sleeping;   /* the runtime sleeps on bell: the driver must wake it */
    uint32_t rep_sleeping;   /* the driver sleeps on rep_seq */
    uint32_t req_len, rep_len;
    uint32_t bell;           /* bumped by the driver after a call, and before it waits on posts: the runtime
                              * sleeps on it */
    uint32_t posted;         /* posts published by the driver (post n is in post[n % PP_CHAN_POSTS]) */
    uint32_t served;         /* posts the runtime took and served, each one accepted */
    uint32_t served_sleeping; /* the driver sleeps on served (for a free slot, or for every post to be served) */
    uint32_t post_len[PP_CHAN_POSTS];
    /* left by the driver's signal handlers before it dies (self-reported: only ever explains a failure) */
    int32_t death_signal;    /* the signal it died of, 0 when none was caught */
    int32_t refused_syscall; /* the system call the sandbox refused (SIGSYS), -1 when none */
    uint64_t death_pc;       /* where the signal hit */
    uint64_t oom_bytes;      /* the last allocation of the schedule that failed (0: none did) */
    unsigned char post[PP_CHAN_POSTS][PP_CHAN_POST_MSG];
    unsigned char req[PP_CHAN_MSG];
    unsigned char rep[PP_CHAN_MSG];
} pp_chan;

/* ---- runtime side -------------------------------------------------------------------------------------- */

/* Makes a channel in a new anonymous shared memory file (close-on-exec) and maps it. Returns 0 with *c and
 * *fd set, or -1 (errno set). */
int pp__chan_create(pp_chan **c, int *fd);
/* Unmaps a channel (either side). */
void pp__chan_unmap(pp_chan *c);

/* Waits for the driver's next request: post number *taken if the driver published it, else a call after the one
 * numbered *seq (spinning up to spin_ns first). Every timeout_ms it asks alive(ctx) whether the driver still
 * runs; returns 0 when it does not and nothing is left to take. On a request copies it into buf (cap bytes, at
 * least PP_CHAN_MSG), sets *len, bumps *taken (a post, *posted = 1) or sets *seq (a call, *posted = 0), and
 * returns 1. */
int pp__chan_await_request(pp_chan *c, uint32_t *seq, uint32_t *taken, int *posted, int64_t spin_ns,
                           int timeout_ms, int (*alive)(void *), void *ctx, void *buf, size_t cap, size_t *len);
/* Publishes the reply to call seq, whose len bytes the caller wrote into c->rep. */
void pp__chan_reply(pp_chan *c, uint32_t seq, size_t len);
/* Says that posts before number n were served, each one accepted. */
void pp__chan_served(pp_chan *c, uint32_t n);

/* ---- driver side --------------------------------------------------------------------------------------- */

/* Maps the channel the runtime handed over on fd. NULL when it is not one. */
pp_chan *pp__chan_attach(int fd);
/* Publishes a request of len bytes (already written into c->req) as number seq and waits for its reply;
 * returns the reply's length (bounded by PP_CHAN_MSG). */
size_t pp__chan_call(pp_chan *c, uint32_t seq, size_t len);
/* The slot of post number n, once it is free (waiting while PP_CHAN_POSTS posts are unserved). */
unsigned char *pp__chan_post_slot(pp_chan *c, uint32_t n);
/* Publishes post number n, whose len bytes (at most PP_CHAN_POST_MSG) are in its slot. It does not wake the
 * runtime: the next call or wait (pp__chan_call, pp__chan_post_slot, pp__chan_drain) does. */
void pp__chan_post(pp_chan *c, uint32_t n, size_t len);
/* Waits until the runtime has served every post before number n. */
void pp__chan_drain(pp_chan *c, uint32_t n);

#endif /* PP_CHAN_H */
