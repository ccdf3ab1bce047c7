/* HOSTILE ON PURPOSE (made-up-handle): passes a tensor pointer it made up.
 * tests/test_hostile.c asserts what stops it. */
#include <stdint.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    if (pp_rank_id(r) == 0) pp_send(r, (pp_tensor *)(uintptr_t)0x12345678, 1, pp_tag(PP_FWD, 0, 1));
}
