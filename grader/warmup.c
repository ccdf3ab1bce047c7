/* warmup.c: grades the warm-up lab (labs/00-warmup): loads the student's shared object, calls one exercise
 * function per part (bubble, peaks, orders, partition) over a fixed table of cases and adds one check per
 * schedule or cost model. Answer keys come from the grader's canonical schedules and closed formulas
 * (schedule.h) and from an exact partition search written here, never from the code under test. */
#include "grade.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "schedule.h"

typedef double (*bubble_fn)(const char *schedule, int P, int M, int v);
typedef int (*peak_fn)(const char *schedule, int P, int M, int v, int rank);
typedef int (*order_fn)(const char *schedule, int P, int M, int rank, char *out, int cap);
typedef int (*partition_fn)(int nlayers, const double *cost, int P, int *first);

/* A check of a part, declared up front so that a part whose function is missing still reports its full max. */
typedef struct part_check {
    const char *name;
    double points;
} part_check;

/* ---- bubble -------------------------------------------------------------------------------------------- */

typedef struct bubble_case {
    const char *schedule;
    int P, M, v;
} bubble_case;

/* naive ignores M (the whole batch is one micro-batch), so one of its cases passes M = 8 */
static const bubble_case bubble_cases[] = {
    {"naive", 4, 1, 1},        {"naive", 8, 1, 1},        {"naive", 4, 8, 1},
    {"gpipe", 4, 6, 1},        {"gpipe", 4, 24, 1},       {"gpipe", 8, 32, 1},      {"gpipe", 2, 1, 1},
    {"1f1b", 4, 8, 1},         {"1f1b", 4, 6, 1},         {"1f1b", 8, 16, 1},
    {"interleaved", 4, 8, 2},  {"interleaved", 4, 16, 4}, {"interleaved", 2, 4, 2}, {"interleaved", 8, 16, 2},
};

static const part_check bubble_checks[] = {{"bubble naive", 1}, {"bubble gpipe", 1}, {"bubble 1f1b", 1},
                                           {"bubble interleaved", 2}};

static void config_for(pp_run_config *c, const char *schedule, int P, int M, int v) {
    pp__config_defaults(c);
    c->schedule = schedule;
    c->P = P, c->M = !strcmp(schedule, "naive") ? 1 : M, c->v = v;
    c->comm_latency = 0, c->edge_cost = 0;
}

static void grade_bubble(void *fn, pp_test_result *out) {
    bubble_fn f = (bubble_fn)fn;
    const int ncases = (int)(sizeof bubble_cases / sizeof *bubble_cases);
    for (int k = 0; k < (int)(sizeof bubble_checks / sizeof *bubble_checks); k++) {
        const char *sched = bubble_checks[k].name + strlen("bubble ");
        int n = 0, bad = 0;
        char first_bad[200] = "", example[120] = "";
        for (int i = 0; i < ncases; i++) {
            const bubble_case *bc = &bubble_cases[i];
            if (strcmp(bc->schedule, sched)) continue;
            pp_run_config c;
            config_for(&c, bc->schedule, bc->P, bc->M, bc->v);
            double want = pp__theory_bubble(&c, NULL), got = f(bc->schedule, bc->P, bc->M, bc->v);
            n++;
            if (!example[0]) snprintf(example, sizeof example, "P=%d M=%d v=%d: %.4f", bc->P, bc->M, bc->v, want);
            if (!(fabs(got - want) <= 1e-9)) {
                if (!bad)
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d: expected %.6f, got %.6f", sched,
                             bc->P, bc->M, bc->v, want, got);
                bad++;
            }
        }
        if (bad)
            pp__check_add(out, bubble_checks[k].name, bubble_checks[k].points, 0,
                          "%s (%d of %d cases wrong, tolerance 1e-9); HINT: count the idle slots of each rank on "
                          "the staircase with F=1, B=2 and divide by P times the length of the step",
                          first_bad, bad, n);
        else
            pp__check_add(out, bubble_checks[k].name, bubble_checks[k].points, 1, "%d cases match (e.g. %s)", n,
                          example);
    }
}

/* ---- peaks --------------------------------------------------------------------------------------------- */

static const bubble_case peak_cases[] = {
    {"gpipe", 4, 8, 1},       {"gpipe", 4, 6, 1},       {"gpipe", 2, 3, 1},
    {"1f1b", 4, 8, 1},        {"1f1b", 4, 2, 1},        {"1f1b", 8, 16, 1},
    {"interleaved", 4, 8, 2}, {"interleaved", 4, 4, 2}, {"interleaved", 2, 4, 3},
};

static const part_check peak_checks[] = {{"peaks gpipe", 1}, {"peaks 1f1b", 2}, {"peaks interleaved", 2}};

static void grade_peaks(void *fn, pp_test_result *out) {
    peak_fn f = (peak_fn)fn;
    const int ncases = (int)(sizeof peak_cases / sizeof *peak_cases);
    for (int k = 0; k < (int)(sizeof peak_checks / sizeof *peak_checks); k++) {
        const char *sched = peak_checks[k].name + strlen("peaks ");
        int n = 0, bad = 0;
        char first_bad[200] = "", example[120] = "";
        for (int i = 0; i < ncases; i++) {
            const bubble_case *pc = &peak_cases[i];
            if (strcmp(pc->schedule, sched)) continue;
            pp_run_config c;
            config_for(&c, pc->schedule, pc->P, pc->M, pc->v);
            char list[80] = "";
            for (int r = 0; r < pc->P; r++) {
                int want = pp__theory_peak(&c, r), got = f(pc->schedule, pc->P, pc->M, pc->v, r);
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s%d", r ? " " : "", want);
                n++;
                if (got != want) {
                    if (!bad)
                        snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d rank %d: expected %d, got %d",
                                 sched, pc->P, pc->M, pc->v, r, want, got);
                    bad++;
                }
            }
            if (!example[0]) snprintf(example, sizeof example, "P=%d M=%d v=%d: %s", pc->P, pc->M, pc->v, list);
        }
        if (bad)
            pp__check_add(out, peak_checks[k].name, peak_checks[k].points, 0,
                          "%s (%d of %d ranks wrong); HINT: a forward makes a stash, its backward frees it: count "
                          "the forwards the rank has run before its first backward",
                          first_bad, bad, n);
        else
            pp__check_add(out, peak_checks[k].name, peak_checks[k].points, 1, "%d ranks match (e.g. %s)", n,
                          example);
    }
}

/* ---- orders -------------------------------------------------------------------------------------------- */

#define ORDER_CAP 4096
#define ORDER_GUARD 64

static const part_check order_checks[] = {
    {"orders gpipe P=4 M=8", 1}, {"orders 1f1b P=4 M=8", 2}, {"orders 1f1b P=4 M=2", 1}, {"orders short buffer", 1}};

/* Next whitespace-separated token of s at *pos into tok (truncated to cap); 0 at the end of s. */
static int next_token(const char *s, size_t *pos, char *tok, size_t cap) {
    while (s[*pos] == ' ' || s[*pos] == '\t' || s[*pos] == '\n') (*pos)++;
    if (!s[*pos]) return 0;
    size_t n = 0;
    while (s[*pos] && s[*pos] != ' ' && s[*pos] != '\t' && s[*pos] != '\n') {
        if (n + 1 < cap) tok[n++] = s[*pos];
        (*pos)++;
    }
    tok[n] = 0;
    return 1;
}

/* Compares the student's order of every rank with the canonical one; on the first difference writes it to
 * msg and returns 0. */
static int check_orders(order_fn f, const char *sched, int P, int M, char *msg, size_t msglen) {
    pp_schedule s;
    if (pp__schedule_build(&s, sched, P, M, 1)) {
        snprintf(msg, msglen, "internal: no canonical schedule %s", sched);
        return 0;
    }
    static char buf[ORDER_CAP + ORDER_GUARD];
    int ok = 1;
    for (int r = 0; r < P && ok; r++) {
        memset(buf, 0x5a, sizeof buf);
        int ret = f(sched, P, M, r, buf, ORDER_CAP);
        if (ret < 0) {
            snprintf(msg, msglen, "%s P=%d M=%d rank %d: returned %d with %d bytes of room; expected the %d ops of "
                     "the rank (-1 only when they do not fit)", sched, P, M, r, ret, ORDER_CAP, s.n[r]);
            ok = 0;
            break;
        }
        if (!memchr(buf, 0, ORDER_CAP)) {
            snprintf(msg, msglen, "%s P=%d M=%d rank %d: out holds no terminating NUL within the %d bytes given "
                     "(returned %d); HINT: end the string with '\\0'", sched, P, M, r, ORDER_CAP, ret);
            ok = 0;
            break;
        }
        for (int i = ORDER_CAP; i < ORDER_CAP + ORDER_GUARD; i++)
            if (buf[i] != 0x5a) {
                snprintf(msg, msglen, "%s P=%d M=%d rank %d: wrote past the %d bytes of out", sched, P, M, r,
                         ORDER_CAP);
                ok = 0;
                break;
            }
        if (!ok) break;
        size_t pos = 0;
        char tok[32], want[32];
        int i = 0;
        for (;; i++) {
            int have = next_token(buf, &pos, tok, sizeof tok);
            if (i < s.n[r]) snprintf(want, sizeof want, "%c%d", s.ops[r][i].kind, s.ops[r][i].mb);
            if (i >= s.n[r] && !have) break;
            if (i >= s.n[r]) {
                snprintf(msg, msglen, "%s P=%d M=%d rank %d op %d: expected the end of the list, got %s (ops "
                         "counted from 0; %d ops in all)", sched, P, M, r, i, tok, s.n[r]);
                ok = 0;
            } else if (!have) {
                snprintf(msg, msglen, "%s P=%d M=%d rank %d op %d: expected %s, got the end of the list (ops "
                         "counted from 0; %d ops in all)", sched, P, M, r, i, want, s.n[r]);
                ok = 0;
            } else if (strcmp(tok, want)) {
                snprintf(msg, msglen, "rank %d op %d: expected %s, got %s (%s P=%d M=%d, ops counted from 0)", r,
                         i, want, tok, sched, P, M);
                ok = 0;
            }
            if (!ok) break;
        }
        if (ok && ret != s.n[r]) {
            snprintf(msg, msglen, "%s P=%d M=%d rank %d: the list is right but the function returned %d instead of "
                     "the number of ops, %d", sched, P, M, r, ret, s.n[r]);
            ok = 0;
        }
    }
    if (ok) snprintf(msg, msglen, "%s P=%d M=%d: every rank's order matches", sched, P, M);
    pp__schedule_free(&s);
    return ok;
}

static void grade_orders(void *fn, pp_test_result *out) {
    order_fn f = (order_fn)fn;
    char msg[400];
    int ok = check_orders(f, "gpipe", 4, 8, msg, sizeof msg);
    pp__check_add(out, order_checks[0].name, order_checks[0].points, ok, "%s", msg);
    int ok1 = check_orders(f, "1f1b", 4, 8, msg, sizeof msg);
    pp__check_add(out, order_checks[1].name, order_checks[1].points, ok1, "%s", msg);
    int ok2 = check_orders(f, "1f1b", 4, 2, msg, sizeof msg);
    pp__check_add(out, order_checks[2].name, order_checks[2].points, ok2,
                  ok2 || !strstr(msg, " op ")
                      ? "%s"
                      : "%s; HINT: with fewer micro-batches than stages the warm-up is cut to M forwards",
                  msg);
    /* gpipe P=4 M=8 rank 0 needs 48 bytes; 10 hold three tokens. Gated on a right order, so a stub that always
     * returns -1 earns nothing here. */
    static char small[10 + ORDER_GUARD];
    memset(small, 0x5a, sizeof small);
    int ret = f("gpipe", 4, 8, 0, small, 10);
    int clean = 1;
    for (size_t i = 10; i < sizeof small; i++) clean &= small[i] == 0x5a;
    if (!ok)
        pp__check_add(out, order_checks[3].name, order_checks[3].points, 0,
                      "not graded until the gpipe order is right");
    else if (!clean)
        pp__check_add(out, order_checks[3].name, order_checks[3].points, 0,
                      "gpipe P=4 M=8 rank 0 with cap=10: wrote past the 10 bytes of out; HINT: snprintf(out + used, "
                      "cap - used, ...) never writes more than it is given");
    else
        pp__check_add(out, order_checks[3].name, order_checks[3].points, ret == -1,
                      "gpipe P=4 M=8 rank 0 with cap=10 (48 bytes needed): expected -1, got %d", ret);
}

/* ---- partition ----------------------------------------------------------------------------------------- */

#define PART_LAYERS 64
#define PART_P 4

typedef struct cost_model {
    const char *name;
    double cost[PART_LAYERS];
} cost_model;

/* The three cost vectors, in units of one transformer block's forward:
 *  "64-layer LM": embedding 3.0 (layer 0), 62 blocks 1.0, LM head 5.0 (layer 63); best slowest stage 18.
 *  "uneven blocks": embedding 2.5, blocks 0.5 + ((7i + 3) mod 11) / 4 (deterministic, between 0.5 and 3.0),
 *      head 9.0 (a large vocabulary).
 *  "deepening": blocks growing with depth, 0.5 + i / 32, embedding 1.0, head 4.0.
 * Equal layer counts (16 per stage) are not optimal for any of them. */
static void cost_models(cost_model m[3]) {
    m[0].name = "64-layer LM (embedding 3.0, 62 blocks 1.0, head 5.0)";
    m[1].name = "uneven blocks (embedding 2.5, blocks 0.5..3.0, head 9.0)";
    m[2].name = "deepening (embedding 1.0, blocks 0.5 + i/32, head 4.0)";
    for (int i = 1; i < PART_LAYERS - 1; i++) {
        m[0].cost[i] = 1.0;
        m[1].cost[i] = 0.5 + ((7 * i + 3) % 11) / 4.0;
        m[2].cost[i] = 0.5 + i / 32.0;
    }
    m[0].cost[0] = 3.0, m[0].cost[PART_LAYERS - 1] = 5.0;
    m[1].cost[0] = 2.5, m[1].cost[PART_LAYERS - 1] = 9.0;
    m[2].cost[0] = 1.0, m[2].cost[PART_LAYERS - 1] = 4.0;
}

static double span_cost(const double *cost, int a, int b) {
    double s = 0;
    for (int i = a; i < b; i++) s += cost[i];
    return s;
}

/* The best slowest stage over all cuts of n layers into P non-empty stages. The optimum is the cost of some
 * contiguous span; a span cost T is achievable iff packing layers greedily under T needs at most P stages
 * (then n >= P lets us split further without raising the maximum). The smallest achievable span is exact. */
static double partition_optimum(const double *cost, int n, int P) {
    double best = -1;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b <= n; b++) {
            double T = span_cost(cost, a, b);
            if (best >= 0 && T >= best) continue;
            int stages = 1, ok = 1;
            double cur = 0;
            for (int i = 0; i < n && ok; i++) {
                if (cost[i] > T) ok = 0;
                else if (cur + cost[i] > T) stages++, cur = cost[i];
                else cur += cost[i];
            }
            if (ok && stages <= P) best = T;
        }
    return best;
}

static const part_check partition_checks[] = {{"partition valid", 1},
                                              {"partition optimal: 64-layer LM", 1},
                                              {"partition optimal: uneven", 1},
                                              {"partition optimal: deepening", 1},
                                              {"partition impossible", 1}};

static void first_str(const int *first, int P, char *s, size_t len) {
    size_t used = 0;
    for (int i = 0; i <= P && used < len; i++)
        used += (size_t)snprintf(s + used, len - used, "%s%d%s", i ? ", " : "{", first[i], i == P ? "}" : "");
}

/* Returns 1 when first[] (returned rc) is a valid cut of n layers into P stages, else 0 with the reason. */
static int partition_valid(int rc, const int *first, int guard_ok, int n, int P, char *msg, size_t len) {
    char fs[200];
    first_str(first, P, fs, sizeof fs);
    if (rc != 0) return snprintf(msg, len, "returned %d for a cut that exists (expected 0)", rc), 0;
    if (!guard_ok) return snprintf(msg, len, "wrote past first[%d] (first has P+1 = %d entries)", P, P + 1), 0;
    if (first[0] != 0) return snprintf(msg, len, "first[0] must be 0, got first = %s", fs), 0;
    if (first[P] != n) return snprintf(msg, len, "first[%d] must be %d (every layer placed), got first = %s", P, n, fs), 0;
    for (int s = 0; s < P; s++) {
        if (first[s + 1] == first[s])
            return snprintf(msg, len, "stage %d is empty (first[%d] = first[%d] = %d): first = %s; every stage needs "
                            "at least one layer", s, s, s + 1, first[s], fs), 0;
        if (first[s + 1] < first[s])
            return snprintf(msg, len, "stages overlap (first[%d] = %d < first[%d] = %d): first = %s; first[] must "
                            "increase, stage s holding layers first[s]..first[s+1]-1", s + 1, first[s + 1], s,
                            first[s], fs), 0;
    }
    return 1;
}

static void grade_partition(void *fn, pp_test_result *out) {
    partition_fn f = (partition_fn)fn;
    cost_model m[3];
    cost_models(m);
    int valid[3], first[3][PART_P + 1 + 4];
    char why[400] = "";
    int all_valid = 1;
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < PART_P + 1 + 4; i++) first[k][i] = -7777;
        double copy[PART_LAYERS];
        memcpy(copy, m[k].cost, sizeof copy);
        int rc = f(PART_LAYERS, copy, PART_P, first[k]);
        int guard = 1;
        for (int i = PART_P + 1; i < PART_P + 1 + 4; i++) guard &= first[k][i] == -7777;
        char msg[300];
        valid[k] = partition_valid(rc, first[k], guard, PART_LAYERS, PART_P, msg, sizeof msg);
        if (!valid[k] && all_valid) snprintf(why, sizeof why, "%s, P=%d: %s", m[k].name, PART_P, msg);
        all_valid &= valid[k];
    }
    if (all_valid)
        pp__check_add(out, partition_checks[0].name, partition_checks[0].points, 1,
                      "3 cost models: every cut is contiguous, non-empty and covers the %d layers", PART_LAYERS);
    else
        pp__check_add(out, partition_checks[0].name, partition_checks[0].points, 0, "invalid partition: %s", why);
    for (int k = 0; k < 3; k++) {
        const part_check *pc = &partition_checks[1 + k];
        double opt = partition_optimum(m[k].cost, PART_LAYERS, PART_P);
        if (!valid[k]) {
            pp__check_add(out, pc->name, pc->points, 0, "%s: not graded, the partition is invalid (best slowest "
                          "stage: %.6g)", m[k].name, opt);
            continue;
        }
        char stages[160] = "";
        double worst = 0;
        for (int s = 0; s < PART_P; s++) {
            double c = span_cost(m[k].cost, first[k][s], first[k][s + 1]);
            size_t len = strlen(stages);
            snprintf(stages + len, sizeof stages - len, "%s%.6g", s ? " " : "", c);
            if (c > worst) worst = c;
        }
        /* the costs are multiples of 1/32, so every sum here is exact; 1e-9 relative only covers a student's
         * prefix-sum differences on other inputs */
        int ok = fabs(worst - opt) <= 1e-9 * (1.0 + opt);
        char fs[200];
        first_str(first[k], PART_P, fs, sizeof fs);
        if (ok)
            pp__check_add(out, pc->name, pc->points, 1, "%s: slowest stage %.6g is optimal (first = %s, stage costs %s)",
                          m[k].name, worst, fs, stages);
        else
            pp__check_add(out, pc->name, pc->points, 0,
                          "%s: expected the slowest stage to cost %.6g (the optimum), got %.6g (first = %s, stage "
                          "costs %s); HINT: equal layer counts are not enough when the embedding and the head add "
                          "cost: search the cuts exactly",
                          m[k].name, opt, worst, fs, stages);
    }
    /* 3 layers cannot fill 4 stages. Gated on valid cuts, so a stub that always returns -1 earns nothing. */
    int few[PART_P + 1];
    double three[3] = {1, 1, 1};
    int rc = f(3, three, PART_P, few);
    if (!all_valid)
        pp__check_add(out, partition_checks[4].name, partition_checks[4].points, 0,
                      "not graded until the partitions above are valid");
    else
        pp__check_add(out, partition_checks[4].name, partition_checks[4].points, rc == -1,
                      "3 layers on P=4 (a stage would be empty): expected -1, got %d", rc);
}

/* ---- entry --------------------------------------------------------------------------------------------- */

typedef struct warmup_part {
    const char *part, *symbol;
    void (*grade)(void *fn, pp_test_result *out);
    const part_check *checks;
    int nchecks;
} warmup_part;

#define PART(name, sym, fn, tbl) {name, sym, fn, tbl, (int)(sizeof tbl / sizeof *tbl)}
static const warmup_part parts[] = {
    PART("bubble", "pp_warmup_bubble", grade_bubble, bubble_checks),
    PART("peaks", "pp_warmup_peak_stashes", grade_peaks, peak_checks),
    PART("orders", "pp_warmup_order", grade_orders, order_checks),
    PART("partition", "pp_warmup_partition", grade_partition, partition_checks),
};

void pp__warmup_grade(const char *so_path, const pp_test_config *cfg, pp_test_result *out) {
    const warmup_part *p = NULL;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (!strcmp(cfg->part, parts[i].part)) p = &parts[i];
    out->cfg = *cfg;
    if (!out->name[0]) snprintf(out->name, sizeof out->name, "warmup %s", cfg->part);
    out->status = PP_OK;
    if (!p) {
        out->status = PP_ERR_CONFIG;
        snprintf(out->error, sizeof out->error,
                 "unknown warm-up part '%s': use bubble, peaks, orders or partition in the config", cfg->part);
        pp__check_add(out, "warmup part", 1, 0, "%s", out->error);
    } else {
        void *h = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
        void *fn = h ? dlsym(h, p->symbol) : NULL;
        if (!fn) {
            char why[300];
            if (!h)
                snprintf(why, sizeof why, "cannot load %s: %s", so_path, dlerror());
            else
                snprintf(why, sizeof why, "labs/00-warmup/warmup.c does not define %s: keep the function's name "
                         "and signature from the handout", p->symbol);
            for (int i = 0; i < p->nchecks; i++) pp__check_add(out, p->checks[i].name, p->checks[i].points, 0, "%s", why);
            if (!h) out->status = PP_ERR_IO, snprintf(out->error, sizeof out->error, "%s", why);
        } else {
            p->grade(fn, out);
        }
        if (h) dlclose(h);
    }
    out->score = out->max = 0;
    for (int i = 0; i < out->nchecks; i++) out->score += out->checks[i].points, out->max += out->checks[i].max;
}
