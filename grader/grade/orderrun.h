/* orderrun.h: an order read from a file (orderfile.h) run on the kit's model, for pplab run --order: a step
 * function the runtime runs in-process, one thread per rank, that makes each action the pp.h calls a schedule
 * would make for it. It is pplab's own code, so it needs no sandbox; what the order gets wrong (a receive nothing
 * answers, a micro-batch run twice or never, a weight half before its input half) the runtime and the checks
 * diagnose as they would in a student's file. */
#ifndef PP_ORDERRUN_H
#define PP_ORDERRUN_H

#include "pp.h"
#include "schedule.h"

/* The order pp__orderrun_step runs: kept, not copied, until the run ends. Its placement must be the run's. */
void pp__orderrun_set(const pp_schedule *s);

/* Rank r's actions in order: a forward receives its input from the previous virtual stage's rank (or takes it
 * from itself across a V's turn) and posts its output with pp_isend; an input half or whole backward does the same
 * with gradients, the last virtual stage's starting from pp_loss_grad(r, 1/M); a weight half follows its input
 * half's stash, which it frees, as a whole backward does. Every send is waited at the end, then one optimizer
 * step. */
void pp__orderrun_step(pp_rank *r);

#endif /* PP_ORDERRUN_H */
