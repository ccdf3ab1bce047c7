/* HOSTILE ON PURPOSE (cpu-spin): spins without end, never calling pplab.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    volatile unsigned long n = 0;
    for (;;) n++;
    (void)r;
}
