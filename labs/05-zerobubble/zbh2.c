/* Lab 05, part 2: ZB-H2, the zero-bubble schedule that spends memory to hide communication (Qi et al., "Zero
 * Bubble Pipeline Parallelism", ICLR 2024).
 *
 * Part 1's order with a longer warm-up: each rank runs more forwards before its first backward, so that while a
 * message is on its way the rank has a forward to run instead of waiting. docs/05-zerobubble.md asks how long the
 * warm-up must be to hide a latency, what it costs in stashes, and why on a clock without latency the two parts
 * tie; the grader holds your bubble and stash peaks to the canonical order's, and names the first op that
 * differs only when one of them falls short.
 *
 * Start from your part 1. Grade with `make grade LAB=zbh2`. */
#include <stdlib.h>

#include "pp.h"


void pp_zbh2_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);

    /* TODO 1: the warm-up forwards: how many hide a message behind a forward (docs/05-zerobubble.md)? */

    /* TODO 2: the steady state and the cool-down: a forward (while any is left), then a backward's input half;
     * run each weight half as late as the schedule allows (docs/05-zerobubble.md), and free its stash after it. */

    /* TODO 3: the weight halves still held back, then one optimizer step. */
    (void)P, (void)M, (void)me;
}
