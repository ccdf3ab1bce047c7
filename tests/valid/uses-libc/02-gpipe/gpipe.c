/* VALID ON PURPOSE (uses-libc): a correct GPipe that leans on what a schedule may use besides pp.h: printf,
 * malloc and free, qsort, assert, a short sleep, and a worker thread it starts and joins. The sandbox must let
 * all of it through: tests/test_hostile.c asserts full marks. */
#define _POSIX_C_SOURCE 199309L
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pp.h"

static int by_value(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The backward order, worked out by a thread of its own. */
static void *order_backwards(void *arg) {
    int *mb = arg, n = mb[0];
    qsort(mb + 1, (size_t)n, sizeof *mb, by_value);
    return NULL;
}

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash **stash = malloc((size_t)M * sizeof *stash);
    int *order = malloc((size_t)(M + 1) * sizeof *order);
    assert(stash && order);
    order[0] = M;
    for (int i = 0; i < M; i++) order[1 + i] = M - 1 - i;
    pthread_t t;
    assert(pthread_create(&t, NULL, order_backwards, order) == 0);
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (pp_rank_recompute(r)) pp_stash_checkpoint(r, stash[mb]);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    pthread_join(t, NULL);
    struct timespec nap = {0, 1000000};
    nanosleep(&nap, NULL);
    for (int i = 0; i < M; i++) {
        int mb = order[1 + i];
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    pp_optimizer_step(r);
    printf("rank %d: %d micro-batches, backwards in order %d..%d\n", me, M, order[1], order[M]);
    free(order);
    free(stash);
}
