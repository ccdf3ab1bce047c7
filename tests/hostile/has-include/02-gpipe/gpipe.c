/* HOSTILE ON PURPOSE (has-include): probes which of the instructor's files exist, and fails the build in a way
 * that says so. tests/test_hostile.c asserts what stops it. */
#include "pp.h"

#if __has_include("/autograder/source/solutions/02-gpipe/gpipe.c")
#error the solutions are at /autograder/source
#endif

void pp_gpipe_step(pp_rank *r) { (void)r; }
