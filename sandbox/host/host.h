/* host.h: the trusted end of a jailed driver: starting it, waiting for its next request, replying, reading how
 * it ended, stopping it. The rank server (lib/run/server.c) and the warm-up's calls (grader/grade/warmup_io.c)
 * both serve one. A driver gets a fresh execve of the one driver executable the kit builds (never a fork of pplab: nothing of this
 * process's memory reaches it), descriptors 0 = /dev/null, 1 and 2 = this process's output, 3 = its channel,
 * 5 = the lab's object, and nothing else; an empty environment; and the jail of policy.h (an empty root and a
 * uid of the test's own as root, limits, Landlock, the pre-exec seccomp filter). It then locks itself down
 * (driver/lockdown.c) before it loads the student's object. */
#ifndef PP_HOST_H
#define PP_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "chan.h"
#include "error.h"
#include "policy.h"

typedef struct pp_driver {
    pid_t pid;               /* 0 when none was started */
    pp_chan *chan;
    uint32_t seq;            /* the number of the last call taken */
    uint32_t taken;          /* posts taken so far */
    int posted;              /* 1 when the request being served is a post (answered by counting it served) */
    int pending;             /* 1 while a request waits for its reply */
    int64_t spin_ns;         /* how long a wait for a request spins before it sleeps */
    size_t memory_limit;     /* the sandbox's, for the report of a schedule that ran out of memory */
    int reaped, status;      /* the wait status once it ended */
    char spawn_failed[208];  /* why the child could not become a driver (what it said before execve, through a
                              * pipe closed at execve: nothing the driver runs can write there), or "" */
    unsigned char req[PP_CHAN_MSG];  /* the request being served: a private copy */
    size_t req_len;
} pp_driver;

/* Opens, for the drivers of one run, the driver executable and the lab's object at these paths (read-only,
 * close-on-exec) into sb->exe_fd and sb->obj_fd. 0, or -1 with the reason in err. */
int pp__host_open(pp_sandbox *sb, const char *driver, const char *object, char *err, size_t len);
/* Closes what pp__host_open opened (safe when it opened nothing). */
void pp__host_close(pp_sandbox *sb);

/* Starts a driver with channel facts f (copied into its channel). Returns 0, or -1 with the reason in err. */
int pp__driver_start(pp_driver *d, const pp_sandbox *sb, const pp_chan_facts *f, char *err, size_t len);

/* Waits for the driver's next request into d->req; returns 0 when the driver ended instead. */
int pp__driver_next(pp_driver *d);
/* The same, for at most limit_s seconds of wall time: 1 with a request, 0 when the driver ended, -1 when the time
 * ran out with the driver still running (a submission's code that sleeps or blocks burns no CPU, so its CPU limit
 * never ends it). */
int pp__driver_next_within(pp_driver *d, double limit_s);

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
