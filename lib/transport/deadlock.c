/* deadlock.c: the deadlock report of deadlock.h, from a snapshot any transport can take. */
#include "deadlock.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "comm.h"
#include "request.h"
#include "tag.h"
#include "text.h"

#define MAX_NEAR_MISS 8


typedef struct text {
    char *buf;
    size_t cap, len;
} text;

/* Appends to the report (pp__text_vappend: the lines that fit; the summary line always does). */
static void text_add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    t->len = pp__text_vappend(t->buf, t->cap, t->len, fmt, ap);
    va_end(ap);
}

void pp__deadlock_op(const pp_request *q, pp_stuck_op *op) {
    memset(op, 0, sizeof *op);
    op->is_send = q->is_send, op->is_reduce = q->is_reduce;
    op->rank = q->rank;
    op->peer = q->is_reduce ? __atomic_load_n(&q->peer, __ATOMIC_ACQUIRE) : q->peer;
    op->named_peer = q->named_peer, op->tag = q->tag;
    op->chunk = q->red.chunk, op->k = q->red.k;
    snprintf(op->api, sizeof op->api, "%s", q->api ? q->api : q->is_send ? "pp_send" : "pp_recv");
}

/* The op as the program wrote it: "pp_send(dst=1, tag F mb2 vs1)", "pp_grad_reduce(chunk 0)",
 * "pp_stage_forward(the shards' sum 3)". */
static const char *op_describe(const pp_stuck_op *op, char *buf, size_t len) {
    if (op->is_reduce) {
        /* a gradient reduce names its chunk; a shards' sum (no chunk of its own) its place among the rank's sums */
        if (op->chunk < 0) snprintf(buf, len, "%s(the shards' sum %d)", op->api, op->k);
        else snprintf(buf, len, "%s(chunk %d)", op->api, op->chunk);
        return buf;
    }
    return pp__op_describe(op->api, op->is_send, op->named_peer, op->tag, buf, len);
}

int pp__deadlock_final(const pp_stuck_rank *ranks, int P) {
    int waiting = 0;
    for (int i = 0; i < P; i++) {
        if (ranks[i].state == PP_STUCK_EXITED) continue;
        if (ranks[i].state != PP_STUCK_BLOCKED || ranks[i].pending == 0) return 0;
        waiting++;
    }
    return waiting > 0;
}

/* What the walks found, for the hint: the first chain's end and the first cycle's make-up. */
typedef struct walk_seen {
    int saw_chain, chain_rank;
    const pp_stuck_op *chain_op;
    int cycle_len, cycle_sends, cycle_multi, cycle_reduces;
} walk_seen;

/* Prints the wait-for structure reachable from start: a cycle, a chain ending at a rank that returned, or a chain
 * into something already printed. state: 0 unseen, 1 on this walk's path, 2 printed. */
static void walk(const pp_world *w, const pp_stuck_rank *ranks, int P, int start, int *state, int *path, text *t,
                 walk_seen *seen) {
    int len = 0, a = start;
    for (;;) {
        const pp_stuck_rank *sr = (a >= 0 && a < P) ? &ranks[a] : NULL;
        if (!sr || sr->state != PP_STUCK_BLOCKED) {
            /* a chain ending at a rank that left (or a peer outside the world, which comm.c should refuse); a
             * reduce never ends one: a member that leaves its step answers its group's reduces as it goes */
            const pp_stuck_op *last = &ranks[path[len - 1]].first;
            char want[96];
            pp_stuck_op m = *last;
            m.is_send = !last->is_send;
            snprintf(m.api, sizeof m.api, "%s", last->is_send ? "pp_recv" : "pp_send");
            m.rank = last->peer;
            m.peer = last->rank;
            m.named_peer = last->rank % w->cfg->P;
            text_add(t, "  chain:");
            for (int k = 0; k < len; k++) text_add(t, " %s ->", PP_RANK_LABEL(w, path[k]));
            text_add(t, " %s (exited: its step function returned without the matching %s)\n", PP_RANK_LABEL(w, a),
                     op_describe(&m, want, sizeof want));
            if (!seen->saw_chain) {
                seen->saw_chain = 1;
                seen->chain_rank = a;
                seen->chain_op = last;
            }
            break;
        }
        if (state[a] == 1) {
            int idx = 0;
            while (path[idx] != a) idx++;
            int n = len - idx, lo = idx;
            for (int k = idx; k < len; k++)
                if (path[k] < path[lo]) lo = k;
            int sends = 0, multi = 0, reduces = 0;
            text_add(t, "  cycle:");
            for (int k = 0; k < n; k++) {
                int rk = path[idx + (lo - idx + k) % n];
                sends += ranks[rk].first.is_send;
                reduces += ranks[rk].first.is_reduce;
                multi |= ranks[rk].pending > 1;
                text_add(t, " %s ->", PP_RANK_LABEL(w, rk));
            }
            text_add(t, " %s\n", PP_RANK_LABEL(w, path[lo]));
            if (idx > 0) {
                text_add(t, "  chain:");
                for (int k = 0; k < idx; k++) text_add(t, " %s ->", PP_RANK_LABEL(w, path[k]));
                text_add(t, " %s (in the cycle above)\n", PP_RANK_LABEL(w, a));
            }
            if (seen->cycle_len == 0) {
                seen->cycle_len = n;
                seen->cycle_sends = sends;
                seen->cycle_multi = multi;
                seen->cycle_reduces = reduces;
            }
            break;
        }
        if (state[a] == 2) {
            if (len > 0) {
                text_add(t, "  chain:");
                for (int k = 0; k < len; k++) text_add(t, " %s ->", PP_RANK_LABEL(w, path[k]));
                text_add(t, " %s (see above)\n", PP_RANK_LABEL(w, a));
            }
            break;
        }
        state[a] = 1;
        path[len++] = a;
        a = sr->first.peer;
    }
    for (int k = 0; k < len; k++) state[path[k]] = 2;
}

/* Whether op is the one its rank is blocked on (the same call: a copy of it would be the same call too). */
static int is_first(const pp_stuck_rank *ranks, int P, const pp_stuck_op *op) {
    if (op->rank < 0 || op->rank >= P || ranks[op->rank].state != PP_STUCK_BLOCKED) return 0;
    const pp_stuck_op *f = &ranks[op->rank].first;
    return !f->is_reduce && f->is_send == op->is_send && f->peer == op->peer && f->tag == op->tag;
}

void pp__deadlock_report(const pp_world *w, const pp_stuck_rank *ranks, int P, const pp_stuck_op *posted, int nposted,
                         char *out, size_t cap) {
    text tt = {out, cap, 0}, *t = &tt;
    out[0] = 0;
    text_add(t, "deadlock: every rank is blocked and no posted operation can match\n");
    for (int i = 0; i < P; i++) {
        if (ranks[i].state != PP_STUCK_BLOCKED) continue;
        char d[96];
        const char *what = ranks[i].blocked_in[0] ? ranks[i].blocked_in : op_describe(&ranks[i].first, d, sizeof d);
        text_add(t, "  %s blocked in %s\n", PP_RANK_LABEL(w, i), what);
    }

    int *state = pp__xcalloc((size_t)P, sizeof *state);
    int *path = pp__xcalloc((size_t)P + 1, sizeof *path);
    int *indeg = pp__xcalloc((size_t)P, sizeof *indeg);
    for (int i = 0; i < P; i++) {
        if (ranks[i].state != PP_STUCK_BLOCKED) continue;
        int b = ranks[i].first.peer;
        if (b >= 0 && b < P) indeg[b]++;
    }
    walk_seen seen = {.chain_rank = -1};
    /* chains from their heads first, so they print whole; what is left lies on cycles */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < P; i++) {
            if (ranks[i].state != PP_STUCK_BLOCKED || state[i] || (pass == 0 && indeg[i] > 0)) continue;
            walk(w, ranks, P, i, state, path, t, &seen);
        }
    free(state);
    free(path);
    free(indeg);

    /* a near miss: a send and a receive between the same two ranks that could be the same message but for a
     * field of the tag (a forward and a backward message never could); it explains the deadlock only when one
     * of the two is what a rank is blocked on */
    int near = 0, near_blocking = 0;
    for (const pp_stuck_op *v = posted; v < posted + nposted; v++)
        for (const pp_stuck_op *s = posted; s < posted + nposted; s++) {
            int dv, ds, mb, vs;
            if (v->is_send || !s->is_send || s->rank != v->peer || s->peer != v->rank || s->tag == v->tag) continue;
            int pv = pp__tag_split(v->tag, &dv, &mb, &vs), ps = pp__tag_split(s->tag, &ds, &mb, &vs);
            if (pv != ps || (pv && dv != ds)) continue;
            near_blocking |= is_first(ranks, P, v) || is_first(ranks, P, s);
            if (near++ >= MAX_NEAR_MISS) continue;
            char vd[96], sd[96];
            text_add(t, "  near miss: %s posted %s", PP_RANK_LABEL(w, v->rank), op_describe(v, vd, sizeof vd));
            text_add(t, " but %s posted %s\n", PP_RANK_LABEL(w, s->rank), op_describe(s, sd, sizeof sd));
        }
    if (near > MAX_NEAR_MISS) text_add(t, "  (%d more near misses)\n", near - MAX_NEAR_MISS);

    if (near_blocking)
        text_add(t, "HINT: a send and a receive between the same ranks disagree on the tag: both sides must "
                    "use pp_tag(direction, micro-batch, receiving virtual stage) with the same values");
    else if (seen.cycle_reduces)
        text_add(t, "HINT: a rank waits in a gradient reduce for a replica's rank that waits, through its own "
                    "pipeline, on this one: start the reduce with pp_grad_ireduce and wait for it after the step's "
                    "last message, or reduce only once the rank's last backward and its sends are done");
    else if (seen.saw_chain)
        text_add(t, "HINT: %s returned without the matching %s: every pp_send needs a pp_recv with the same "
                    "ranks and tag in the same step (check its loop bounds)",
                 PP_RANK_LABEL(w, seen.chain_rank), seen.chain_op->is_send ? "pp_recv" : "pp_send");
    else if (seen.cycle_multi)
        text_add(t, "HINT: the ranks wait on several operations at once, yet none finds its partner: check each "
                    "receive's source rank and tag against the send that should feed it");
    else if (seen.cycle_len == 2 && seen.cycle_sends == 2)
        text_add(t, "HINT: two neighbours both blocked in a send: post the receive first, or use "
                    "pp_group_start/pp_group_end or pp_isend/pp_irecv");
    else if (seen.cycle_len > 0 && seen.cycle_sends == seen.cycle_len)
        text_add(t, "HINT: every rank of the cycle is blocked in a send (rendezvous, as NCCL): let one of them "
                    "receive first, or use pp_group_start/pp_group_end or pp_isend/pp_irecv");
    else if (seen.cycle_len > 0 && seen.cycle_sends == 0)
        text_add(t, "HINT: every rank of the cycle waits to receive before it sends: one of them must send "
                    "first");
    else
        text_add(t, "HINT: the ranks wait for each other in a circle: reorder the sends and receives so that "
                    "each one's partner is posted first, or post them together with "
                    "pp_group_start/pp_group_end");
}
