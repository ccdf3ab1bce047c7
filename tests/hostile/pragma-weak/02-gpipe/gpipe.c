/* HOSTILE ON PURPOSE (pragma-weak): renames and weakens symbols with pragmas, the way a link could be steered.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

#pragma weak seccomp_load = pp_gpipe_step
#pragma redefine_extname prctl pp_gpipe_step

void pp_gpipe_step(pp_rank *r) { (void)r; }
