/* Lab 07, part 2: interleaved 1F1B x data parallel, with each chunk's gradient reduce overlapped with the
 * cool-down (a chunk-level model of Megatron-LM's overlap_grad_reduce). As in part 1, D replicas train on one
 * global batch of D*M micro-batches and the ranks holding the same chunk sum its gradients; here each rank holds v
 * chunks, reduced one by one, and a reduce started with pp_grad_ireduce runs on its own lane while compute goes
 * on. docs/07-hybrid.md, "What the reduce costs", says how much of it a good order hides, and when v reduces in a
 * row cost more than one. pplab runs it only with M a multiple of P. Grade with `make grade LAB=dpinterleaved`. */
#include <stdlib.h>

#include "pp.h"


void pp_dpinterleaved_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), v = pp_rank_chunks(r), me = pp_rank_id(r);

    /* TODO 1: your interleaved order of lab 04, with the loss scaled for D replicas. Then: a chunk's gradient is
     * complete at its last backward, and in the cool-down this rank's later chunks finish first. Start each
     * chunk's reduce (pp_grad_ireduce) as soon as it is complete, so that it runs while the earlier chunks'
     * backwards still compute. Which backward is a chunk's last one in your order? */

    /* TODO 2: wait for the outstanding sends and reduces, then one optimizer step. */
    (void)P, (void)M, (void)v, (void)me;
}
