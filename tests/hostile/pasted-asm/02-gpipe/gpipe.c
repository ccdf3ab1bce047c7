/* HOSTILE ON PURPOSE (pasted-asm): builds the word __asm__ with the preprocessor's ## and an attribute name from
 * a macro, so that neither appears in the file as written. tests/test_hostile.c asserts what stops it. */
#include "pp.h"

#define CAT(a, b) a##b
CAT(__as, m__)(".section .rodata\n.incbin \"/etc/passwd\"\n.text\n");

void pp_gpipe_step(pp_rank *r) { (void)r; }
