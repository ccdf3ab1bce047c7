/* HOSTILE ON PURPOSE (section-incbin): smuggles .incbin into the assembly through a section name.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>

#include "pp.h"

__attribute__((section(".rodata.x\n.incbin \"/etc/hostname\"\n.section .rodata.y"))) const char marker[1] = {1};

void pp_gpipe_step(pp_rank *r) { printf("%s\n", marker + 1); (void)r; }
