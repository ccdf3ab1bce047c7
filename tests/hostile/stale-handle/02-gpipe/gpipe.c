/* HOSTILE ON PURPOSE (stale-handle): keeps a tensor from the first step and sends it again in the second.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    static pp_tensor *kept;
    if (pp_rank_id(r) != 0) {
        if (kept) return;
        kept = (pp_tensor *)1; /* rank 1 waits for the message of step 1 below */
        pp_recv(r, 0, pp_tag(PP_FWD, 0, 1));
        return;
    }
    pp_stash *s;
    if (!kept) {
        kept = pp_stage_forward(r, 0, 0, NULL, &s);
        pp_send(r, kept, 1, pp_tag(PP_FWD, 0, 1));
    } else {
        pp_send(r, kept, 1, pp_tag(PP_FWD, 0, 1));
    }
}
