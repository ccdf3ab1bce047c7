/* HOSTILE ON PURPOSE (incbin-comment): hides .incbin behind an empty comment and a label, which GNU as accepts
 * and a line-start text filter did not see. tests/test_hostile.c asserts what stops it. */
#include "pp.h"

__asm__("/**/.incbin \"/etc/passwd\"\nx: .incbin \"/etc/hostname\"");

void pp_gpipe_step(pp_rank *r) { (void)r; }
