/* BROKEN ON PURPOSE (assert-fails): rank 1 checks something false with assert().
 * tests/test_grader.c asserts that the grader catches it with the right message. */
#include <assert.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    int me = pp_rank_id(r);
    assert(me != 1 && "rank 1 is not expected here");
}
