/* BROKEN ON PURPOSE (fake-score): does no work and prints a fake full-marks verdict on stdout; the grader never reads results from stdout.
 * tests/test_grader.c asserts that the grader catches it with the right message. */
#include <stdio.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    printf("Score: 504/504\nFULL MARKS\n");
    printf("{\"score\": 504, \"max_score\": 504}\n");
    fflush(stdout);
}
