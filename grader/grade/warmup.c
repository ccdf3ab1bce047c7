/* warmup.c: grades the warm-up lab (labs/00-warmup), one part a test: calls the part's exercise function over its
 * public table of cases, or on a graded run over cases of the same kinds drawn from the hidden configuration's seed
 * (warmup_draw.h), and adds one check per schedule or cost model (the parts' table: warmup_parts.h). Answer keys
 * come from warmup_keys.h (computed by the kit, recorded for the public cases in a handout), never from the code
 * under test.
 *
 * The functions run in a sandboxed driver, and the grading runs twice over the same calls (warmup_io.h): in the
 * test's supervisor, each call goes to the driver and its answer is recorded; in the grader, the same code reads
 * the recorded answers in order and scores them. The driver never sees an answer key; the supervisor's verdict is
 * never used. */
#include "grade.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"
#include "server.h"
#include "warmup_parts.h"

/* The symbol of each pp_warmup_fn (the X list runs in the enum's order, from PP_WARMUP_BUBBLE = 1): a part that
 * calls several functions names the one that is missing. */
#define PP_WU_SYMBOL(field, symbol, type) #symbol,
static const char *const wu_symbols[] = {NULL, PP_WARMUP_FUNCTIONS(PP_WU_SYMBOL)};
#undef PP_WU_SYMBOL
_Static_assert(sizeof wu_symbols / sizeof *wu_symbols == PP_WARMUP_SCHEDULER + 1, "one symbol per pp_warmup_fn");

const char *pp__warmup_part(int i) { return i >= 0 && i < pp__warmup_nparts() ? pp__warmup_parts[i].part : NULL; }

/* "bubble, peaks, ... or traffic" */
static const char *part_list(void) {
    static char buf[256];
    size_t n = 0;
    for (int i = 0; i < pp__warmup_nparts() && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i == 0 ? "" : i + 1 == pp__warmup_nparts() ? " or " : ", ",
                              pp__warmup_parts[i].part);
    return buf;
}

static const pp_warmup_part *part_named(const char *name) {
    for (int i = 0; i < pp__warmup_nparts(); i++)
        if (!strcmp(name, pp__warmup_parts[i].part)) return &pp__warmup_parts[i];
    return NULL;
}

/* The checks of p as cfg grades them: their names on drawn cases where those differ. */
static const pp_warmup_check *checks_of(const pp_warmup_part *p, const pp_test_config *cfg) {
    return cfg->drawn && p->drawn_checks ? p->drawn_checks : p->checks;
}

/* Runs part p's calls through io into out, on the cases cfg asks for. Returns 0, or -1 when io failed (io->st,
 * io->err say why). */
static int grade_part(const pp_warmup_part *p, const pp_test_config *cfg, pp_warmup_io *io, pp_test_result *out) {
    if (setjmp(io->failed)) return -1;
    if (setjmp(io->missing)) {
        /* the first call found the function missing: every check of the part says so */
        const pp_warmup_check *checks = checks_of(p, cfg);
        const char *symbol = (int)io->fn > 0 && (int)io->fn < PP_WARMUP_COUNT(wu_symbols) ? wu_symbols[io->fn] : p->symbol;
        out->nchecks = 0;
        for (int i = 0; i < p->nchecks; i++)
            pp__check_add(out, checks[i].name, checks[i].points, 0, "00-warmup/warmup.c (in the graded folder) does not define "
                          "%s: keep the function's name and signature from the handout", symbol);
        return 0;
    }
    /* each half of the grading draws its own stream from cfg alone: the same cases in both */
    pp_warmup_draw draw;
    if (cfg->drawn) pp__warmup_draw_init(&draw, cfg, p->part);
    p->grade(io, cfg->drawn ? &draw : NULL, checks_of(p, cfg), p->nchecks, out);
    return 0;
}

/* The part cfg (arg) names, asked through io: a pp_warmup_asker for pp__warmup_session. */
static int ask_part(pp_warmup_io *io, void *arg) {
    const pp_test_config *cfg = arg;
    const pp_warmup_part *p = part_named(cfg->part);
    if (!p) {
        io->st = PP_ERR_CONFIG;
        snprintf(io->err, sizeof io->err, "unknown warm-up part '%s': use %s", cfg->part, part_list());
        return -1;
    }
    pp_test_result *discard = pp__xcalloc(1, sizeof *discard);
    int rc = grade_part(p, cfg, io, discard);
    free(discard);
    return rc;
}

pp_warmup_asker *pp__warmup_asker(void) { return ask_part; }

pp_status pp__warmup_session(const pp_sandbox *sb, const pp_warmup_fns *fns, pp_wire *rec, pp_warmup_asker *ask,
                             void *arg, const char *whose, char *err, size_t len) {
    pp_warmup_io *io = pp__xcalloc(1, sizeof *io);
    io->rec = rec;
    io->st = PP_OK;
    pp_status st = PP_OK;
    if (fns) {
        io->fns = fns;
        if (ask(io, arg)) st = io->st, snprintf(err, len, "%s", io->err);
        free(io);
        return st;
    }
    pp_driver *d = pp__xcalloc(1, sizeof *d);
    pp_chan_facts f = {.mode = PP_CHAN_WARMUP};
    if (pp__driver_start(d, sb, &f, err, len)) {
        free(d), free(io);
        return PP_ERR_SANDBOX;
    }
    io->d = d;
    const char *hint;
    if (!pp__driver_next(d)) {
        st = pp__driver_death(d, err, len, &hint);
    } else {
        pp_wire_in first;
        pp__wire_in_init(&first, d->req, d->req_len);
        unsigned op = pp__wire_get_u32(&first, 0, 0xffffffffu);
        if (op != PP_RPC_NEXT) {
            /* a lab of calls has no step function: a reason is the driver's own, a sentence of this side's */
            char why[4 * PP_RPC_TEXT_MAX];
            st = PP_ERR_SANDBOX;
            if ((op == PP_RPC_SETUP_FAILED || op == PP_RPC_LOAD_FAILED) &&
                pp__server_stop_reason(op, &first, whose, "", &st, &hint, why, sizeof why) == 0)
                snprintf(err, len, "%s", why);
            else
                snprintf(err, len, "%s driver did not start cleanly", whose);
        }
    }
    if (st == PP_OK && ask(io, arg)) st = io->st, snprintf(err, len, "%s", io->err);
    if (st == PP_OK && d->pending) {
        pp_wire w;
        pp__wire_init_fixed(&w, d->chan->rep, PP_CHAN_MSG);
        pp__wire_u32(&w, PP_REPLY_EXIT);
        pp__driver_reply(d, w.len);
    }
    pp__driver_stop(d, st == PP_OK ? 1.0 : 0);
    free(d), free(io);
    return st;
}

pp_status pp__warmup_record(const pp_test_config *cfg, const pp_sandbox *sb, const pp_warmup_fns *fns, pp_wire *rec,
                            char *err, size_t len) {
    return pp__warmup_session(sb, fns, rec, ask_part, (void *)cfg, "the warm-up's", err, len);
}

void pp__warmup_fail(const pp_test_config *cfg, pp_status st, const char *msg, pp_test_result *out) {
    const pp_warmup_part *p = part_named(cfg->part);
    out->status = st;
    snprintf(out->error, sizeof out->error, "%s", msg);
    out->nchecks = 0;
    if (!p) {
        pp__check_add(out, "warm-up answers", 1, 0, "not graded: %s", pp__status_str(st));
    } else {
        /* every check of the part, so that the part keeps its full weight in the total */
        const pp_warmup_check *checks = checks_of(p, cfg);
        for (int i = 0; i < p->nchecks; i++)
            pp__check_add(out, checks[i].name, checks[i].points, 0, "not graded: %s", pp__status_str(st));
    }
    out->score = out->max = 0;
    for (int i = 0; i < out->nchecks; i++) out->max += out->checks[i].max;
}

void pp__warmup_grade(const pp_test_config *cfg, const void *rec, size_t len, pp_test_result *out) {
    const pp_warmup_part *p = part_named(cfg->part);
    out->cfg = *cfg;
    if (!out->name[0]) snprintf(out->name, sizeof out->name, "warmup %s", cfg->part);
    out->status = PP_OK;
    if (!p) {
        out->status = PP_ERR_CONFIG;
        snprintf(out->error, sizeof out->error,
                 "unknown warm-up part '%s': use %s in the config", cfg->part, part_list());
        pp__check_add(out, "warmup part", 1, 0, "%s", out->error);
    } else {
        pp_warmup_io *io = pp__xcalloc(1, sizeof *io);
        pp__wire_in_init(&io->in, rec, len);
        if (grade_part(p, cfg, io, out)) {
            const pp_warmup_check *checks = checks_of(p, cfg);
            out->status = io->st;
            snprintf(out->error, sizeof out->error, "%s", io->err);
            out->nchecks = 0;
            for (int i = 0; i < p->nchecks; i++)
                pp__check_add(out, checks[i].name, checks[i].points, 0, "not graded: %s", io->err);
        }
        free(io);
    }
    /* the score is the checks', each worth 0 or its max: nothing else can move it */
    out->score = out->max = 0;
    for (int i = 0; i < out->nchecks; i++) {
        pp_check *c = &out->checks[i];
        c->points = c->passed ? c->max : 0;
        out->score += c->points, out->max += c->max;
    }
}
