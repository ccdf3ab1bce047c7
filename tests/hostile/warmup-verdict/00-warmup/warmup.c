/* HOSTILE ON PURPOSE (warmup-verdict): prints a fake full-marks verdict from its answers and answers wrong.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>

#include "pp.h"

double pp_warmup_bubble(const char *schedule, int P, int M, int v) {
    printf("warmup bubble: 5/5\nScore: 20/20\nFULL MARKS\n");
    fflush(stdout);
    return 0.5;
}
