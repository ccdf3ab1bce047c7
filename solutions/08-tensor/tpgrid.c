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
    //>> solution
    *t = rank % T; /* a stage's shards side by side: their sums stay inside a node */
    *d = rank / T % D;
    *p = rank / (T * D); /* the pipeline across nodes: one activation per micro-batch crosses */
    //<< solution
    (void)rank, (void)T, (void)P, (void)D, (void)t, (void)p, (void)d;
}

/* The members of rank's group along axis 't' (tensor parallel), 'p' (pipeline) or 'd' (data parallel): the global
 * ranks that share its other two coordinates, in the order of this one, into members; returns their count. */
int pp_tpgrid_group(char axis, int rank, int T, int P, int D, int *members) {
    int n = 0;
    /* TODO 2: from pp_tpgrid_place, the ranks that differ from this one in `axis` alone */
    //>> solution
    int x[3];
    pp_tpgrid_place(rank, T, P, D, &x[0], &x[1], &x[2]);
    int a = axis == 't' ? 0 : axis == 'p' ? 1 : 2, size = a == 0 ? T : a == 1 ? P : D;
    for (int k = 0; k < size; k++) {
        int y[3] = {x[0], x[1], x[2]};
        y[a] = k;
        members[n++] = y[0] + T * (y[2] + D * y[1]); /* pp_tpgrid_place's inverse */
    }
    //<< solution
    (void)axis, (void)rank, (void)T, (void)P, (void)D, (void)members;
    return n;
}

void pp_tpgrid_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r), D = pp_rank_replicas(r);
    int first = me == 0, last = me == P - 1;
    /* TODO 3: your lab 07, part 1, unchanged: 1F1B in each replica, the loss scaled for D*M micro-batches, one
     * reduce after the last backward. The shards of every stage run it too; they are the library's here. */
    //>> solution
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    int warmup = P - me - 1 < M ? P - me - 1 : M, steady = M - warmup;
    float scale = 1.0f / (float)(D * M);
    pp_tensor *x = NULL;
    for (int mb = 0; mb < warmup; mb++) {
        x = first ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (!last) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    if (steady > 0 && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, warmup, me));
    for (int i = 0; i < steady; i++) {
        int fmb = warmup + i;
        pp_tensor *y = pp_stage_forward(r, 0, fmb, first ? NULL : x, &stash[fmb]);
        pp_tensor *dy;
        if (last) {
            dy = pp_loss_grad(r, scale);
        } else {
            pp_group_start(r);
            pp_send(r, y, me + 1, pp_tag(PP_FWD, fmb, me + 1));
            dy = pp_recv(r, me + 1, pp_tag(PP_BWD, i, me));
            pp_group_end(r);
        }
        pp_tensor *dx = pp_stage_backward(r, stash[i], dy);
        pp_stash_free(r, stash[i]);
        int more = i + 1 < steady;
        pp_group_start(r);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, i, me - 1));
        if (more && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, fmb + 1, me));
        pp_group_end(r);
    }
    for (int mb = steady; mb < M; mb++) {
        pp_tensor *dy = last ? pp_loss_grad(r, scale) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);
    pp_grad_reduce(r, 0);
    pp_optimizer_step(r);
    //<< solution
    (void)P, (void)M, (void)D, (void)first, (void)last;
}
