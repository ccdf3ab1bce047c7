/* VALID ON PURPOSE (stash-anywhere): 1F1B keeping its stashes in a ring of P slots on the stack, slot mb % P:
 * rank r never holds more than P - r consecutive micro-batches, so no slot is reused while alive. It keeps full
 * marks: tests/test_grader.c asserts it. */
#include "pp.h"

void pp_1f1b_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    int first = me == 0, last = me == P - 1;
    pp_stash *slot[P];
    int warmup = P - me - 1 < M ? P - me - 1 : M, steady = M - warmup;
    pp_tensor *x = NULL;
    for (int mb = 0; mb < warmup; mb++) {
        x = first ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &slot[mb % P]);
        if (!last) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    if (steady > 0 && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, warmup, me));
    for (int i = 0; i < steady; i++) {
        int fmb = warmup + i;
        pp_tensor *y = pp_stage_forward(r, 0, fmb, first ? NULL : x, &slot[fmb % P]);
        pp_tensor *dy;
        if (last) {
            dy = pp_loss_grad(r, 1.0f / (float)M);
        } else {
            pp_group_start(r);
            pp_send(r, y, me + 1, pp_tag(PP_FWD, fmb, me + 1));
            dy = pp_recv(r, me + 1, pp_tag(PP_BWD, i, me));
            pp_group_end(r);
        }
        pp_tensor *dx = pp_stage_backward(r, slot[i % P], dy);
        pp_stash_free(r, slot[i % P]);
        int more = i + 1 < steady;
        pp_group_start(r);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, i, me - 1));
        if (more && !first) x = pp_recv(r, me - 1, pp_tag(PP_FWD, fmb + 1, me));
        pp_group_end(r);
    }
    for (int mb = steady; mb < M; mb++) {
        pp_tensor *dy = last ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, slot[mb % P], dy);
        if (!first) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, slot[mb % P]);
    }
    pp_optimizer_step(r);
}
