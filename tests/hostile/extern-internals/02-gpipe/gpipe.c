/* HOSTILE ON PURPOSE (extern-internals): declares the runtime's internal trace function and calls it to forge events.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

void pp__trace_add(void *trace, const void *event);

void pp_gpipe_step(pp_rank *r) {
    static char fake[256];
    pp__trace_add(fake, fake);
    (void)r;
}
