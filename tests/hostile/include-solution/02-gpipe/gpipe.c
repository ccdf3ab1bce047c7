/* HOSTILE ON PURPOSE (include-solution): compiles the reference solution into itself.
 * tests/test_hostile.c asserts what stops it. */
#define pp_gpipe_step borrowed_step
#include "../../../../solutions/02-gpipe/gpipe.c"
#undef pp_gpipe_step

void pp_gpipe_step(pp_rank *r) { borrowed_step(r); }
