/* Lab 05, part 1: ZB-H1, the zero-bubble schedule with 1F1B's memory (Qi et al., "Zero Bubble Pipeline
 * Parallelism", ICLR 2024).
 *
 * A backward has two halves: the input half B (pp_stage_backward_input) produces the gradient the previous
 * stage is waiting for; the weight half W (pp_stage_backward_weight) only adds to this rank's own gradients, so
 * nobody waits for it. Run 1F1B's order with every backward split, and move weight halves later so that they
 * fill the time a rank would otherwise spend waiting in the cool-down. docs/05-zerobubble.md asks how many weight
 * halves each rank can hold back and what that costs in stashes; the grader holds your bubble and stash peaks to
 * the canonical order's, and names the first op that differs only when one of them falls short.
 *
 * Sends are rendezvous, as in lab 03: choose a communication style that cannot deadlock for this order.
 * Grade with `make grade LAB=zbh1`. */
#include <stdlib.h>

#include "pp.h"


void pp_zbh1_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);

    /* TODO 1: the warm-up forwards: how many does a rank need before its first gradient can come back? */

    /* TODO 2: the steady state and the cool-down: a forward (while any is left), then a backward's input half;
     * run each weight half as late as the schedule allows (docs/05-zerobubble.md), and free its stash after it. */

    /* TODO 3: the weight halves still held back, then one optimizer step. */
    (void)P, (void)M, (void)me;
}
