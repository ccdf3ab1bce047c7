/* VALID ON PURPOSE (stash-anywhere): GPipe keeping its stashes in a linked list of its own, found by
 * micro-batch at backward time. Where a schedule keeps its stashes is its own business; it keeps full marks:
 * tests/test_grader.c asserts it. */
#include <stdlib.h>

#include "pp.h"

typedef struct node {
    int mb;
    pp_stash *stash;
    struct node *next;
} node;

static pp_stash *take(node **list, int mb) {
    for (node **p = list; *p; p = &(*p)->next)
        if ((*p)->mb == mb) {
            node *n = *p;
            pp_stash *s = n->stash;
            *p = n->next;
            free(n);
            return s;
        }
    abort();
}

void pp_gpipe_step(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);
    node *list = NULL;
    for (int mb = 0; mb < M; mb++) {
        node *n = malloc(sizeof *n);
        n->mb = mb;
        n->next = list;
        list = n;
        pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));
        pp_tensor *y = pp_stage_forward(r, 0, mb, x, &n->stash);
        if (pp_rank_recompute(r)) pp_stash_checkpoint(r, n->stash);
        if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));
    }
    for (int mb = 0; mb < M; mb++) {
        pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M) : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));
        pp_stash *s = take(&list, mb);
        pp_tensor *dx = pp_stage_backward(r, s, dy);
        if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));
        pp_stash_free(r, s);
    }
    pp_optimizer_step(r);
}
