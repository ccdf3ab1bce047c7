/* HOSTILE ON PURPOSE (asm-incbin): pulls a file into its object with inline assembly at build time.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

__asm__(".section .rodata\nsecret: .incbin \"/etc/hostname\"\n.byte 0\n.text");

void pp_gpipe_step(pp_rank *r) { (void)r; }
