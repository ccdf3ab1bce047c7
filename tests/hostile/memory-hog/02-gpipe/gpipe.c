/* HOSTILE ON PURPOSE (memory-hog): allocates until its memory runs out, then touches what it got.
 * tests/test_hostile.c asserts what stops it. */
#include <stdlib.h>
#include <string.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    for (;;) {
        char *p = malloc((size_t)64 << 20);
        memset(p, 1, (size_t)64 << 20);
    }
    (void)r;
}
