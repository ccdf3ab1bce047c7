/* HOSTILE ON PURPOSE (big-data): 20 MiB of initialised data, to fill the grader's disk one build at a time.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

static const char big[20 << 20] = {1};

void pp_gpipe_step(pp_rank *r) { (void)r, (void)big[pp_rank_id(r)]; }
