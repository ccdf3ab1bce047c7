/* resultfile.h: the files a test's processes hand the grader: a head (magic, the test's token, the file's kind),
 * then the kind's raw data. Every file is written beside its name and renamed over it, and read only when its
 * head is the test's own. */
#ifndef PP_RESULTFILE_H
#define PP_RESULTFILE_H

#include <stddef.h>
#include <stdint.h>

#include "grade.h"
#include "runtime.h"
#include "wire.h"

/* What a file holds after its head: a run's results, the warm-up's recorded answers, a full-batch reference. */
typedef enum { PP_RESULTFILE_RUN = 1, PP_RESULTFILE_WARMUP = 2, PP_RESULTFILE_REFERENCE = 3 } pp_resultfile_kind;

/* Appends the head of a file of kind, stamped with token, to w. */
void pp__resultfile_head(pp_wire *w, uint64_t token, pp_resultfile_kind kind);

/* Writes w as the file at path, whole or not at all (written beside it, then renamed over it: under mpirun the
 * supervisor takes a result that is there as rank 0's last word and ends mpirun soon after; on a busy machine
 * rank 0 could still be writing it). 0, or -1. */
int pp__resultfile_put(const char *path, const pp_wire *w);

/* The whole file at path (NULL when missing), malloc'd. Its size follows from the configuration, so no cap
 * applies: any model the machine holds reaches the grader. */
unsigned char *pp__resultfile_get(const char *path, size_t *len);

/* Opens the file buf (len bytes) as one of kind stamped with token: r is positioned after its head. 0, or -1 when
 * it is not that. */
int pp__resultfile_open(pp_wire_in *r, const unsigned char *buf, size_t len, uint64_t token, pp_resultfile_kind kind);

/* Writes a run's result file: head, then the run as the grader decodes it (pp__result_decode). 0, or -1. */
int pp__resultfile_put_run(const char *path, uint64_t token, const pp_run_result *res, int steps);

/* Reads the run's file at path for a run of P*D ranks, v chunks and steps steps into res (freed with
 * pp__result_free). 0, or -1 when it is missing, not the test's or malformed. */
int pp__resultfile_get_run(const char *path, uint64_t token, int ranks, int v, int steps, pp_run_result *res);

/* From here on, a fatal error of this process (pp__die) is written as its file of kind at path, for test tc
 * stamped with token, so that the grade names it (out of memory: which size) instead of a process that ended
 * without a word. tc and path must stay valid. */
void pp__resultfile_fatal_to(const pp_test_config *tc, uint64_t token, const char *path, pp_resultfile_kind kind);

#endif /* PP_RESULTFILE_H */
