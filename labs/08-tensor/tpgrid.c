/* Lab 08, part 2: the grid. T x P x D ranks (--tp T --stages P --dp D) fill nodes of G ranks (--node-size G):
 * global rank g sits on node g / G. Which (t, p, d) each global rank plays is yours to say, as Megatron-LM's
 * initialize_model_parallel says it, and so is which ranks make each rank's three groups: its tensor-parallel
 * group (the shards of its stage, which sum twice per block), its pipeline (the stages its micro-batches cross)
 * and its data-parallel group (the replicas of its stage, which reduce once per step). The run is placed by your
 * answer: every message, sum and reduce costs the link it crosses. docs/08-tensor.md, section 3, works out what
 * each link costs. The pipeline itself is your 1F1B of lab 07, part 1. Grade with `make grade LAB=tpgrid`. */
#include <stdlib.h>

#include "pp.h"

/* Which (t, p, d) global rank `rank` plays, 0 <= rank < T*P*D: every rank one place of the grid, every place one
 * rank. */
void pp_tpgrid_place(int rank, int T, int P, int D, int *t, int *p, int *d) {
    /* TODO 1: which coordinate varies fastest as rank grows, so that the groups whose traffic is heaviest share
     * a node? */
    (void)rank, (void)T, (void)P, (void)D, (void)t, (void)p, (void)d;
}

/* The members of rank's group along axis 't' (tensor parallel), 'p' (pipeline) or 'd' (data parallel): the global
 * ranks that share its other two coordinates, in the order of this one, into members; returns their count. */
int pp_tpgrid_group(char axis, int rank, int T, int P, int D, int *members) {
    int n = 0;
    /* TODO 2: from pp_tpgrid_place, the ranks that differ from this one in `axis` alone */
    (void)axis, (void)rank, (void)T, (void)P, (void)D, (void)members;
    return n;
}

void pp_tpgrid_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r), D = pp_rank_replicas(r);
    int first = me == 0, last = me == P - 1;
    /* TODO 3: your lab 07, part 1, unchanged: 1F1B in each replica, the loss scaled for D*M micro-batches, one
     * reduce after the last backward. The shards of every stage run it too; they are the library's here. */
    (void)P, (void)M, (void)D, (void)first, (void)last;
}
