/* checks.c: the grader's checks of one finished run against the full-batch reference and the theory, with
 * diagnoses that say what probably went wrong (wrong gradients: grad_mix.h; an order that parts from the canonical
 * one: order_diff.h). Every point is gated on the gradients being right. */
#include "checks.h"
#include "checks_dp.h"
#include "checks_tp.h"
#include "grad_mix.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "placement.h"
#include "replay.h"
#include "schedules.h"
#include "tag.h"

/* ---- gradients ----------------------------------------------------------------------------------------- */

static double norm2(const float *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)x[i] * x[i];
    return s;
}

static double diff2(const float *a, const float *b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return s;
}

double pp__rel_err(const float *got, const float *ref, int n) {
    double r = sqrt(norm2(ref, n));
    return sqrt(diff2(got, ref, n)) / (r > 1e-30 ? r : 1e-30);
}


double pp__weight_rtol(const pp_run_config *c) { return 64 * PP_FP32_U * sqrt((double)c->M); }

int pp__checks_worst(const double *err, int n) {
    int nan = -1;
    double top = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(err[i]) && nan < 0) nan = i;
        if (err[i] > top) top = err[i];
    }
    if (nan >= 0) return nan;
    for (int i = 0; i < n; i++)
        if (err[i] >= top * (1 - PP_WORST_TIE)) return i;
    return 0;
}

int pp__checks_grads_ok(const pp_run_result *res, const pp_reference *ref) {
    if (res->nparams != ref->nparams) return 0;
    for (int i = 0; i < res->nparams; i++)
        if (strcmp(res->params[i].name, ref->params[i].name) ||
            !(pp__rel_err(res->params[i].grad, ref->params[i].grad, res->params[i].count) <= PP_GRAD_RTOL))
            return 0;
    return 1;
}

/* ---- trace --------------------------------------------------------------------------------------------- */

/* Checks exactly one F and one B (and at most one W) per (virtual stage, micro-batch). 0 or -1 with a message. */
static int check_one_f_one_b(const pp_run_config *c, const pp_run_result *res, char *msg, size_t len) {
    int S = c->P * c->v, M = c->M;
    int *cnt = pp__xcalloc((size_t)(3 * S * M), sizeof *cnt);
    for (int r = 0; r < c->P; r++)
        for (int i = 0; i < res->traces[r].n; i++) {
            const pp_event *e = &res->traces[r].ev[i];
            if (!pp__op_is_compute(e->op) || e->mb < 0 || e->mb >= M || e->vstage < 0 || e->vstage >= S) continue;
            cnt[(e->op * S + e->vstage) * M + e->mb]++;
        }
    int bad = 0;
    for (int s = 0; s < S && !bad; s++)
        for (int m = 0; m < M && !bad; m++) {
            /* once on every stage of its path, and never on DualPipe's other pipeline */
            int f = cnt[(PP_OP_F * S + s) * M + m], b = cnt[(PP_OP_B * S + s) * M + m], w = cnt[(PP_OP_W * S + s) * M + m];
            int carried = pp__config_carries(c, s, m);
            const char *what = f != carried  ? "forward"
                               : b != carried ? "backward"
                               : w > carried  ? "weight-gradient half"
                                              : NULL;
            int times = f != carried ? f : b != carried ? b : w;
            if (what) {
                /* which of the rank's compute ops they were */
                char ops[96] = "";
                int r = pp__config_vstage_rank(c, s), k = 0, said = 0;
                pp_op_kind want = f != carried ? PP_OP_F : b != carried ? PP_OP_B : PP_OP_W;
                for (int i = 0; i < res->traces[r].n && said < 4; i++) {
                    const pp_event *e = &res->traces[r].ev[i];
                    if (!pp__op_is_compute(e->op)) continue;
                    if (e->op == want && e->vstage == s && e->mb == m) {
                        size_t used = strlen(ops);
                        snprintf(ops + used, sizeof ops - used, "%s%d", said++ ? " and " : ", its ops ", k);
                    }
                    k++;
                }
                if (carried)
                    snprintf(msg, len, "micro-batch %d ran its %s %d time%s on virtual stage %d (rank %d%s); expected "
                             "exactly once", m, what, times, times == 1 ? "" : "s", s, r, ops);
                else
                    snprintf(msg, len, "micro-batch %d ran a %s on virtual stage %d (rank %d%s), which belongs to the "
                             "other pipeline", m, what, s, r, ops);
                bad = 1;
            }
        }
    free(cnt);
    return bad ? -1 : 0;
}

/* The first backward on rank r whose weight half does not follow it at once (the next compute op of the rank is
 * something else): its index in r's trace, or -1. */
static int first_deferred_weight(const pp_run_result *res, int r) {
    const pp_trace *t = &res->traces[r];
    for (int i = 0; i < t->n; i++) {
        const pp_event *e = &t->ev[i];
        if (e->op != PP_OP_B || !(e->flags & PP_EV_SPLIT)) continue;
        int j = i + 1;
        while (j < t->n && !pp__op_is_compute(t->ev[j].op)) j++;
        if (j < t->n && (t->ev[j].op != PP_OP_W || t->ev[j].mb != e->mb || t->ev[j].chunk != e->chunk)) return i;
    }
    return -1;
}

/* Why a run's ops cost what the theory does not, in msg ("" when every op costs and sits as the theory
 * assumes), and which cause it found. */
typedef enum { COST_SAME, COST_REBUILT, COST_DEFERRED_W, COST_TP_SUMS } cost_cause;

static cost_cause cost_diff(const pp_run_config *c, const pp_run_result *res, int prefer, char *msg, size_t len) {
    msg[0] = 0;
    for (int q = 0; q <= c->P; q++) {
        int r = pp__order_diff_rank(q, prefer, c->P);
        if (r < 0) continue;
        const pp_trace *t = &res->traces[r];
        for (int i = 0; i < t->n && !c->recompute; i++) {
            const pp_event *e = &t->ev[i];
            if (e->op != PP_OP_B || !(e->flags & PP_EV_RECOMPUTED)) continue;
            snprintf(msg, len, "rank %d's backward of micro-batch %d (chunk %d) rebuilt its stash, which "
                     "pp_stash_checkpoint had dropped, although pp_rank_recompute(r) is 0: that costs one more "
                     "forward the canonical schedule does not pay; checkpoint only when pp_rank_recompute(r) is 1",
                     r, e->mb, e->chunk);
            return COST_REBUILT;
        }
        /* a schedule's own blocks pay for every shards' sum they make: more than Megatron's two per block and pass
         * (one per half) lengthens the op */
        for (int i = 0; i < t->n && c->schedule->own_blocks && c->T > 1; i++) {
            const pp_event *e = &t->ev[i];
            if (e->op != PP_OP_F && e->op != PP_OP_B) continue;
            int world = pp__config_rank_of(c, 0, r / c->P, r % c->P), blocks = pp__config_blocks(c, e->vstage);
            double want = pp__config_tp_sums_cost_of(c, world, e->vstage);
            if (e->tp_time <= want + 1e-9) continue;
            snprintf(msg, len, "rank %d's %s of micro-batch %d spent %g of virtual time in shards' sums, where its %d "
                     "block%s sums take %g: each sum beyond two per block costs the op its time", r,
                     e->op == PP_OP_F ? "forward" : "backward", e->mb, e->tp_time, blocks, blocks == 1 ? "'s" : "s'",
                     want);
            return COST_TP_SUMS;
        }
        /* where the order places the weight halves itself, the order check compares them */
        int d = c->schedule->free_phases || c->schedule->weight_halves ? -1 : first_deferred_weight(res, r);
        if (d >= 0) {
            snprintf(msg, len, "rank %d defers the weight half of micro-batch %d (chunk %d): in the %s lab "
                     "pp_stage_backward_weight follows its pp_stage_backward_input at once (deferring it to fill "
                     "idle time is the zero-bubble lab's subject)", r, t->ev[d].mb, t->ev[d].chunk, c->schedule->name);
            return COST_DEFERRED_W;
        }
    }
    return COST_SAME;
}

/* " of N KiB" for a limit a public test may show, "" for a hidden one. Returns buf. */
static const char *kib(size_t bytes, int secret, char *buf, size_t len) {
    if (secret) buf[0] = 0;
    else snprintf(buf, len, " of %zu KiB", bytes / 1024);
    return buf;
}

/* Bubbles are exact (a replay of the same costs): closer than this they are equal. */
#define PP_BUBBLE_TOL 1e-9

/* The canonical order as the run ran its backwards, replayed on every replica's own costs and links
 * (pp__theory_grid): its makespan, and into msg how the run's step compares: when each ends, and which ranks finish
 * sooner. The bubble alone says nothing of a step that does more work (a stash rebuilt unasked lowers the idle
 * share while it lengthens the step), so the grade compares the steps too. -1 when there is no replay. */
static double canonical_span(const pp_run_config *c, const pp_run_result *res, char *msg, size_t len) {
    int n = res->P;
    msg[0] = 0;
    pp_trace *ideal = pp__xcalloc((size_t)n, sizeof *ideal);
    double span = pp__theory_grid(c, res->traces, NULL, ideal, NULL, NULL);
    size_t at = span < 0 ? 0 : (size_t)snprintf(msg, len, "the step ends at %g, the canonical order's at %g",
                                                res->makespan, span);
    for (int r = 0, said = 0; span >= 0 && r < n && at < len && res->makespan < span; r++) {
        double mine = pp__trace_makespan(&res->traces[r], 1), theirs = pp__trace_makespan(&ideal[r], 1);
        char rep[32] = ""; /* which pipeline the rank is in */
        if (c->D > 1) snprintf(rep, sizeof rep, " of replica %d", r / c->P);
        if (mine < theirs - PP_BUBBLE_TOL)
            at += (size_t)snprintf(msg + at, len - at, "%s rank %d%s finishes %g sooner", said++ ? "," : ";",
                                   r % c->P, rep, theirs - mine);
    }
    for (int r = 0; r < n; r++) pp__trace_clear(&ideal[r]);
    free(ideal);
    return span;
}

/* ---- all checks ---------------------------------------------------------------------------------------- */

static const char *const gate_names[] = {"weights and loss after K steps", "one F and one B per micro-batch and stage",
                                         "bubble", "stash peak", "boundary messages"};
static const double gate_pts[] = {PP_PTS_WEIGHTS, PP_PTS_ONE_F_ONE_B, PP_PTS_BUBBLE, PP_PTS_PEAK, PP_PTS_MESSAGES};

/* Every check after the gradients, at zero: their points are gated on the gradients being right. */
static void add_gated(const pp_run_config *c, pp_test_result *out, const char *why) {
    for (size_t i = 0; i < sizeof gate_names / sizeof *gate_names; i++)
        pp__check_add(out, gate_names[i], gate_pts[i], 0, "not graded: %s", why);
    if (c->recompute) pp__check_add(out, "recomputation memory", PP_PTS_RECOMPUTE, 0, "not graded: %s", why);
    pp__checks_dp_gated(c, out, why);
    pp__checks_tp_gated(c, out, why);
    pp__checks_grid_gated(c, out, why);
}

int pp__checks_zero_grads(const pp_run_config *c, const pp_run_result *res, pp_test_result *out) {
    for (int i = 0; i < res->nparams; i++)
        for (int k = 0; k < res->params[i].count; k++)
            if (res->params[i].grad[k] != 0) return 0;
    out->grad_err = 1;
    /* the cause: a zero loss scale, gradients wiped after the backwards, or no backward at all */
    int S = c->P * c->v, M = c->M, ran = 0, scale_r = -1, wipe_r = -1;
    char *seen = pp__xcalloc((size_t)(S * M), 1);
    for (int r = 0; r < c->P; r++) {
        if (res->zero_scales[r] && scale_r < 0) scale_r = r;
        if (res->late_grad_zero[r] && wipe_r < 0) wipe_r = r;
        for (int i = 0; i < res->traces[r].n; i++) {
            const pp_event *e = &res->traces[r].ev[i];
            if (e->op == PP_OP_B && e->vstage >= 0 && e->vstage < S && e->mb >= 0 && e->mb < M && !seen[e->vstage * M + e->mb])
                seen[e->vstage * M + e->mb] = 1, ran++;
        }
    }
    free(seen);
    if (scale_r >= 0)
        pp__check_add(out, "gradients", PP_PTS_GRADS, 0, "all-zero gradients: rank %d passed a loss scale of 0 to "
                      "pp_loss_grad %d time%s (1 / M in integer arithmetic is 0: write 1.0f / M)", scale_r,
                      res->zero_scales[scale_r], res->zero_scales[scale_r] == 1 ? "" : "s");
    else if (wipe_r >= 0)
        pp__check_add(out, "gradients", PP_PTS_GRADS, 0, "all-zero gradients: rank %d called pp_grad_zero after its "
                      "backwards, which erases what they added before the optimizer sees it (the library zeroes "
                      "the gradients before each step)", wipe_r);
    else if (ran == S * M)
        pp__check_add(out, "gradients", PP_PTS_GRADS, 0, "all-zero gradients although every backward ran: each "
                      "backward got a zero gradient to start from (a loss scale of 0 on the last stage, or zero "
                      "tensors passed on?)");
    else
        pp__check_add(out, "gradients", PP_PTS_GRADS, 0, "all-zero gradients on every rank: %s (does the step "
                      "function run %s for every micro-batch%s?)", ran ? "some backwards never ran" : "no backward ran",
                      c->schedule->weight_halves
                          ? "pp_stage_backward_input, then pp_stage_backward_weight,"
                          : c->schedule->own_blocks
                          ? "pp_stage_backward_begin, the blocks' backwards and pp_stage_backward_end"
                          : "pp_stage_backward",
                      c->v > 1 ? " and chunk" : "");
    add_gated(c, out, "the gradients must be right first");
    return 1;
}

/* What every check of one run reads: the run, its reference, and whether each micro-batch ran one F and one B
 * per stage (own; otherwise own_msg says what did not), the cause of most other failures, named first in them. */
typedef struct {
    const pp_run_config *c;
    const pp_run_result *res;
    const pp_reference *ref;
    pp_test_result *out;
    int own, secret;
    char own_msg[300];
} run_checks;

/* The first compute op of the run that ran after its rank's optimizer step (PP_EV_AFTER_STEP), named into msg: the
 * step took the gradients without what that op adds. 1 when there is one. */
static int after_step(const pp_run_config *c, const pp_run_result *res, char *msg, size_t len) {
    static const char *const what[] = {"forward", "backward", "weight half"};
    for (int r = 0; r < res->P; r++)
        for (int i = 0; i < res->traces[r].n; i++) {
            const pp_event *e = &res->traces[r].ev[i];
            if (!pp__op_is_compute(e->op) || !(e->flags & PP_EV_AFTER_STEP)) continue;
            char rep[32] = "";
            if (c->D > 1) snprintf(rep, sizeof rep, " of replica %d", r / c->P);
            snprintf(msg, len, "rank %d%s called pp_optimizer_step before its %s of micro-batch %d (chunk %d) ran: "
                     "the step applied gradients without what that %s adds to them", r % c->P, rep, what[e->op],
                     e->mb, e->chunk, what[e->op]);
            return 1;
        }
    return 0;
}

/* A rank whose gradient differs from the one the result carries (pp_run_result.grad_differs), which is right: which
 * copy, of what, and how its size compares, as one line into msg. */
static void copy_grad_differs(const pp_run_config *c, const pp_run_result *res, char *msg, size_t len) {
    int q = res->grad_rank, t = pp__config_rank_tp(c, q), d = pp__config_rank_replica(c, q);
    int p = pp__config_rank_pipe(c, q);
    char who[96], than[64], how[96];
    if (t > 0 && d == 0) {
        snprintf(who, sizeof who, "shard %d of rank %d", t, p);
        snprintf(than, sizeof than, "shard 0's");
    } else {
        snprintf(who, sizeof who, "rank %d of replica %d", p, d);
        if (c->T > 1) snprintf(who + strlen(who), sizeof who - strlen(who), ", shard %d", t);
        snprintf(than, sizeof than, "replica 0's");
    }
    if (res->grad_ratio == 0) snprintf(how, sizeof how, "is all zero where");
    else if (fabs(res->grad_ratio - 1) < 1e-3) snprintf(how, sizeof how, "differs from %s, and", than);
    else snprintf(how, sizeof how, "is %.2fx the norm of %s, and", res->grad_ratio, than);
    snprintf(msg, len, "%s's gradient of %s %s %s matches the full batch's: every %s must end its backwards with "
             "the same gradient (%s)", who, res->grad_param, how, than, t > 0 && d == 0 ? "shard" : "replica",
             t > 0 && d == 0 ? "the parameter is whole on every shard, and each steps its own" :
             "each replica steps its own copy of the weights");
}

/* Gradients against the full-batch reference: 1 when they are right, which every other point waits for. */
static int check_gradients(run_checks *run, double *err) {
    const pp_run_result *res = run->res;
    const pp_reference *ref = run->ref;
    char msg[600];
    int names_ok = res->nparams == ref->nparams;
    for (int i = 0; names_ok && i < res->nparams; i++) {
        names_ok = !strcmp(res->params[i].name, ref->params[i].name);
        err[i] = pp__rel_err(res->params[i].grad, ref->params[i].grad, res->params[i].count);
    }
    int worst_i = names_ok ? pp__checks_worst(err, res->nparams) : 0;
    double worst = err[worst_i];
    run->out->grad_err = worst;
    if (names_ok && worst <= PP_GRAD_RTOL && res->grad_differs) {
        copy_grad_differs(run->c, res, msg, sizeof msg);
        pp__check_add(run->out, "gradients", PP_PTS_GRADS, 0, "%s", msg);
        return 0;
    }
    if (names_ok && worst <= PP_GRAD_RTOL) {
        pp__check_add(run->out, "gradients", PP_PTS_GRADS, 1, "every parameter within %.0e of the full-batch gradient "
                      "(worst %.1e, %s)", PP_GRAD_RTOL, worst, res->params[worst_i].name);
        return 1;
    }
    if (!names_ok) {
        pp__check_add(run->out, "gradients", PP_PTS_GRADS, 0, "the parameter set differs from the reference model");
        return 0;
    }
    int vs = res->params[worst_i].vstage, opt_many = -1;
    for (int r = 0; r < run->c->P; r++)
        if (res->opt_calls[r] > 1) opt_many = r;
    if (opt_many >= 0)
        snprintf(msg, sizeof msg, "rank %d called pp_optimizer_step %d times in one step: step once, after "
                 "the last backward", opt_many, res->opt_calls[opt_many]);
    else if (after_step(run->c, res, msg, sizeof msg))
        ; /* an op that added to the gradients after the step had read them */
    else if (pp__checks_tp_diagnose(run->c, res, msg, sizeof msg))
        ; /* a block call given the wrong kind of tensor: the first one, named */
    else if (pp__checks_dp_diagnose(run->c, res, ref, msg, sizeof msg))
        ; /* the reduce's mistake, named as such */
    else if (ref->mb_grad)
        pp__grad_mix_explain(res, ref, vs, msg, sizeof msg);
    else
        snprintf(msg, sizeof msg, "virtual stage %d gradients differ from the reference", vs);
    pp__check_add(run->out, "gradients", PP_PTS_GRADS, 0, "%s%s%s (worst: %s, relative error %.2e > %.0e)",
                  run->own ? "" : run->own_msg, run->own ? "" : "; so ", msg, res->params[worst_i].name, worst, PP_GRAD_RTOL);
    return 0;
}

/* Weights and losses after K steps, and one optimizer step per rank and step. */
static void check_weights(run_checks *run, double *err) {
    const pp_run_config *c = run->c;
    const pp_run_result *res = run->res;
    double lworst = 0;
    for (int i = 0; i < res->nparams; i++)
        err[i] = pp__rel_err(res->params[i].weight, run->ref->params[i].weight, res->params[i].count);
    int wi = pp__checks_worst(err, res->nparams);
    double wworst = err[wi];
    for (int s = 0; s < c->steps; s++) {
        double e = fabs((double)res->loss[s] - run->ref->loss[s]) / (fabs((double)run->ref->loss[s]) + 1e-12);
        if (!(e <= lworst)) lworst = e;
    }
    run->out->weight_err = wworst;
    run->out->loss_err = lworst;
    double wtol = pp__weight_rtol(c);
    int opt_bad = -1;
    for (int r = 0; r < c->P; r++)
        if (res->opt_calls[r] != 1) opt_bad = r;
    if (opt_bad >= 0) {
        pp__check_add(run->out, gate_names[0], PP_PTS_WEIGHTS, 0, "rank %d called pp_optimizer_step %d times in step "
                      "1; expected once, after the last backward", opt_bad, res->opt_calls[opt_bad]);
        return;
    }
    if (res->shard_differs) {
        pp__check_add(run->out, gate_names[0], PP_PTS_WEIGHTS, 0, "after %d step%s shard %d of rank %d (replica %d) "
                      "holds %s, which every shard holds whole, differently from shard 0: the shards no longer hold "
                      "one model", c->steps, c->steps == 1 ? "" : "s", res->shard_differs, res->shard_rank % c->P,
                      res->shard_rank / c->P, res->shard_param);
        return;
    }
    if (res->copy_differs) {
        int s = res->copy_stage;
        pp__check_add(run->out, gate_names[0], PP_PTS_WEIGHTS, 0, "after %d step%s the two copies of stage %d differ "
                      "(%s on rank %d's chunk 0 and rank %d's chunk 1): both must step on the sum of their gradients, "
                      "pp_grad_reduce on each before every optimizer step", c->steps, c->steps == 1 ? "" : "s", s,
                      res->copy_param, s, c->P - 1 - s);
        return;
    }
    int ok = wworst <= wtol && lworst <= PP_LOSS_RTOL, own = run->own;
    pp__check_add(run->out, gate_names[0], PP_PTS_WEIGHTS, ok, "%s%safter %d step%s: worst weight error %.1e (%s, limit "
                  "%.1e = 64 u sqrt(M)), worst loss error %.1e (limit %.0e)", ok || own ? "" : run->own_msg,
                  ok || own ? "" : "; so ", c->steps, c->steps == 1 ? "" : "s", wworst, res->params[wi].name, wtol,
                  lworst, PP_LOSS_RTOL);
}

/* The bubble against the canonical order replayed with the freedoms pp.h gives (split backwards); at or below
 * it keeps the points: outcomes are graded, not imitation. */
static void check_bubble(run_checks *run) {
    const pp_run_config *c = run->c;
    const pp_run_result *res = run->res;
    int formula;
    char note[64], how[128];
    double theory = pp__theory_bubble_run(c, res->traces, &formula, note, sizeof note);
    snprintf(how, sizeof how, "%s%s%s", formula ? "formula" : "replay of the canonical schedule", note[0] ? " " : "",
             note);
    run->out->bubble = res->bubble;
    run->out->theory = theory;
    char where[300];
    double span = canonical_span(c, res, where, sizeof where);
    int longer = span >= 0 && res->makespan > span + PP_BUBBLE_TOL;
    if (res->bubble < theory - PP_BUBBLE_TOL && !longer) {
        pp_check *x = pp__check_add(run->out, gate_names[2], PP_PTS_BUBBLE, 1, "%.4f measured, below the canonical "
                                    "order's %.4f (%s) by %.4f: %s", res->bubble, theory, how, theory - res->bubble,
                                    where);
        x->better = 1;
        return;
    }
    if (res->bubble <= theory + PP_BUBBLE_TOL && !longer) {
        pp__check_add(run->out, gate_names[2], PP_PTS_BUBBLE, 1, "%.4f measured, %.4f in theory (%s)", res->bubble,
                      theory, how);
        return;
    }
    /* a share of idle time at or below the theory's, on a longer step: the run did more work */
    char more[320] = "";
    if (res->bubble <= theory + PP_BUBBLE_TOL)
        snprintf(more, sizeof more, "; %s: the run does more work than the canonical schedule", where);
    char why[400];
    snprintf(why, sizeof why, "%s", run->own ? "" : run->own_msg);
    if (!why[0]) cost_diff(c, res, -1, why, sizeof why);
    /* the canonical order's ops are named only here, where an outcome failed, and never for a hidden test */
    if (!why[0] && !run->secret) pp__order_diff(c, res->traces, NULL, -1, why, sizeof why);
    if (run->secret)
        pp__check_add(run->out, gate_names[2], PP_PTS_BUBBLE, 0, "%.4f measured, %s the canonical order here (%s): %s",
                      res->bubble, longer ? "on a longer step than" : "above what idles",  how, why[0] ? why :
                      "some rank waits where the canonical order keeps it busy: draw this configuration with "
                      "build/pplab run --canonical ... --timeline and compare it with your run's timeline");
    else if (why[0])
        pp__check_add(run->out, gate_names[2], PP_PTS_BUBBLE, 0, "%s (bubble %.4f measured, %.4f in theory, %s%s)", why,
                      res->bubble, theory, how, more);
    else
        pp__check_add(run->out, gate_names[2], PP_PTS_BUBBLE, 0, "%.4f measured, expected %.4f (%s%s): every op runs "
                      "in the canonical order at its cost, yet the idle time differs", res->bubble, theory, how,
                      more);
}

/* A peak at or below the canonical order's on every rank, some below it: which ones, for the report. */
static void check_peak_below(run_checks *run, int fewer) {
    const pp_run_result *res = run->res;
    char below[300];
    size_t n = 0;
    below[0] = 0;
    for (int r = 0, said = 0; r < run->c->P && r < PP_MAX_RANKS && n < sizeof below; r++) {
        if (res->peak_stashes[r] >= run->out->peak_bound[r]) continue;
        if (said++ == 4) {
            n += (size_t)snprintf(below + n, sizeof below - n, ", ...");
            break;
        }
        n += (size_t)snprintf(below + n, sizeof below - n, "%srank %d held %d, the canonical order %d", said > 1
                              ? "; " : "", r, res->peak_stashes[r], run->out->peak_bound[r]);
    }
    pp_check *x = pp__check_add(run->out, gate_names[3], PP_PTS_PEAK, 1, "every rank at or below the canonical "
                                "order's peak, %d below it: %s", fewer, below);
    x->better = 1;
}

/* The stash peak, rank by rank, at or below the canonical order's; stashes left unfreed lose it too. */
static void check_peak(run_checks *run) {
    const pp_run_config *c = run->c;
    const pp_run_result *res = run->res;
    pp_test_result *out = run->out;
    int peak_ok = 1, bad_r = 0, fewer = 0;
    for (int r = 0; r < c->P && r < PP_MAX_RANKS; r++) {
        out->peak[r] = res->peak_stashes[r];
        out->peak_bound[r] = pp__theory_peak(c, r);
        if (res->peak_stashes[r] > out->peak_bound[r] && peak_ok) peak_ok = 0, bad_r = r;
        fewer += res->peak_stashes[r] < out->peak_bound[r];
    }
    /* the cause first: a deferred weight half keeps its stash alive, an order differs */
    char od[400] = "";
    if (!peak_ok && !run->own) {
        snprintf(od, sizeof od, "%s", run->own_msg);
    } else if (!peak_ok && cost_diff(c, res, bad_r, od, sizeof od) != COST_DEFERRED_W) {
        /* a rebuilt stash costs time, not memory: the order is what holds the stashes (named for public tests) */
        od[0] = 0;
        if (!run->secret) pp__order_diff(c, res->traces, NULL, bad_r, od, sizeof od);
    }
    int unfreed_r = -1;
    for (int r = 0; r < c->P; r++)
        if (res->unfreed_stashes[r] && unfreed_r < 0) unfreed_r = r;
    const char *hint = c->schedule->peak_hint ? c->schedule->peak_hint
                                                                 : "free each stash right after its backward";
    if (peak_ok && unfreed_r >= 0)
        pp__check_add(out, gate_names[3], PP_PTS_PEAK, 0, "rank %d never freed %d stash%s: call pp_stash_free after "
                      "each backward, or the activation memory grows until the step ends", unfreed_r,
                      res->unfreed_stashes[unfreed_r], res->unfreed_stashes[unfreed_r] == 1 ? "" : "es");
    else if (peak_ok && fewer)
        check_peak_below(run, fewer);
    else if (peak_ok)
        pp__check_add(out, gate_names[3], PP_PTS_PEAK, 1, "every rank within the %s bound", c->schedule->name);
    else if (run->secret)
        pp__check_add(out, gate_names[3], PP_PTS_PEAK, 0, "%s%srank %d held %d stashes at once, more than the "
                      "canonical order holds there: %s", od, od[0] ? "; so " : "", bad_r, res->peak_stashes[bad_r],
                      hint);
    else if (od[0])
        pp__check_add(out, gate_names[3], PP_PTS_PEAK, 0, "%s; so rank %d held %d stashes at once, the %s bound is %d",
                      od, bad_r, res->peak_stashes[bad_r], c->schedule->name, out->peak_bound[bad_r]);
    else
        pp__check_add(out, gate_names[3], PP_PTS_PEAK, 0, "rank %d held %d stashes at once, the %s bound is %d: %s",
                      bad_r, res->peak_stashes[bad_r], c->schedule->name, out->peak_bound[bad_r], hint);
}

/* Boundary messages: one per micro-batch, direction and boundary between two ranks. */
static void check_messages(run_checks *run) {
    const pp_run_result *res = run->res;
    int P = run->c->P, sent = 0;
    for (int r = 0; r < P; r++) sent += res->sent_msgs[r];
    int want = pp__theory_messages(run->c), self_r = -1, self_n = 0;
    for (int r = 0; r < P && self_r < 0; r++)
        for (int i = 0; i < res->traces[r].n; i++)
            if (res->traces[r].ev[i].op == PP_OP_SEND && res->traces[r].ev[i].peer == r) self_r = r, self_n++;
    char expected[48] = "";
    if (!run->secret) snprintf(expected, sizeof expected, ", expected %d", want);
    if (sent != want && self_r >= 0)
        pp__check_add(run->out, gate_names[4], PP_PTS_MESSAGES, 0, "%d boundary messages sent%s: rank %d sent %d to "
                      "itself; two virtual stages on one rank need no message: pass the output straight into the "
                      "next op", sent, expected, self_r, self_n);
    else if (sent == want)
        pp__check_add(run->out, gate_names[4], PP_PTS_MESSAGES, 1, "%d boundary messages sent: one per micro-batch, "
                      "direction and boundary between two ranks", sent);
    else
        pp__check_add(run->out, gate_names[4], PP_PTS_MESSAGES, 0, "%d boundary messages sent%s: each activation and "
                      "each gradient crosses each boundary between two ranks exactly once", sent, expected);
}

/* Recomputation's memory: M stage inputs plus one stage's worth of activations being rebuilt, against the same
 * schedule run without it (plain). */
static void check_recompute(run_checks *run, const pp_run_result *plain) {
    const pp_run_result *res = run->res;
    pp_test_result *out = run->out;
    char lim_txt[48];
    int ok = plain && plain->status == PP_OK, r_bad = 0, d;
    size_t limit = 0;
    for (int r = 0; ok && r < run->c->P; r++) {
        size_t lim = (size_t)(out->peak_bound[r] - 1) * res->act_bytes + res->peak_single[r];
        if (res->peak_bytes[r] > lim) ok = 0, r_bad = r, limit = lim;
    }
    if (ok)
        pp__check_add(out, "recomputation memory", PP_PTS_RECOMPUTE, 1, "peak stash memory on rank 0: %zu KiB "
                      "with recomputation, %zu KiB without", res->peak_bytes[0] / 1024, plain->peak_bytes[0] / 1024);
    else if (!plain)
        pp__check_add(out, "recomputation memory", PP_PTS_RECOMPUTE, 0, "the run without recomputation left "
                      "no report (this is a bug in pplab, or the machine ran out of disk)");
    else if (plain->status != PP_OK)
        /* the same step function failed only without recomputation: its own error says where */
        pp__check_add(out, "recomputation memory", PP_PTS_RECOMPUTE, 0, "the run without recomputation failed: "
                      "%s", plain->error);
    else if ((d = first_deferred_weight(res, r_bad)) >= 0)
        /* the stashes were checkpointed; a weight half run later keeps its rebuilt stash whole until then */
        pp__check_add(out, "recomputation memory", PP_PTS_RECOMPUTE, 0, "rank %d defers the weight half of "
                      "micro-batch %d: a rebuilt stash stays whole until its weight half runs, so rank %d peaked "
                      "at %zu KiB of stashes, over its limit%s; with recomputation run pp_stage_backward_weight "
                      "right after pp_stage_backward_input", r_bad, res->traces[r_bad].ev[d].mb, r_bad,
                      res->peak_bytes[r_bad] / 1024, kib(limit, out->cfg.secret, lim_txt, sizeof lim_txt));
    else
        pp__check_add(out, "recomputation memory", PP_PTS_RECOMPUTE, 0, "rank %d peaked at %zu KiB of stashes with "
                      "recomputation on, over its limit%s (the inputs of all but one live stash, plus one stash "
                      "rebuilt for its backward): call pp_stash_checkpoint right after each forward when "
                      "pp_rank_recompute(r)", r_bad, res->peak_bytes[r_bad] / 1024,
                      kib(limit, out->cfg.secret, lim_txt, sizeof lim_txt));
}

void pp__checks_run(const pp_run_config *c, const pp_run_result *res, const pp_run_result *plain,
                    const pp_reference *ref, pp_test_result *out) {
    run_checks run = {.c = c, .res = res, .ref = ref, .out = out, .secret = out->cfg.secret};
    /* an op run twice or never is the cause of what it breaks (gradients, the loss): found first */
    run.own = check_one_f_one_b(c, res, run.own_msg, sizeof run.own_msg) == 0;
    double *err = pp__xcalloc((size_t)res->nparams + 1, sizeof *err);
    if (!check_gradients(&run, err)) {
        free(err);
        add_gated(c, out, "the gradients must be right first");
        return;
    }
    check_weights(&run, err);
    free(err);
    pp__check_add(out, gate_names[1], PP_PTS_ONE_F_ONE_B, run.own, "%s", run.own ? "each micro-batch ran exactly one F "
                  "and one B on each virtual stage, on the rank that owns it" : run.own_msg);
    check_bubble(&run);
    check_peak(&run);
    check_messages(&run);
    pp__checks_dp(c, res, out);
    pp__checks_tp(c, res, out);
    pp__checks_grid(c, res, out);
    if (c->recompute) check_recompute(&run, plain);
}

void pp__checks_failed_run(const pp_run_config *c, pp_status st, const char *error, const pp_trace *traces,
                           const int *waiting, pp_test_result *out) {
    char why[96];
    snprintf(why, sizeof why, "the run failed (%s)", pp__status_str(st));
    pp__check_add(out, "gradients", PP_PTS_GRADS, 0, "not graded: %s", why);
    add_gated(c, out, why);
    out->status = st;
    /* the error alone: a run that failed has no bubble or peak to fall short of, and naming the canonical order's
     * op where it stopped would let a failing run read the order off the grader */
    (void)traces, (void)waiting;
    snprintf(out->error, sizeof out->error, "%s", error);
}
