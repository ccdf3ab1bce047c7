/* order_interp.h: an order read from a file (order_csv.h) run on the kit's model, for pplab run --order: a step
 * function the runtime runs in-process, one thread per rank, that makes each action the pp.h calls a schedule
 * would make for it. It is pplab's own code, so it needs no sandbox; what the order gets wrong (a receive nothing
 * answers, a micro-batch run twice or never, a weight half before its input half) the runtime and the checks
 * diagnose as they would in a student's file. Turning any order into pp.h calls is what the labs ask, so only the
 * kit has it (order_interp.c); a student handout builds order_interp_absent.c, and --order is refused there. */
#ifndef PP_ORDER_INTERP_H
#define PP_ORDER_INTERP_H

#include "pp.h"
#include "replay.h"

/* 1 where this build has the interpreter (the kit), 0 where it does not (a handout). */
extern const int pp__order_interp_built;

/* The order pp__order_interp_step runs: kept, not copied, until the run ends. Its placement must be the run's. Also
 * frees what the steps run with the order set before kept (NULL: only that, once the last run ended). */
void pp__order_interp_set(const pp_schedule *s);

/* Rank r's actions in order: a forward receives its input from the previous virtual stage's rank (or takes it
 * from itself across a V's turn), posts its output with pp_isend, and checkpoints its stash when the run
 * recomputes; an input half or whole backward does the same with gradients, the last virtual stage's starting
 * from pp_loss_grad(r, 1/(M*D)); a weight half follows its input half's stash, which it frees, as a whole
 * backward does. Every send is waited at the end; with replicas each chunk is then reduced (pp_grad_reduce, in
 * chunk order), and the rank steps its optimizer once. pplab run --order runs it; so do fuzz_server's partner
 * ranks, with the canonical order. */
void pp__order_interp_step(pp_rank *r);

#endif /* PP_ORDER_INTERP_H */
