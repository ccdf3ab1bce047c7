/* driver.h: the schedule driver, the one small program that holds a rank's student code (or the warm-up's). The
 * kit builds it once; no student code is linked into it: the lab's object is loaded after the lockdown, its
 * undefined names resolved only against a fixed table. It never sees a tensor, a trace, a reference or a
 * score. Every pp.h call that touches the rank's state becomes a request over the channel (chan.h) to the
 * runtime, which owns all of that.
 *
 *   main.c      start-up: map the channel, lock down, load the object, seal, then serve the runtime's
 *               commands (run a step, call a warm-up function, exit)
 *   client.c    pp.h, as requests
 *   lockdown.c  the seccomp filters and the handlers that explain a refused call or a crash
 *   loader.c    the x86-64 relocatable-object loader
 *   symtab.c    the table the loader resolves against (sandbox/proto/symbols.h with addresses)
 *   memory.c    allocations, noted when one fails
 * and, shared with pplab: chan.c, wire.c, crash.c, warmup_call.c (sandbox/proto), filter.c (sandbox/policy),
 * tag.c (base/: the tag layout pp_tag answers with). */
#ifndef PP_DRIVER_H
#define PP_DRIVER_H

#include <stddef.h>

#include "chan.h"
#include "pp.h"
#include "wire.h"

/* The channel, once main.c has attached it. */
extern pp_chan *pp__drv_chan;

/* A request: pp__drv_begin locks the channel and starts the message with op; the caller adds arguments to *w;
 * pp__drv_call sends it and returns the reply positioned after its status, which it returns through *status.
 * The caller reads its results and calls pp__drv_end to unlock. */
void pp__drv_begin(pp_wire *w, int op);
pp_wire_in pp__drv_call(pp_wire *w, unsigned *status);
void pp__drv_end(void);
/* Sends pp_fail's message, a request the runtime answers by stopping the run, and waits for the end. */
void pp__drv_fail(const char *msg) __attribute__((noreturn));
/* Stops the run for a reason of the driver's own (op PP_RPC_MISUSE, _SETUP_FAILED or _LOAD_FAILED, a pp_stop_code
 * and its argument; detail: what the runtime shows as the submission's, or NULL), and waits for the end. */
void pp__drv_stop(int op, int code, long arg, const char *detail) __attribute__((noreturn));

/* Copies the rank facts out of the channel into the handle the step function receives. */
pp_rank *pp__drv_rank_init(const pp_chan_facts *f);
/* Starts a step: its handles carry step (mod 2^16) and hrank, and count from zero (what GO says). */
void pp__drv_step_begin(int step, int hrank);
/* Waits until the runtime has served every post this thread made, as if each of its calls had waited: what
 * the schedule shows of itself (its output, a crash, an exit) waits for this, so that nothing appears past a
 * call the runtime refused, or one still blocked (then it never returns). Another thread's calls do not hold
 * it: a thread that crashes while the step waits in pp_recv is a crash, as it would be in-process. Safe in a
 * signal handler. */
void pp__drv_settle(void);
/* exit() as the lab's code gets it: after pp__drv_settle. */
void pp__drv_exit(int status) __attribute__((noreturn));

/* malloc, calloc, realloc, aligned_alloc and posix_memalign as the lab's code gets them (memory.c): the C
 * library's, with a failed request's size noted in the channel for the report. */
void *pp__drv_malloc(size_t n);
void *pp__drv_calloc(size_t n, size_t size);
void *pp__drv_realloc(void *p, size_t n);
void *pp__drv_aligned_alloc(size_t align, size_t n);
int pp__drv_posix_memalign(void **p, size_t align, size_t n);

/* Installs the crash and refusal handlers, then (when sandbox) forbids every system call a schedule never
 * needs. Returns 0, or -1 with the reason in err and errno set. Runs before any code of the student's. */
int pp__drv_lockdown(int sandbox, int rank, char *err, size_t len);

/* After the object is loaded: a second filter that refuses executable memory (mmap and mprotect with
 * PROT_EXEC) and further filters. Returns 0, or -1 with the reason in err and errno set. */
int pp__drv_seal(char *err, size_t len);

#endif /* PP_DRIVER_H */
