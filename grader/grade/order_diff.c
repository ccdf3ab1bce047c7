/* order_diff.c: the first op where a run's compute order parts from the canonical order (order_diff.h). */
#include "order_diff.h"

#include <stdio.h>
#include <string.h>

#include "placement.h"
#include "replay.h"
#include "schedules.h"
#include "tag.h"

int pp__order_diff_rank(int q, int prefer, int P) {
    if (q == 0) return prefer >= 0 && prefer < P ? prefer : -1;
    return q - 1 == prefer ? -1 : q - 1;
}

/* GPipe's (and naive's) phases are the schedule: the order inside each phase, and where a weight half runs,
 * change neither the bubble nor the peak. */
static int free_inside_phases(const pp_run_config *c) { return c->schedule->free_phases; }

/* Where rank r's canonical order runs the weight half of (mb, chunk): its index, or -1 when the order does not
 * split that backward. */
static int canonical_weight_half(const pp_schedule *s, int r, int mb, int chunk) {
    for (int i = 0; i < s->n[r]; i++)
        if (s->ops[r][i].kind == 'W' && s->ops[r][i].mb == mb && s->ops[r][i].chunk == chunk) return i;
    return -1;
}

/* 1 when rank r's canonical order holds the weight half of (mb, chunk) back: other ops run between its input half
 * and it, so running that backward whole costs time. */
static int held_back(const pp_schedule *s, int r, int mb, int chunk) {
    int w = canonical_weight_half(s, r, mb, chunk);
    return w > 0 && !(s->ops[r][w - 1].kind == 'B' && s->ops[r][w - 1].mb == mb && s->ops[r][w - 1].chunk == chunk);
}

/* Op k of rank r's run (kind, e) differs from the canonical order, and a weight half is involved: says when the
 * order runs it. msg stays "" when no weight half is. */
static void weight_half_diff(const pp_schedule *s, int r, int k, char kind, const pp_event *e, char *msg,
                             size_t len) {
    const pp_sched_op *want = &s->ops[r][k];
    if (kind == 'W') {
        int at = canonical_weight_half(s, r, e->mb, e->chunk);
        if (at > k)
            snprintf(msg, len, "rank %d runs the weight half of micro-batch %d (chunk %d) too early, as its op %d: "
                     "the canonical order runs %c mb%d chunk %d there and holds that weight half back until its op "
                     "%d, to fill time the rank would otherwise wait", r, e->mb, e->chunk, k, want->kind, want->mb,
                     want->chunk, at);
    } else if (want->kind == 'W') {
        snprintf(msg, len, "rank %d op %d is %c mb%d chunk %d, where the canonical order runs the weight half of "
                 "micro-batch %d (chunk %d): the order holds back no more weight halves than that", r, k, kind, e->mb,
                 e->chunk, want->mb, want->chunk);
    }
}

/* The first place where a rank's compute order differs from the canonical schedule (as the run split its
 * backwards, each weight half right after its input half), or "" when it matches. traces may hold a failed
 * run's ops so far: only what ran is compared. */
/* The rank that waits for rank r's input gradient of vstage, or -1 where none does (the first virtual stage, or
 * a V's turn, where the previous stage is r's own). Where the weight half follows at once, a whole backward is the
 * same work, but its input gradient is ready only once both halves are done: that rank waits longer. */
static int gradient_waiter(const pp_run_config *c, int r, int vstage) {
    int prev = pp__config_prev(c, vstage), to = prev >= 0 ? pp__config_vstage_rank(c, prev) : r;
    return to == r ? -1 : to;
}

/* An order that places weight halves needs them: a whole backward where the canonical order holds its weight
 * half back, or where another rank waits for its input gradient, is the first thing to say. Ranks in turn from
 * prefer. */
static void whole_backward_diff(const pp_run_config *c, const pp_trace *traces, const pp_schedule *s, int prefer,
                                char *msg, size_t len) {
    const char *title = c->schedule->title;
    for (int q = 0; q <= c->P && c->schedule->weight_halves && !msg[0]; q++) {
        int r = pp__order_diff_rank(q, prefer, c->P);
        for (int i = 0; r >= 0 && i < traces[r].n && !msg[0]; i++) {
            const pp_event *e = &traces[r].ev[i];
            if (e->op != PP_OP_B || (e->flags & PP_EV_SPLIT)) continue;
            int waiter = gradient_waiter(c, r, e->vstage);
            if (held_back(s, r, e->mb, e->chunk))
                snprintf(msg, len, "rank %d runs the backward of micro-batch %d (chunk %d) whole, where the canonical "
                         "%s order splits it: pp_stage_backward_input at once and pp_stage_backward_weight where the "
                         "order places it", r, e->mb, e->chunk, title);
            else if (canonical_weight_half(s, r, e->mb, e->chunk) >= 0 && waiter >= 0)
                snprintf(msg, len, "rank %d runs the backward of micro-batch %d (chunk %d) whole, where the canonical "
                         "%s order splits it: its input gradient leaves for rank %d only once the weight half is done "
                         "too; pp_stage_backward_input, send, then pp_stage_backward_weight", r, e->mb, e->chunk,
                         title, waiter);
        }
    }
}

/* Rank r's first backward comes too early or too late: the warm-up's length is the cause, said in msg. */
static void warmup_length_diff(const pp_run_config *c, const pp_trace *traces, const pp_schedule *s, int r,
                               char *msg, size_t len) {
    int lead = 0, ran = 0;
    while (lead < s->n[r] && s->ops[r][lead].kind == 'F') lead++;
    for (int j = 0; j < traces[r].n && traces[r].ev[j].op != PP_OP_B; j++) ran += traces[r].ev[j].op == PP_OP_F;
    int d = ran > lead ? ran - lead : lead - ran;
    snprintf(msg, len, "rank %d runs %d forward%s before its first backward, the canonical %s order %d: its warm-up "
             "is %d forward%s too %s", r, ran, ran == 1 ? "" : "s", c->schedule->title, lead, d,
             d == 1 ? "" : "s", ran > lead ? "long" : "short");
}

/* Rank r's compute ops against the canonical order's, the first difference in msg; the number of the order's
 * ops its run has matched, returned. phases: only which phase an op runs in is compared. */
static int rank_order_diff(const pp_run_config *c, const pp_trace *traces, const pp_schedule *s, int r, int phases,
                           char *msg, size_t len) {
    static const char kinds[] = {'F', 'B', 'W'};
    int k = 0, backwards_before = 0;
    for (int i = 0; i < traces[r].n && !msg[0]; i++) {
        const pp_event *e = &traces[r].ev[i];
        if (!pp__op_is_compute(e->op)) continue;
        char kind = kinds[e->op];
        const pp_sched_op *want = k < s->n[r] ? &s->ops[r][k] : NULL;
        if (!want) {
            snprintf(msg, len, "rank %d runs more ops than the canonical order (its op %d is %c mb%d chunk %d)", r, k,
                     kind, e->mb, e->chunk);
        } else if (phases ? (want->kind == 'F') != (kind == 'F')
                          : want->kind != kind || want->mb != e->mb || want->chunk != e->chunk) {
            if (!phases && backwards_before == 0 && (kind == 'F') != (want->kind == 'F'))
                warmup_length_diff(c, traces, s, r, msg, len);
            if (!msg[0]) weight_half_diff(s, r, k, kind, e, msg, len);
            if (!msg[0])
                snprintf(msg, len, "rank %d op %d is %c mb%d chunk %d; the canonical order runs %c mb%d chunk %d "
                         "there", r, k, kind, e->mb, e->chunk, want->kind, want->mb, want->chunk);
        }
        backwards_before += kind == 'B';
        k++;
        /* a whole backward is its input half and, at once, its weight half: where the order runs the two back
         * to back, it is both of the order's ops */
        if (!msg[0] && kind == 'B' && !(e->flags & PP_EV_SPLIT) && k < s->n[r] && s->ops[r][k].kind == 'W' &&
            s->ops[r][k].mb == e->mb && s->ops[r][k].chunk == e->chunk)
            k++;
    }
    return k;
}

void pp__order_diff(const pp_run_config *c, const pp_trace *traces, const int *waiting, int prefer, char *msg,
                    size_t len) {
    pp_schedule s;
    int split, rebuilt;
    msg[0] = 0;
    if (pp__schedule_as_run(&s, c, traces, &split, &rebuilt)) return;
    int phases = free_inside_phases(c);
    whole_backward_diff(c, traces, &s, prefer, msg, len);
    for (int q = 0; q <= c->P && !msg[0]; q++) {
        int r = pp__order_diff_rank(q, prefer, c->P);
        if (r < 0) continue;
        int k = rank_order_diff(c, traces, &s, r, phases, msg, len);
        /* a rank that failed waiting for an input was about to run the op that input feeds */
        int dir, mb, vs;
        if (msg[0] || !waiting || waiting[r] < 0 || k >= s.n[r] || !pp__tag_split(waiting[r], &dir, &mb, &vs)) continue;
        char kind = dir == PP_FWD ? 'F' : 'B';
        int chunk = vs >= 0 && vs < c->P * c->v ? pp__config_vstage_chunk(c, vs) : -1;
        const pp_sched_op *want = &s.ops[r][k];
        if (phases ? (want->kind == 'F') != (kind == 'F') : want->kind != kind || want->mb != mb || want->chunk != chunk)
            snprintf(msg, len, "rank %d op %d waits for the input of %c mb%d chunk %d; the canonical order runs %c mb%d "
                     "chunk %d there", r, k, kind, mb, chunk, want->kind, want->mb, want->chunk);
    }
    pp__schedule_free(&s);
}
