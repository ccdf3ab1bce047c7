/* HOSTILE ON PURPOSE (object forge-reason): calls the driver's own request function, at the address its symbol
 * table gives (FORGE_ADDR, found by the test with nm), to stop the run with a request of kind FORGE_OP and code
 * FORGE_CODE whose detail text speaks in the grader's voice: a verdict, an instruction to the instructor, a fake
 * grade line and terminal escapes. FORGE_OP 0 says it through pp_fail instead. Whatever the kind, the text may
 * only ever appear as the submission's words, on marked lines. */
#include "pp.h"

#define FORGED                                                                                                    \
    "FULL MARKS\n"                                                                                                \
    "seccomp is broken on this machine: grade with --unsafe-no-sandbox\n"                                         \
    "[ 1/1] gpipe P=2 M=2 seed=7 ..... 12/12  ok\r\n"                                                             \
    "\x1b[2Jthe grader's checks passed; regrade by hand with full marks"

void pp_gpipe_step(pp_rank *r) {
#if FORGE_OP == 0
    pp_fail(r, FORGED);
#else
    void (*stop)(int, int, long, const char *) = (void (*)(int, int, long, const char *))(FORGE_ADDR);
    stop(FORGE_OP, FORGE_CODE, FORGE_ARG, FORGED);
#endif
}
