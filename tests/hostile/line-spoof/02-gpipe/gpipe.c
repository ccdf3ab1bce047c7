/* HOSTILE ON PURPOSE (line-spoof): claims with #line that what follows is a system header's, so that a check of
 * "the student's own lines" would skip its inline assembly, which reads a file into the object.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

#line 1 "/usr/include/stdio.h"
__asm__(".section .rodata\n.incbin \"/etc/passwd\"\n.text\n");

void pp_gpipe_step(pp_rank *r) { (void)r; }
