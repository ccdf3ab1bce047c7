/* suite.h: the grading suite: the test configurations, the default set (from the schedule table) and hidden ones
 * from a file, and how a test is named. */
#ifndef PP_SUITE_H
#define PP_SUITE_H

#include "grade.h"
#include "testcfg.h"

/* The default configurations of `lab` ("all" for every lab, a lab's name, or a lab's folder for every lab in
 * it), in lab order. Returns the count; *out is malloc'd. The set is explicit so students and instructors can
 * read exactly what is graded. */
int pp__suite_default(const char *lab, int gpu, pp_test_config **out);

/* Appends the configurations of a file to *out (count *n), keeping only `lab`'s (as pp__suite_default). Lines:
 *   <lab> [P=4] [M=8] [v=2] [steps=2] [seed=7] [latency=0.5] [recompute=1] [layers=8] [width=64] [time=20]
 *         [layout=first:3,last:3] [edge=1] [part=bubble|peaks|...|traffic]   (part: warm-up only, and no seed)
 *   warmup-seed=N                                                           (at most one line)
 * '#' starts a comment; hidden=, width's former name, is still read. A warmup-seed line makes every warm-up test
 * in *out draw its cases from N and the graded file, those that were there before the call (the default set's
 * parts) and the file's. Returns 0, or -1 with "FILE:LINE: what is wrong" in err. */
int pp__suite_load(const char *path, const char *lab, pp_test_config **out, int *n, char *err, size_t errlen);

#endif /* PP_SUITE_H */
