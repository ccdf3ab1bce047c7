/* replay.c: canonical per-rank op orders and their replay under the virtual clock. */
#include "replay.h"

#include <string.h>

#include "answers.h"
#include "placement.h"

/* Fills s (P, M, v set) with each rank's canonical order of def (answers.h); -1 where this build does not hold
 * them (s then holds nothing to free). */
static int build_orders(pp_schedule *s, const pp_schedule_def *def) {
    int P = s->P, M = s->M, v = s->v;
    s->ops = pp__xcalloc((size_t)P, sizeof *s->ops);
    s->n = pp__xcalloc((size_t)P, sizeof *s->n);
    /* which (chunk, micro-batch) a rank's order gives a weight half of its own */
    char *has_w = pp__xmalloc((size_t)(M * v));
    for (int r = 0; r < P; r++) {
        s->ops[r] = pp__xcalloc((size_t)PP_SCHED_ROOM(M, v), sizeof **s->ops);
        s->n[r] = pp__answers_order(def, P, M, v, r, s->ops[r]);
        if (s->n[r] < 0) {
            free(has_w);
            pp__schedule_free(s);
            return -1;
        }
        memset(has_w, 0, (size_t)(M * v));
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < s->n[r]; i++) {
                pp_sched_op *o = &s->ops[r][i];
                if (o->mb < 0 || o->mb >= M || o->chunk < 0 || o->chunk >= v) continue; /* the replay refuses it */
                if (pass == 0 && o->kind == 'W') has_w[o->chunk * M + o->mb] = 1;
                /* a backward whose weight half the order places itself is only its input half */
                if (pass == 1 && o->kind == 'B') o->split = has_w[o->chunk * M + o->mb];
            }
    }
    free(has_w);
    return 0;
}

int pp__schedule_build(pp_schedule *s, const char *name, int P, int M, int v) {
    const pp_schedule_def *def = pp__schedule_def(name);
    memset(s, 0, sizeof *s);
    if (!def) return -1;
    s->P = P, s->M = M, s->v = v, s->vshape = def->vshape, s->dual = def->dual;
    return build_orders(s, def);
}

void pp__schedule_free(pp_schedule *s) {
    for (int r = 0; s->ops && r < s->P; r++) free(s->ops[r]);
    free(s->ops);
    free(s->n);
    memset(s, 0, sizeof *s);
}

void pp__costs_from_config_replica(pp_costs *k, const pp_run_config *c, int d) {
    int S = c->P * c->v;
    k->f = pp__xcalloc((size_t)S, sizeof *k->f);
    k->b = pp__xcalloc((size_t)S, sizeof *k->b);
    k->bi = pp__xcalloc((size_t)S, sizeof *k->bi);
    /* replica d's ranks in shard 0: their shards' rings and their links price them */
    for (int s = 0; s < S; s++) {
        int w = pp__config_rank_of(c, 0, d, pp__config_vstage_rank(c, s));
        k->f[s] = pp__config_forward_cost_of(c, w, s);
        k->b[s] = pp__config_backward_cost_of(c, w, s, PP_BWD_WHOLE, 0);
        k->bi[s] = pp__config_backward_cost_of(c, w, s, PP_BWD_INPUT, 0);
    }
    k->latency = c->comm_latency;
    k->lat = NULL;
    k->tp = NULL, k->tp_across = NULL;
    if (c->T > 1) {
        k->tp = pp__xcalloc((size_t)S, sizeof *k->tp);
        k->tp_across = pp__xcalloc((size_t)S, sizeof *k->tp_across);
        for (int s = 0; s < S; s++) {
            int w = pp__config_rank_of(c, 0, d, pp__config_vstage_rank(c, s));
            k->tp[s] = pp__config_tp_sums_cost_of(c, w, s);
            k->tp_across[s] = pp__config_tp_crosses(c, w);
        }
    }
    if (c->node_size > 0) { /* one activation a message, on the link between the two ranks of replica d */
        double bytes = (double)c->mb_size * c->seq * c->hidden * sizeof(float);
        k->lat = pp__xcalloc((size_t)(c->P * c->P), sizeof *k->lat);
        for (int a = 0; a < c->P; a++)
            for (int b = 0; b < c->P; b++)
                k->lat[a * c->P + b] = pp__config_message_cost(c, pp__config_rank_of(c, 0, d, a),
                                                               pp__config_rank_of(c, 0, d, b), bytes);
    }
}

void pp__costs_from_config(pp_costs *k, const pp_run_config *c) { pp__costs_from_config_replica(k, c, 0); }

void pp__costs_free(pp_costs *k) {
    free(k->f);
    free(k->b);
    free(k->bi);
    free(k->lat);
    free(k->tp);
    free(k->tp_across);
    k->f = k->b = k->bi = k->lat = k->tp = NULL;
    k->tp_across = NULL;
}

/* What a message from rank a to rank b adds to its data's ready time. */
static double link_cost(const pp_costs *k, int P, int a, int b) {
    if (a == b) return 0;
    return k->lat ? k->lat[a * P + b] : k->latency;
}

/* The replay behind pp__schedule_replay and pp__schedule_trace; traces (P of them) may be NULL. */
static double replay(const pp_schedule *s, const pp_costs *k, double *busy, pp_trace *traces) {
    int P = s->P, S = P * s->v, M = s->M;
    /* done times of F and B per (virtual stage, micro-batch); -1 = not yet */
    double *fdone = pp__xmalloc((size_t)(S * M) * sizeof *fdone), *bdone = pp__xmalloc((size_t)(S * M) * sizeof *bdone);
    for (int i = 0; i < S * M; i++) fdone[i] = bdone[i] = -1;
    int *next = pp__xcalloc((size_t)P, sizeof *next);
    double *clock = pp__xcalloc((size_t)P, sizeof *clock), makespan = 0;
    if (busy) memset(busy, 0, (size_t)P * sizeof *busy);
    for (int progress = 1; progress;) {
        progress = 0;
        for (int r = 0; r < P; r++) {
            while (next[r] < s->n[r]) {
                pp_sched_op op = s->ops[r][next[r]];
                int vs = pp__place_vstage(P, s->vshape, r, op.chunk);
                if (op.mb < 0 || op.mb >= M || vs >= S) goto stuck;
                /* the virtual stages a micro-batch runs through: all of them, or its own pipeline's in DualPipe */
                int prev = pp__place_prev(P, s->dual, vs), after = pp__place_next(P, s->v, s->dual, vs);
                if (!pp__place_carries(P, M, s->dual, vs, op.mb)) goto stuck;
                double ready;
                if (op.kind == 'W') {
                    /* the weight half needs only its own input half, earlier on this rank */
                    if (bdone[vs * M + op.mb] < 0) goto stuck;
                    ready = 0;
                } else if (op.kind == 'F') {
                    if (prev < 0) ready = 0;
                    else if (fdone[prev * M + op.mb] < 0) break;
                    else ready = fdone[prev * M + op.mb] + link_cost(k, P, pp__place_rank(P, s->vshape, prev), r);
                } else {
                    if (fdone[vs * M + op.mb] < 0) break;
                    ready = fdone[vs * M + op.mb];
                    if (after >= 0) {
                        double up = bdone[after * M + op.mb];
                        if (up < 0) break;
                        up += link_cost(k, P, pp__place_rank(P, s->vshape, after), r);
                        if (up > ready) ready = up;
                    }
                }
                /* a half of a backward costs its part of it: half, or as the costs say */
                double half_in = k->bi ? k->bi[vs] : k->b[vs] / 2;
                double cost = op.cost > 0      ? op.cost
                              : op.kind == 'F' ? k->f[vs]
                              : op.kind == 'W' ? k->b[vs] - half_in
                              : op.split       ? half_in
                                               : k->b[vs];
                double start = clock[r] > ready ? clock[r] : ready;
                clock[r] = start + cost;
                if (busy) busy[r] += cost;
                if (op.kind != 'W') (op.kind == 'F' ? fdone : bdone)[vs * M + op.mb] = clock[r];
                if (traces) {
                    pp_event e = {.rank = r, .op = op.kind == 'F' ? PP_OP_F : op.kind == 'B' ? PP_OP_B : PP_OP_W,
                                  .mb = op.mb, .chunk = op.chunk,
                                  .vstage = vs, .peer = -1, .tag = -1, .timer = -1, .vstart = start, .vend = clock[r],
                                  .flags = op.kind == 'B' && op.split ? PP_EV_SPLIT : 0,
                                  /* the shards' sums of an F or of a backward's input half */
                                  .tp_time = k->tp && op.kind != 'W' ? k->tp[vs] : 0,
                                  .tp_across = k->tp_across && op.kind != 'W' ? k->tp_across[vs] : 0};
                    pp__trace_add(&traces[r], &e);
                }
                if (clock[r] > makespan) makespan = clock[r];
                next[r]++;
                progress = 1;
            }
        }
    }
    for (int r = 0; r < P; r++)
        if (next[r] < s->n[r]) goto stuck;
    free(fdone), free(bdone), free(next), free(clock);
    return makespan;
stuck:
    free(fdone), free(bdone), free(next), free(clock);
    return -1;
}

double pp__schedule_replay(const pp_schedule *s, const pp_costs *k, double *busy) { return replay(s, k, busy, NULL); }

double pp__schedule_trace(const pp_schedule *s, const pp_costs *k, pp_trace *traces) {
    return replay(s, k, NULL, traces);
}

double pp__schedule_bubble(const pp_schedule *s, const pp_costs *k) {
    double *busy = pp__xcalloc((size_t)s->P, sizeof *busy), total = 0;
    double span = pp__schedule_replay(s, k, busy);
    for (int r = 0; r < s->P; r++) total += busy[r];
    free(busy);
    if (span < 0) return -1;
    return span > 0 ? 1.0 - total / (s->P * span) : 0;
}

double pp__trace_wall_bubble(const pp_trace *traces, int P) {
    double first = 1e300, last = -1e300, busy = 0;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < traces[r].n; i++) {
            const pp_event *e = &traces[r].ev[i];
            if (!pp__op_is_compute(e->op)) continue;
            busy += e->wall_end - e->wall_start;
            first = e->wall_start < first ? e->wall_start : first;
            last = e->wall_end > last ? e->wall_end : last;
        }
    return last > first ? 1.0 - busy / (P * (last - first)) : 0;
}

void pp__costs_from_trace(pp_costs *k, const pp_trace *traces, const pp_run_config *c) {
    int S = c->P * c->v;
    pp__costs_from_config(k, c);
    int *nf = pp__xcalloc((size_t)S, sizeof *nf), *nb = pp__xcalloc((size_t)S, sizeof *nb);
    for (int s = 0; s < S; s++) k->f[s] = k->b[s] = 0;
    free(k->bi);
    k->bi = NULL; /* measured: the halves of a backward are taken as equal */
    for (int r = 0; r < c->P; r++)
        for (int i = 0; i < traces[r].n; i++) {
            const pp_event *e = &traces[r].ev[i];
            if (!pp__op_is_compute(e->op) || e->vstage < 0 || e->vstage >= S) continue;
            double d = e->wall_end - e->wall_start;
            if (e->op == PP_OP_F) k->f[e->vstage] += d, nf[e->vstage]++;
            else k->b[e->vstage] += d, nb[e->vstage] += e->op == PP_OP_B; /* W adds to its B */
        }
    for (int s = 0; s < S; s++) {
        k->f[s] = nf[s] ? k->f[s] / nf[s] : 0;
        k->b[s] = nb[s] ? k->b[s] / nb[s] : 0;
    }
    k->latency = 0;
    free(k->lat);
    k->lat = NULL;
    free(nf);
    free(nb);
}

double pp__theory_grid(const pp_run_config *c, const pp_trace *traces, double *busy, pp_trace *ideal, int *split,
                       int *rebuilt) {
    int P = c->P, D = c->D > 1 ? c->D : 1;
    double span = 0, *each = pp__xcalloc((size_t)P, sizeof *each);
    if (busy) *busy = 0;
    if (split) *split = 0;
    if (rebuilt) *rebuilt = 0;
    for (int d = 0; d < D && span >= 0; d++) {
        pp_schedule s;
        pp_costs k;
        int sp, rb;
        if (pp__schedule_as_run_replica(&s, c, traces ? traces + d * P : NULL, d, &sp, &rb)) {
            span = -1;
            break;
        }
        pp__costs_from_config_replica(&k, c, d);
        double end = ideal ? replay(&s, &k, each, ideal + d * P) : replay(&s, &k, each, NULL);
        for (int r = 0; ideal && r < P; r++)
            for (int i = 0; i < ideal[d * P + r].n; i++) ideal[d * P + r].ev[i].rank = d * P + r;
        for (int r = 0; busy && r < P; r++) *busy += each[r];
        if (split) *split += sp;
        if (rebuilt) *rebuilt += rb;
        span = end < 0 ? -1 : end > span ? end : span;
        pp__costs_free(&k);
        pp__schedule_free(&s);
    }
    free(each);
    return span;
}

/* The bubble of the grid's replay (pp__theory_grid): idle time over every replica's ranks until the last ends. */
static double grid_bubble(const pp_run_config *c, const pp_trace *traces, int *split, int *rebuilt) {
    double busy, span = pp__theory_grid(c, traces, &busy, NULL, split, rebuilt);
    int n = c->P * (c->D > 1 ? c->D : 1);
    if (span < 0) return -1;
    return span > 0 ? 1.0 - busy / (n * span) : 0;
}

double pp__theory_bubble(const pp_run_config *c, int *formula) {
    const pp_schedule_def *def = c->schedule;
    double closed = def && c->comm_latency == 0 && c->edge_cost == 0 && c->T <= 1 && c->node_size <= 0 &&
                            pp__config_even(c)
                        ? pp__answers_bubble(def, c->P, c->M, c->v)
                        : -1;
    if (closed >= 0) {
        if (formula) *formula = 1;
        return closed;
    }
    if (formula) *formula = 0;
    return grid_bubble(c, NULL, NULL, NULL);
}

double pp__theory_step(const pp_run_config *c) { return pp__theory_grid(c, NULL, NULL, NULL, NULL, NULL); }

int pp__schedule_as_run(pp_schedule *s, const pp_run_config *c, const pp_trace *traces, int *split, int *rebuilt) {
    return pp__schedule_as_run_replica(s, c, traces, 0, split, rebuilt);
}

int pp__schedule_as_run_replica(pp_schedule *s, const pp_run_config *c, const pp_trace *traces, int d, int *split,
                                int *rebuilt) {
    if (pp__schedule_build(s, c->schedule->name, c->P, c->M, c->v)) return -1;
    int P = c->P, S = P * c->v, M = c->M;
    /* how the run's backward of (virtual stage, micro-batch) went: PP_EV_* flags, 4 when it ran at all */
    int *how = pp__xcalloc((size_t)(S * M), sizeof *how);
    /* no run: every backward whole, rebuilt when the configuration recomputes */
    for (int i = 0; !traces && i < S * M; i++) how[i] = 4 | PP_EV_RECOMPUTED;
    for (int r = 0; traces && r < P; r++)
        for (int i = 0; i < traces[r].n; i++) {
            const pp_event *e = &traces[r].ev[i];
            if (e->op == PP_OP_B && e->vstage >= 0 && e->vstage < S && e->mb >= 0 && e->mb < M)
                how[e->vstage * M + e->mb] = 4 | e->flags;
        }
    *split = *rebuilt = 0;
    for (int r = 0; r < P; r++) {
        int n = 0, extra = 0, w = pp__config_rank_of(c, 0, d, r); /* the world rank whose costs the ops take */
        for (int i = 0; i < s->n[r]; i++) extra += s->ops[r][i].kind == 'B' && !s->ops[r][i].split;
        pp_sched_op *ops = pp__xcalloc((size_t)(s->n[r] + extra), sizeof *ops);
        for (int i = 0; i < s->n[r]; i++) {
            pp_sched_op op = s->ops[r][i];
            int vs = pp__place_vstage(P, s->vshape, r, op.chunk), h = op.kind == 'B' ? how[vs * M + op.mb] : 0;
            int again = (h & PP_EV_RECOMPUTED) && c->recompute;
            *rebuilt += again;
            if (op.kind == 'W') {
                op.cost = pp__config_backward_cost_of(c, w, vs, PP_BWD_WEIGHT, 0);
                ops[n++] = op;
            } else if (op.split) {
                /* the order splits it: the theory keeps the order's halves whatever the run did (a whole backward
                 * where the order holds its weight half back costs the run time, which the order check names) */
                op.cost = pp__config_backward_cost_of(c, w, vs, PP_BWD_INPUT, again);
                ops[n++] = op;
            } else if (h & PP_EV_SPLIT) {
                op.cost = pp__config_backward_cost_of(c, w, vs, PP_BWD_INPUT, again);
                op.split = 1;
                ops[n++] = op;
                ops[n++] = (pp_sched_op){.kind = 'W', .mb = op.mb, .chunk = op.chunk,
                                         .cost = pp__config_backward_cost_of(c, w, vs, PP_BWD_WEIGHT, 0)};
                (*split)++;
            } else {
                if (op.kind == 'B') op.cost = pp__config_backward_cost_of(c, w, vs, PP_BWD_WHOLE, again);
                ops[n++] = op;
            }
        }
        free(s->ops[r]);
        s->ops[r] = ops;
        s->n[r] = n;
    }
    free(how);
    return 0;
}

double pp__theory_bubble_run(const pp_run_config *c, const pp_trace *traces, int *formula, char *note, size_t len) {
    int split, rebuilt;
    note[0] = 0;
    double b = grid_bubble(c, traces, &split, &rebuilt);
    if (!split && !rebuilt) return b < 0 ? -1 : pp__theory_bubble(c, formula);
    snprintf(note, len, "with %s%s%s", split ? "split backwards" : "", split && rebuilt ? " and " : "",
             rebuilt ? "recomputation" : "");
    if (formula) *formula = 0;
    return b;
}

int pp__schedule_peak(const pp_schedule *s, int r) {
    int live = 0, peak = 0;
    for (int i = 0; i < s->n[r]; i++) {
        const pp_sched_op *op = &s->ops[r][i];
        live += op->kind == 'F' ? 1 : op->kind == 'W' || !op->split ? -1 : 0;
        peak = live > peak ? live : peak;
    }
    return peak;
}

int pp__theory_peak(const pp_run_config *c, int r) {
    return pp__answers_peak(c->schedule, c->P, c->M, c->v, r);
}

int pp__theory_messages(const pp_run_config *c) {
    return pp__answers_messages(c->schedule, c->P, c->M, c->v);
}

int pp__theory_held(const pp_run_config *c) {
    if (!pp__answers_held(c->schedule, c->P, c->M, c->v)) return 0;
    /* a topology's run is priced by its links: where no mapping of the grid lab places it, by the placement's */
    return c->node_size <= 0 || c->place ||
           pp__answers_place(pp__config_placement(c), c->T > 1 ? c->T : 1, c->D, c->P, 0) >= 0;
}

const char *pp__theory_unheld(const pp_run_config *c, char *buf, size_t len) {
    const pp_schedule_def *def = c->schedule;
    char held[2048];
    if (def && pp__answers_held(def, c->P, c->M, c->v))
        snprintf(buf, len, "this handout records the placement of its public grids only (--tp x --dp x --stages = %d x "
                 "%d x %d with --placement %s is not one; the instructor's kit computes any)",
                 c->T > 1 ? c->T : 1, c->D, c->P, pp__config_placement(c));
    else
        snprintf(buf, len, "this handout records the canonical answers of its public configurations only; %s's are "
                 "at %s (the instructor's kit computes any)", c->schedule->name, pp__answers_held_list(def, held, sizeof held));
    return buf;
}
