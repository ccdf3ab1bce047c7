/* labkind.h: what the runner asks of a lab, the same for the warm-up's questions and for every schedule's run.
 * The runner forks a test's supervisor, times it and reads back its file; a lab's kind says what the supervisor
 * does, how its file is graded and what a test that failed as a whole looks like. Each row of the labs' table
 * (labs.h) names its kind, so a new kind of lab is a new file beside schedule_lab.c and warmup_lab.c and a row,
 * not a branch in the runner. */
#ifndef PP_LABKIND_H
#define PP_LABKIND_H

#include <stdint.h>

#include "grade.h"

typedef struct pp_lab_info pp_lab_info;
typedef struct pp_impl pp_impl;
typedef struct pp_refproc pp_refproc;

/* One test as its kind sees it, on either side of the process boundary. */
typedef struct pp_lab_task {
    const pp_lab_info *lab;
    const pp_test_config *tc;
    const pp_impl *impl;    /* the built lab (in the supervisor) */
    const char *backend;    /* where its runs compute (in the supervisor) */
    uint64_t token;         /* stamps every file of the test, so that no file of another test is taken for it */
    const char *res_path;   /* the supervisor's result file, which the grader reads */
    const char *plain_path; /* the run without recomputation, when tc->recompute */
    pp_refproc *ref;        /* the full-batch reference beside the run (in the grader; not running when the kind
                               has none) */
} pp_lab_task;

typedef struct pp_lab_kind {
    /* A full-batch reference process runs beside each test. */
    int reference;
    /* The processes whose captured output a test shows, in their order (the supervisor's own comes after). */
    int (*ranks)(const pp_test_config *tc);
    /* Seconds the grader waits for the supervisor before it ends it as out of time. */
    double (*wait_s)(const pp_test_config *tc);
    /* In the supervisor, with its output captured: the test's work, its raw results written to t->res_path (and
     * t->plain_path). Returns 0, or 1 when a file could not be written. */
    int (*execute)(const pp_lab_task *t);
    /* In the grader, once the supervisor exited: 1 when it recorded that the test ran out of time. */
    int (*timed_out)(const pp_lab_task *t);
    /* In the grader: reads the supervisor's file and grades it into out (its name, config and timings set). */
    void (*grade)(const pp_lab_task *t, pp_test_result *out);
    /* A test that failed as a whole (st, msg): out as this lab's checks, each scoring 0, with msg as its error. */
    void (*fail)(const pp_test_config *tc, pp_status st, const char *msg, pp_test_result *out);
} pp_lab_kind;

/* The kinds there are: every schedule's lab (schedule_lab.c), the warm-up's (warmup_lab.c) and lab 09's, whose
 * student writes the scheduler (scheduler_lab.c). */
extern const pp_lab_kind pp__schedule_lab;
extern const pp_lab_kind pp__warmup_lab;
extern const pp_lab_kind pp__scheduler_lab; /* lab 09's (scheduler_lab.c) */

#endif /* PP_LABKIND_H */
