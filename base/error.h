/* error.h: status codes and the checks that stop a run with file:line, what failed and a HINT.
 * Internal to libpp and pplab; students only ever see the one-line messages these print. */
#ifndef PP_ERROR_H
#define PP_ERROR_H

#include <stdio.h>
#include <stdlib.h>

/* Every status pplab reports, from one table so names and messages never drift apart. */
#define PP_STATUS_TABLE(X)                                                        \
    X(PP_OK, "ok")                                                                \
    X(PP_ERR_CONFIG, "bad configuration")                                         \
    X(PP_ERR_USAGE, "API misuse")                                                 \
    X(PP_ERR_SHAPE, "shape or dtype mismatch")                                    \
    X(PP_ERR_DEADLOCK, "deadlock")                                                \
    X(PP_ERR_UNCONSUMED, "message never received")                                \
    X(PP_ERR_STUDENT, "failure raised by the schedule")                           \
    X(PP_ERR_BACKEND, "backend error")                                            \
    X(PP_ERR_NODEVICE, "no device")                                               \
    X(PP_ERR_TIMEOUT, "timeout")                                                  \
    X(PP_ERR_CRASH, "crash")                                                      \
    X(PP_ERR_COMPILE, "compile error")                                            \
    X(PP_ERR_IO, "I/O error")                                                     \
    X(PP_ERR_SANDBOX, "refused by the sandbox")                                   \
    X(PP_ERR_LIMIT, "resource limit")                                             \
    X(PP_ERR_LOST, "ranks lost")                                                  \
    X(PP_ERR_INTERNAL, "pplab or the machine failed")

typedef enum {
#define PP__ENUM(name, msg) name,
    PP_STATUS_TABLE(PP__ENUM)
#undef PP__ENUM
        PP_STATUS_COUNT
} pp_status;

/* The status's name ("PP_ERR_DEADLOCK") and its short description ("deadlock"). */
const char *pp__status_name(pp_status s);
const char *pp__status_str(pp_status s);

/* Prints "pplab: error: <what> (file:line)" and "HINT: <hint>" to stderr, then exits with status 2.
 * For setup failures outside a run (no rank to blame); inside a run use pp__rank_abort(). */
void pp__die(const char *file, int line, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));

#define PP_DIE(hint, ...) pp__die(__FILE__, __LINE__, (hint), __VA_ARGS__)

/* A process that reports fatal errors elsewhere than on stderr (a grading supervisor, the grader's reference
 * process) sets a handler: pp__die calls it first with the message (what failed, without file:line) and the
 * hint, once per process; a handler that returns lets pp__die print and exit as usual. NULL: the default. A
 * message for memory that could not be had starts with "out of memory". */
typedef void (*pp_die_handler)(const char *what, const char *hint);
void pp__die_set_handler(pp_die_handler h);

/* Checks a condition that only a bug in pplab can break. */
#define PP_ASSERT(cond)                                                                                        \
    do {                                                                                                       \
        if (!(cond)) PP_DIE("this is a bug in pplab; please report it with the command you ran",              \
                            "internal check failed: %s", #cond);                                             \
    } while (0)

/* Allocation that never returns NULL. */
void *pp__xmalloc(size_t n);
void *pp__xcalloc(size_t n, size_t size);
void *pp__xrealloc(void *p, size_t n);

#endif /* PP_ERROR_H */
