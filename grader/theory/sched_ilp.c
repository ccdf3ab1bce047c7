/* sched_ilp.c: lab 09's optimum, an integer program solved by GLPK's branch and cut (sched_problem.h). Built where
 * GLPK is (the Makefile's HAVE_GLPK); sched_ilp_absent.c stands in for it elsewhere.
 *
 * The program is disjunctive, in continuous time. Its ops are, per (virtual stage, micro-batch), an F, an input half
 * I and a weight half W, each with its start time as a variable. Every backward is split: a whole B costs i + w and
 * holds its stash until it ends, exactly as I followed at once by W does, so an order with a whole B is never better
 * than the same order with I, W in its place, and the split program's optimum is the problem's.
 *
 *   precedence   F(s, mb) after F(s-1, mb) ends, plus the latency when the two stages are on different ranks (a V's
 *                turn P-1 -> P stays on rank P-1 and costs none); I(last, mb) after F(last, mb); I(s, mb) after
 *                I(s+1, mb), plus the same latency rule; W(s, mb) after I(s, mb)
 *   one at a time  for each pair of ops on a rank that no precedence orders, a binary y (1: the first before the
 *                second) and a big-M disjunction between their starts
 *   makespan     C >= every op's end plus its tail (the least time its successors need after it); minimize C
 *   memory       at each F's start on a rank: 1 + (the rank's other stashes whose F is before it and whose W is not)
 *                <= cap, written with the pairs' y (linear, below)
 *
 * Every start is bounded by its head (the longest path of precedences before it) and by H less its tail, where H is
 * the makespan of an order the kit's heuristic finds first (a valid upper bound on the optimum: that order meets every
 * constraint), which is what each pair's big-M is computed from. The same order is the answer when the time limit
 * ends the search before GLPK finds a better one. */
#include <float.h>
#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "placement.h"
#include "sched_kit.h"

const int pp__sched_ilp_built = 1;

enum { OP_F = 0, OP_I = 1, OP_W = 2 };

/* The problem's ops, numbered (vs * M + mb) * 3 + kind, and what the program needs of them. */
typedef struct ilp {
    const pp_sched_problem *pb;
    int P, M, v, S, N, vshape;
    double *d;       /* duration */
    int *rank;       /* the rank that runs it */
    double *head;    /* earliest start by precedence alone */
    double *tail;    /* least time from its end to the makespan by precedence alone */
    unsigned char *reach; /* reach[a * N + b]: b follows a through precedences (the relation is transitive) */
    int **on;        /* on[r]: rank r's ops, nr[r] of them */
    int *nr;
    int **pair;      /* pair[r][i * nr + j], i < j (local indices): y's column (j follows i when 1), or 0 when a
                      * precedence orders them */
    double H;        /* upper bound on the makespan */
    double lb;       /* lower bound on it by heads, tails and each rank's work */
} ilp;

static int op_id(const ilp *m, int vs, int mb, int kind) { return (vs * m->M + mb) * 3 + kind; }

/* Appends op (kind of OP_*) of virtual stage vs and micro-batch mb to its rank's list in s. */
static void order_push(pp_schedule *s, int vs, int mb, int kind) {
    int r = pp__place_rank(s->P, s->vshape, vs);
    pp_sched_op *o = &s->ops[r][s->n[r]++];
    memset(o, 0, sizeof *o);
    o->kind = kind == OP_F ? 'F' : kind == OP_I ? 'B' : 'W';
    o->split = kind == OP_I;
    o->mb = mb;
    o->chunk = pp__place_chunk(s->P, s->vshape, vs);
}

/* s's makespan under k when it completes and holds pb's cap on every rank, else -1. */
static double order_score(const pp_sched_problem *pb, const pp_costs *k, const pp_schedule *s) {
    double span = pp__schedule_replay(s, k, NULL);
    if (span < 0) return -1;
    for (int r = 0; r < s->P; r++)
        if (pp__schedule_peak(s, r) > pb->cap) return -1;
    return span;
}

static double link(const ilp *m, int a, int b) { return m->rank[a] == m->rank[b] ? 0 : m->pb->latency; }

/* Op b's direct predecessors (at most two) and the least time from each one's start to b's start. */
static void ilp_preds(const ilp *m, int b, int *preds, double *lag, int *n) {
    int vs = b / 3 / m->M, mb = b / 3 % m->M, kind = b % 3, a;
    *n = 0;
    if (kind == OP_F) {
        int prev = pp__place_prev(m->P, 0, vs);
        if (prev >= 0) a = op_id(m, prev, mb, OP_F), preds[*n] = a, lag[(*n)++] = m->d[a] + link(m, a, b);
        if (vs == 0 && mb > 0) a = op_id(m, 0, mb - 1, OP_F), preds[*n] = a, lag[(*n)++] = m->d[a]; /* symmetry */
    } else if (kind == OP_I) {
        int next = pp__place_next(m->P, m->v, 0, vs);
        a = next < 0 ? op_id(m, vs, mb, OP_F) : op_id(m, next, mb, OP_I);
        preds[*n] = a, lag[(*n)++] = m->d[a] + link(m, a, b);
    } else {
        a = op_id(m, vs, mb, OP_I), preds[*n] = a, lag[(*n)++] = m->d[a];
    }
}

/* Fills m's ops, their heads, tails and precedence closure, and each rank's list. The precedences are the data's,
 * plus the micro-batch order of virtual stage 0's forwards: micro-batches are interchangeable (the same costs, the
 * same path), so renaming them in the order an optimal order runs their first forwards (one rank runs them all, so
 * that order is strict) gives an order of the same makespan and the same stashes at every instant; requiring that
 * order cuts no optimum away, and removes M! - 1 copies of each solution from the search. */
static void ilp_init(ilp *m, const pp_sched_problem *pb) {
    memset(m, 0, sizeof *m);
    m->pb = pb, m->P = pb->P, m->M = pb->M, m->v = pb->v, m->S = pb->P * pb->v, m->N = 3 * m->S * pb->M;
    m->vshape = pb->v == 2;
    int N = m->N, M = m->M, S = m->S, P = m->P;
    m->d = pp__xcalloc((size_t)N, sizeof *m->d);
    m->rank = pp__xcalloc((size_t)N, sizeof *m->rank);
    m->head = pp__xcalloc((size_t)N, sizeof *m->head);
    m->tail = pp__xcalloc((size_t)N, sizeof *m->tail);
    m->reach = pp__xcalloc((size_t)N * (size_t)N, 1);
    for (int vs = 0; vs < S; vs++)
        for (int mb = 0; mb < M; mb++) {
            int a = op_id(m, vs, mb, OP_F), r = pp__place_rank(P, m->vshape, vs);
            m->d[a] = pb->f[vs], m->d[a + 1] = pb->i[vs], m->d[a + 2] = pb->w[vs];
            m->rank[a] = m->rank[a + 1] = m->rank[a + 2] = r;
        }
    /* a topological order: F by stage up (micro-batches in order), then I by stage down, each W after its I */
    int *topo = pp__xmalloc((size_t)N * sizeof *topo), n = 0;
    for (int vs = 0; vs < S; vs++)
        for (int mb = 0; mb < M; mb++) topo[n++] = op_id(m, vs, mb, OP_F);
    for (int vs = S - 1; vs >= 0; vs--)
        for (int mb = 0; mb < M; mb++) topo[n++] = op_id(m, vs, mb, OP_I), topo[n++] = op_id(m, vs, mb, OP_W);
    /* heads forward, along each op's predecessors */
    for (int t = 0; t < N; t++) {
        int b = topo[t], preds[2], lags_n = 0;
        double lag[2];
        ilp_preds(m, b, preds, lag, &lags_n);
        for (int p = 0; p < lags_n; p++) {
            double h = m->head[preds[p]] + lag[p];
            if (h > m->head[b]) m->head[b] = h;
        }
    }
    /* tails and reachability backward: tail(a) = max over successors b of (lag(a, b) - d(a)) + d(b) + tail(b) */
    for (int t = N - 1; t >= 0; t--) {
        int b = topo[t], preds[2], lags_n = 0;
        double lag[2];
        ilp_preds(m, b, preds, lag, &lags_n);
        for (int p = 0; p < lags_n; p++) {
            int a = preds[p];
            double q = lag[p] - m->d[a] + m->d[b] + m->tail[b];
            if (q > m->tail[a]) m->tail[a] = q;
            unsigned char *ra = m->reach + (size_t)a * N, *rb = m->reach + (size_t)b * N;
            ra[b] = 1;
            for (int c = 0; c < N; c++) ra[c] |= rb[c];
        }
    }
    free(topo);
    m->on = pp__xcalloc((size_t)P, sizeof *m->on);
    m->nr = pp__xcalloc((size_t)P, sizeof *m->nr);
    m->pair = pp__xcalloc((size_t)P, sizeof *m->pair);
    for (int r = 0; r < P; r++) m->on[r] = pp__xmalloc((size_t)N * sizeof **m->on);
    for (int a = 0; a < N; a++) m->on[m->rank[a]][m->nr[m->rank[a]]++] = a;
    /* the makespan's lower bound: every op's head, duration and tail; every rank busy for all its ops, after the
     * earliest of their heads and before the least of their tails */
    for (int a = 0; a < N; a++)
        if (m->head[a] + m->d[a] + m->tail[a] > m->lb) m->lb = m->head[a] + m->d[a] + m->tail[a];
    for (int r = 0; r < P; r++) {
        double h = DBL_MAX, t = DBL_MAX, sum = 0;
        for (int i = 0; i < m->nr[r]; i++) {
            int a = m->on[r][i];
            h = m->head[a] < h ? m->head[a] : h, t = m->tail[a] < t ? m->tail[a] : t, sum += m->d[a];
        }
        if (m->nr[r] && h + sum + t > m->lb) m->lb = h + sum + t;
    }
}

static void ilp_free(ilp *m) {
    for (int r = 0; m->on && r < m->P; r++) free(m->on[r]), free(m->pair ? m->pair[r] : NULL);
    free(m->on), free(m->nr), free(m->pair);
    free(m->d), free(m->rank), free(m->head), free(m->tail), free(m->reach);
    memset(m, 0, sizeof *m);
}

/* One row of the program being written: its terms (GLPK's 1-based arrays) and a constant moved to its bounds. */
typedef struct row {
    int n, room;
    int *ind;
    double *val;
    double k;
} row;

static void row_add(row *w, int col, double v) {
    if (w->n + 1 >= w->room) {
        w->room = w->room ? 2 * w->room : 16;
        int *ind = pp__xmalloc((size_t)w->room * sizeof *ind);
        double *val = pp__xmalloc((size_t)w->room * sizeof *val);
        if (w->n) {
            memcpy(ind, w->ind, (size_t)(w->n + 1) * sizeof *ind);
            memcpy(val, w->val, (size_t)(w->n + 1) * sizeof *val);
        }
        free(w->ind), free(w->val);
        w->ind = ind, w->val = val;
    }
    w->n++, w->ind[w->n] = col, w->val[w->n] = v;
}

/* Adds row w (terms + constant) >= lo (type GLP_LO) or <= hi (GLP_UP), and empties w. */
static void row_put(glp_prob *lp, row *w, int type, double bound) {
    int i = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, i, type, type == GLP_LO ? bound - w->k : 0, type == GLP_UP ? bound - w->k : 0);
    glp_set_mat_row(lp, i, w->n, w->ind, w->val);
    w->n = 0, w->k = 0;
}

/* Adds coef * [rank r's op i runs before its op j] (local indices) to w: a constant where a precedence decides,
 * else the pair's y or 1 - y. */
static void row_before(const ilp *m, row *w, int r, int i, int j, double coef) {
    int a = m->on[r][i], b = m->on[r][j], nr = m->nr[r];
    if (m->reach[(size_t)a * m->N + b]) w->k += coef;
    else if (m->reach[(size_t)b * m->N + a]) return;
    else if (i < j) row_add(w, m->pair[r][i * nr + j], coef);
    else w->k += coef, row_add(w, m->pair[r][j * nr + i], -coef);
}

/* 1 when rank r's op i runs before its op j in the program's solution. */
static int sol_before(const ilp *m, glp_prob *lp, int r, int i, int j) {
    int a = m->on[r][i], b = m->on[r][j], nr = m->nr[r];
    if (m->reach[(size_t)a * m->N + b]) return 1;
    if (m->reach[(size_t)b * m->N + a]) return 0;
    int y = glp_mip_col_val(lp, m->pair[r][(i < j ? i : j) * nr + (i < j ? j : i)]) > 0.5;
    return i < j ? y : !y;
}

/* Writes the program of m into lp: columns 1..N the ops' starts, N + 1 the makespan C, then the pairs' y. */
/* The starts' bounds and the makespan's column, the precedences and the makespan's rows. */
static void ilp_write_times(ilp *m, glp_prob *lp, row *w) {
    int N = m->N;
    double H = m->H, lb = m->lb;
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, N + 1);
    for (int a = 0; a < N; a++) {
        double lo = m->head[a], hi = H - m->tail[a] - m->d[a];
        glp_set_col_bnds(lp, a + 1, hi > lo ? GLP_DB : GLP_FX, lo, hi > lo ? hi : lo);
    }
    glp_set_col_bnds(lp, N + 1, lb < H ? GLP_DB : GLP_FX, lb < H ? lb : H, H);
    glp_set_obj_coef(lp, N + 1, 1);
    /* precedences */
    for (int b = 0; b < N; b++) {
        int preds[2], n;
        double lag[2];
        ilp_preds(m, b, preds, lag, &n);
        for (int p = 0; p < n; p++)
            row_add(w, b + 1, 1), row_add(w, preds[p] + 1, -1), row_put(lp, w, GLP_LO, lag[p]);
    }
    /* the makespan: C >= S_a + d_a + tail_a */
    for (int a = 0; a < N; a++)
        row_add(w, N + 1, 1), row_add(w, a + 1, -1), row_put(lp, w, GLP_LO, m->d[a] + m->tail[a]);
}

/* One op at a time per rank: y = 1 puts a first (S_b >= S_a + d_a - M1 (1 - y)), y = 0 puts b first (S_a >= S_b +
 * d_b - M2 y); M1 and M2 the most those differences can be inside the starts' bounds. */
static void ilp_write_pairs(ilp *m, glp_prob *lp, row *w) {
    int N = m->N;
    double H = m->H;
    for (int r = 0; r < m->P; r++) {
        int nr = m->nr[r];
        m->pair[r] = pp__xcalloc((size_t)nr * (size_t)nr, sizeof **m->pair);
        for (int i = 0; i < nr; i++)
            for (int j = i + 1; j < nr; j++) {
                int a = m->on[r][i], b = m->on[r][j];
                if (m->reach[(size_t)a * N + b] || m->reach[(size_t)b * N + a]) continue;
                int col = glp_add_cols(lp, 1);
                m->pair[r][i * nr + j] = col;
                glp_set_col_kind(lp, col, GLP_BV);
                /* a first is possible when a's earliest end is no later than b's latest start, and the other way */
                int ab = m->head[a] + m->d[a] <= H - m->tail[b] - m->d[b] + 1e-9;
                int ba = m->head[b] + m->d[b] <= H - m->tail[a] - m->d[a] + 1e-9;
                if (ab != ba) glp_set_col_bnds(lp, col, GLP_FX, ab, ab);
                double M1 = H - m->tail[a] - m->head[b], M2 = H - m->tail[b] - m->head[a];
                row_add(w, b + 1, 1), row_add(w, a + 1, -1), row_add(w, col, -M1);
                row_put(lp, w, GLP_LO, m->d[a] - M1);
                row_add(w, a + 1, 1), row_add(w, b + 1, -1), row_add(w, col, M2);
                row_put(lp, w, GLP_LO, m->d[b]);
            }
    }
}

/* What a rank runs before an op fits between its earliest head and that op's start, and what it runs after between
 * that op's end and its least tail before C: the sums of the durations over the pairs' y, which the relaxation
 * feels even where the pairs' big-M rows are loose. */
static void ilp_write_work(ilp *m, glp_prob *lp, row *w) {
    int N = m->N;
    for (int r = 0; r < m->P; r++) {
        double h = DBL_MAX, t = DBL_MAX;
        for (int i = 0; i < m->nr[r]; i++) {
            int a = m->on[r][i];
            h = m->head[a] < h ? m->head[a] : h, t = m->tail[a] < t ? m->tail[a] : t;
        }
        for (int i = 0; i < m->nr[r]; i++) {
            int a = m->on[r][i];
            row_add(w, a + 1, 1);
            for (int j = 0; j < m->nr[r]; j++)
                if (j != i) row_before(m, w, r, j, i, -m->d[m->on[r][j]]);
            row_put(lp, w, GLP_LO, h);
            row_add(w, N + 1, 1), row_add(w, a + 1, -1);
            for (int j = 0; j < m->nr[r]; j++)
                if (j != i) row_before(m, w, r, i, j, -m->d[m->on[r][j]]);
            row_put(lp, w, GLP_LO, m->d[a] + t);
        }
    }
}

/* The cap, at each F's start: the other stashes live then are those whose F is before it and whose W is not (a W
 * before it has its F before it too), so 1 + sum_j ([F_j before F] + [F before W_j] - 1) <= cap. Not written where
 * the rank holds no more stashes than the cap. */
static void ilp_write_cap(ilp *m, glp_prob *lp, row *w) {
    if (m->pb->cap >= m->M * m->v) return;
    for (int r = 0; r < m->P; r++)
        for (int i = 0; i < m->nr[r]; i++) {
            if (m->on[r][i] % 3 != OP_F) continue;
            for (int j = 0; j < m->nr[r]; j++) {
                int o = m->on[r][j];
                if (o % 3 != OP_F || j == i) continue;
                int jw = -1; /* W of o's stash: the local index of op o + 2 */
                for (int t = 0; t < m->nr[r]; t++)
                    if (m->on[r][t] == o + 2) jw = t;
                row_before(m, w, r, j, i, 1);
                row_before(m, w, r, i, jw, 1);
                w->k -= 1;
            }
            row_put(lp, w, GLP_UP, m->pb->cap - 1);
        }
}

static void ilp_write(ilp *m, glp_prob *lp) {
    row w = {0};
    ilp_write_times(m, lp, &w);
    ilp_write_pairs(m, lp, &w);
    ilp_write_work(m, lp, &w);
    ilp_write_cap(m, lp, &w);
    free(w.ind), free(w.val);
}

/* The order of lp's solution: each rank's ops by the pairs' order (a strict total order, the durations being
 * positive), by start time should it not be one. */
static void ilp_order(const ilp *m, glp_prob *lp, pp_schedule *s) {
    pp__sched_alloc(m->pb, s);
    for (int r = 0; r < m->P; r++) {
        int nr = m->nr[r], *at = pp__xmalloc((size_t)nr * sizeof *at), ok = 1;
        for (int i = 0; i < nr; i++) at[i] = -1;
        for (int i = 0; i < nr && ok; i++) {
            int pos = 0;
            for (int j = 0; j < nr; j++) pos += j != i && sol_before(m, lp, r, j, i);
            if (at[pos] >= 0) ok = 0;
            else at[pos] = i;
        }
        if (!ok) /* by start time: a selection sort, stable on ties */
            for (int p = 0; p < nr; p++) {
                int pick = -1;
                for (int i = 0; i < nr; i++) {
                    int used = 0;
                    for (int q = 0; q < p; q++) used |= at[q] == i;
                    if (!used && (pick < 0 || glp_mip_col_val(lp, m->on[r][i] + 1) <
                                                  glp_mip_col_val(lp, m->on[r][pick] + 1)))
                        pick = i;
                }
                at[p] = pick;
            }
        for (int p = 0; p < nr; p++) {
            int a = m->on[r][at[p]];
            order_push(s, a / 3 / m->M, a / 3 % m->M, a % 3);
        }
        free(at);
    }
}

int pp__sched_optimum(const pp_sched_problem *pb, double limit_s, pp_schedule *s, double *makespan) {
    return pp__sched_optimum_bounded(pb, limit_s, 1, s, makespan);
}

int pp__sched_optimum_bounded(const pp_sched_problem *pb, double limit_s, int heuristic, pp_schedule *s,
                              double *makespan) {
    if (s) memset(s, 0, sizeof *s);
    if (makespan) *makespan = -1;
    char err[256];
    /* the problem check refuses a V below a cap of two too: no order exists there */
    if (!s || !makespan || pp__sched_problem_check(pb, err, sizeof err)) return -1;
    ilp m;
    ilp_init(&m, pb);
    pp_costs k;
    pp__sched_costs(pb, &k);
    /* the serial order, then the heuristic's: the program's upper bound */
    pp_schedule best, cand;
    pp__sched_serial(pb, &best);
    double span = order_score(pb, &k, &best);
    /* and the kit's heuristic's */
    if (heuristic && !pp__sched_greedy(pb, &cand)) {
        double c = order_score(pb, &k, &cand);
        if (c >= 0 && c < span) pp__schedule_free(&best), best = cand, span = c;
        else pp__schedule_free(&cand);
    }
    /* an order as short as the lower bound needs no search */
    if (span <= m.lb + 1e-9 * (1 + m.lb)) {
        pp__costs_free(&k);
        ilp_free(&m);
        *s = best, *makespan = span;
        return 1;
    }
    /* The program asks for an order shorter than that one by a ten-thousandth: either it finds one, or it proves
     * there is none, and then the heuristic's order is the optimum. That is the incumbent GLPK would otherwise
     * have to find again itself, and its bound prunes the same nodes. Less than a ten-thousandth would ask for
     * nothing: GLPK's feasibility tolerance (1e-7 of a row's bound), summed along a chain of precedences, lets its
     * starts pass for an order that much shorter than any replay of it, and the search would end on that phantom
     * (harmless, as its order replays no shorter and is not taken, but slow). So "proved optimal" is up to that
     * ten-thousandth of the makespan. */
    m.H = span * (1 - 1e-4);
    int was = glp_term_out(GLP_OFF);
    glp_prob *lp = glp_create_prob();
    ilp_write(&m, lp);
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    /* an integrality tolerance far below that ten-thousandth: at GLPK's default (1e-5) a y of 0.99999 lets two
     * ops overlap by a big-M's hundred-thousandth */
    parm.tol_int = 1e-9;
    double ms = limit_s > 0 ? limit_s * 1000 : 0;
    parm.tm_lim = ms < INT_MAX - 1 ? (int)ms : INT_MAX - 1;
    int ret = glp_intopt(lp, &parm), status = glp_mip_status(lp);
    /* the search ran to its end: an optimum, or none below the heuristic's (the presolver or the root LP may
     * prove that before any branching) */
    int proved = (ret == 0 || ret == GLP_ENOPFS) && (status == GLP_OPT || status == GLP_NOFEAS);
    if (status == GLP_OPT || status == GLP_FEAS) {
        ilp_order(&m, lp, &cand);
        double c = order_score(pb, &k, &cand);
        if (c >= 0 && c < span) pp__schedule_free(&best), best = cand, span = c;
        else pp__schedule_free(&cand);
    }
    glp_delete_prob(lp);
    glp_term_out(was);
    pp__costs_free(&k);
    ilp_free(&m);
    *s = best, *makespan = span;
    return proved;
}
