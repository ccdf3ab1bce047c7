/* HOSTILE ON PURPOSE (read-environment): looks for the grader's token and paths in its environment and prints them.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>
#include <stdlib.h>

#include "pp.h"

extern char **environ;

void pp_gpipe_step(pp_rank *r) {
    int n = 0;
    for (char **e = environ; e && *e; e++, n++) printf("ENV %s\n", *e);
    printf("environment variables: %d; PPLAB_TOKEN=%s\n", n, getenv("PPLAB_TOKEN") ? getenv("PPLAB_TOKEN") : "(none)");
    (void)r;
}
