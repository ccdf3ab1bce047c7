/* HOSTILE ON PURPOSE (constructor): runs code before main(), before the driver locks itself down.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>

#include "pp.h"

__attribute__((constructor)) static void early(void) { fopen("/etc/shadow", "r"); }

void pp_gpipe_step(pp_rank *r) { (void)r; }
