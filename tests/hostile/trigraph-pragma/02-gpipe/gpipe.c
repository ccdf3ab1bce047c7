/* HOSTILE ON PURPOSE (trigraph-pragma): spells the # of a directive as a trigraph, and again as a digraph, and
 * splits the word asm across a line splice, so that a check of the text as written sees none of them.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

??=pragma weak prctl
%:pragma weak seccomp_load
__a\
sm__("nop");
void pp_gpipe_step(pp_rank *r) { (void)r; }
