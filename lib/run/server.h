/* server.h: the trusted end of a rank's schedule driver. In a sandboxed run each rank's step function is this
 * server: it answers the driver's requests by calling pp.h's functions on the rank's real state, so every
 * check, the virtual clock, the trace and the stash accounting are the same code as in an in-process run, and
 * none of it is in the driver's reach. Handles cross as ids (rpc.h) that the server checks: one of another
 * rank, of an earlier step, or never handed out gets the same one-line error an in-process run gives. */
#ifndef PP_SERVER_H
#define PP_SERVER_H

#include <stddef.h>

#include "error.h"

typedef struct pp_rank pp_rank;
typedef struct pp_server pp_server;
typedef struct pp_run_config pp_run_config;
typedef struct pp_sandbox pp_sandbox;

/* Starts the driver of rank `rank` (executable and limits from sb) that calls the step function `symbol`.
 * Returns the server, or NULL with the reason in err. Call before the transport starts (no fork after MPI). */
pp_server *pp__server_start(const pp_run_config *cfg, const pp_sandbox *sb, const char *symbol, int rank,
                            char *err, size_t len);

/* The step function of a sandboxed run: serves rank r's driver (r->srv) for one step, until its step function
 * returns. A failure (a refused request, the driver's death) stops the run through pp__rank_abort. */
void pp__server_step(pp_rank *r);

/* Waits for the driver's first request, its ready (PP_RPC_NEXT), before the run's first step, and copies what it
 * carries into buf (the grid lab's answer, grid_call.h); the first step then starts at once. A grid lab's driver
 * says PP_RPC_GRID_ASK before it asks the submission: from then on any other request is the submission's and is
 * refused, and the answer must come within the test's time limit (a sleep burns no CPU). Returns its length, or
 * -1 with *st and why in msg (the driver ended, stopped, ran out of time or sent something else first). */
long pp__server_hello(pp_server *s, unsigned char *buf, size_t cap, pp_status *st, char *msg, size_t len);

/* 1 when the driver has ended (without reaping it: any thread may ask), with how in *st and msg (a line and its
 * HINT); 0 while it runs. */
int pp__server_ended(pp_server *s, pp_status *st, char *msg, size_t len);

/* Ends the driver: told to exit (and given a moment to flush its output) when the run succeeded, killed
 * otherwise; then frees the server. */
void pp__server_stop(pp_server *s, int clean);
/* Tells a driver waiting for its next command to leave, without waiting for it (pp__server_stop then does): a
 * run releases all its drivers first, so that they end together. Safe on NULL and on a driver not waiting. */
void pp__server_release(pp_server *s);

typedef struct pp_wire_in pp_wire_in;
/* Why a driver stopped of its own accord (a PP_RPC_MISUSE, _SETUP_FAILED or _LOAD_FAILED request of op, read from
 * in after its op): the status and this side's sentence for its code ("<who> driver could not lock itself down
 * (...): ...", who being "the schedule's" or "the warm-up's", symbol the lab's step function), with any text the
 * driver added on marked lines after it, and a hint or NULL. 0, or -1 for a request that says nothing this side knows (malformed). */
int pp__server_stop_reason(unsigned op, pp_wire_in *in, const char *who, const char *symbol, pp_status *st,
                           const char **hint, char *msg, size_t len);

#endif /* PP_SERVER_H */
