/* testset.h: the default grading set, a part per schedule of the schedule table: the configurations every
 * course grades unless it brings its own (--config), readable by students on purpose. The grader's data, kept
 * beside the suite that turns it into tests; the schedule table says what a schedule is, not how it is graded. */
#ifndef PP_TESTSET_H
#define PP_TESTSET_H

/* One configuration of the default grading set (suite.c turns it into a test). */
typedef struct pp_schedule_test {
    int P, M, v, steps;
    unsigned seed;
    double latency;            /* --comm-latency */
    int recompute;
    int on_gpu;                /* 1: also in the smaller set a CUDA grading run uses */
    int D;                     /* --dp: data-parallel replicas (0 or 1: one pipeline) */
} pp_schedule_test;

/* Schedule `name`'s part of the default set, in order, with its count in *n; NULL and 0 for a name without
 * one (tests/test_schedules.c holds every row of the schedule table to having one). */
const pp_schedule_test *pp__testset(const char *name, int *n);

#endif /* PP_TESTSET_H */
