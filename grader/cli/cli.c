/* cli.c: what every command shares: parsing of flags and values, --help, failing with a one-line reason. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "impl_build.h"
#include "schedules.h"
#include "transport.h"

/* How parsing ends the process: exit, unless a caller that parses many command lines in one process (the
 * command line's fuzz target) set its own way out. */
static void (*cli_exit)(int status) = exit;

void pp__cli_set_exit(void (*fn)(int status)) { cli_exit = fn ? fn : exit; }

void pp__cli_fail(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "pplab %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see: pplab %s --help)\n", cmd);
    cli_exit(2);
    abort(); /* a way out that returned */
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

int pp__cli_run_defaults(pp_cli_run *o) {
    char err[512];
    if (o->schedule && pp__config_schedule(&o->cfg, o->schedule, err, sizeof err)) pp__cli_fail("run", "%s", err);
    /* a chunked schedule at v = 1 is its unchunked one (interleaved at v = 1 is 1F1B): two chunks unless told */
    if (o->given & PP_CLI_GIVEN_CHUNKS) return 0;
    const pp_schedule_def *d = o->cfg.schedule;
    o->cfg.v = pp__schedule_default_chunks(d);
    return d && d->chunked && !d->vshape; /* a V has two chunks or none: nothing to say there */
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

/* A former name is said once per process (and under mpirun by rank 0 alone), then works as the new one. */
static void notice_old(const pp_flag *g) {
    static const char *said[16];
    int k = 0;
    for (; k < 16 && said[k]; k++)
        if (said[k] == g->old) return;
    if (k < 16) said[k] = g->old;
    if (pp__mpi_env_rank() > 0) return;
    fflush(stdout);
    fprintf(stderr, "pplab %s: %s is now %s\n", command, g->old, g->name);
}

/* 1 when arg names flag `name`, alone, as "--name=value" or, for a one-letter spelling, "-jVALUE" (as make
 * takes -j4); *value then points at the value. */
static int names(const char *arg, const char *name, const char **value) {
    size_t n = strlen(name);
    if (strncmp(arg, name, n)) return 0;
    if (!arg[n]) return 1;
    if (strncmp(name, "--", 2)) return *value = arg + n, 1;
    if (arg[n] != '=') return 0;
    *value = arg + n + 1;
    return 1;
}

/* The index of v among choices ("a|b|c"), or -1. */
static int choice_of(const char *choices, const char *v) {
    size_t n = strlen(v);
    int k = 0;
    for (const char *p = choices; p; k++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (n && len == n && !strncmp(p, v, n)) return k;
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

/* choices "a|b|c" as "a, b or c" into buf. */
static const char *choices_prose(const char *choices, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (const char *p = choices; p && used < len;) {
        const char *bar = strchr(p, '|');
        int w = bar ? (int)(bar - p) : (int)strlen(p);
        int r = snprintf(buf + used, len - used, "%s%.*s", used ? (bar ? ", " : " or ") : "", w, p);
        if (r < 0) break;
        used += (size_t)r;
        p = bar ? bar + 1 : NULL;
    }
    return buf;
}

/* The flags of the table being parsed that were given already (pp__cli_parse starts each parse afresh). */
static const pp_flag *seen_in;
static unsigned char seen[PP_CLI_MAX_FLAGS];

int pp__cli_flag(const pp_flag *flags, int n, int argc, char **argv, int *i) {
    const char *a = argv[*i], *v = NULL, *f = NULL;
    const pp_flag *g = NULL;
    for (int k = 0; k < n && !g; k++) {
        const char *spelled[] = {flags[k].name, flags[k].alias, flags[k].old};
        for (int s = 0; s < 3 && !g; s++)
            if (spelled[s] && names(a, spelled[s], &v)) g = &flags[k], f = spelled[s];
    }
    if (!g) return 0;
    if (f == g->old) notice_old(g);
    f = g->name; /* messages name the flag as it is called now */
    /* a flag given twice is one the user meant once: which value they meant is theirs to say */
    if (seen_in != flags) seen_in = flags, memset(seen, 0, sizeof seen);
    if (g - flags < PP_CLI_MAX_FLAGS && seen[g - flags]++)
        pp__cli_fail(command, "%s is given twice: give it once, with the value you mean", f);
    if (g->given) *g->given |= g->bit;
    if (g->kind == PP_FLAG_SET) {
        if (v) pp__cli_fail(command, "%s takes no value, got '%s': give %s alone", f, a, f);
        *(int *)g->to = g->set;
        return 1;
    }
    if (!v) {
        /* a value that looks like the next flag is the user's forgotten value, not a value */
        if (*i + 1 >= argc || !strncmp(argv[*i + 1], "--", 2)) pp__cli_fail(command, "%s needs a value", f);
        v = argv[++*i];
    } else if (!*v) {
        pp__cli_fail(command, "%s needs a value after '='", f);
    }
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
    case PP_FLAG_CHOICE: {
        int k = choice_of(g->choices, v);
        if (k < 0)
            pp__cli_fail(command, "%s must be %s, got '%s'", f, choices_prose(g->choices, (char[256]){0}, 256), v);
        *(int *)g->to = k;
        break;
    }
    case PP_FLAG_SET: break;
    }
    return 1;
}

/* The edit distance between a[0..n) and b, up to 3 (more is "far"). */
static int distance(const char *a, int n, const char *b) {
    int m = (int)strlen(b), row[64], prev;
    if (n >= 63 || m >= 63 || abs(n - m) > 3) return 4;
    for (int j = 0; j <= m; j++) row[j] = j;
    for (int i = 1; i <= n; i++) {
        prev = row[0], row[0] = i;
        for (int j = 1; j <= m; j++) {
            int d = prev + (a[i - 1] != b[j - 1]), up = row[j] + 1, left = row[j - 1] + 1;
            prev = row[j];
            row[j] = d < up ? (d < left ? d : left) : (up < left ? up : left);
        }
    }
    return row[m];
}

/* The flag a typo most likely meant: one that the typo begins, else the closest two edits away at most; or NULL. */
static const char *nearest(const pp_flag *flags, int n, const char *a, int len) {
    const char *best = NULL;
    int bd = 3;
    for (int k = 0; k < n; k++) {
        int d = len > 3 && !strncmp(flags[k].name, a, (size_t)len) ? 0 : distance(a, len, flags[k].name);
        if (d < bd) bd = d, best = flags[k].name;
    }
    return best;
}

void pp__cli_parse(const pp_cli_command *cmd, const pp_flag *flags, int n, int argc, char **argv,
                   void (*operand)(void *ctx, const char *arg), void *ctx) {
    seen_in = NULL;
    /* help first: `pplab run --stages x --help` asks for the help, not for a verdict on x */
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            pp__cli_help(stdout, cmd);
            cli_exit(0);
            abort();
        }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (pp__cli_flag(flags, n, argc, argv, &i)) continue;
        if (a[0] != '-' && operand) {
            operand(ctx, a);
            continue;
        }
        if (a[0] != '-') pp__cli_fail(cmd->name, "unexpected argument '%s': every flag starts with --", a);
        int len = (int)strcspn(a, "=");
        const char *near = nearest(flags, n, a, len);
        if (near) pp__cli_fail(cmd->name, "unknown flag '%.*s': did you mean %s?", len, a, near);
        pp__cli_fail(cmd->name, "unknown flag '%.*s'", len, a);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pp__cli_median(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* text with its placeholders expanded, into buf. */
static const char *expand(const char *text, char *buf, size_t len) {
    char sched[256], chunked[256], labs[300];
    pp__schedule_names(sched, sizeof sched, ", ", " or ");
    pp__schedule_names_chunked(chunked, sizeof chunked, ", ", " and ");
    pp__lab_names(labs, sizeof labs, ", ", " or ");
    const struct {
        const char *key, *val;
    } keys[] = {{"{schedules}", sched}, {"{chunked}", chunked}, {"{labs}", labs}};
    size_t used = 0;
    for (const char *p = text; *p && used + 1 < len;) {
        size_t k = 0;
        while (k < sizeof keys / sizeof *keys && strncmp(p, keys[k].key, strlen(keys[k].key))) k++;
        if (k < sizeof keys / sizeof *keys) {
            used += (size_t)snprintf(buf + used, len - used, "%s", keys[k].val);
            if (used >= len) used = len - 1;
            p += strlen(keys[k].key);
        } else {
            buf[used++] = *p++;
        }
    }
    buf[used] = 0;
    return buf;
}

void pp__cli_usage(FILE *out, const char *text) {
    static char buf[16384];
    fputs(expand(text, buf, sizeof buf), out);
}

enum { HELP_WIDTH = 112, HELP_COLUMN = 30, HELP_NBSP = '\x1f' };

/* Prints words from `at` on, wrapped at HELP_WIDTH, every line after the first indented to HELP_COLUMN. */
static void wrapped(FILE *out, int at, const char *text) {
    int col = at;
    for (const char *p = text; *p;) {
        while (*p == ' ') p++;
        size_t w = strcspn(p, " ");
        if (!w) break;
        if (col > HELP_COLUMN && col + 1 + (int)w > HELP_WIDTH) {
            fprintf(out, "\n%*s", HELP_COLUMN, "");
            col = HELP_COLUMN;
        } else if (col > at) {
            fputc(' ', out), col++;
        }
        for (size_t k = 0; k < w; k++) fputc(p[k] == HELP_NBSP ? ' ' : p[k], out);
        col += (int)w, p += w;
    }
    fputc('\n', out);
}

/* The default of f as --help states it, into buf. */
static const char *default_of(const pp_flag *f, char *buf, size_t len) {
    if (f->dflt) return snprintf(buf, len, "%s", f->dflt), buf;
    switch (f->kind) {
    case PP_FLAG_STR: {
        const char *s = *(const char *const *)f->to;
        snprintf(buf, len, "%s", s ? s : "none");
        break;
    }
    case PP_FLAG_INT: snprintf(buf, len, "%d", *(const int *)f->to); break;
    case PP_FLAG_UINT: snprintf(buf, len, "%u", *(const unsigned *)f->to); break;
    case PP_FLAG_MIB: snprintf(buf, len, "%zu MiB", *(const size_t *)f->to >> 20); break;
    case PP_FLAG_NUM: snprintf(buf, len, "%g", *(const double *)f->to); break;
    case PP_FLAG_FLOAT: snprintf(buf, len, "%g", (double)*(const float *)f->to); break;
    case PP_FLAG_CHOICE: {
        int k = *(const int *)f->to;
        const char *p = f->choices;
        for (; k > 0 && p; k--) p = strchr(p, '|'), p = p ? p + 1 : NULL;
        snprintf(buf, len, "%.*s", p ? (int)strcspn(p, "|") : 0, p ? p : "");
        break;
    }
    case PP_FLAG_SET: snprintf(buf, len, "off"); break;
    }
    return buf;
}

/* One row of --help: the flag and its value's name, then what it does, its default and its former name. */
static void help_row(FILE *out, const pp_flag *f) {
    const char *arg = f->arg;
    if (!arg) {
        switch (f->kind) {
        case PP_FLAG_INT:
        case PP_FLAG_UINT: arg = "N"; break;
        case PP_FLAG_MIB: arg = "MiB"; break;
        case PP_FLAG_NUM:
        case PP_FLAG_FLOAT: arg = "X"; break;
        case PP_FLAG_CHOICE: arg = f->choices; break;
        case PP_FLAG_STR: arg = "VALUE"; break;
        case PP_FLAG_SET: arg = ""; break;
        }
    }
    char left[256], def[256], text[4096], line[4600];
    int w = snprintf(left, sizeof left, "  %s%s%s%s%s", f->alias ? f->alias : "", f->alias ? ", " : "", f->name,
                     *arg ? " " : "", arg);
    default_of(f, def, sizeof def);
    /* "[default:" stays with what follows it: HELP_NBSP is a space that does not break */
    snprintf(line, sizeof line, "%s [%s%s%s%s]", f->help ? f->help : "", strcmp(def, "required") ? "default:\x1f" : "",
             def, f->old ? "; formerly " : "", f->old ? f->old : "");
    fputs(left, out);
    if (w > HELP_COLUMN - 2) fprintf(out, "\n%*s", HELP_COLUMN, ""), w = HELP_COLUMN;
    else fprintf(out, "%*s", HELP_COLUMN - w, ""), w = HELP_COLUMN;
    wrapped(out, w, expand(line, text, sizeof text));
}

void pp__cli_help(FILE *out, const pp_cli_command *cmd) {
    pp_flag flags[PP_CLI_MAX_FLAGS];
    int n = cmd->flags ? cmd->flags(flags) : 0, tests = 0;
    pp__cli_usage(out, cmd->usage);
    fprintf(out, "\nFlags (--flag VALUE or --flag=VALUE):\n");
    for (int i = 0; i < n; i++) {
        if (flags[i].for_tests) tests++;
        else help_row(out, &flags[i]);
    }
    fprintf(out, "  -h, --help%*sthis help\n", HELP_COLUMN - 12, "");
    if (tests) fprintf(out, "\nFor the kit's own tests and diagnosis (a user never needs them):\n");
    for (int i = 0; i < n; i++)
        if (flags[i].for_tests) help_row(out, &flags[i]);
    if (cmd->notes) fputc('\n', out), pp__cli_usage(out, cmd->notes);
}

int pp__cli_writable(const char *path, char *err, size_t len) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir) dir[1] = 0;
    else if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, len, "%s: its folder %s does not exist: create it first", path, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK)) {
        snprintf(err, len, "%s: cannot write in %s (%s)", path, dir, strerror(errno));
        return -1;
    }
    if (stat(path, &st) == 0 && (S_ISDIR(st.st_mode) || access(path, W_OK))) {
        snprintf(err, len, "%s: %s", path, S_ISDIR(st.st_mode) ? "is a folder: give a file's name" : strerror(errno));
        return -1;
    }
    return 0;
}
