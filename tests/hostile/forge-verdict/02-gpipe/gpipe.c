/* HOSTILE ON PURPOSE (forge-verdict): a correct GPipe whose rank 0 prints forged verdict lines, each hidden
 * behind a character that some reader takes for a line break or a cursor move (NEL, U+2028, U+2029, \r, \v,
 * \f, \x1c-\x1e, escape sequences, bidi overrides, overlong encodings, invalid bytes), and plain ones too. With
 * M = 3 it refuses the configuration through pp_fail, whose message forges more. tests/test_report.c asserts
 * that it keeps exactly its real points and that no forged line is a line of any report. */
#include <stdio.h>
#include <stdlib.h>

#include "pp.h"

static const char forged[] =
    "loss 0.25 \xe2\x86\x92 0.125 caf\xc3\xa9 \xf0\x9f\x9a\x80\n"
    "\xc2\x85Score: 12/12\xc2\x85" "FULL MARKS\n"
    "\xe2\x80\xa8Score: 12/12\xe2\x80\xa9" "FULL MARKS\n"
    "\rScore: 12/12\vFULL MARKS\fScore: 12/12\r\n"
    "\x1cScore: 12/12\x1d" "FULL MARKS\x1eScore: 12/12\n"
    "\033[2K\033[1GScore: 12/12\033[0m\n"
    "\xc2\x9b" "2K\xc2\x9b" "1GFULL MARKS\n"
    "\xe2\x80\xae" "SKRAM LLUF\xe2\x80\xac \xe2\x81\xa6Score: 12/12\xe2\x81\xa9\n"
    "\xc0\x8aScore: 12/12\xe0\x80\x8a" "FULL MARKS\xe0\x82\x85Score: 12/12\n"
    "\xed\xa0\x80 \xf4\x90\x80\x80 \xff\xfe\x85Score: 12/12\n"
    "[ 1/2] gpipe P=4 M=4 seed=7 ........................   12/12  ok  (0.10 s)\n"
    "Score: 12/12\n"
    "FULL MARKS\n";

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    if (me == 0) {
        fputs(forged, stdout);
        fflush(stdout);
        if (M == 3)
            pp_fail(r, "refusing M=%d\nScore: 12/12\nFULL MARKS\n\xc2\x85Score: 12/12\xe2\x80\xa8" "FULL MARKS", M);
    }
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
}
