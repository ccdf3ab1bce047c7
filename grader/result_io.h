/* result_io.h: a run's raw results as bytes, from the process that ran the student's code to the grader's
 * own process, which computes the reference and the checks itself. */
#ifndef PP_RESULT_IO_H
#define PP_RESULT_IO_H

#include <stdint.h>
#include <stdio.h>

#include "runtime.h"

/* Writes res (steps losses) to f, stamped with token. Returns 0 or -1. */
int pp__result_write(FILE *f, uint64_t token, int steps, const pp_run_result *res);

/* Parses len bytes written by pp__result_write into res (freed with pp__result_free), checking the token and
 * that every count fits configuration c (ranks, chunks, stages) and the bytes themselves; the bubble and
 * makespan are recomputed from the traces. Returns 0, or -1 (res empty) for anything malformed. */
int pp__result_read(const void *buf, size_t len, uint64_t token, const pp_run_config *c, pp_run_result *res);

#endif /* PP_RESULT_IO_H */
