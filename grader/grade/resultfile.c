/* resultfile.c: the token-stamped files a test's supervisor, its mpirun ranks and its reference process write
 * for the grader. */
#include "resultfile.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "result.h"

#define RESULT_MAGIC 0x70706c6162726573ull /* "pplabres" */

void pp__resultfile_head(pp_wire *w, uint64_t token, pp_resultfile_kind kind) {
    pp__wire_u64(w, RESULT_MAGIC);
    pp__wire_u64(w, token);
    pp__wire_u32(w, (uint32_t)kind);
}

int pp__resultfile_put(const char *path, const pp_wire *w) {
    char part[PATH_MAX + 32];
    snprintf(part, sizeof part, "%s.part%d", path, (int)getpid());
    if (w->bad || pp__file_write(part, w->p, w->len, 0600)) {
        unlink(part);
        return -1;
    }
    if (rename(part, path)) {
        unlink(part);
        return -1;
    }
    return 0;
}

unsigned char *pp__resultfile_get(const char *path, size_t *len) {
    return (unsigned char *)pp__file_read(path, PP_FILE_ANY_SIZE, len);
}

int pp__resultfile_open(pp_wire_in *r, const unsigned char *buf, size_t len, uint64_t token, pp_resultfile_kind kind) {
    pp__wire_in_init(r, buf, len);
    uint64_t magic = pp__wire_get_u64(r), tok = pp__wire_get_u64(r);
    uint32_t k = pp__wire_get_u32(r, 0, 0xffffffffu);
    return !r->bad && magic == RESULT_MAGIC && tok == token && k == (uint32_t)kind ? 0 : -1;
}

int pp__resultfile_put_run(const char *path, uint64_t token, const pp_run_result *res, int steps) {
    pp_wire w;
    pp__wire_init(&w);
    pp__resultfile_head(&w, token, PP_RESULTFILE_RUN);
    pp__result_encode(&w, res, steps);
    int rc = pp__resultfile_put(path, &w);
    pp__wire_free(&w);
    return rc;
}

int pp__resultfile_get_run(const char *path, uint64_t token, int ranks, int v, int steps, pp_run_result *res) {
    size_t len = 0;
    unsigned char *buf = pp__resultfile_get(path, &len);
    pp_wire_in r;
    int ok = buf && pp__resultfile_open(&r, buf, len, token, PP_RESULTFILE_RUN) == 0 &&
             pp__result_decode(&r, ranks, v, steps, res) == 0;
    free(buf);
    return ok ? 0 : -1;
}

static struct {
    const pp_test_config *tc;
    uint64_t token;
    const char *path;
    pp_resultfile_kind kind;
} fatal_to;

static pp_status fatal_status(const char *what) {
    return strncmp(what, "out of memory", 13) ? PP_ERR_CRASH : PP_ERR_LIMIT;
}

static void __attribute__((noreturn)) report_fatal(const char *what, const char *hint) {
    /* a fixed buffer: the failure may be the heap's */
    static unsigned char buf[8192];
    pp_wire w;
    pp__wire_init_fixed(&w, buf, sizeof buf);
    pp__resultfile_head(&w, fatal_to.token, fatal_to.kind);
    int reference = fatal_to.kind == PP_RESULTFILE_REFERENCE;
    char msg[1400];
    snprintf(msg, sizeof msg, "%s%s: %s", reference ? "the grader's full-batch reference: " : "", what,
             fatal_status(what) == PP_ERR_LIMIT ? "the configuration's model does not fit this machine's memory"
                                                : hint);
    if (reference) {
        pp__wire_u32(&w, (uint32_t)fatal_status(what));
        pp__wire_str(&w, msg, sizeof msg - 1);
    } else {
        static pp_run_result res;
        res.status = fatal_status(what);
        res.P = fatal_to.tc->P, res.v = fatal_to.tc->v;
        snprintf(res.error, sizeof res.error, "%s", msg);
        pp__result_encode(&w, &res, fatal_to.tc->steps);
    }
    int rc = pp__resultfile_put(fatal_to.path, &w);
    _exit(rc ? 3 : 0);
}

void pp__resultfile_fatal_to(const pp_test_config *tc, uint64_t token, const char *path, pp_resultfile_kind kind) {
    fatal_to.tc = tc, fatal_to.token = token, fatal_to.path = path, fatal_to.kind = kind;
    pp__die_set_handler(report_fatal);
}
