/* cli.c: parsing of flags and values for pplab's subcommands. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"
#include "schedules.h"

void pp__cli_fail(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "pplab %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see: pplab %s --help)\n", cmd);
    exit(2);
}

/* The subcommand being parsed, for the messages of the shared value parsers ("pplab grade: --jobs needs ..."). */
static const char *command = "run";

void pp__cli_set_command(const char *cmd) { command = cmd; }

/* 1 when val is a whole integer in [lo, hi], stored in *x. */
static int int_in(const char *val, long lo, long hi, int *x) {
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (errno || end == val || *end || v < lo || v > hi) return 0;
    *x = (int)v;
    return 1;
}

int pp__cli_int(const char *flag, const char *val, int lo, int hi) {
    int x;
    if (!int_in(val, lo, hi, &x)) pp__cli_fail(command, "%s needs an integer in %d..%d, got '%s'", flag, lo, hi, val);
    return x;
}

double pp__cli_num(const char *flag, const char *val) {
    char *end;
    errno = 0;
    double x = strtod(val, &end);
    if (errno || end == val || *end || !(x >= 0) || x > 1e9)
        pp__cli_fail(command, "%s needs a number >= 0, got '%s'", flag, val);
    return x;
}

const char *pp__cli_value(int argc, char **argv, int *i) {
    if (*i + 1 >= argc || !strncmp(argv[*i + 1], "--", 2)) pp__cli_fail(command, "%s needs a value", argv[*i]);
    return argv[++*i];
}

void pp__cli_run_defaults(pp_cli_run *o) {
    /* a V always has two chunks per rank: --chunks 2 goes without saying there */
    if (!(o->given & PP_CLI_GIVEN_CHUNKS)) o->cfg.v = pp__schedule_default_chunks(pp__schedule_def(o->cfg.schedule));
}

void pp__cli_run_finish(pp_cli_run *o) {
    /* a run is described by these three: no silent defaults for them */
    if (!(o->given & PP_CLI_GIVEN_SCHEDULE))
        pp__cli_fail("run", "--schedule is required: %s",
                     pp__schedule_names((char[256]){0}, 256, ", ", " or "));
    if (!(o->given & PP_CLI_GIVEN_STAGES)) pp__cli_fail("run", "--stages is required: the number of ranks P");
    if (!(o->given & PP_CLI_GIVEN_MICROBATCHES))
        pp__cli_fail("run", "--microbatches is required: the number of micro-batches M (1 for naive)");
    if (!o->batch) return;
    if (o->batch % o->cfg.M)
        pp__cli_fail("run", "--batch %d is not divisible by --microbatches %d: pick a batch that splits into equal "
                     "micro-batches, or set --microbatch-size", o->batch, o->cfg.M);
    o->cfg.mb_size = o->batch / o->cfg.M;
}

int pp__cli_flag(const pp_flag *flags, int n, int argc, char **argv, int *i) {
    const char *f = argv[*i];
    const pp_flag *g = NULL;
    for (int k = 0; k < n && !g; k++)
        if (!strcmp(f, flags[k].name) || (flags[k].alias && !strcmp(f, flags[k].alias))) g = &flags[k];
    if (!g) return 0;
    if (g->given) *g->given |= g->bit;
    if (g->kind == PP_FLAG_SET) {
        *(int *)g->to = g->set;
        return 1;
    }
    const char *v = pp__cli_value(argc, argv, i);
    if (g->need) { /* an integer with a message of its own */
        if (!int_in(v, (long)g->lo, (long)g->hi, (int *)g->to)) pp__cli_fail(command, "%s needs %s", f, g->need);
        return 1;
    }
    switch (g->kind) {
    case PP_FLAG_STR: *(const char **)g->to = v; break;
    case PP_FLAG_INT: *(int *)g->to = pp__cli_int(f, v, (int)g->lo, (int)g->hi); break;
    case PP_FLAG_UINT: *(unsigned *)g->to = (unsigned)pp__cli_int(f, v, (int)g->lo, (int)g->hi); break;
    case PP_FLAG_MIB: *(size_t *)g->to = (size_t)pp__cli_int(f, v, (int)g->lo, (int)g->hi) << 20; break;
    case PP_FLAG_NUM:
    case PP_FLAG_FLOAT: {
        double x = pp__cli_num(f, v);
        if (g->lo > 0 && !(x > 0)) pp__cli_fail(command, "%s needs a number > 0, got '%s'", f, v);
        if (g->kind == PP_FLAG_NUM) *(double *)g->to = x;
        else *(float *)g->to = (float)x;
        break;
    }
    case PP_FLAG_SET: break;
    }
    return 1;
}

int pp__cli_run_flag(pp_cli_run *o, int argc, char **argv, int *i) {
    pp_run_config *c = &o->cfg;
    const pp_flag flags[] = {
        {.name = "--impl", .kind = PP_FLAG_STR, .to = &o->impl},
        {.name = "--schedule", .kind = PP_FLAG_STR, .to = &c->schedule, .given = &o->given, .bit = PP_CLI_GIVEN_SCHEDULE},
        {.name = "--stages", .kind = PP_FLAG_INT, .to = &c->P, .lo = 1, .hi = 64, .given = &o->given, .bit = PP_CLI_GIVEN_STAGES},
        {.name = "--microbatches", .kind = PP_FLAG_INT, .to = &c->M, .lo = 1, .hi = 1024, .given = &o->given, .bit = PP_CLI_GIVEN_MICROBATCHES},
        {.name = "--chunks", .kind = PP_FLAG_INT, .to = &c->v, .lo = 1, .hi = 16, .given = &o->given, .bit = PP_CLI_GIVEN_CHUNKS},
        {.name = "--layers", .kind = PP_FLAG_INT, .to = &c->layers, .lo = 1, .hi = 4096},
        {.name = "--layout", .kind = PP_FLAG_STR, .to = &c->layout},
        {.name = "--microbatch-size", .kind = PP_FLAG_INT, .to = &c->mb_size, .lo = 1, .hi = 4096},
        {.name = "--batch", .kind = PP_FLAG_INT, .to = &o->batch, .lo = 1, .hi = 1 << 20},
        {.name = "--hidden", .kind = PP_FLAG_INT, .to = &c->hidden, .lo = 1, .hi = 65536},
        {.name = "--seq", .kind = PP_FLAG_INT, .to = &c->seq, .lo = 1, .hi = 65536},
        {.name = "--vocab", .kind = PP_FLAG_INT, .to = &c->vocab, .lo = 2, .hi = 1 << 20},
        {.name = "--steps", .kind = PP_FLAG_INT, .to = &c->steps, .lo = 1, .hi = 100000},
        {.name = "--seed", .kind = PP_FLAG_UINT, .to = &c->seed, .lo = 0, .hi = 2147483647},
        {.name = "--comm-latency", .kind = PP_FLAG_NUM, .to = &c->comm_latency},
        {.name = "--edge-cost", .kind = PP_FLAG_NUM, .to = &c->edge_cost},
        {.name = "--lr", .kind = PP_FLAG_FLOAT, .to = &c->lr},
        {.name = "--backend", .kind = PP_FLAG_STR, .to = &c->backend},
        {.name = "--transport", .kind = PP_FLAG_STR, .to = &c->transport},
        {.name = "--eager", .kind = PP_FLAG_SET, .to = &c->eager, .set = 1},
        {.name = "--recompute", .kind = PP_FLAG_SET, .to = &c->recompute, .set = 1},
        {.name = "--timeline", .kind = PP_FLAG_SET, .to = &o->timeline, .set = 1},
        {.name = "--wall", .kind = PP_FLAG_SET, .to = &o->wall, .set = 1},
        {.name = "--per-rank", .kind = PP_FLAG_SET, .to = &o->per_rank, .set = 1},
        {.name = "--canonical", .kind = PP_FLAG_SET, .to = &o->canonical, .set = 1},
        {.name = "--forward-only", .kind = PP_FLAG_SET, .to = &o->forward_only, .set = 1},
        {.name = "--plot", .kind = PP_FLAG_STR, .to = &o->plot},
        {.name = "--trace", .kind = PP_FLAG_STR, .to = &o->trace},
    };
    if (pp__cli_flag(flags, (int)(sizeof flags / sizeof flags[0]), argc, argv, i)) return 1;
    if (strcmp(argv[*i], "--optimizer")) return 0;
    const char *v = pp__cli_value(argc, argv, i);
    if (!strcmp(v, "sgd")) c->optimizer = PP_OPT_SGD;
    else if (!strcmp(v, "adamw")) c->optimizer = PP_OPT_ADAMW;
    else pp__cli_fail("run", "--optimizer must be sgd or adamw, got '%s'", v);
    return 1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pp__cli_median(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

void pp__cli_usage(FILE *out, const char *usage) {
    char sched[256], labs[300];
    pp__schedule_names(sched, sizeof sched, "|", "|");
    pp__lab_names(labs, sizeof labs, "|", "|");
    for (const char *p = usage; *p;) {
        if (!strncmp(p, "{schedules}", 11)) {
            fputs(sched, out), p += 11;
        } else if (!strncmp(p, "{labs}", 6)) {
            fputs(labs, out), p += 6;
        } else {
            fputc(*p++, out);
        }
    }
}
