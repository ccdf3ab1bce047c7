/* HOSTILE ON PURPOSE (output-flood): prints without end, to fill the disk with its output.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    for (;;) fputs("FULL MARKS FULL MARKS FULL MARKS FULL MARKS FULL MARKS FULL MARKS FULL MARKS FULL MARKS\n", stdout);
    (void)r;
}
