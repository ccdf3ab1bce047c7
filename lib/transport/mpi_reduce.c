/* mpi_reduce.c: the mpi transport's gradient reduces (reduce.h's rules) and the shards' sums (--tp), both met as
 * collectives. Each member's part of reduce k joins an allgather on its group's communicator when the member calls it
 * or leaves its step without it, every member judges the same gathered parts, and a done reduce's gradients (a done
 * sum's tensors) follow in a second allgather, summed in member order by each member alike (or, with the cuda backend
 * and NCCL, gathered and summed on the GPUs). Waits and the step's end move them along, so a member blocked in a
 * message still answers its group. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_ctx.h"

/* ---- the gradient reduce (reduce.h's rules; the parts meet by collectives) -------------------------------- */

/* A judged slot: this rank's request gets its verdict, the lane's times and the sum, and is done. */
static void slot_decide(mp_ctx *c, mp_slot *s) {
    s->state = MP_SLOT_DECIDED;
    c->progress++;
    if (!s->req) return;
    s->req->red.verdict = (int)pp__reduce_judge(s->parts, c->D, c->replica, &s->req->red.other,
                                                &s->req->red.other_chunk);
    s->req->red.start = s->start, s->req->red.end = s->end;
    s->req->red.sum = s->sum;
    s->req->done = 1;
}

/* Moves the step's reduces as far as they go without waiting: the parts of each slot in order, then, for a done
 * reduce, its gradients. The lane runs in the order of the parts, which fix each reduce's place. */
void pp__mpi_reduce_progress(pp_world *w, mp_ctx *c) {
    for (int moved = 1; moved;) {
        moved = 0;
        mp_slot *s = c->parts_next < w->cfg->v ? &c->slots[c->parts_next] : NULL;
        int flag = 0;
        if (s && s->state == MP_SLOT_PARTS && (MPI_Test(&s->pq, &flag, MPI_STATUS_IGNORE), flag)) {
            moved = 1;
            c->parts_next++;
            int first_call = -1, other, other_chunk;
            for (int d = 0; d < c->D && first_call < 0; d++)
                if (s->parts[d].kind == PP_PART_CALL) first_call = d;
            int done = first_call >= 0 &&
                       pp__reduce_judge(s->parts, c->D, first_call, &other, &other_chunk) == PP_REDUCE_DONE;
            s->start = s->end = c->lane;
            if (done) pp__reduce_place(w->cfg, pp__reduce_group(w->cfg, c->rank), s->parts, c->D, c->lane, &s->start,
                                       &s->end);
            c->lane = s->end;
            if (done && c->D > 1 && c->nccl_dp) {
                char err[512];
                s->nccl_op = c->nccl->sum_start(c->nccl_dp, c->D, s->grads, (size_t)s->mine.floats, err, sizeof err);
                if (!s->nccl_op) PP_DIE("check the GPUs with nvidia-smi; NCCL_DEBUG=INFO says more", "%s", err);
                s->state = MP_SLOT_GRADS;
                c->progress++;
            } else if (done && c->D > 1) {
                size_t n = (size_t)s->mine.floats;
                PP_ASSERT(n < (size_t)1 << 28);
                s->all = pp__xmalloc((size_t)c->D * n * sizeof(float) + 1);
                MPI_Iallgather(s->grads, (int)n, MPI_FLOAT, s->all, (int)n, MPI_FLOAT, c->dp_grads, &s->gq);
                s->state = MP_SLOT_GRADS;
                c->progress++;
            } else {
                slot_decide(c, s);
            }
        }
        mp_slot *g = c->grads_next < c->parts_next ? &c->slots[c->grads_next] : NULL;
        int nccl_done = g && g->state == MP_SLOT_GRADS && g->nccl_op ? c->nccl->sum_test(g->nccl_op) : 0;
        if (nccl_done < 0) PP_DIE("check the GPUs with nvidia-smi; NCCL_DEBUG=INFO says more",
                                  "the gradient reduce of chunk %d failed on NCCL", g->mine.chunk);
        if (g && g->state == MP_SLOT_DECIDED) {
            c->grads_next++, moved = 1;
        } else if (nccl_done) {
            g->sum = pp__xmalloc((size_t)g->mine.floats * sizeof(float) + 1);
            c->nccl->sum_end(g->nccl_op, g->sum);
            g->nccl_op = NULL;
            slot_decide(c, g);
            c->grads_next++, moved = 1;
        } else if (g && g->state == MP_SLOT_GRADS && !g->nccl_op && (MPI_Test(&g->gq, &flag, MPI_STATUS_IGNORE), flag)) {
            size_t n = (size_t)g->mine.floats;
            const float **contrib = pp__xcalloc((size_t)c->D, sizeof *contrib);
            for (int d = 0; d < c->D; d++) contrib[d] = g->all + (size_t)d * n;
            g->sum = pp__xmalloc(n * sizeof(float) + 1);
            pp__reduce_sum(contrib, c->D, n, g->sum);
            free(contrib);
            slot_decide(c, g);
            c->grads_next++, moved = 1;
        }
    }
}

/* reduce_post: this rank's part joins its group's allgather of reduce part->k. A member posts its parts in order
 * (its calls, then what it left undone), so every member's collectives come in the same order. */
void pp__mpi_reduce_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *grads) {
    mp_ctx *c = ctx_of(w);
    mp_slot *s = &c->slots[part->k];
    PP_ASSERT(s->state == MP_SLOT_IDLE);
    s->mine = *part, s->req = q, s->grads = grads;
    s->parts = pp__xcalloc((size_t)c->D, sizeof *s->parts);
    MPI_Iallgather(&s->mine, (int)sizeof s->mine, MPI_BYTE, s->parts, (int)sizeof s->mine, MPI_BYTE, c->dp_parts,
                   &s->pq);
    s->state = MP_SLOT_PARTS;
    c->progress++;
    pp__mpi_reduce_progress(w, c);
}

/* ---- the shards' sums (--tp) ------------------------------------------------------------------------------ */

static void tp_decide(mp_ctx *c, mp_tslot *s, float *sum) {
    s->state = MP_SLOT_DECIDED;
    c->progress++;
    if (!s->req) {
        free(sum);
        return;
    }
    s->req->red.verdict = (int)pp__reduce_judge(s->parts, c->T, c->shard, &s->req->red.other,
                                                &s->req->red.other_chunk);
    s->req->red.start = s->req->red.end = 0; /* a sum's time is the op's (stage.c) */
    s->req->red.sum = sum;
    s->req->done = 1;
}

/* Moves the step's sums as far as they go without waiting, in order: the parts, then a done sum's tensors, added
 * in shard order as the threads transport adds them (reduce.c), so every transport gives the same bits. */
void pp__mpi_tp_progress(mp_ctx *c) {
    for (int moved = 1; moved;) {
        moved = 0;
        int flag = 0;
        mp_tslot *s = c->ts_parts_next < c->ts_n ? &c->ts[c->ts_parts_next] : NULL;
        if (s && s->state == MP_SLOT_PARTS && (MPI_Test(&s->pq, &flag, MPI_STATUS_IGNORE), flag)) {
            moved = 1;
            c->ts_parts_next++;
            int first_call = -1, other, other_chunk;
            for (int m = 0; m < c->T && first_call < 0; m++)
                if (s->parts[m].kind == PP_PART_CALL) first_call = m;
            int done = first_call >= 0 &&
                       pp__reduce_judge(s->parts, c->T, first_call, &other, &other_chunk) == PP_REDUCE_DONE;
            if (done && c->nccl_tp) {
                char err[512];
                s->nccl_op = c->nccl->sum_start(c->nccl_tp, c->T, s->data, (size_t)s->mine.floats, err, sizeof err);
                if (!s->nccl_op) PP_DIE("check the GPUs with nvidia-smi; NCCL_DEBUG=INFO says more", "%s", err);
                s->state = MP_SLOT_GRADS;
                c->progress++;
            } else if (done) {
                size_t n = (size_t)s->mine.floats;
                PP_ASSERT(n < (size_t)1 << 28);
                s->all = pp__xmalloc((size_t)c->T * n * sizeof(float) + 1);
                MPI_Iallgather(s->data, (int)n, MPI_FLOAT, s->all, (int)n, MPI_FLOAT, c->tp_data, &s->gq);
                s->state = MP_SLOT_GRADS;
                c->progress++;
            } else {
                tp_decide(c, s, NULL);
            }
        }
        mp_tslot *g = c->ts_data_next < c->ts_parts_next ? &c->ts[c->ts_data_next] : NULL;
        int nccl_done = g && g->state == MP_SLOT_GRADS && g->nccl_op ? c->nccl->sum_test(g->nccl_op) : 0;
        if (nccl_done < 0) PP_DIE("check the GPUs with nvidia-smi; NCCL_DEBUG=INFO says more",
                                  "a shards' sum failed on NCCL");
        if (g && g->state == MP_SLOT_DECIDED) {
            c->ts_data_next++, moved = 1;
        } else if (nccl_done) {
            float *sum = pp__xmalloc((size_t)g->mine.floats * sizeof(float) + 1);
            c->nccl->sum_end(g->nccl_op, sum);
            g->nccl_op = NULL;
            tp_decide(c, g, sum);
            c->ts_data_next++, moved = 1;
        } else if (g && g->state == MP_SLOT_GRADS && !g->nccl_op &&
                   (MPI_Test(&g->gq, &flag, MPI_STATUS_IGNORE), flag)) {
            size_t n = (size_t)g->mine.floats;
            const float **contrib = pp__xcalloc((size_t)c->T, sizeof *contrib);
            for (int m = 0; m < c->T; m++) contrib[m] = g->all + (size_t)m * n;
            float *sum = pp__xmalloc(n * sizeof(float) + 1);
            pp__reduce_sum(contrib, c->T, n, sum);
            free(contrib);
            tp_decide(c, g, sum);
            c->ts_data_next++, moved = 1;
        }
    }
}

/* The part with which this rank joins its group's sum part->k: a call, or, when it leaves its step, that it will
 * make no more. Every member posts its parts in order, so every member's collectives come in the same order; the
 * step end pads the members that stopped early (pp__mpi_tp_step_end). */
void pp__mpi_tp_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *data) {
    (void)rank;
    mp_ctx *c = ctx_of(w);
    PP_ASSERT(part->k == c->ts_n);
    if (c->ts_n == c->ts_cap) {
        c->ts_cap = c->ts_cap ? 2 * c->ts_cap : 64;
        c->ts = pp__xrealloc(c->ts, (size_t)c->ts_cap * sizeof *c->ts);
    }
    mp_tslot *s = &c->ts[c->ts_n++];
    memset(s, 0, sizeof *s);
    s->mine = *part, s->req = q, s->data = data;
    s->parts = pp__xcalloc((size_t)c->T, sizeof *s->parts);
    MPI_Iallgather(&s->mine, (int)sizeof s->mine, MPI_BYTE, s->parts, (int)sizeof s->mine, MPI_BYTE, c->tp_parts,
                   &s->pq);
    s->state = MP_SLOT_PARTS;
    c->progress++;
    pp__mpi_tp_progress(c);
}

/* At step end: the members agree on how many sums the step had (one that stopped early posted fewer), the short
 * ones pad with parts that say they returned, and every sum still moving finishes; the slots are cleared. */
void pp__mpi_tp_step_end(pp_world *w, mp_ctx *c) {
    if (c->T <= 1) return;
    int most = c->ts_n;
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, c->tp_ctl);
    while (c->ts_n < most) {
        pp_reduce_part pad = {.kind = PP_PART_RETURNED, .k = c->ts_n, .chunk = -1};
        pp__mpi_tp_post(w, c->rank, NULL, &pad, NULL);
    }
    while (c->ts_data_next < c->ts_n && !watch_lost(c)) {
        pp__mpi_tp_progress(c);
        if (c->ts_data_next < c->ts_n) sched_yield();
    }
    for (int k = 0; k < c->ts_n; k++) {
        mp_tslot *s = &c->ts[k];
        free(s->parts), free(s->data), free(s->all);
    }
    c->ts_n = c->ts_parts_next = c->ts_data_next = 0;
}

/* At step end every member has posted all its parts: the reduces still moving finish (a done one's gradients are
 * still gathered, though nobody may wait for it), and the slots are cleared for the next step. */
void pp__mpi_reduce_step_end(pp_world *w, mp_ctx *c) {
    while (c->grads_next < w->cfg->v && !watch_lost(c)) {
        pp__mpi_reduce_progress(w, c);
        if (c->grads_next < w->cfg->v) sched_yield();
    }
    for (int k = 0; k < w->cfg->v; k++) {
        mp_slot *s = &c->slots[k];
        free(s->parts), free(s->grads), free(s->all), free(s->sum);
        memset(s, 0, sizeof *s);
    }
    c->parts_next = c->grads_next = 0;
    c->lane = 0;
}
