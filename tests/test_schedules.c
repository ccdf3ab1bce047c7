/* test_schedules.c: properties every row of the schedule table (lib/schedules.c) must have, checked for every row
 * at every configuration its own rules allow up to P = 8, M = 4P, v = 4: each rank's canonical order runs one
 * forward and one backward per micro-batch and chunk, each backward after its forward, and the stash bound the
 * row states is the peak its own order reaches. A new row is held to them without a test of its own. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "schedules.h"

/* 0 when (P, M, v) is a configuration the row allows (config.c's check, which reads the same row). */
static int allowed(const pp_schedule_def *d, int P, int M, int v) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = d->name, c.P = P, c.M = M, c.v = v;
    char err[256];
    return pp__config_check(&c, err, sizeof err);
}

static void check_order(const pp_schedule_def *d, int P, int M, int v) {
    pp_sched_op *ops = calloc((size_t)(2 * M * v), sizeof *ops);
    char *fwd = calloc((size_t)(M * v), 1), *bwd = calloc((size_t)(M * v), 1);
    for (int r = 0; r < P; r++) {
        memset(fwd, 0, (size_t)(M * v));
        memset(bwd, 0, (size_t)(M * v));
        int n = d->order(P, M, v, r, ops), live = 0, peak = 0;
        cr_expect_eq(n, 2 * M * v, "%s P=%d M=%d v=%d rank %d: %d ops, expected 2Mv = %d", d->name, P, M, v, r, n,
                     2 * M * v);
        for (int i = 0; i < n; i++) {
            const pp_sched_op *o = &ops[i];
            cr_assert(o->mb >= 0 && o->mb < M && o->chunk >= 0 && o->chunk < v, "%s P=%d M=%d v=%d rank %d op %d: "
                      "micro-batch %d chunk %d out of range", d->name, P, M, v, r, i, o->mb, o->chunk);
            int k = o->chunk * M + o->mb;
            if (o->kind == 'F') {
                cr_expect(!fwd[k]++, "%s P=%d M=%d v=%d rank %d: F mb%d chunk %d twice", d->name, P, M, v, r, o->mb,
                          o->chunk);
                peak = ++live > peak ? live : peak;
            } else {
                cr_expect_eq(o->kind, 'B', "%s: op kind '%c'", d->name, o->kind);
                cr_expect(fwd[k], "%s P=%d M=%d v=%d rank %d: B mb%d chunk %d before its F", d->name, P, M, v, r,
                          o->mb, o->chunk);
                cr_expect(!bwd[k]++, "%s P=%d M=%d v=%d rank %d: B mb%d chunk %d twice", d->name, P, M, v, r, o->mb,
                          o->chunk);
                live--;
            }
        }
        cr_expect_eq(peak, d->peak(P, M, v, r), "%s P=%d M=%d v=%d rank %d: the order peaks at %d stashes, the row "
                     "says %d", d->name, P, M, v, r, peak, d->peak(P, M, v, r));
    }
    free(ops);
    free(fwd);
    free(bwd);
}

Test(schedules, every_row_runs_each_op_once_and_reaches_its_bound) {
    cr_assert_gt(pp__nschedules, 0);
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *d = &pp__schedules[i];
        int tried = 0;
        for (int P = 1; P <= 8; P++)
            for (int v = 1; v <= 4; v++)
                for (int M = 1; M <= 4 * P; M++)
                    if (allowed(d, P, M, v) == 0) check_order(d, P, M, v), tried++;
        cr_expect_gt(tried, 0, "%s: no configuration its rules allow", d->name);
        cr_expect(pp__schedule_def(d->name) == d, "%s: found under its own name", d->name);
    }
}

/* The names helper lists every row, in order, with the separators asked for. */
Test(schedules, names_list_every_row) {
    char buf[256];
    pp__schedule_names(buf, sizeof buf, "|", "|");
    char want[256] = "";
    for (int i = 0; i < pp__nschedules; i++) {
        if (i) strcat(want, "|");
        strcat(want, pp__schedules[i].name);
    }
    cr_expect_str_eq(buf, want);
    cr_expect_null(pp__schedule_def("no-such-schedule"));
    cr_expect_null(pp__schedule_def(NULL));
}

/* Every configuration of a row's part of the default grading set is one its own rules accept, and a CUDA run
 * keeps at least one test of every row. */
Test(schedules, default_tests_fit_their_rules) {
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *d = &pp__schedules[i];
        int gpu = 0;
        cr_expect_gt(d->ntests, 0, "%s has no default tests", d->name);
        for (int k = 0; k < d->ntests; k++) {
            const pp_schedule_test *t = &d->tests[k];
            cr_expect_eq(allowed(d, t->P, t->M, t->v), 0, "%s test %d (P=%d M=%d v=%d) breaks the row's rules",
                         d->name, k, t->P, t->M, t->v);
            gpu += t->on_gpu;
        }
        cr_expect_gt(gpu, 0, "%s: no test marked on_gpu", d->name);
    }
}
