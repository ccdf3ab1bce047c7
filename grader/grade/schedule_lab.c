/* schedule_lab.c: the kind of every schedule's lab: its supervisor runs the student's step function on P*D
 * ranks (threads serving drivers, or mpirun's processes), its file is the run's raw results, and the grader
 * checks them against the full-batch reference that a reference process computes beside the run. */
#include "schedule_lab.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"
#include "host.h"
#include "memlimit.h"
#include "mpirun.h"
#include "plot.h"
#include "refproc.h"
#include "result.h"
#include "resultfile.h"
#include "runopts.h"
#include "replay.h"
#include "testcfg.h"
#include "tracefile.h"
#include "transport.h"

/* pp_program.on_ready under mpirun: rank 0 says that every rank is set up, by creating the file named arg. */
static void ready_touch(void *arg) {
    int fd = open((const char *)arg, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
}

int pp__schedule_lab_execute(const pp_lab_info *lab, const pp_test_config *tc, const pp_impl *impl, const char *backend,
                              const char *transport, double deadline_s, int plain, uint64_t token, const char *path) {
    pp_run_config rc;
    pp__test_to_run(tc, backend, &rc);
    rc.transport = transport;
    if (deadline_s > 0) rc.deadline_s = deadline_s;
    if (plain) rc.recompute = 0;
    pp_sandbox sb = *pp__runopts_sandbox();
    sb.cpu_limit_s = pp__test_limit_s(tc);
    pp__sandbox_size_tasks(&sb, rc.P);
    pp_program prog = {.sandbox = &sb, .symbol = lab->symbol};
    char ready[PATH_MAX];
    int procs = (pp__transport_caps(transport) & PP_TRANSPORT_PROCESSES) != 0; /* rank 0's process writes */
    if (procs) {
        snprintf(ready, sizeof ready, "%s.ready", path);
        prog.on_ready = ready_touch, prog.ready_arg = ready;
    }
    char err[1024] = "";
    if (pp__runopts_in_process()) {
        prog.sandbox = NULL;
        pp__impl_program(impl, lab, &prog, err, sizeof err);
    } else {
        pp__host_open(&sb, impl->driver, impl->object, err, sizeof err);
    }
    pp_run_result res;
    if (err[0]) {
        memset(&res, 0, sizeof res);
        res.status = PP_ERR_IO;
        res.P = rc.P, res.v = rc.v;
        snprintf(res.error, sizeof res.error, "%s", err);
    } else {
        pp__run_program(&rc, &prog, &res);
    }
    pp__host_close(&sb);
    int rc_w = 0;
    if (!procs || pp__mpi_env_rank() == 0) rc_w = pp__resultfile_put_run(path, token, &res, rc.steps) ? 1 : 0;
    pp__result_free(&res);
    return rc_w;
}

/* The student's timeline above the canonical one, as plot_dir/<test name>.png, and the run's trace as
 * plot_dir/<test name>.json (Trace Event Format). */
static void plot_pair(const pp_run_config *rc, const pp_run_result *res, const char *name) {
    pp_schedule s;
    pp_costs k;
    if (pp__schedule_build(&s, rc->schedule->name, rc->P, rc->M, rc->v)) return;
    pp__costs_from_config(&k, rc);
    pp_trace *ideal = pp__xcalloc((size_t)rc->P, sizeof *ideal);
    if (pp__schedule_trace(&s, &k, ideal) >= 0) {
        char prefix[1024];
        int n = snprintf(prefix, sizeof prefix, "%s/", pp__runopts_plot_dir());
        /* a file name without spaces, '=' or the ':' of "hidden: " */
        for (const char *p = name; *p && n < (int)sizeof prefix - 1; p++)
            if (*p != ':') prefix[n++] = *p == ' ' ? '_' : *p == '=' ? '-' : *p;
        prefix[n] = 0;
        /* the run's lanes (a lane per shard under --tp) above the canonical replay's: one pipeline of shard 0,
         * on the run's nodes */
        pp_run_result replay = {.P = rc->P, .D = 1, .traces = ideal};
        pp_lanes_src src, ref;
        pp__lanes_src_of(&src, res, rc);
        pp__lanes_src_of(&ref, &replay, rc); /* no other shard's trace: shard 0's lanes alone */
        pp__plot_gantt_pair_lanes(&src, &ref, prefix);
        /* and the run itself, for ui.perfetto.dev */
        char json[1100], err[512];
        snprintf(json, sizeof json, "%s.json", prefix);
        if (pp__tracefile_write_lanes(&src, json, err, sizeof err))
            fprintf(stderr, "pplab grade: cannot write %s: check the --plot-dir folder is writable\n", json);
        pp__lanes_src_free(&ref);
        pp__lanes_src_free(&src);
    }
    for (int r = 0; r < rc->P; r++) pp__trace_clear(&ideal[r]);
    free(ideal);
    pp__costs_free(&k);
    pp__schedule_free(&s);
}

static void schedule_fail(const pp_test_config *tc, pp_status st, const char *msg, pp_test_result *out) {
    pp_run_config rc;
    pp__test_to_run(tc, "cpu", &rc);
    pp__checks_failed_run(&rc, st, msg, NULL, NULL, out);
}

void pp__schedule_lab_check(const pp_run_config *rc, const pp_run_result *res, const pp_run_result *plain,
                            pp_reference *given, pp_test_result *out) {
    char err[1024];
    pp_run_config canon = *rc;
    canon.place = NULL; /* a grid lab's step is held to the canonical placement's */
    if (!pp__theory_held(&canon)) {
        /* no canonical answers to grade against (a handout's unrecorded configuration): cmd_grade refuses these
         * before they run; a run graded here anyway is not graded */
        pp__checks_failed_run(rc, PP_ERR_CONFIG, pp__theory_unheld(&canon, err, sizeof err), NULL, NULL, out);
        return;
    }
    if (res->status != PP_OK) {
        pp__checks_failed_run(rc, res->status, res->error, res->traces, res->waiting_tag, out);
        out->crashed = res->status == PP_ERR_CRASH;
        return;
    }
    out->bubble = res->bubble;
    if (pp__checks_zero_grads(rc, res, out)) return;
    /* the micro-batches' own gradients only serve to diagnose wrong gradients: compute them only then */
    pp_reference ref;
    int failed = 0;
    if (given) {
        ref = *given;
        memset(given, 0, sizeof *given);
    } else {
        failed = pp__reference_run(rc, 0, &ref, err, sizeof err);
    }
    if (!failed && !pp__checks_grads_ok(res, &ref)) {
        pp__reference_free(&ref);
        failed = pp__reference_run(rc, 1, &ref, err, sizeof err);
    }
    if (failed) {
        pp__checks_failed_run(rc, PP_ERR_BACKEND, err, NULL, NULL, out);
    } else {
        pp__checks_run(rc, res, plain, &ref, out);
        pp__reference_free(&ref);
    }
}

/* A test's checks, and the timeline picture when a plot folder is set. */
static void check_run(const pp_test_config *tc, const pp_run_config *rc0, const pp_run_result *res,
                      const pp_run_result *plain, pp_reference *given, pp_test_result *out) {
    /* the grid lab's run was placed by the submission's mapping: its replays price the same links */
    pp_run_config placed = *rc0;
    if (res->place && res->nplace == pp__config_world(rc0)) placed.place = res->place;
    const pp_run_config *rc = &placed;
    if (res->status == PP_OK && pp__runopts_plot_dir()) {
        char name[96];
        pp__test_name(tc, name, sizeof name);
        plot_pair(rc, res, name);
    }
    pp__schedule_lab_check(rc, res, plain, given, out);
}

/* The results of a run, read from the supervisor's file and graded here. */
static void schedule_grade(const pp_lab_task *t, pp_test_result *out) {
    const pp_test_config *tc = t->tc;
    pp_run_config rc;
    pp__test_to_run(tc, "cpu", &rc);
    pp_run_result res, plain;
    int ok = pp__resultfile_get_run(t->res_path, t->token, rc.P * rc.D, rc.v, rc.steps, &res) == 0, have_plain = 0;
    if (ok && tc->recompute && res.status == PP_OK)
        have_plain = pp__resultfile_get_run(t->plain_path, t->token, rc.P * rc.D, rc.v, rc.steps, &plain) == 0;
    pp_reference ref = {0}; /* stays empty when the run failed and no reference is read */
    char err[1400] = "";
    pp_status ref_st = PP_OK;
    /* a failed run needs no reference (the runner stops it) */
    int got = ok && res.status == PP_OK ? pp__refproc_read(t->ref, t->token, rc.steps, &ref, &ref_st, err, sizeof err) : 0;
    if (!ok) {
        char why[1200];
        schedule_fail(tc, PP_ERR_INTERNAL,
                      pp__memlimit_why_no_result(t->res_path, "the test's supervisor ended without a report of its "
                                                 "run: this is a bug in pplab, or the machine ran out of memory or disk",
                                                 why, sizeof why),
                      out);
    } else if (got < 0 && res.status == PP_OK) {
        pp__checks_failed_run(&rc, ref_st, err, NULL, NULL, out);
        pp__result_free(&res);
        if (have_plain) pp__result_free(&plain);
    } else {
        check_run(tc, &rc, &res, have_plain ? &plain : NULL, got > 0 ? &ref : NULL, out);
        pp__reference_free(&ref);
        pp__result_free(&res);
        if (have_plain) pp__result_free(&plain);
    }
}

/* 1 when the supervisor recorded that its run outlived the time limit (under mpirun, whose start-up the
 * supervisor leaves out of the limit). */
static int schedule_timed_out(const pp_lab_task *t) {
    if (!pp__runopts_mpi_exe()) return 0;
    pp_run_result res;
    pp_run_config rc;
    pp__test_to_run(t->tc, "cpu", &rc);
    if (pp__resultfile_get_run(t->res_path, t->token, rc.P * rc.D, rc.v, rc.steps, &res)) return 0;
    int over = res.status == PP_ERR_TIMEOUT;
    pp__result_free(&res);
    return over;
}

static int schedule_ranks(const pp_test_config *tc) { return tc->P > 0 && tc->P <= PP_MAX_RANKS ? tc->P : PP_MAX_RANKS; }

/* Under mpirun the supervisor holds the limit from the ranks' start (mpirun.c); the grader only stops a
 * supervisor that never ends. */
static double schedule_wait_s(const pp_test_config *tc) {
    if (pp__runopts_mpi_exe()) return pp__mpirun_wait_s(tc);
    return pp__test_limit_s(tc);
}

/* The graded run and, for recomputation, the same run without it, whose memory the check compares. */
static int schedule_execute(const pp_lab_task *t) {
    pp__resultfile_fatal_to(t->tc, t->token, t->res_path, PP_RESULTFILE_RUN);
    if (pp__runopts_mpi_exe()) {
        pp__mpirun_execute(t->tc, t->impl, t->backend, t->token, t->res_path, t->plain_path);
        return 0;
    }
    int rc = pp__schedule_lab_execute(t->lab, t->tc, t->impl, t->backend, "threads", 0, 0, t->token, t->res_path);
    if (t->tc->recompute)
        rc |= pp__schedule_lab_execute(t->lab, t->tc, t->impl, t->backend, "threads", 0, 1, t->token, t->plain_path);
    return rc;
}

const pp_lab_kind pp__schedule_lab = {
    .reference = 1,
    .ranks = schedule_ranks,
    .wait_s = schedule_wait_s,
    .execute = schedule_execute,
    .timed_out = schedule_timed_out,
    .grade = schedule_grade,
    .fail = schedule_fail,
};
