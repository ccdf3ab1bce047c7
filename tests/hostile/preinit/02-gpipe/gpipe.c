/* HOSTILE ON PURPOSE (preinit): plants a .preinit_array entry, the earliest code a program runs.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>

#include "pp.h"

static void early(void) { fopen("/etc/shadow", "r"); }
__attribute__((section(".preinit_array"), used)) static void (*const run_early)(void) = early;

void pp_gpipe_step(pp_rank *r) { (void)r; }
