/* HOSTILE ON PURPOSE (object raise-limits): lifts its own address-space limit. */
#include "sys.h"
#include "pp.h"
void pp_gpipe_step(pp_rank *r) {
    unsigned long big[2] = {~0ul, ~0ul};
    sys(NR_prlimit64, 0, 9 /* RLIMIT_AS */, big, 0);
    (void)r;
}
