/* HOSTILE ON PURPOSE (object open-file): opens a file with a raw system call. */
#include "sys.h"
#include "pp.h"
void pp_gpipe_step(pp_rank *r) { sys(NR_openat, -100, "/etc/passwd", 0); (void)r; }
