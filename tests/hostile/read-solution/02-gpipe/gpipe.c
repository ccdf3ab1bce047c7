/* HOSTILE ON PURPOSE (read-solution): reads the reference solution's source and prints it into the report.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    FILE *f = fopen("solutions/02-gpipe/gpipe.c", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) fputs(line, stdout);
    (void)r;
}
