/* BROKEN ON PURPOSE (compile-error): does not compile (a missing semicolon).
 * tests/test_grader.c asserts that the grader catches it with the right message. */
#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    int me = pp_rank_id(r)
    (void)me;
}
