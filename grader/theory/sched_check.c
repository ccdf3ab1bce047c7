/* sched_check.c: lab 09's problem and what the grader holds an order for it to (sched_problem.h). Everything here reads
 * an order; nothing here makes one. */
#include "sched_problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "placement.h"

int pp__sched_problem_check(const pp_sched_problem *pb, char *err, size_t len) {
    if (pb->P < 1 || pb->P > PP_SCHED_MAX_P) {
        snprintf(err, len, "P=%d: lab 09 schedules 1 to %d ranks", pb->P, PP_SCHED_MAX_P);
        return -1;
    }
    if (pb->M < 1 || pb->M > 64) {
        snprintf(err, len, "M=%d: lab 09 schedules 1 to 64 micro-batches", pb->M);
        return -1;
    }
    if (pb->v != 1 && pb->v != 2) {
        snprintf(err, len, "v=%d: lab 09 places one stage per rank (v=1) or two in a V (v=2)", pb->v);
        return -1;
    }
    for (int s = 0; s < pb->P * pb->v; s++) {
        const double c[3] = {pb->f[s], pb->i[s], pb->w[s]};
        for (int k = 0; k < 3; k++)
            if (!(c[k] > 0) || !isfinite(c[k]) || c[k] > 1e6) {
                snprintf(err, len, "virtual stage %d's %c costs %g: every cost is a number above 0 and at most 1e6",
                         s, "FIW"[k], c[k]);
                return -1;
            }
    }
    if (!(pb->latency >= 0) || pb->latency > 1e6) {
        snprintf(err, len, "latency %g: give a number from 0 to 1e6", pb->latency);
        return -1;
    }
    if (pb->cap < pb->v) {
        /* in a V a rank's first stage keeps its stash until its second stage's gradient has come back */
        snprintf(err, len, "cap %d: a rank must hold at least %d stash%s (%s)", pb->cap, pb->v, pb->v > 1 ? "es" : "",
                 pb->v > 1 ? "in a V, a micro-batch's two stages on one rank" : "the one its forward makes");
        return -1;
    }
    return 0;
}

/* Costs as a list "a,b,c" of %g, into buf at *n. */
static void key_list(char *buf, size_t len, size_t *n, const char *name, const double *x, int count) {
    *n += (size_t)snprintf(buf + *n, *n < len ? len - *n : 0, " %s=", name);
    for (int s = 0; s < count; s++)
        *n += (size_t)snprintf(buf + *n, *n < len ? len - *n : 0, "%s%g", s ? "," : "", x[s]);
}

void pp__sched_problem_key(const pp_sched_problem *pb, char *buf, size_t len) {
    size_t n = (size_t)snprintf(buf, len, "P=%d M=%d v=%d cap=%d latency=%g", pb->P, pb->M, pb->v, pb->cap,
                                pb->latency);
    int S = pb->P * pb->v;
    key_list(buf, len, &n, "f", pb->f, S);
    key_list(buf, len, &n, "i", pb->i, S);
    key_list(buf, len, &n, "w", pb->w, S);
}

void pp__sched_costs(const pp_sched_problem *pb, pp_costs *k) {
    int S = pb->P * pb->v;
    memset(k, 0, sizeof *k);
    k->f = pp__xcalloc((size_t)S, sizeof *k->f);
    k->b = pp__xcalloc((size_t)S, sizeof *k->b);
    k->bi = pp__xcalloc((size_t)S, sizeof *k->bi);
    for (int s = 0; s < S; s++) k->f[s] = pb->f[s], k->b[s] = pb->i[s] + pb->w[s], k->bi[s] = pb->i[s];
    k->latency = pb->latency;
}

void pp__sched_alloc(const pp_sched_problem *pb, pp_schedule *s) {
    memset(s, 0, sizeof *s);
    s->P = pb->P, s->M = pb->M, s->v = pb->v, s->vshape = pb->v == 2;
    s->ops = pp__xcalloc((size_t)pb->P, sizeof *s->ops);
    s->n = pp__xcalloc((size_t)pb->P, sizeof *s->n);
    for (int r = 0; r < pb->P; r++) s->ops[r] = pp__xcalloc((size_t)PP_SCHED_ROOM(pb->M, pb->v), sizeof **s->ops);
}

double pp__sched_makespan(const pp_sched_problem *pb, const pp_schedule *s) {
    pp_costs k;
    pp__sched_costs(pb, &k);
    double end = pp__schedule_replay(s, &k, NULL);
    pp__costs_free(&k);
    return end;
}

/* An op as its CSV cell: "3I5". */
static const char *cell(const pp_schedule *s, int r, const pp_sched_op *op, char *buf, size_t len) {
    char kind = op->kind == 'B' && op->split ? 'I' : op->kind;
    snprintf(buf, len, "%d%c%d", pp__place_vstage(s->P, s->vshape, r, op->chunk), kind, op->mb);
    return buf;
}

int pp__sched_csv(const pp_schedule *s, char *buf, size_t len) {
    size_t n = 0;
    char c[32];
    for (int r = 0; r < s->P; r++) {
        for (int i = 0; i < s->n[r]; i++) {
            n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", i ? "," : "", cell(s, r, &s->ops[r][i], c,
                                                                                              sizeof c));
        }
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "\n");
    }
    return n < len ? (int)n : -1;
}

/* Where each (virtual stage, micro-batch)'s ops sit: their position on their rank, -1 when absent. */
typedef struct where {
    int f, b, w; /* b: a whole backward or an input half */
} where;

/* The first op of s that is there twice, is missing, or runs before what its own rank must run first; -1 with err
 * set, else 0 with at[] filled. */
static int ops_complete(const pp_sched_problem *pb, const pp_schedule *s, where *at, char *err, size_t len) {
    int S = pb->P * pb->v, M = pb->M;
    char c[32];
    for (int k = 0; k < S * M; k++) at[k] = (where){-1, -1, -1};
    for (int r = 0; r < s->P; r++)
        for (int i = 0; i < s->n[r]; i++) {
            const pp_sched_op *op = &s->ops[r][i];
            int vs = pp__place_vstage(s->P, s->vshape, r, op->chunk);
            if (op->mb < 0 || op->mb >= M || vs < 0 || vs >= S) {
                snprintf(err, len, "rank %d's op %d (%s) names a micro-batch or stage outside M=%d and %d stages", r,
                         i, cell(s, r, op, c, sizeof c), M, S);
                return -1;
            }
            where *x = &at[vs * M + op->mb];
            int *slot = op->kind == 'F' ? &x->f : op->kind == 'W' ? &x->w : &x->b;
            if (*slot >= 0) {
                snprintf(err, len, "rank %d runs %s twice (ops %d and %d): each micro-batch's forward and backward "
                         "run once per stage", r, cell(s, r, op, c, sizeof c), *slot, i);
                return -1;
            }
            *slot = i;
            if (op->kind == 'W' && x->b >= 0 && !s->ops[r][x->b].split) {
                snprintf(err, len, "rank %d runs %s (op %d) after the whole backward %dB%d, which ran its weight half "
                         "already: write that backward as %dI%d", r, cell(s, r, op, c, sizeof c), i, vs, op->mb, vs,
                         op->mb);
                return -1;
            }
            if (op->kind == 'W' && x->b < 0) {
                snprintf(err, len, "rank %d runs %s (op %d) before the input half %dI%d it belongs to: a weight half "
                         "follows its input half", r, cell(s, r, op, c, sizeof c), i, vs, op->mb);
                return -1;
            }
            if (op->kind != 'F' && x->f < 0) {
                snprintf(err, len, "rank %d runs %s (op %d) before the forward %dF%d whose stash it reads", r,
                         cell(s, r, op, c, sizeof c), i, vs, op->mb);
                return -1;
            }
        }
    for (int vs = 0; vs < S; vs++)
        for (int mb = 0; mb < M; mb++) {
            const where *x = &at[vs * M + mb];
            int r = pp__place_rank(pb->P, pb->v == 2, vs);
            const char *what = x->f < 0 ? "F" : x->b < 0 ? "I or B" : "";
            if (!*what && x->w < 0 && s->ops[r][x->b].split) what = "W";
            if (*what) {
                snprintf(err, len, "micro-batch %d has no %s on virtual stage %d (rank %d): every micro-batch runs "
                         "F, then I and W (or a whole B), on every stage", mb, what, vs, r);
                return -1;
            }
        }
    return 0;
}

/* Why s cannot complete: each rank's first op that never runs, replayed under the dependencies alone. */
static void deadlock_reason(const pp_sched_problem *pb, const pp_schedule *s, const where *at, char *err,
                            size_t len) {
    int P = s->P, M = pb->M, S = P * pb->v;
    int *next = pp__xcalloc((size_t)P, sizeof *next);
    char *fdone = pp__xcalloc((size_t)(S * M), 1), *bdone = pp__xcalloc((size_t)(S * M), 1);
    (void)at;
    for (int moved = 1; moved;) {
        moved = 0;
        for (int r = 0; r < P; r++)
            while (next[r] < s->n[r]) {
                const pp_sched_op *op = &s->ops[r][next[r]];
                int vs = pp__place_vstage(P, s->vshape, r, op->chunk), ready = 1;
                if (op->kind == 'F' && vs > 0) ready = fdone[(vs - 1) * M + op->mb];
                if (op->kind == 'B') ready = vs == S - 1 ? fdone[vs * M + op->mb] : bdone[(vs + 1) * M + op->mb];
                if (op->kind == 'W') ready = bdone[vs * M + op->mb];
                if (!ready) break;
                if (op->kind == 'F') fdone[vs * M + op->mb] = 1;
                if (op->kind == 'B') bdone[vs * M + op->mb] = 1;
                next[r]++, moved = 1;
            }
    }
    size_t n = (size_t)snprintf(err, len, "the order deadlocks, each rank below waiting for an op that its rank runs "
                                "later:");
    char c[32];
    int said = 0;
    for (int r = 0; r < P; r++) {
        if (next[r] >= s->n[r]) continue;
        const pp_sched_op *op = &s->ops[r][next[r]];
        int vs = pp__place_vstage(P, s->vshape, r, op->chunk);
        char need[32];
        if (op->kind == 'F') snprintf(need, sizeof need, "%dF%d", vs - 1, op->mb);
        else snprintf(need, sizeof need, "%d%c%d", vs == S - 1 ? vs : vs + 1, vs == S - 1 ? 'F' : 'I', op->mb);
        n += (size_t)snprintf(err + n, n < len ? len - n : 0, "%s rank %d at %s (op %d) needs %s", said++ ? ";" : "",
                              r, cell(s, r, op, c, sizeof c), next[r], need);
    }
    free(next), free(fdone), free(bdone);
}

/* The cap at every op's start on every rank: 1 with err naming the first op that breaks it. */
static int cap_broken(const pp_sched_problem *pb, const pp_schedule *s, char *err, size_t len) {
    char c[32];
    for (int r = 0; r < s->P; r++) {
        int live = 0;
        for (int i = 0; i < s->n[r]; i++) {
            const pp_sched_op *op = &s->ops[r][i];
            if (op->kind == 'F' && ++live > pb->cap) {
                snprintf(err, len, "rank %d holds %d stashes when it starts %s (op %d), and the cap is %d: run a "
                         "weight half (or a whole backward) earlier to free one", r, live, cell(s, r, op, c, sizeof c),
                         i, pb->cap);
                return 1;
            }
            if (op->kind == 'W' || (op->kind == 'B' && !op->split)) live--;
        }
    }
    return 0;
}

/* The longest gap on any rank between its ops (or before its first), from a replay's traces. */
static void longest_idle(const pp_trace *tr, int P, pp_sched_measure *m) {
    m->idle_rank = 0, m->idle_at = 0, m->idle_len = 0;
    for (int r = 0; r < P; r++) {
        double t = 0;
        for (int e = 0; e < tr[r].n; e++) {
            const pp_event *ev = &tr[r].ev[e];
            if (ev->vstart - t > m->idle_len + 1e-12) m->idle_rank = r, m->idle_at = t, m->idle_len = ev->vstart - t;
            if (ev->vend > t) t = ev->vend;
        }
    }
}

int pp__sched_verify(const pp_sched_problem *pb, const pp_schedule *s, pp_sched_measure *m, char *err, size_t len) {
    if (s->P != pb->P) {
        snprintf(err, len, "the order has %d rows and the problem %d ranks: write one row per rank", s->P, pb->P);
        return -1;
    }
    if (s->vshape != (pb->v == 2) || s->v != pb->v) {
        snprintf(err, len, "the order places %d stage%s per rank%s, and the problem %s", s->v, s->v > 1 ? "s" : "",
                 s->vshape ? " in a V" : s->v > 1 ? " looped" : "",
                 pb->v == 2 ? "two in a V (rank r holds stages r and 2P-1-r)" : "one (rank r holds stage r)");
        return -1;
    }
    int S = pb->P * pb->v;
    where *at = pp__xcalloc((size_t)(S * pb->M), sizeof *at);
    if (ops_complete(pb, s, at, err, len)) {
        free(at);
        return -1;
    }
    pp_costs k;
    pp__sched_costs(pb, &k);
    pp_trace *tr = pp__xcalloc((size_t)pb->P, sizeof *tr);
    double end = pp__schedule_trace(s, &k, tr);
    int rc = 0;
    if (end < 0) {
        deadlock_reason(pb, s, at, err, len);
        rc = -1;
    } else {
        rc = cap_broken(pb, s, err, len);
        if (m) {
            double busy = 0;
            memset(m, 0, sizeof *m);
            for (int vs = 0; vs < S; vs++) busy += pb->M * (pb->f[vs] + pb->i[vs] + pb->w[vs]);
            m->makespan = end;
            m->bubble = end > 0 ? 1 - busy / (pb->P * end) : 0;
            for (int r = 0; r < pb->P; r++) m->peak[r] = pp__schedule_peak(s, r);
            longest_idle(tr, pb->P, m);
        }
    }
    for (int r = 0; r < pb->P; r++) pp__trace_clear(&tr[r]);
    free(tr);
    pp__costs_free(&k);
    free(at);
    return rc;
}

void pp__sched_refs_format(const pp_sched_refs *r, char *buf, size_t len) {
    size_t n = (size_t)snprintf(buf, len, "floor=%s:%.17g greedy=%.17g optimum=%.17g canon=", r->floor_name, r->floor,
                                r->greedy, r->optimum);
    for (int k = 0; k < r->n; k++)
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s:%.17g", k ? "," : "", r->name[k], r->makespan[k]);
    if (!r->n) snprintf(buf + n, n < len ? len - n : 0, "-");
}

int pp__sched_refs_parse(const char *text, pp_sched_refs *r) {
    memset(r, 0, sizeof *r);
    int at = 0;
    char canon[512];
    if (sscanf(text, "floor=%31[^:]:%lf greedy=%lf optimum=%lf canon=%511s%n", r->floor_name, &r->floor, &r->greedy,
               &r->optimum, canon, &at) != 5 || text[at])
        return -1;
    r->best = r->optimum > 0 ? r->optimum : r->floor < r->greedy ? r->floor : r->greedy;
    if (!strcmp(canon, "-")) return 0;
    for (char *save = NULL, *tok = strtok_r(canon, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        if (!colon || r->n == PP_SCHED_MAX_REFS || colon - tok >= 16) return -1;
        *colon = 0;
        snprintf(r->name[r->n], sizeof r->name[r->n], "%s", tok);
        r->makespan[r->n] = strtod(colon + 1, NULL);
        if (r->optimum <= 0 && r->makespan[r->n] < r->best) r->best = r->makespan[r->n];
        r->n++;
    }
    return 0;
}
