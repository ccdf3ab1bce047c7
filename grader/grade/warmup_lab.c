/* warmup_lab.c: the warm-up's kind: its supervisor asks a driver of the student's file the part's questions
 * (warmup.c records the calls and their answers through warmup_io.h), and the grader grades the recorded answers. No ranks, no
 * reference, no mpirun. */
#include "labkind.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "impl_build.h"
#include "labs.h"
#include "memlimit.h"
#include "resultfile.h"
#include "runopts.h"
#include "testcfg.h"
#include "warmup_call.h"
#include "warmup_io.h"

int pp__calls_lab_execute(const pp_lab_task *t, pp_warmup_asker *ask, void *arg, const char *whose) {
    const pp_test_config *tc = t->tc;
    const pp_impl *impl = t->impl;
    pp_sandbox sb = *pp__runopts_sandbox();
    sb.cpu_limit_s = pp__test_limit_s(tc);
    pp__sandbox_size_tasks(&sb, 1);
    pp_wire rec, w;
    pp__wire_init(&rec);
    char err[600] = "";
    pp_status st = PP_OK;
    pp_warmup_fns fns = {0}, *direct = NULL;
    if (pp__runopts_in_process()) {
        void *h = dlopen(impl->shared, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            snprintf(err, sizeof err, "cannot load %s: %s", impl->shared, dlerror());
            st = PP_ERR_IO;
        } else {
#define PP_WU_LOOKUP(field, symbol, type) *(void **)&fns.field = dlsym(h, #symbol);
            PP_WARMUP_FUNCTIONS(PP_WU_LOOKUP)
#undef PP_WU_LOOKUP
            direct = &fns;
        }
    } else if (pp__host_open(&sb, impl->driver, impl->object, err, sizeof err)) {
        st = PP_ERR_IO;
    }
    if (st == PP_OK) st = pp__warmup_session(&sb, direct, &rec, ask, arg, whose, err, sizeof err);
    pp__host_close(&sb);
    pp__wire_init(&w);
    pp__resultfile_head(&w, t->token, PP_RESULTFILE_WARMUP);
    pp__wire_u32(&w, (uint32_t)st);
    pp__wire_str(&w, err, sizeof err - 1);
    pp__wire_u64(&w, rec.len);
    pp__wire_put(&w, rec.p, rec.len);
    int bad = pp__resultfile_put(t->res_path, &w);
    pp__wire_free(&rec);
    pp__wire_free(&w);
    return bad ? 1 : 0;
}

unsigned char *pp__calls_lab_read(const pp_lab_task *t, const void **rec, size_t *n, const char *whose,
                                  pp_test_result *out) {
    size_t flen = 0;
    unsigned char *buf = pp__resultfile_get(t->res_path, &flen);
    pp_wire_in r;
    char msg[700];
    if (!buf || pp__resultfile_open(&r, buf, flen, t->token, PP_RESULTFILE_WARMUP)) {
        free(buf);
        char other[300];
        snprintf(other, sizeof other, "%s supervisor ended without its answers: this is a bug in pplab, or the machine "
                 "ran out of memory or disk", whose);
        pp__memlimit_why_no_result(t->res_path, other, msg, sizeof msg);
        t->lab->kind->fail(t->tc, PP_ERR_INTERNAL, msg, out);
        return NULL;
    }
    pp_status st = (pp_status)pp__wire_get_u32(&r, 0, PP_STATUS_COUNT - 1);
    char why[600];
    pp__wire_get_str(&r, why, sizeof why);
    uint64_t count = pp__wire_get_u64(&r);
    *rec = pp__wire_view(&r, count);
    *n = (size_t)count;
    if (r.bad || st != PP_OK) {
        free(buf);
        if (r.bad) snprintf(msg, sizeof msg, "%s answers are malformed: this is a bug in pplab", whose);
        out->crashed = !r.bad && st == PP_ERR_CRASH;
        t->lab->kind->fail(t->tc, r.bad ? PP_ERR_INTERNAL : st, r.bad ? msg : why, out);
        return NULL;
    }
    return buf;
}

/* The warm-up part cfg names, asked of a driver of the student's warm-up file (or, in the debugging mode, of its
 * object loaded here). */
static int warmup_lab_execute(const pp_lab_task *t) {
    return pp__calls_lab_execute(t, pp__warmup_asker(), (void *)t->tc, "the warm-up's");
}

/* The warm-up's recorded answers, graded here. */
static void warmup_lab_grade(const pp_lab_task *t, pp_test_result *out) {
    const void *rec = NULL;
    size_t n = 0;
    unsigned char *buf = pp__calls_lab_read(t, &rec, &n, "the warm-up's", out);
    if (buf) pp__warmup_grade(t->tc, rec, n, out);
    free(buf);
}

int pp__calls_lab_ranks(const pp_test_config *tc) {
    (void)tc;
    return 1;
}

double pp__calls_lab_wait_s(const pp_test_config *tc) { return pp__test_limit_s(tc); }

int pp__calls_lab_timed_out(const pp_lab_task *t) {
    (void)t;
    return 0;
}

const pp_lab_kind pp__warmup_lab = {
    .reference = 0,
    .ranks = pp__calls_lab_ranks,
    .wait_s = pp__calls_lab_wait_s,
    .execute = warmup_lab_execute,
    .timed_out = pp__calls_lab_timed_out,
    .grade = warmup_lab_grade,
    .fail = pp__warmup_fail,
};
