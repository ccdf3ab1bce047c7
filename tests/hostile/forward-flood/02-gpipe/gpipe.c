/* HOSTILE ON PURPOSE (forward-flood): runs forwards without end, each keeping a stash alive in pplab.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    if (pp_rank_id(r) != 0) return;
    for (;;) {
        pp_stash *s;
        pp_stage_forward(r, 0, 0, NULL, &s);
    }
}
