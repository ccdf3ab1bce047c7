/* HOSTILE ON PURPOSE (warmup-open): reads the grader's answer keys from its source in the middle of the warm-up.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>

#include "pp.h"

double pp_warmup_bubble(const char *schedule, int P, int M, int v) {
    FILE *f = fopen("grader/warmup.c", "r");
    return f ? 1.0 : 0.0;
}
