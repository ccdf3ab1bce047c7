/* Lab 09: a scheduler. You are given a pipeline (its ranks, its micro-batches, what each operation costs, what a
 * message between two ranks costs, how much memory each rank has) and you write the order each rank runs its
 * operations in. Nothing runs in your function: the grader replays your order on the virtual clock of the other
 * labs and measures it, and the course's autograder also trains the kit's model with it.
 *
 * The pipeline. P ranks (1 <= P <= 8), M micro-batches (1 <= M <= 64) and v chunks per rank (1 or 2), so P * v
 * virtual stages that every micro-batch runs through in order, 0 to P*v - 1:
 *   - v = 1: virtual stage s lives on rank s;
 *   - v = 2: a V (lab 06): rank r holds virtual stages r and 2P-1-r, so data goes down the ranks and comes back
 *     up; stages P-1 and P share rank P-1, and rank 0 holds the first and the last.
 * Each (virtual stage s, micro-batch n) has three operations, run by the rank that holds s:
 *   - F, the forward: costs f[s]; it needs the F of (s-1, n) (none for s = 0);
 *   - I, the backward's input half: costs i[s]; it needs the F of (s, n) and, but for the last stage, the I of
 *     (s+1, n), whose gradient it receives;
 *   - W, the backward's weight half: costs w[s]; it needs the I of (s, n) and nothing else, and nobody waits
 *     for it.
 * (B, a whole backward, is I and W at once: it costs i[s] + w[s] and its gradient is ready only at its end.)
 * f, i and w hold P*v entries, indexed by virtual stage. An input that comes from another rank arrives `latency`
 * after the operation that produced it ended; from the same rank (a V's turn) it is there at once. A rank runs one
 * operation at a time, in your order, each as soon as the rank is free and its input is there.
 *
 * Memory. Each F makes a stash (its activations), which lives until that (stage, micro-batch)'s W (or B) ends. A
 * rank may hold at most `cap` stashes at any time, the new one counted: an F may start only while the rank holds
 * fewer than cap. With v = 2 each chunk's stash counts on its own.
 *
 * The answer. Write the order as CSV text into out (outcap bytes, NUL included): one row per rank, row r for rank
 * r, its operations in order, cells separated by ',' and every row ended by '\n'. A cell is "SkN": the virtual
 * stage S, the kind k (F, I, W or B) and the micro-batch N. For P = 2, M = 2, v = 1 one order is
 *     0F0,0F1,0I0,0W0,0I1,0W1\n
 *     1F0,1I0,1W0,1F1,1I1,1W1\n
 * Return the number of bytes written, without the NUL, or -1 when the text does not fit in outcap.
 *
 * What is graded. The order must be complete (every operation once, on its rank, each after what it needs on its
 * own rank, and able to run to the end) and must hold the cap. Its points then grow with its makespan, the end of
 * the last operation on the virtual clock: from an order no worse than 1F1B's under the same cap up to one within
 * 1% of the optimum. Read docs/09-scheduler.md first. Grade with `build/pplab grade --lab scheduler`. */
#include <stdio.h>
#include <string.h>

#include "pp.h"

//>> solution
/* ---- the problem, as the search sees it -------------------------------------------------------------------- */

#define SC_RANKS 8
#define SC_STAGES 16
#define SC_MB 64
#define SC_OPS (3 * SC_MB * 2) /* operations of one rank */
#define SC_NEVER 1e300

static struct {
    int P, M, v, S, cap;
    double f[SC_STAGES], i[SC_STAGES], w[SC_STAGES], lat;
} pr;

/* Which rank holds virtual stage s, and which of its chunks s is. */
static int owner(int s) { return pr.v == 2 && s >= pr.P ? 2 * pr.P - 1 - s : s; }
static int chunk_of(int s) { return pr.v == 2 && s >= pr.P; }
static int stage_at(int r, int c) { return c ? 2 * pr.P - 1 - r : r; }
static double hop(int from, int to) { return owner(from) == owner(to) ? 0 : pr.lat; }

/* An order: per rank, its operations as (kind, stage, micro-batch). */
typedef struct {
    char kind[SC_RANKS][SC_OPS];
    unsigned char stage[SC_RANKS][SC_OPS], mb[SC_RANKS][SC_OPS];
    int len[SC_RANKS];
} order_t;

static void push(order_t *o, int r, char k, int s, int n) {
    int j = o->len[r]++;
    o->kind[r][j] = k, o->stage[r][j] = (unsigned char)s, o->mb[r][j] = (unsigned char)n;
}

/* ---- measuring an order: replay it on the virtual clock ------------------------------------------------------ */

static double fin_f[SC_STAGES][SC_MB], fin_i[SC_STAGES][SC_MB];

/* The makespan of o, or -1 when it gets stuck or breaks the cap. */
static double measure(const order_t *o) {
    int pos[SC_RANKS] = {0}, held[SC_RANKS] = {0};
    double now[SC_RANKS] = {0}, end = 0;
    for (int s = 0; s < pr.S; s++)
        for (int n = 0; n < pr.M; n++) fin_f[s][n] = fin_i[s][n] = -1;
    int moved = 1;
    while (moved) {
        moved = 0;
        for (int r = 0; r < pr.P; r++)
            for (; pos[r] < o->len[r]; pos[r]++) {
                int j = pos[r], s = o->stage[r][j], n = o->mb[r][j];
                char k = o->kind[r][j];
                double at = 0, took;
                if (k == 'F') {
                    if (s > 0 && fin_f[s - 1][n] < 0) break;
                    if (s > 0) at = fin_f[s - 1][n] + hop(s - 1, s);
                    if (++held[r] > pr.cap) return -1;
                    took = pr.f[s];
                } else if (k == 'I') {
                    if (fin_f[s][n] < 0 || (s + 1 < pr.S && fin_i[s + 1][n] < 0)) break;
                    at = fin_f[s][n];
                    if (s + 1 < pr.S && fin_i[s + 1][n] + hop(s + 1, s) > at) at = fin_i[s + 1][n] + hop(s + 1, s);
                    took = pr.i[s];
                } else {
                    if (fin_i[s][n] < 0) return -1; /* a W before its own I */
                    held[r]--;
                    took = pr.w[s];
                }
                if (at < now[r]) at = now[r];
                now[r] = at + took;
                if (k == 'F') fin_f[s][n] = now[r];
                if (k == 'I') fin_i[s][n] = now[r];
                if (now[r] > end) end = now[r];
                moved = 1;
            }
    }
    for (int r = 0; r < pr.P; r++)
        if (pos[r] < o->len[r]) return -1;
    return end;
}

/* ---- building an order: a list scheduler on the same clock --------------------------------------------------- */

/* The knobs one try turns. */
typedef struct {
    int inflight[SC_RANKS]; /* forwards whose I has not run yet, at most, per rank (chunk 0 only in a V) */
    int wait_for_input;     /* 1: a W waits when an input is known to arrive before that W would end */
    int later_chunk_first;  /* V: a ready chunk-1 F goes before a chunk-0 F */
    int oldest_i_first;     /* 0: among ready I, the later chunk first */
    int forward_first;      /* 1: a ready F before a ready I */
} knobs_t;

static struct {
    double clock[SC_RANKS], done_f[SC_STAGES][SC_MB], done_i[SC_STAGES][SC_MB];
    int next_f[SC_STAGES], held[SC_RANKS], open[SC_RANKS], first_only[SC_RANKS], asleep[SC_RANKS];
    int todo[SC_RANKS], todo_fi[SC_RANKS];
    int w_stage[SC_RANKS][SC_OPS], w_mb[SC_RANKS][SC_OPS], w_head[SC_RANKS], w_tail[SC_RANKS];
} st;

/* When (s, n)'s forward input is there; -1 when its producer has not run. */
static double fwd_input(int s, int n) {
    if (s == 0) return 0;
    return st.done_f[s - 1][n] < 0 ? -1 : st.done_f[s - 1][n] + hop(s - 1, s);
}

/* When (s, n)'s gradient is there (and its forward ran); -1 when not known yet. */
static double grad_input(int s, int n) {
    double t = st.done_f[s][n];
    if (t < 0) return -1;
    if (s == pr.S - 1) return t;
    if (st.done_i[s + 1][n] < 0) return -1;
    double g = st.done_i[s + 1][n] + hop(s + 1, s);
    return g > t ? g : t;
}

/* Builds o under knobs k; 0, or -1 when it got stuck. */
static int build(const knobs_t *k, order_t *o) {
    int P = pr.P, M = pr.M, v = pr.v;
    memset(&st, 0, sizeof st);
    for (int s = 0; s < pr.S; s++)
        for (int n = 0; n < M; n++) st.done_f[s][n] = st.done_i[s][n] = -1;
    for (int r = 0; r < P; r++) o->len[r] = 0, st.todo[r] = 3 * M * v, st.todo_fi[r] = 2 * M * v;
    while (1) {
        /* the rank that is free first; when every rank with work sleeps, the first with a W must run it */
        int me = -1, must_w = 0;
        for (int r = 0; r < P; r++)
            if (st.todo[r] && !st.asleep[r] && (me < 0 || st.clock[r] < st.clock[me])) me = r;
        if (me < 0) {
            for (int r = 0; r < P; r++)
                if (st.todo[r] && st.w_tail[r] > st.w_head[r] && (me < 0 || st.clock[r] < st.clock[me])) me = r;
            if (me < 0) {
                for (int r = 0; r < P; r++)
                    if (st.todo[r]) return -1;
                return 0;
            }
            must_w = 1;
        }
        double now = st.clock[me], soon = SC_NEVER, at = 0;
        char pick = 0;
        int ps = -1, pn = -1;
        /* 1. an I whose gradient is here */
        for (int c = v - 1; c >= 0 && !must_w; c--) {
            int s = stage_at(me, c);
            for (int n = 0; n < M; n++) {
                if (st.done_i[s][n] >= 0) continue;
                double g = grad_input(s, n);
                if (g < 0) continue;
                if (g > now) {
                    soon = g < soon ? g : soon;
                    continue;
                }
                if (!pick || (k->oldest_i_first && n < pn) || (!k->oldest_i_first && n < pn && ps == s))
                    pick = 'I', ps = s, pn = n, at = g;
                break;
            }
        }
        /* 2. an F that the cap and the in-flight limit let in */
        int fs = -1, fn = -1;
        double fat = 0;
        for (int c = 0; c < v && !must_w; c++) {
            int s = stage_at(me, c), n = st.next_f[s];
            int entry = v == 1 || c == 0;
            if (n >= M || st.held[me] >= pr.cap) continue;
            if (v == 2 && c == 0 && st.first_only[me] + 2 > pr.cap) continue; /* keep room for chunk 1 */
            if (entry && st.open[me] >= k->inflight[me]) continue;
            double x = fwd_input(s, n);
            if (x < 0) continue;
            if (x > now) {
                soon = x < soon ? x : soon;
                continue;
            }
            /* chunk 1 wins when asked to, or when its micro-batch is no younger */
            if (fs < 0 || k->later_chunk_first || n <= fn) fs = s, fn = n, fat = x;
        }
        if (fs >= 0 && (!pick || k->forward_first)) pick = 'F', ps = fs, pn = fn, at = fat;
        /* 3. a W: to fill time, or because nothing else may run */
        if (!pick && st.w_tail[me] > st.w_head[me]) {
            int h = st.w_head[me];
            int go = must_w || !k->wait_for_input || !st.todo_fi[me] ||
                     (soon < SC_NEVER && soon >= now + pr.w[st.w_stage[me][h]]);
            if (go) pick = 'W', ps = st.w_stage[me][h], pn = st.w_mb[me][h], at = now;
        }
        if (!pick) {
            /* nothing now: sleep until the next thing that could change that */
            for (int r = 0; r < P; r++)
                if (r != me && st.todo[r] && !st.asleep[r] && st.clock[r] > now && st.clock[r] < soon)
                    soon = st.clock[r];
            if (soon < SC_NEVER) st.clock[me] = soon;
            else st.asleep[me] = 1;
            continue;
        }
        double start = at > now ? at : now;
        int c = chunk_of(ps);
        if (pick == 'F') {
            st.clock[me] = start + pr.f[ps];
            st.done_f[ps][pn] = st.clock[me];
            st.next_f[ps]++, st.held[me]++, st.todo_fi[me]--;
            if (v == 1 || !c) st.open[me]++;
            if (v == 2) st.first_only[me] += c ? -1 : 1;
        } else if (pick == 'I') {
            st.clock[me] = start + pr.i[ps];
            st.done_i[ps][pn] = st.clock[me];
            st.todo_fi[me]--;
            if (v == 1 || !c) st.open[me]--;
            st.w_stage[me][st.w_tail[me]] = ps, st.w_mb[me][st.w_tail[me]++] = pn;
        } else {
            st.clock[me] = start + pr.w[ps];
            st.held[me]--, st.w_head[me]++;
        }
        st.todo[me]--;
        push(o, me, pick, ps, pn);
        for (int r = 0; r < P; r++) st.asleep[r] = 0;
    }
}

/* One micro-batch at a time: never stuck, and v stashes a rank at most. */
static void one_at_a_time(order_t *o) {
    for (int r = 0; r < pr.P; r++) {
        o->len[r] = 0;
        for (int n = 0; n < pr.M; n++) {
            for (int c = 0; c < pr.v; c++) push(o, r, 'F', stage_at(r, c), n);
            for (int c = pr.v - 1; c >= 0; c--) push(o, r, 'I', stage_at(r, c), n), push(o, r, 'W', stage_at(r, c), n);
        }
    }
}

/* ---- the search ---------------------------------------------------------------------------------------------- */

static order_t best_o, try_o;
static double best_t;

static double attempt(const knobs_t *k) {
    if (build(k, &try_o)) return -1;
    double t = measure(&try_o);
    if (t >= 0 && t < best_t - 1e-9) best_t = t, best_o = try_o;
    return t;
}

static int write_csv(char *out, int outcap) {
    int used = 0;
    for (int r = 0; r < pr.P; r++)
        for (int j = 0; j < best_o.len[r]; j++) {
            int room = outcap - used;
            int n = snprintf(out + used, room > 0 ? (size_t)room : 0, "%d%c%d%c", best_o.stage[r][j],
                             best_o.kind[r][j], best_o.mb[r][j], j + 1 < best_o.len[r] ? ',' : '\n');
            if (n < 0 || n >= room) return -1;
            used += n;
        }
    if (used >= outcap) return -1;
    out[used] = 0;
    return used;
}
//<< solution

int pp_scheduler_order(int P, int M, int v, const double *f, const double *i, const double *w, double latency,
                       int cap, char *out, int outcap) {
    int written = -1;
    /* TODO: find a good order for this pipeline and write it into out as the CSV text above. */
    //>> solution
    if (P < 1 || P > SC_RANKS || M < 1 || M > SC_MB || (v != 1 && v != 2) || cap < 1 || !out || outcap < 1) return -1;
    pr.P = P, pr.M = M, pr.v = v, pr.S = P * v, pr.lat = latency;
    pr.cap = v == 2 && cap < 2 ? 2 : cap; /* a V needs two stashes at once: no order holds less */
    for (int s = 0; s < pr.S; s++) pr.f[s] = f[s], pr.i[s] = i[s], pr.w[s] = w[s];
    one_at_a_time(&best_o);
    best_t = measure(&best_o);
    /* families of in-flight limits (base + slope per rank from the end), each way of placing W and of choosing */
    knobs_t k, top;
    memset(&top, 0, sizeof top);
    double top_t = SC_NEVER;
    for (int base = 0; base <= 2 * P; base++)
        for (int slope = base ? 0 : 2; slope <= 2; slope++)
            for (int wait = 0; wait < 2; wait++)
                for (int late = 0; late < v; late++)
                    for (int old = 0; old < 4; old++) {
                        memset(&k, 0, sizeof k);
                        for (int r = 0; r < P; r++) k.inflight[r] = base ? base + slope * (P - 1 - r) : SC_OPS;
                        k.wait_for_input = wait, k.later_chunk_first = late, k.oldest_i_first = old & 1;
                        k.forward_first = old >> 1;
                        double t = attempt(&k);
                        if (t >= 0 && t < top_t) top_t = t, top = k;
                    }
    /* then each rank's limit on its own, one step at a time, while the makespan falls */
    for (int r = 0; r < P; r++)
        if (top.inflight[r] > 4 * M) top.inflight[r] = 2 * M;
    for (int round = 0, better = 1; better && round < 8; round++) {
        better = 0;
        for (int r = 0; r < P; r++)
            for (int d = -1; d <= 1; d += 2) {
                k = top;
                k.inflight[r] += d;
                if (k.inflight[r] < 1) continue;
                double t = attempt(&k);
                if (t >= 0 && t < top_t - 1e-9) top_t = t, top = k, better = 1;
            }
    }
    written = write_csv(out, outcap);
    //<< solution
    return written;
}
