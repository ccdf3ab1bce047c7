/* HOSTILE ON PURPOSE (other-rank-handle): forges the handle of a tensor of rank 1 from one of its own.
 * tests/test_hostile.c asserts what stops it. */
#include <stdint.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    if (pp_rank_id(r) != 0) return;
    pp_stash *s;
    uintptr_t mine = (uintptr_t)pp_stage_forward(r, 0, 0, NULL, &s);
    /* rank bits of the id: the handle pplab would give rank 1 */
    pp_tensor *theirs = (pp_tensor *)(mine ^ ((uintptr_t)1 << 48));
    pp_send(r, theirs, 1, pp_tag(PP_FWD, 0, 1));
}
