/* HOSTILE ON PURPOSE (static-hog): fills a 1 GiB static array, more than a schedule's address space.
 * tests/test_hostile.c asserts what stops it. */
#include <string.h>

#include "pp.h"

static char big[1 << 30];

void pp_gpipe_step(pp_rank *r) {
    memset(big, pp_rank_id(r), sizeof big);
}
