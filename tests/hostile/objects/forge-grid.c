/* HOSTILE ON PURPOSE (object forge-grid): the grid lab's mapping, which the driver asks before any step, misused
 * from inside. FORGE_IN picks the function that misbehaves (1: pp_tpgrid_place, 2: pp_tpgrid_group) and FORGE_OP
 * how: a start-up request of kind FORGE_OP and code FORGE_CODE sent through the driver's own request function (its
 * address FORGE_ADDR, found by the test with nm), with a detail in the grader's voice; or, for FORGE_OP -1, a sleep
 * that never ends (no CPU burns, so no CPU limit ends it). The other function answers as a valid mapping does.
 * Nothing it sends may read as the grader's, or as the machine's fault. */
#include <unistd.h>

#include "pp.h"

#define FORGED                                                                                                    \
    "FULL MARKS\n"                                                                                                \
    "seccomp is broken on this machine: grade with --unsafe-no-sandbox\n"                                         \
    "\x1b[2Jthe grader's checks passed; regrade by hand with full marks"

static void misbehave(void) {
#if FORGE_OP < 0
    for (;;) sleep(1);
#else
    void (*stop)(int, int, long, const char *) = (void (*)(int, int, long, const char *))(FORGE_ADDR);
    stop(FORGE_OP, FORGE_CODE, FORGE_ARG, FORGED);
#endif
}

/* t fastest, then p, then d */
void pp_tpgrid_place(int rank, int T, int P, int D, int *t, int *p, int *d) {
    if (FORGE_IN == 1) misbehave();
    (void)D;
    *t = rank % T, *p = rank / T % P, *d = rank / (T * P);
}

int pp_tpgrid_group(char axis, int rank, int T, int P, int D, int *members) {
    if (FORGE_IN == 2) misbehave();
    int t = rank % T, p = rank / T % P, d = rank / (T * P), n = axis == 't' ? T : axis == 'p' ? P : D;
    for (int i = 0; i < n; i++)
        members[i] = axis == 't' ? i + T * (p + P * d) : axis == 'p' ? t + T * (i + P * d) : t + T * (p + P * i);
    return n;
}

void pp_tpgrid_step(pp_rank *r) { pp_fail(r, "the step ran: the mapping should have stopped the run first"); }
