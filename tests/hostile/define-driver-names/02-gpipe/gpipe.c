/* HOSTILE ON PURPOSE (define-driver-names): defines main, the driver's lockdown, libseccomp's seccomp_load and
 * libc's prctl and memcpy as plain functions of its own, which once stood in for the driver's at its static link,
 * and otherwise does honest GPipe work. Nothing is linked with the driver now: its names stay its own, the
 * lockdown runs, and the work keeps its full marks. tests/test_hostile.c asserts it. */
#include <stddef.h>
#include <stdlib.h>

#include "pp.h"

int main(void) { return 0; }
int seccomp_load(void *ctx) { (void)ctx; return 0; }
int prctl(int option) { (void)option; return 0; }
int pp__drv_lockdown(int sandbox, int rank, char *err, size_t len) { (void)sandbox, (void)rank, (void)err, (void)len; return 0; }
void *memcpy(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--) *d++ = *s++;
    return dst;
}

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    pp_stash **stash = calloc((size_t)M, sizeof *stash);

    for (int mb = 0; mb < M; mb++) {
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);
        if (pp_rank_recompute(r)) pp_stash_checkpoint(r, stash[mb]);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }

    for (int mb = 0; mb < M; mb++) {
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, stash[mb]);
    }
    free(stash);

    pp_optimizer_step(r);
    (void)P, (void)M, (void)me;
}
