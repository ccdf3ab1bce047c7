/* checks_dp.c: lab 07's checks. A reduce is read off the traces (where it was called among the rank's ops, and
 * when it ran on the lane), never off the student's text; the theory is the canonical order replayed with the
 * run's costs (grader/theory/exposed.c), and a run that exposes less keeps its points. */
#include "checks_dp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exposed.h"
#include "schedules.h"

int pp__checks_dp_applies(const pp_run_config *c) {
    const pp_schedule_def *d = c->schedule;
    return d && d->reduce != PP_REDUCE_NONE;
}

/* Reduces of `chunk` in traces[q]. */
static int reduces_of(const pp_trace *t, int chunk) {
    int n = 0;
    for (int i = 0; i < t->n; i++) n += t->ev[i].op == PP_OP_REDUCE && t->ev[i].chunk == chunk;
    return n;
}

/* A backward op of the chunk after its reduce on rank q: its micro-batch into *mb, else -1. */
static int backward_after_reduce(const pp_trace *t, int chunk, int *mb) {
    int reduced = 0;
    for (int i = 0; i < t->n; i++) {
        const pp_event *e = &t->ev[i];
        if (e->chunk != chunk) continue;
        if (e->op == PP_OP_REDUCE) reduced = 1;
        else if (reduced && (e->op == PP_OP_B || e->op == PP_OP_W)) return *mb = e->mb, 1;
    }
    return 0;
}

/* The first rank and chunk with no reduce, or with a backward after its reduce; 0 when none. */
static int find_missing(const pp_run_config *c, const pp_run_result *res, int *q, int *chunk) {
    for (*q = 0; *q < res->P; (*q)++)
        for (*chunk = 0; *chunk < c->v; (*chunk)++)
            if (reduces_of(&res->traces[*q], *chunk) == 0) return 1;
    return 0;
}

static int find_early(const pp_run_config *c, const pp_run_result *res, int *q, int *chunk, int *mb) {
    for (*q = 0; *q < res->P; (*q)++)
        for (*chunk = 0; *chunk < c->v; (*chunk)++)
            if (backward_after_reduce(&res->traces[*q], *chunk, mb)) return 1;
    return 0;
}

int pp__checks_dp_diagnose(const pp_run_config *c, const pp_run_result *res, const pp_reference *ref, char *msg,
                           size_t len) {
    if ((!pp__checks_dp_applies(c) && !pp__config_dual(c)) || !res->traces) return 0;
    int P = c->P, q, ch, mb;
    /* DualPipe's copies: a reduce sums a stage's two, so the same two mistakes read as a stage's, not a replica's */
    if (pp__config_dual(c) && find_early(c, res, &q, &ch, &mb)) {
        snprintf(msg, len, "rank %d reduced chunk %d before its last backward: the backward of micro-batch %d ran "
                 "after the reduce, so its gradient stayed out of the copies' sum (reduce a chunk once its last "
                 "backward is done)", q, ch, mb);
        return 1;
    }
    if (pp__config_dual(c) && find_missing(c, res, &q, &ch)) {
        int s = pp__config_stage(c, pp__config_vstage(c, q, ch));
        snprintf(msg, len, "rank %d never reduced chunk %d (pp_grad_reduce): its copy of stage %d stepped on its own "
                 "pipeline's micro-batches alone, and rank %d's copy on the other half (sum the two copies' gradients "
                 "before the optimizer step)", q, ch, s, c->P - 1 - q);
        return 1;
    }
    if (pp__config_dual(c)) return 0;
    if (find_early(c, res, &q, &ch, &mb)) {
        snprintf(msg, len, "rank %d of replica %d reduced chunk %d before its last backward: the backward of "
                 "micro-batch %d ran after the reduce, so its gradient stayed out of the sum (start a chunk's reduce "
                 "once its last backward is done)", q % P, q / P, ch, mb);
        return 1;
    }
    if (c->D > 1 && find_missing(c, res, &q, &ch)) {
        int d = res->replica_differs ? res->replica_differs : 1;
        snprintf(msg, len, "replica %d's weights differ from replica 0's: rank %d of replica %d never reduced chunk "
                 "%d (pp_grad_reduce), so each replica stepped on its own micro-batches' gradients", d, q % P, q / P,
                 ch);
        return 1;
    }
    /* the gradients as a multiple of the full batch's: 1/D is a second scale, D the missing one */
    double dot = 0, rr = 0;
    for (int i = 0; i < res->nparams && i < ref->nparams; i++)
        for (int k = 0; k < res->params[i].count; k++)
            dot += (double)res->params[i].grad[k] * ref->params[i].grad[k],
                rr += (double)ref->params[i].grad[k] * ref->params[i].grad[k];
    if (rr <= 0 || c->D < 2) return 0;
    double ratio = dot / rr, off = 0;
    for (int i = 0; i < res->nparams && i < ref->nparams; i++)
        for (int k = 0; k < res->params[i].count; k++) {
            double e = res->params[i].grad[k] - ratio * ref->params[i].grad[k];
            off += e * e;
        }
    if (sqrt(off / rr) / fabs(ratio) > 1e-3) return 0;
    if (fabs(ratio * c->D - 1) < 1e-3)
        snprintf(msg, len, "the gradients are 1/%d of the full batch's: the loss is scaled twice for the replicas "
                 "(pp_grad_reduce sums; scale the loss by 1/(D*M) once, and do not divide the sum again)", c->D);
    else if (fabs(ratio / c->D - 1) < 1e-3)
        snprintf(msg, len, "the gradients are %d times the full batch's: pp_grad_reduce sums the %d replicas, so "
                 "scale the loss by 1/(D*M), not 1/M", c->D, c->D);
    else
        return 0;
    return 1;
}

void pp__checks_dp_gated(const pp_run_config *c, pp_test_result *out, const char *why) {
    if (!pp__checks_dp_applies(c)) return;
    pp__check_add(out, "gradient reduces", PP_PTS_REDUCE, 0, "not graded: %s", why);
    pp__check_add(out, "exposed communication", PP_PTS_EXPOSED, 0, "not graded: %s", why);
}

#define PP_EXPOSED_TOL 1e-9

void pp__checks_dp(const pp_run_config *c, const pp_run_result *res, pp_test_result *out) {
    if (!pp__checks_dp_applies(c)) return;
    int P = c->P, q, ch, mb, n = 0, many = -1;
    for (int i = 0; i < res->P; i++)
        for (int k = 0; k < c->v; k++) {
            int got = reduces_of(&res->traces[i], k);
            n += got;
            if (got > 1 && many < 0) many = i * c->v + k;
        }
    if (find_early(c, res, &q, &ch, &mb))
        pp__check_add(out, "gradient reduces", PP_PTS_REDUCE, 0, "rank %d of replica %d reduced chunk %d before its "
                      "last backward (micro-batch %d's backward ran after it)", q % P, q / P, ch, mb);
    else if (find_missing(c, res, &q, &ch))
        pp__check_add(out, "gradient reduces", PP_PTS_REDUCE, 0, "rank %d of replica %d never reduced chunk %d: one "
                      "reduce per chunk per step%s", q % P, q / P, ch, c->D == 1 ? " (free at D = 1, but at D > 1 "
                      "the replicas would drift apart)" : "");
    else if (many >= 0)
        pp__check_add(out, "gradient reduces", PP_PTS_REDUCE, 0, "rank %d of replica %d reduced chunk %d more than "
                      "once: one reduce per chunk per step", (many / c->v) % P, (many / c->v) / P, many % c->v);
    else if (res->replica_differs)
        pp__check_add(out, "gradient reduces", PP_PTS_REDUCE, 0, "replica %d's weights differ from replica 0's (%s "
                      "on rank %d)", res->replica_differs, res->replica_param, res->replica_rank);
    else
        pp__check_add(out, "gradient reduces", PP_PTS_REDUCE, 1, "%d reduces, one per chunk per rank, each after the "
                      "chunk's last backward; the %d replica%s weights agree bit for bit", n, c->D,
                      c->D == 1 ? "'s" : "s'");
    /* exposed communication: the step past the same order with a free reduce, against the canonical order's */
    int formula;
    double theory = pp__theory_exposed(c, &formula), free_span = pp__run_free_span(c, res->traces);
    if (free_span < 0) free_span = res->makespan;
    double exposed = res->step_time - free_span;
    out->exposed = exposed;
    out->exposed_theory = theory;
    const char *how = formula ? "formula" : "replay of the canonical order";
    if (exposed < theory - PP_EXPOSED_TOL) {
        pp_check *k = pp__check_add(out, "exposed communication", PP_PTS_EXPOSED, 1, "%.4g measured, below the "
                                    "canonical order's %.4g (%s)", exposed, theory, how);
        k->better = 1;
    } else if (exposed <= theory + PP_EXPOSED_TOL) {
        pp__check_add(out, "exposed communication", PP_PTS_EXPOSED, 1, "%.4g measured, %.4g in theory (%s)", exposed,
                      theory, how);
    } else {
        pp__check_add(out, "exposed communication", PP_PTS_EXPOSED, 0, "%.4g measured, %.4g in theory (%s): the step "
                      "runs %.4g longer than its own order with a free reduce, the canonical order %.4g; where a "
                      "reduce is called matters: start each chunk's as soon as its last backward is done and wait for "
                      "it only before the optimizer step", exposed, theory, how, exposed, theory);
    }
}
