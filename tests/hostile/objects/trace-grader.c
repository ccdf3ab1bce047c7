/* HOSTILE ON PURPOSE (object trace-grader): attaches to the process that serves it. */
#include "sys.h"
#include "pp.h"
void pp_gpipe_step(pp_rank *r) { sys(NR_ptrace, 16 /* PTRACE_ATTACH */, sys(NR_getppid, 0), 0, 0); (void)r; }
