/* HOSTILE ON PURPOSE (thread-bomb): starts threads until none can be made, never joins them, says how many it
 * got, then does the work. tests/test_hostile.c asserts that the threads are capped and cost nothing else. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "pp.h"

static void *sleeper(void *arg) {
    for (;;) sleep(1000);
    return arg;
}

void pp_gpipe_step(pp_rank *r) {
    pthread_t t;
    int made = 0;
    while (made < 100000 && pthread_create(&t, NULL, sleeper, NULL) == 0) made++;
    printf("thread-bomb: rank %d started %d threads\n", pp_rank_id(r), made);
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
}
