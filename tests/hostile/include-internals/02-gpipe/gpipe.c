/* HOSTILE ON PURPOSE (include-internals): includes the runtime's own header to rewrite its trace and clock.
 * tests/test_hostile.c asserts what stops it. */
#include "../../../../lib/run/runtime.h"

void pp_gpipe_step(pp_rank *r) {
    r->clock = 0;
    r->trace.n = 0;
}
