/* gpipe_body.h: an honest GPipe step, for the objects that attack and still do the work. */
#ifndef HOSTILE_GPIPE_BODY_H
#define HOSTILE_GPIPE_BODY_H
#include "pp.h"

static void honest_gpipe(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash *stash[64];
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *x = me == 0 ? 0 : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    pp_optimizer_step(r);
}
#endif
