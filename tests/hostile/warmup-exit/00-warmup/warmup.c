/* HOSTILE ON PURPOSE (warmup-exit): ends its own process in the middle of the warm-up, hoping the grader reads success.
 * tests/test_hostile.c asserts what stops it. */
#include <stdlib.h>

#include "pp.h"

double pp_warmup_bubble(const char *schedule, int P, int M, int v) { exit(0); }
