/* order_interp_absent.c: order_interp.h as a student handout has it: no interpreter. Turning an order into pp.h
 * calls is what the labs ask, so pplab run --order is the kit's; cmd_run refuses it here before any run starts, and
 * the step below only stands in for the symbol. */
#include "order_interp.h"

const int pp__order_interp_built = 0;

void pp__order_interp_set(const pp_schedule *s) { (void)s; }

void pp__order_interp_step(pp_rank *r) {
    pp_fail(r, "this build has no order interpreter: pplab run --order runs in the instructor's kit");
}
