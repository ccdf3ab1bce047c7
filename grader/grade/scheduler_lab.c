/* scheduler_lab.c: lab 09's kind. Its supervisor asks a driver of the student's file for one order, the answer of
 * pp_scheduler_order to the test's problem (the calls' channel the warm-up uses, warmup_io.h); the grader reads the
 * order back and grades it: a valid order (sched_problem.h's checks), the cap held at every instant, the gradients of the
 * order run on the model (where this build has the order interpreter) against full-batch training, and its makespan
 * on the virtual clock against the references (canonical orders that hold the cap, the kit's heuristic, the
 * optimum). No reference process runs beside it: a test's full-batch reference is computed here, and only for a
 * valid order. */
#include "scheduler_lab.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "order_csv.h"
#include "order_interp.h"
#include "reference.h"
#include "result.h"
#include "runtime.h"
#include "testcfg.h"
#include "warmup_io.h"

/* The most bytes of order text a file may write: P = 8 ranks of 3 ops per micro-batch and stage at M = 64, v = 2 need
 * about 27 KiB. */
#define TEXT_CAP (32 * 1024)

/* The points of each check; the bubble's rise from the floor to the best known. */
#define PTS_ORDER 3
#define PTS_CAP 2
#define PTS_GRADS 2
#define PTS_BUBBLE 5
#define FLOOR_SHARE 0.2 /* of the bubble's points: valid and no slower than the floor */
#define NEAR_BEST 1.01  /* within 1% of the best known: every point */

int pp__scheduler_problem(const pp_test_config *tc, pp_sched_problem *pb, pp_run_config *rc, char *err, size_t len) {
    /* the run that prices the problem: one stage per rank with split backwards, or two in a V */
    pp_test_config as = *tc;
    snprintf(as.lab, sizeof as.lab, "%s", tc->v == 2 ? "zbv" : "zbh1");
    pp__test_to_run(&as, "cpu", rc);
    if (tc->v != 1 && tc->v != 2) {
        snprintf(err, len, "v=%d: lab 09 places one stage per rank (v=1) or two in a V (v=2)", tc->v);
        return -1;
    }
    char why[512];
    if (pp__config_check(rc, why, sizeof why)) {
        snprintf(err, len, "%s", why);
        return -1;
    }
    memset(pb, 0, sizeof *pb);
    pb->P = rc->P, pb->M = rc->M, pb->v = rc->v;
    pb->latency = rc->comm_latency;
    /* no cap given: the one 1F1B (one stage per rank) or ZBV (a V) holds on its first rank */
    pb->cap = tc->cap > 0 ? tc->cap : rc->P * rc->v;
    pp_costs k;
    pp__costs_from_config(&k, rc);
    for (int s = 0; s < pb->P * pb->v && s < PP_SCHED_MAX_VS; s++) {
        pb->f[s] = k.f[s];
        pb->i[s] = k.bi ? k.bi[s] : k.b[s] / 2;
        pb->w[s] = k.b[s] - pb->i[s];
    }
    pp__costs_free(&k);
    return pp__sched_problem_check(pb, err, len);
}

/* One call of pp_scheduler_order, the same in the supervisor (live) and in the grader (replayed). */
typedef struct order_ask {
    pp_sched_problem pb;
    int missing, ret;
    char text[TEXT_CAP + 64]; /* the rest past TEXT_CAP: a guard the function is not offered */
} order_ask;

static int ask_order(pp_warmup_io *io, void *arg) {
    order_ask *a = arg;
    if (setjmp(io->failed)) return -1;
    if (setjmp(io->missing)) {
        a->missing = 1;
        return 0;
    }
    a->ret = pp__warmup_ask_scheduler(io, &a->pb, a->text, sizeof a->text, TEXT_CAP);
    return 0;
}

static int scheduler_execute(const pp_lab_task *t) {
    order_ask *a = pp__xcalloc(1, sizeof *a);
    char err[600];
    if (pp__scheduler_problem(t->tc, &a->pb, &(pp_run_config){0}, err, sizeof err)) a->pb.P = 0; /* graded as such */
    int rc = pp__calls_lab_execute(t, ask_order, a, "lab 09's");
    free(a);
    return rc;
}

static void checks_total(pp_test_result *out) {
    out->score = out->max = 0;
    for (int i = 0; i < out->nchecks; i++) out->score += out->checks[i].points, out->max += out->checks[i].max;
}

/* Every check at 0 with msg: a test that could not be graded as a whole keeps the lab's full weight. */
static void scheduler_fail(const pp_test_config *tc, pp_status st, const char *msg, pp_test_result *out) {
    out->cfg = *tc;
    out->status = st;
    snprintf(out->error, sizeof out->error, "%s", msg);
    out->nchecks = 0;
    pp__check_add(out, "valid order", PTS_ORDER, 0, "not graded: %s", msg);
    pp__check_add(out, "memory cap", PTS_CAP, 0, "not graded");
    if (pp__order_interp_built) pp__check_add(out, "gradients", PTS_GRADS, 0, "not graded");
    pp__check_add(out, "bubble", PTS_BUBBLE, 0, "not graded");
    checks_total(out);
}

/* The order run on the model: its gradients against full-batch training. 1 when they agree; 0 with why. */
static int order_trains(const pp_run_config *rc0, const pp_schedule *s, char *why, size_t len) {
    pp_run_config rc = *rc0;
    pp_run_result res;
    pp__order_interp_set(s);
    pp__run(&rc, pp__order_interp_step, &res);
    pp__order_interp_set(NULL);
    int ok = 0;
    if (res.status != PP_OK) {
        snprintf(why, len, "the order failed on the model: %s", res.error);
    } else {
        pp_reference ref;
        char err[600];
        if (pp__reference_run(&rc, 0, &ref, err, sizeof err)) {
            snprintf(why, len, "the full-batch reference failed: %s", err);
        } else {
            ok = pp__checks_grads_ok(&res, &ref);
            snprintf(why, len, ok ? "the order run on the model gives full-batch training's gradients"
                                  : "the order run on the model does not give full-batch training's gradients");
            pp__reference_free(&ref);
        }
    }
    pp__result_free(&res);
    return ok;
}

/* Where an order's makespan stands against the references, into buf. */
static void standing(const pp_sched_refs *r, const pp_sched_measure *m, char *buf, size_t len) {
    size_t n = (size_t)snprintf(buf, len, "makespan %.4g (bubble %.3f):", m->makespan, m->bubble);
    for (int k = 0; k < r->n; k++)
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " %s %.4g,", r->name[k], r->makespan[k]);
    int listed = 0; /* the floor, when it is none of the canonical orders above */
    for (int k = 0; k < r->n; k++) listed |= !strcmp(r->name[k], r->floor_name);
    if (!listed) n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " %s %.4g,", r->floor_name, r->floor);
    if (r->greedy > 0) n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " the kit's heuristic %.4g,", r->greedy);
    if (r->optimum > 0)
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " optimum %.4g (%.1f%% above it);", r->optimum,
                              100 * (m->makespan / r->optimum - 1));
    else
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " no optimum known, best known %.4g;", r->best);
    snprintf(buf + n, n < len ? len - n : 0, " longest wait: rank %d, %.4g units from t=%.4g", m->idle_rank,
             m->idle_len, m->idle_at);
}

/* The bubble's points: none above the floor, FLOOR_SHARE at it, rising linearly to all of them within NEAR_BEST of
 * the best known. */
static double bubble_points(double makespan, const pp_sched_refs *r) {
    double top = NEAR_BEST * r->best;
    if (makespan > r->floor * (1 + 1e-9)) return 0;
    if (makespan <= top * (1 + 1e-9) || r->floor <= top) return PTS_BUBBLE;
    return PTS_BUBBLE * (FLOOR_SHARE + (1 - FLOOR_SHARE) * (r->floor - makespan) / (r->floor - top));
}

void pp__scheduler_grade_text(const pp_test_config *tc, int missing, int ret, const char *text, pp_test_result *out) {
    pp_sched_problem pb;
    pp_run_config rc;
    char err[1200], msg[1200];
    out->cfg = *tc;
    out->status = PP_OK;
    if (pp__scheduler_problem(tc, &pb, &rc, err, sizeof err)) return scheduler_fail(tc, PP_ERR_CONFIG, err, out);
    pp_sched_refs refs;
    if (pp__sched_refs(&pb, 1, &refs, err, sizeof err)) return scheduler_fail(tc, PP_ERR_CONFIG, err, out);
    if (missing)
        return scheduler_fail(tc, PP_OK, "09-scheduler/scheduler.c (in the graded folder) does not define "
                              "pp_scheduler_order: keep the function's name and signature from the handout", out);
    pp_schedule s = {0};
    int valid = -1;
    pp_sched_measure m;
    if (ret < 0) {
        snprintf(msg, sizeof msg, ret == -2 ? "the order's answer did not come back whole" :
                 "pp_scheduler_order returned %d: it found no order (or it did not fit in the %d bytes offered)",
                 ret, TEXT_CAP);
    } else if (pp__order_csv_parse("the order", text, strlen(text), pb.v == 2, &s, err, sizeof err)) {
        snprintf(msg, sizeof msg, "%s", err);
        memset(&s, 0, sizeof s);
    } else {
        valid = pp__sched_verify(&pb, &s, &m, err, sizeof err);
        snprintf(msg, sizeof msg, "%s", valid < 0 ? err : "every micro-batch's F, I and W once, in dependency order, "
                 "with no deadlock");
    }
    pp__check_add(out, "valid order", PTS_ORDER, valid >= 0, "%s", msg);
    if (valid < 0) {
        pp__check_add(out, "memory cap", PTS_CAP, 0, "not checked: the order is not valid");
    } else {
        int peak = 0;
        for (int r = 0; r < pb.P; r++) peak = m.peak[r] > peak ? m.peak[r] : peak;
        out->bubble = m.bubble;
        for (int r = 0; r < pb.P && r < PP_MAX_RANKS; r++) out->peak[r] = m.peak[r], out->peak_bound[r] = pb.cap;
        pp__check_add(out, "memory cap", PTS_CAP, valid == 0, "%s",
                      valid == 0 ? (snprintf(msg, sizeof msg, "at most %d stashes on a rank, cap %d", peak, pb.cap), msg)
                                 : err);
    }
    if (pp__order_interp_built) {
        if (valid < 0) pp__check_add(out, "gradients", PTS_GRADS, 0, "not run: the order is not valid");
        else pp__check_add(out, "gradients", PTS_GRADS, order_trains(&rc, &s, msg, sizeof msg), "%s", msg);
    }
    if (valid != 0) {
        pp__check_add(out, "bubble", PTS_BUBBLE, 0, "not graded: the order must be valid and hold the cap");
    } else {
        double pts = bubble_points(m.makespan, &refs);
        standing(&refs, &m, msg, sizeof msg);
        pp_check *c = pp__check_add(out, "bubble", PTS_BUBBLE, pts >= PTS_BUBBLE, "%s", msg);
        c->points = pts;
        out->theory = refs.best > 0 ? 1 - (m.makespan * (1 - m.bubble)) / refs.best : 0;
    }
    if (s.ops) pp__schedule_free(&s);
    checks_total(out);
}

static void scheduler_grade(const pp_lab_task *t, pp_test_result *out) {
    const void *rec = NULL;
    size_t n = 0;
    char err[1200];
    unsigned char *buf = pp__calls_lab_read(t, &rec, &n, "lab 09's", out);
    if (!buf) return;
    order_ask *a = pp__xcalloc(1, sizeof *a);
    pp_warmup_io *io = pp__xcalloc(1, sizeof *io);
    pp__wire_in_init(&io->in, rec, n);
    if (pp__scheduler_problem(t->tc, &a->pb, &(pp_run_config){0}, err, sizeof err)) {
        scheduler_fail(t->tc, PP_ERR_CONFIG, err, out);
    } else if (ask_order(io, a)) {
        scheduler_fail(t->tc, io->st, io->err, out);
    } else {
        pp__scheduler_grade_text(t->tc, a->missing, a->ret, a->text, out);
    }
    free(io);
    free(a);
    free(buf);
}

const pp_lab_kind pp__scheduler_lab = {
    .reference = 0,
    .ranks = pp__calls_lab_ranks,
    .wait_s = pp__calls_lab_wait_s,
    .execute = scheduler_execute,
    .timed_out = pp__calls_lab_timed_out,
    .grade = scheduler_grade,
    .fail = scheduler_fail,
};
