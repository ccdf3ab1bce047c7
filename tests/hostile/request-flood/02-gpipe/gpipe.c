/* HOSTILE ON PURPOSE (request-flood): posts sends that never complete, without end.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    if (pp_rank_id(r) != 0) return;
    pp_stash *s;
    pp_tensor *y = pp_stage_forward(r, 0, 0, NULL, &s);
    for (;;) pp_isend(r, y, 1, pp_tag(PP_FWD, 0, 1));
}
