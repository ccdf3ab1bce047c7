/* lanes.c: a run's traces as lanes of exact cells, the one picture the text, gnuplot and Perfetto views draw. */
#include "lanes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Light enough for black labels. F green, B blue, I (the input half) a lighter blue beside it, W yellow: the
 * terminal's colours. A rebuilt forward is orange (extra work, not a schedule's own), sums red, a reduce purple. */
static const char *const cell_color[PP_CELL_KINDS] = {"#8fd18f", "#5b8fd9", "#a9ccf2", "#f2d16b",
                                                      "#f0a35e", "#e06666", "#c99ad6"};
static const char *const cell_letter[PP_CELL_KINDS] = {"F", "B", "I", "W", "R", "S", "AR"};
static const char *const cell_legend[PP_CELL_KINDS] = {
    "F = forward",
    "B = whole backward",
    "I = input-gradient half of a split backward",
    "W = weight-gradient half of a split backward",
    "R = forward run again to rebuild a dropped stash",
    "S = the shards' sums (--tp)",
    "AR = a chunk's gradient all-reduce"};

const char *pp__cell_letter(pp_cell_kind k) { return k < PP_CELL_KINDS ? cell_letter[k] : "?"; }
const char *pp__cell_legend(pp_cell_kind k) { return k < PP_CELL_KINDS ? cell_legend[k] : "?"; }
const char *pp__cell_color(pp_cell_kind k) { return k < PP_CELL_KINDS ? cell_color[k] : "#ffffff"; }

const char *pp__cell_label(const pp_cell *c, int v, int with_letter, char *buf, size_t len) {
    const char *l = with_letter ? pp__cell_letter(c->kind) : "";
    if (c->kind == PP_CELL_REDUCE) snprintf(buf, len, "%s%s%d", with_letter ? "R" : "", with_letter ? "" : "c", c->chunk);
    else if (c->copy >= 0) snprintf(buf, len, "%s%d%c", l, c->mb, c->copy ? 'b' : 'a');
    else if (v > 1) snprintf(buf, len, "%s%d.%d", l, c->mb, c->chunk);
    else snprintf(buf, len, "%s%d", l, c->mb);
    return buf;
}

/* A lane under construction: cells appended in any order, sorted when done. */
static pp_cell *cell_add(pp_lane *l, int *cap) {
    if (l->n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        l->cells = pp__xrealloc(l->cells, (size_t)*cap * sizeof *l->cells);
    }
    return &l->cells[l->n++];
}

static void put(pp_lane *l, int *cap, pp_cell proto, pp_cell_kind k, double s, double e) {
    if (e - s <= 1e-12) return;
    pp_cell *c = cell_add(l, cap);
    *c = proto;
    c->kind = k, c->s = s, c->e = e;
    if (k != PP_CELL_SUM && k != PP_CELL_REDUCE) c->across = -1;
}

/* The duration of the forward of (chunk, mb) in the trace: what a backward that rebuilt its stash ran again, with
 * the sums that forward made; 0 when the trace has no such forward. */
static void forward_of(const pp_trace *t, int chunk, int mb, double *dur, double *sums) {
    *dur = *sums = 0;
    for (int i = 0; i < t->n; i++) {
        const pp_event *e = &t->ev[i];
        if (e->op == PP_OP_F && e->chunk == chunk && e->mb == mb) {
            *dur = e->vend - e->vstart, *sums = e->tp_time;
            return;
        }
    }
}

/* One op's cells: its compute, then its sums where its pass ends (a rebuilt forward's first). */
static void op_cells(pp_lane *l, int *cap, const pp_trace *t, int i, int dual) {
    const pp_event *e = &t->ev[i];
    pp_cell c = {.mb = e->mb, .chunk = e->chunk, .vstage = e->vstage, .copy = dual ? e->chunk : -1,
                 .across = e->tp_across, .event = i};
    double s = e->vstart, sums = e->tp_time > 0 ? e->tp_time : 0;
    if (e->op == PP_OP_F || e->op == PP_OP_W) {
        put(l, cap, c, e->op == PP_OP_F ? PP_CELL_F : PP_CELL_W, s, e->vend - sums);
        put(l, cap, c, PP_CELL_SUM, e->vend - sums, e->vend);
        return;
    }
    if (e->flags & PP_EV_RECOMPUTED) {
        double fdur, fsums;
        forward_of(t, e->chunk, e->mb, &fdur, &fsums);
        if (fdur > e->vend - s) fdur = e->vend - s, fsums = 0; /* never past the op: a trace we cannot read so */
        if (fsums > sums) fsums = sums;
        put(l, cap, c, PP_CELL_RECOMPUTE, s, s + fdur - fsums);
        put(l, cap, c, PP_CELL_SUM, s + fdur - fsums, s + fdur);
        s += fdur, sums -= fsums;
    }
    pp_cell_kind k = (e->flags & PP_EV_SPLIT) ? PP_CELL_I : PP_CELL_B;
    put(l, cap, c, k, s, e->vend - sums);
    put(l, cap, c, PP_CELL_SUM, e->vend - sums, e->vend);
}

static int cmp_cell(const void *a, const void *b) {
    const pp_cell *x = a, *y = b;
    return (x->s > y->s) - (x->s < y->s);
}

static pp_lane *lane_add(pp_lanes *L, int *cap) {
    if (L->n == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        L->lane = pp__xrealloc(L->lane, (size_t)*cap * sizeof *L->lane);
    }
    pp_lane *l = &L->lane[L->n++];
    memset(l, 0, sizeof *l);
    return l;
}

static void lane_done(pp_lanes *L, pp_lane *l) {
    if (l->n) qsort(l->cells, (size_t)l->n, sizeof *l->cells, cmp_cell); /* an empty lane has no array */
    for (int i = 0; i < l->n; i++) {
        const pp_cell *c = &l->cells[i];
        L->has[c->kind] = 1;
        if (c->e > L->step) L->step = c->e;
        if (c->kind == PP_CELL_SUM && l->shard == 0) L->sums += c->e - c->s;
        if (c->kind == PP_CELL_SUM && c->across == 1) L->across_sums++;
        if (c->chunk + 1 > L->v) L->v = c->chunk + 1;
    }
}

void pp__lanes_build(pp_lanes *L, const pp_lanes_src *src) {
    memset(L, 0, sizeof *L);
    int P = src->P, D = src->D > 0 ? src->D : 1, R = P * D, T = src->shards && src->T > 1 ? src->T : 1, cap = 0;
    L->P = P, L->D = D, L->T = T, L->v = 1;
    int reduces = 0;
    for (int q = 0; q < R; q++)
        for (int i = 0; i < src->traces[q].n; i++) /* a free reduce (no link to cross) draws nothing */
            reduces |= src->traces[q].ev[i].op == PP_OP_REDUCE && src->traces[q].ev[i].vend > src->traces[q].ev[i].vstart;
    for (int q = 0; q < R; q++) {
        int d = q / P, p = q % P;
        for (int t = 0; t < T; t++) {
            const pp_trace *tr = t ? &src->shards[(t - 1) * R + q] : &src->traces[q];
            pp_lane *l = lane_add(L, &cap);
            int lcap = 0;
            l->kind = PP_LANE_COMPUTE, l->rank = t * R + q, l->pipe = p, l->replica = d, l->shard = t;
            l->node = src->node ? src->node[l->rank] : -1;
            if (T > 1 && D > 1) snprintf(l->name, sizeof l->name, "replica %d, GPU %d, shard %d", d, p, t);
            else if (T > 1) snprintf(l->name, sizeof l->name, "GPU %d, shard %d", p, t);
            else if (D > 1) snprintf(l->name, sizeof l->name, "replica %d, GPU %d", d, p);
            else snprintf(l->name, sizeof l->name, "GPU %d", p);
            for (int i = 0; i < tr->n; i++)
                if (pp__op_is_compute(tr->ev[i].op)) op_cells(l, &lcap, tr, i, src->dual);
            lane_done(L, l);
        }
        if (!reduces) continue;
        pp_lane *l = lane_add(L, &cap);
        int lcap = 0;
        l->kind = PP_LANE_REDUCE, l->rank = q, l->pipe = p, l->replica = d, l->shard = 0;
        l->node = src->node ? src->node[q] : -1;
        snprintf(l->name, sizeof l->name, "reduce");
        const pp_trace *tr = &src->traces[q];
        for (int i = 0; i < tr->n; i++) {
            const pp_event *e = &tr->ev[i];
            if (e->op != PP_OP_REDUCE) continue;
            pp_cell c = {.mb = -1, .chunk = e->chunk, .vstage = e->vstage, .copy = -1, .across = -1, .event = i};
            put(l, &lcap, c, PP_CELL_REDUCE, e->vstart, e->vend);
        }
        lane_done(L, l);
    }
}

void pp__lanes_free(pp_lanes *L) {
    for (int i = 0; i < L->n; i++) free(L->lane[i].cells);
    free(L->lane);
    memset(L, 0, sizeof *L);
}

void pp__lanes_src_of(pp_lanes_src *src, const pp_run_result *res, const pp_run_config *c) {
    int D = res->D > 0 ? res->D : 1, T = c->T > 1 ? c->T : 1;
    *src = (pp_lanes_src){.traces = res->traces, .P = res->P / D, .D = D, .dual = pp__config_dual(c)};
    if (T > 1 && res->tp_traces && res->tp_ranks == (T - 1) * res->P) src->shards = res->tp_traces, src->T = T;
    if (c->node_size > 0) {
        int W = T * res->P;
        int *node = pp__xcalloc((size_t)W + 1, sizeof *node);
        for (int g = 0; g < W; g++) node[g] = pp__config_node(c, g);
        src->node = node;
    }
}

void pp__lanes_src_free(pp_lanes_src *src) {
    free((void *)src->node);
    src->node = NULL;
}
