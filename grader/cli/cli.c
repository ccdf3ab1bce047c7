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

int pp__cli_int(const char *flag, const char *val, int lo, int hi) {
    char *end;
    errno = 0;
    long x = strtol(val, &end, 10);
    if (errno || end == val || *end || x < lo || x > hi)
        pp__cli_fail(command, "%s needs an integer in %d..%d, got '%s'", flag, lo, hi, val);
    return (int)x;
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

int pp__cli_run_flag(pp_cli_run *o, int argc, char **argv, int *i) {
    const char *f = argv[*i];
    pp_run_config *c = &o->cfg;
#define IS(name) (!strcmp(f, name))
#define VAL() pp__cli_value(argc, argv, i)
    if (IS("--impl")) o->impl = VAL();
    else if (IS("--schedule")) c->schedule = VAL(), o->given |= PP_CLI_GIVEN_SCHEDULE;
    else if (IS("--stages")) c->P = pp__cli_int(f, VAL(), 1, 64), o->given |= PP_CLI_GIVEN_STAGES;
    else if (IS("--microbatches")) c->M = pp__cli_int(f, VAL(), 1, 1024), o->given |= PP_CLI_GIVEN_MICROBATCHES;
    else if (IS("--chunks")) c->v = pp__cli_int(f, VAL(), 1, 16);
    else if (IS("--layers")) c->layers = pp__cli_int(f, VAL(), 1, 4096);
    else if (IS("--microbatch-size")) c->mb_size = pp__cli_int(f, VAL(), 1, 4096);
    else if (IS("--batch")) o->batch = pp__cli_int(f, VAL(), 1, 1 << 20);
    else if (IS("--hidden")) c->hidden = pp__cli_int(f, VAL(), 1, 65536);
    else if (IS("--seq")) c->seq = pp__cli_int(f, VAL(), 1, 65536);
    else if (IS("--vocab")) c->vocab = pp__cli_int(f, VAL(), 2, 1 << 20);
    else if (IS("--steps")) c->steps = pp__cli_int(f, VAL(), 1, 100000);
    else if (IS("--seed")) c->seed = (unsigned)pp__cli_int(f, VAL(), 0, 2147483647);
    else if (IS("--comm-latency")) c->comm_latency = pp__cli_num(f, VAL());
    else if (IS("--edge-cost")) c->edge_cost = pp__cli_num(f, VAL());
    else if (IS("--lr")) c->lr = (float)pp__cli_num(f, VAL());
    else if (IS("--backend")) c->backend = VAL();
    else if (IS("--transport")) c->transport = VAL();
    else if (IS("--eager")) c->eager = 1;
    else if (IS("--recompute")) c->recompute = 1;
    else if (IS("--timeline")) o->timeline = 1;
    else if (IS("--wall")) o->wall = 1;
    else if (IS("--per-rank")) o->per_rank = 1;
    else if (IS("--canonical")) o->canonical = 1;
    else if (IS("--forward-only")) o->forward_only = 1;
    else if (IS("--plot")) o->plot = VAL();
    else if (IS("--trace")) o->trace = VAL();
    else if (IS("--optimizer")) {
        const char *v = VAL();
        if (!strcmp(v, "sgd")) c->optimizer = PP_OPT_SGD;
        else if (!strcmp(v, "adamw")) c->optimizer = PP_OPT_ADAMW;
        else pp__cli_fail("run", "--optimizer must be sgd or adamw, got '%s'", v);
    } else return 0;
#undef IS
#undef VAL
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
