/* HOSTILE ON PURPOSE (object fork-process): starts a process that would outlive the test. */
#include "sys.h"
#include "pp.h"
void pp_gpipe_step(pp_rank *r) {
    if (sys(NR_fork, 0) == 0) {
        sys(NR_setsid, 0);
        for (;;) continue;
    }
    (void)r;
}
