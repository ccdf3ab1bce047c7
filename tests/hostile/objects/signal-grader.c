/* HOSTILE ON PURPOSE (object signal-grader): kills the process that serves it. */
#include "sys.h"
#include "pp.h"
void pp_gpipe_step(pp_rank *r) { sys(NR_kill, sys(NR_getppid, 0), 9); (void)r; }
