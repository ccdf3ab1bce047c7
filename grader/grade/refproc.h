/* refproc.h: the reference process, the full-batch reference of a test's configuration computed beside its run
 * (it used to be the grader's own serial work, half of all CPU time) and handed over in a token-stamped file. It
 * runs pplab's code alone, on nothing the submission produced, so it is as trusted as the grader. */
#ifndef PP_REFPROC_H
#define PP_REFPROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "grade.h"
#include "reference.h"

typedef struct pp_refproc {
    pid_t pid;      /* 0 when none runs */
    char path[320]; /* its file, created empty by the caller */
} pp_refproc;

/* Starts the reference process of tc, writing to rp->path stamped with token; rp->pid stays 0 when it could not
 * start (the grader then computes the reference itself). */
void pp__refproc_start(pp_refproc *rp, const pp_test_config *tc, uint64_t token);

/* Ends rp: waits for it to finish, or kills it (!wait) when the test needs it no more, and reaps it. Returns its
 * wait status, or -1 when none is running. */
int pp__refproc_end(pp_refproc *rp, int wait);

/* Waits for rp and reads its file (steps losses) into ref. Returns 1 with ref filled, 0 when none was started
 * (ref empty: the caller computes it), -1 with *st_out and err set when it failed. */
int pp__refproc_read(pp_refproc *rp, uint64_t token, int steps, pp_reference *ref, pp_status *st_out, char *err,
                     size_t errlen);

#endif /* PP_REFPROC_H */
