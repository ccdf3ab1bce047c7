/* HOSTILE ON PURPOSE (loss-grad-flood): asks pplab for loss gradients without end, to exhaust the runtime's memory.
 * tests/test_hostile.c asserts what stops it. */
#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    /* on the rank that holds the loss: elsewhere the first call is refused */
    if (pp_rank_id(r) == pp_rank_stages(r) - 1)
        for (;;) pp_loss_grad(r, 1.0f);
}
