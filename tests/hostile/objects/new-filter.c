/* HOSTILE ON PURPOSE (object new-filter): asks for a seccomp filter of its own (one could only take calls away,
 * but a driver has no use for one). */
#include "sys.h"
#include "pp.h"
void pp_gpipe_step(pp_rank *r) { sys(NR_seccomp, 1 /* SECCOMP_SET_MODE_FILTER */, 0, 0); (void)r; }
