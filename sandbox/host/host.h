/* spawn.h: starting, watching and ending schedule drivers, the processes that run untrusted schedule code (one
 * per rank, or one for the warm-up). A driver gets a fresh execve of the driver executable (never a fork of
 * pplab: nothing of this process's memory reaches it), descriptors 0 = /dev/null, 1 and 2 = this process's
 * output, 3 = its channel, and nothing else; an empty environment; / as its folder; resource limits; as root, an
 * unprivileged uid and gid; and the parent-death signal, so it never outlives the process that serves it. It
 * then locks itself down (lib/driver/lockdown.c) before any of the student's code runs. */
#ifndef PP_HOST_H
#define PP_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "chan.h"
#include "error.h"

typedef struct pp_sandbox {
    int exe_fd;              /* the driver executable, opened read-only by the caller (never by path later) */
    int lockdown;            /* 1: the seccomp allow list (the default); 0: --unsafe-no-sandbox */
    int drop_uid;            /* 1: run the driver as uid/gid (set when pplab runs as root) */
    uid_t uid;
    gid_t gid;
    size_t memory_limit;     /* address space of the driver, bytes (0: no limit) */
    double cpu_limit_s;      /* CPU seconds of the driver (0: no limit) */
    size_t output_limit;     /* bytes the driver may write to its output (0: no limit) */
} pp_sandbox;

#define PP_SANDBOX_MEMORY_DEFAULT ((size_t)256 << 20)
#define PP_SANDBOX_OUTPUT_DEFAULT ((size_t)64 << 20)

/* The defaults: lockdown on, as root the uid and gid of "nobody" (65534 when there is none), 256 MiB of address
 * space, 64 MiB of output, no CPU limit; exe_fd -1. */
void pp__sandbox_defaults(pp_sandbox *sb);

/* Checks, in a short-lived child, that this machine lets a process load a seccomp filter and (with drop_uid)
 * switch to the sandbox's uid. Returns 0, or -1 with one line saying what was refused and what to do. */
int pp__sandbox_probe(const pp_sandbox *sb, char *err, size_t len);

typedef struct pp_driver {
    pid_t pid;               /* 0 when none was started */
    pp_chan *chan;
    uint32_t seq;            /* the number of the request being served */
    int pending;             /* 1 while a request waits for its reply */
    int64_t spin_ns;         /* how long a wait for a request spins before it sleeps */
    size_t memory_limit;     /* the sandbox's, for the report of a schedule that ran out of memory */
    int reaped, status;      /* the wait status once it ended */
    unsigned char req[PP_CHAN_MSG];  /* the request being served: a private copy */
    size_t req_len;
} pp_driver;

/* Starts a driver with channel facts f (copied into its channel). Returns 0, or -1 with the reason in err. */
int pp__driver_start(pp_driver *d, const pp_sandbox *sb, const pp_chan_facts *f, char *err, size_t len);

/* Waits for the driver's next request into d->req; returns 0 when the driver ended instead. */
int pp__driver_next(pp_driver *d);

/* Answers the pending request with the len bytes the caller wrote into d->chan->rep. */
void pp__driver_reply(pp_driver *d, size_t len);

/* 1 while the driver runs; once it ended, reaps it and records how. */
int pp__driver_alive(pp_driver *d);

/* 1 when the driver has ended, with its wait status in *status, without reaping it (safe from any thread). */
int pp__driver_ended(const pp_driver *d, int *status);

/* How an ended driver ended, as one line for a report (a refused system call, a crash, an exit in the middle
 * of a step): the status to fail the run with, the message in msg, and a hint (NULL when none). */
pp_status pp__driver_death(const pp_driver *d, char *msg, size_t len, const char **hint);
/* The same for a wait status read with pp__driver_ended. */
pp_status pp__driver_death_of(const pp_driver *d, int status, char *msg, size_t len, const char **hint);

/* Ends the driver: waits up to grace_s seconds for it to leave by itself, then kills it, reaps it and unmaps
 * its channel. Safe on a driver that never started. */
void pp__driver_stop(pp_driver *d, double grace_s);

#endif /* PP_HOST_H */
