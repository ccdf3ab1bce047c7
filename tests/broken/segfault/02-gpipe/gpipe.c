/* BROKEN ON PURPOSE (segfault): rank 1 dereferences a NULL pointer.
 * tests/test_grader.c asserts that the grader catches it with the right message. */
#include <stddef.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    if (pp_rank_id(r) == 1) {
        volatile int *p = NULL;
        *p = 42;
    }
}
