/* A deliberately broken GPipe for the mpi transport's tests: the last rank runs each micro-batch's backward
 * right after its forward and sends the gradient back at once, while the rank before it is still sending the
 * next micro-batch forward. With rendezvous sends (as NCCL) both neighbours block in pp_send: a deadlock the
 * threads transport detects exactly and the mpi transport reports at its deadline. Needs M >= 2. */
#include <stdlib.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash **stash = calloc((size_t)M, sizeof *stash);
    if (me < P - 1) {
        for (int mb = 0; mb < M; mb++) {
            pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
            pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
            pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
        }
        for (int mb = 0; mb < M; mb++) {
            pp_tensor *dy = pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
            pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
            if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
            pp_stash_free(r, stash[mb]);
        }
    } else {
        for (int mb = 0; mb < M; mb++) {
            pp_tensor *x = pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
            pp_stage_forward(r, 0, mb, x, &stash[mb]);
            pp_tensor *dx = pp_stage_backward(r, stash[mb], pp_loss_grad(r, 1.0f / (float)M));
            /* the bug: rank P-2 is blocked sending micro-batch mb+1 forward and cannot receive this yet */
            pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
            pp_stash_free(r, stash[mb]);
        }
    }
    free(stash);
    pp_optimizer_step(r);
}
