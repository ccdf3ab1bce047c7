/* warmup_io.h: the warm-up's calls and their answers. Each call of a part's exercise function goes one of three
 * ways: to a live driver of the student's file (its answer recorded), to the file loaded in this process (the
 * unsandboxed debugging mode, recorded the same way), or to a record (replayed in order, in the grader). The
 * answer keys a part scores against are asked here too, since a missing key ends the part as a failed call does.
 * The driver never sees an answer key; the supervisor's verdict is never used. */
#ifndef PP_WARMUP_IO_H
#define PP_WARMUP_IO_H

#include <setjmp.h>
#include <stdlib.h>

#include "grade.h"
#include "host.h"
#include "warmup_call.h"
#include "wire.h"

/* Where answers come from: the live driver (recording them), or a record (replaying them). */
typedef struct pp_warmup_io {
    pp_driver *d;            /* live, else NULL */
    const pp_warmup_fns *fns; /* live in this process (the unsandboxed debugging mode), else NULL */
    pp_wire *rec;            /* live: the record */
    pp_wire_in in;           /* replay: the record being read */
    jmp_buf missing;         /* the part's function is not defined */
    pp_warmup_fn fn;         /* the function of the call in flight: names the missing one of a part with several */
    jmp_buf failed;          /* the driver ended (live) or the record ran out (replay) */
    pp_status st;
    char err[600];
} pp_warmup_io;

/* What a lab of calls asks through io: returns 0, or -1 when io failed (io->st and io->err say how). */
typedef int pp_warmup_asker(pp_warmup_io *io, void *arg);

/* A lab of calls in the test's supervisor (the warm-up, lab 09): ask's calls go to a driver of the lab's file
 * started on sb (whose exe_fd is open), or to fns in this process when given (the unsandboxed debugging mode), their
 * answers appended to rec. whose names the driver in messages ("the warm-up's"). Returns PP_OK, or how the driver
 * failed with one line in err. */
pp_status pp__warmup_session(const pp_sandbox *sb, const pp_warmup_fns *fns, pp_wire *rec, pp_warmup_asker *ask,
                             void *arg, const char *whose, char *err, size_t len);

/* The warm-up's asker: the calls of the part that the pp_test_config given as arg names. */
pp_warmup_asker *pp__warmup_asker(void);

typedef struct pp_lab_task pp_lab_task;
typedef struct pp_sched_problem pp_sched_problem;
/* A lab of calls' supervisor (labkind.h's execute): ask's calls made through pp__warmup_session on a driver of the
 * task's build (or its object loaded here in the debugging mode), and the record with how it ended written to the
 * task's result file. Returns 0, or 1 when the file could not be written. */
int pp__calls_lab_execute(const pp_lab_task *t, pp_warmup_asker *ask, void *arg, const char *whose);
/* In the grader: that file read back. Returns the file's bytes (free them when done) with *rec, *n the record in
 * them; NULL when the file is missing or malformed or the supervisor's calls ended badly (a crash, a refused call),
 * out then filled by the lab's kind as a test that failed as a whole, whose (the lab's, "the warm-up's") naming it. */
unsigned char *pp__calls_lab_read(const pp_lab_task *t, const void **rec, size_t *n, const char *whose,
                                  pp_test_result *out);

/* The rest of a lab of calls' kind: one process's output shown, the test's own time limit, and no run that could
 * outlive it unseen (the supervisor is the one process). */
int pp__calls_lab_ranks(const pp_test_config *tc);
double pp__calls_lab_wait_s(const pp_test_config *tc);
int pp__calls_lab_timed_out(const pp_lab_task *t);

/* The answer key of the case the format names (warmup_keys.h), in a buffer that the next call reuses. A build
 * without it ends the part (longjmp to io->failed) as not graded, saying which case: only a handout lacks keys,
 * and it grades its recorded public cases alone. */
const char *pp__warmup_io_key(pp_warmup_io *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define PP_WARMUP_KEY_NUM(io, ...) strtod(pp__warmup_io_key(io, __VA_ARGS__), NULL)
#define PP_WARMUP_KEY_INT(io, ...) atoi(pp__warmup_io_key(io, __VA_ARGS__))

/* The exercise functions, one call each through io (pp_warmup_fn names them; docs/00-warmup.md states what each
 * answers). A function the file does not define longjmps to io->missing, a driver that ended or a record that ran
 * out to io->failed. An answer that does not decode is NaN for a double, -2 for a list's return value. */
double pp__warmup_ask_bubble(pp_warmup_io *io, const char *sched, int P, int M, int v);
int pp__warmup_ask_peak(pp_warmup_io *io, const char *sched, int P, int M, int v, int rank);
/* The order of `rank` into buf (n bytes, cap of them offered to the function; the rest is a guard): through
 * pp_warmup_order when v < 0, else through pp_warmup_chunk_order with v chunks. */
int pp__warmup_ask_order(pp_warmup_io *io, const char *sched, int P, int M, int v, int rank, char *buf, size_t n,
                         int cap);
/* A cut of nlayers layers of the given costs into P stages, into first (n entries: P + 1 and a guard). */
int pp__warmup_ask_partition(pp_warmup_io *io, int nlayers, const double *cost, int P, int *first, int n);
/* Which of P ranks are idle in time unit t, into idle (n entries: P and a guard). */
int pp__warmup_ask_idle(pp_warmup_io *io, const char *sched, int P, int M, int v, int t, int *idle, int n);
double pp__warmup_ask_uneven(pp_warmup_io *io, int P, int M, const double *f);
int pp__warmup_ask_chunks(pp_warmup_io *io, int P, int M, int blocks, double latency);
double pp__warmup_ask_traffic(pp_warmup_io *io, const char *sched, int P, int M, int v, int b, int s, int h);
double pp__warmup_ask_memory(pp_warmup_io *io, const char *sched, int P, int M, int v, int rank, int b, int s,
                             int h);
int pp__warmup_ask_grid_gpus(pp_warmup_io *io, int T, int P, int D);
double pp__warmup_ask_grid_pp(pp_warmup_io *io, int P, int D, int M, int v, int b, int s, int h, int elem);
double pp__warmup_ask_grid_dp(pp_warmup_io *io, int T, int P, int D, double params, int elem);
int pp__warmup_ask_grid_link(pp_warmup_io *io, const char *traffic, int G, int T, int P, int D);

/* Lab 09: the order the file's pp_scheduler_order writes for pb into buf (n bytes, cap of them offered to the
 * function; the rest is a guard, and the last byte is made NUL here); returns the function's value, -2 when the
 * answer does not decode. */
int pp__warmup_ask_scheduler(pp_warmup_io *io, const pp_sched_problem *pb, char *buf, size_t n, int cap);

#endif /* PP_WARMUP_IO_H */
