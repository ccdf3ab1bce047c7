/* BROKEN ON PURPOSE (endless-loop): rank 0 spins forever without calling the library, so only the time limit can stop it.
 * tests/test_grader.c asserts that the grader catches it with the right message. */
#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    volatile unsigned long spin = 0;
    if (pp_rank_id(r) == 0)
        for (;;) spin++;
}
