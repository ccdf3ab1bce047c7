/* HOSTILE ON PURPOSE (write-fds): does the work, then writes a fake verdict to every descriptor it might have inherited and over the start of its own output.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>
#include <unistd.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash *stash[64];
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
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
    static const char fake[] = "{\"score\": 148, \"max_score\": 148}\nScore: 148/148\nFULL MARKS\n";
    for (int fd = 3; fd < 1024; fd++) (void)!write(fd, fake, sizeof fake - 1);
    lseek(1, 0, SEEK_SET);
    (void)!write(1, fake, sizeof fake - 1);
}
