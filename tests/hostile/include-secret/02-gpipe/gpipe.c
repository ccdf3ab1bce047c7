/* HOSTILE ON PURPOSE (include-secret): includes a file no lab needs (its contents would reach the compiler's messages).
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"
#include "/etc/passwd"

void pp_gpipe_step(pp_rank *r) { (void)r; }
