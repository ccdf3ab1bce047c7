/* exposed.c: the gradient reduce's lane over a timeline, the canonical orders' exposed communication by replay
 * and by formula (exposed.h). */
#include "exposed.h"

#include <string.h>

#include "placement.h"

/* A reduce of rank r's (replica 0's stage r, in shard 0) over its replicas: the ring its group runs, on the
 * reduce's link, or with a topology on the slowest link it crosses. */
static double group_reduce_cost(const pp_run_config *c, int r, double bytes) {
    int members[64];
    for (int d = 0; d < c->D && d < 64; d++) members[d] = pp__config_rank_of(c, 0, d, r % c->P);
    return pp__config_ring_cost(c, members, c->D, bytes);
}

double pp__reduce_lane_end(const pp_run_config *c, pp_reduce_mode mode, const pp_trace *traces, int n) {
    int P = c->P, v = c->v;
    double step = pp__trace_makespan(traces, n);
    /* when the last member of stage p's group called its reduce of chunk ch, at [p * v + ch] */
    double *group = pp__xcalloc((size_t)(P * v), sizeof *group), *call = pp__xcalloc((size_t)v, sizeof *call);
    int *order = pp__xcalloc((size_t)v, sizeof *order);
    for (int i = 0; i < P * v; i++) group[i] = -1;
    for (int q = 0; q < n; q++) {
        double last = 0;
        for (int ch = 0; ch < v; ch++) call[ch] = -1;
        for (int i = 0; i < traces[q].n; i++) {
            const pp_event *e = &traces[q].ev[i];
            if (!pp__op_is_compute(e->op)) continue;
            if (e->vend > last) last = e->vend;
            if (e->op != PP_OP_F && e->chunk >= 0 && e->chunk < v && e->vend > call[e->chunk]) call[e->chunk] = e->vend;
        }
        for (int ch = 0; ch < v; ch++) {
            if (mode == PP_REDUCE_AT_END || call[ch] < 0) call[ch] = last;
            double *g = &group[(q % P) * v + ch];
            if (call[ch] > *g) *g = call[ch];
        }
    }
    for (int r = 0; r < P; r++) {
        const double *at = &group[r * v];
        /* the lane takes the reduces in the order they are called (chunk order among equal times) */
        for (int ch = 0; ch < v; ch++) order[ch] = ch;
        for (int a = 1; a < v; a++)
            for (int b = a; b > 0 && at[order[b]] < at[order[b - 1]]; b--) {
                int t = order[b];
                order[b] = order[b - 1], order[b - 1] = t;
            }
        double lane = 0;
        for (int k = 0; k < v; k++) {
            int ch = order[k], vs = pp__config_vstage(c, r, ch);
            double start = at[ch] > lane ? at[ch] : lane;
            lane = start + group_reduce_cost(c, r, pp__config_grad_bytes(c, vs));
        }
        if (lane > step) step = lane;
    }
    free(group);
    free(call);
    free(order);
    return step;
}

double pp__theory_exposed_replay(const pp_run_config *c, double *step, double *free_span) {
    const pp_schedule_def *d = c->schedule;
    if (!d) return -1;
    int n = c->P * (c->D > 1 ? c->D : 1);
    pp_trace *tr = pp__xcalloc((size_t)n, sizeof *tr);
    double span = pp__theory_grid(c, NULL, NULL, tr, NULL, NULL), end = -1;
    if (span >= 0) end = pp__reduce_lane_end(c, d->reduce, tr, n);
    for (int r = 0; r < n; r++) pp__trace_clear(&tr[r]);
    free(tr);
    if (span < 0) return -1;
    if (step) *step = end;
    if (free_span) *free_span = span;
    return end - span;
}

double pp__theory_exposed_formula(const pp_run_config *c) {
    const pp_schedule_def *d = c->schedule;
    if (!d || d->reduce == PP_REDUCE_NONE || d->vshape || c->comm_latency != 0 || c->edge_cost != 0 || c->T > 1 || c->node_size > 0 ||
        !pp__config_even(c) || (d->reduce == PP_REDUCE_AT_END && c->v != 1))
        return -1;
    int P = c->P, v = c->v;
    double b = pp__config_backward_cost(c, 0, PP_BWD_WHOLE, 0), exposed = 0;
    for (int r = 0; r < P; r++) {
        double queued = 0;
        for (int ch = 0; ch < v; ch++) {
            queued += pp__config_reduce_cost(c, pp__config_grad_bytes(c, ch * P + r));
            double e = queued - (ch * P + r) * b;
            if (e > exposed) exposed = e;
        }
    }
    return exposed;
}

double pp__theory_exposed(const pp_run_config *c, int *formula) {
    double f = pp__theory_exposed_formula(c);
    if (formula) *formula = f >= 0;
    return f >= 0 ? f : pp__theory_exposed_replay(c, NULL, NULL);
}

/* The free-reduce makespan of replica d's ops (traces: its P ranks), replayed on its own costs and links. */
static double replica_free_span(const pp_run_config *c, const pp_trace *traces, int d) {
    int P = c->P, M = c->M, v = c->v;
    pp_schedule s = {.P = P, .M = M, .v = v, .vshape = pp__config_vshape(c), .dual = pp__config_dual(c)};
    s.ops = pp__xcalloc((size_t)P, sizeof *s.ops);
    s.n = pp__xcalloc((size_t)P, sizeof *s.n);
    int ok = 1;
    for (int r = 0; r < P; r++) {
        s.ops[r] = pp__xcalloc((size_t)PP_SCHED_ROOM(M, v) + 1, sizeof **s.ops);
        for (int i = 0; i < traces[r].n; i++) {
            const pp_event *e = &traces[r].ev[i];
            if (!pp__op_is_compute(e->op)) continue;
            if (s.n[r] >= PP_SCHED_ROOM(M, v)) {
                ok = 0;
                break;
            }
            pp_sched_op *o = &s.ops[r][s.n[r]++];
            o->kind = e->op == PP_OP_F ? 'F' : e->op == PP_OP_B ? 'B' : 'W';
            o->mb = e->mb, o->chunk = e->chunk, o->split = e->op == PP_OP_B && (e->flags & PP_EV_SPLIT);
            o->cost = e->vend - e->vstart; /* the op's own cost (a rebuilt stash costs more) */
        }
    }
    double span = -1;
    if (ok) {
        pp_costs k;
        pp__costs_from_config_replica(&k, c, d);
        span = pp__schedule_replay(&s, &k, NULL);
        pp__costs_free(&k);
    }
    pp__schedule_free(&s);
    return span;
}

double pp__run_free_span(const pp_run_config *c, const pp_trace *traces) {
    double span = 0;
    for (int d = 0; d < (c->D > 1 ? c->D : 1) && span >= 0; d++) {
        double one = replica_free_span(c, traces + d * c->P, d);
        span = one < 0 ? -1 : one > span ? one : span;
    }
    return span;
}
