/* report_term.c: the grader's terminal output (progress lines, per-lab summary, demo table) and the small
 * helpers the file reports share (verdict, lab order, failure text, points, the cleaning and marking of text the
 * grader did not write). */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "impl_build.h"
#include "suite.h"

#define C_GREEN "\033[32m"
#define C_RED "\033[31m"
#define C_YELLOW "\033[33m"
#define C_BOLD "\033[1m"
#define C_RESET "\033[0m"

/* The progress line pads the test name with dots up to this column, so scores line up. */
#define NAME_COL 44
/* Widest per-rank peak list the table shows before falling back to "max N". */
#define PEAK_COL 14


/* Fixed-size fields come from a child process over a pipe: never trust them to be terminated. */
static int field_len(const char *s, size_t size) { return (int)strnlen(s, size); }
#define FIELD(s) field_len((s), sizeof(s)), (s)

static int nchecks_of(const pp_test_result *r) {
    return r->nchecks < 0 ? 0 : r->nchecks > PP_MAX_CHECKS ? PP_MAX_CHECKS : r->nchecks;
}

static int run_failed(const pp_test_result *r) { return r->status != PP_OK || r->timed_out || r->crashed; }

int pp__report_passed(const pp_test_result *r) {
    if (run_failed(r)) return 0;
    for (int i = 0; i < nchecks_of(r); i++)
        if (!r->checks[i].passed) return 0;
    return r->score >= r->max - 1e-9;
}

const char *pp__report_run_verdict(const pp_test_result *r) {
    if (!run_failed(r)) return NULL;
    if (r->timed_out) return "timeout";
    if (r->crashed) return "crash";
    if (r->status == PP_ERR_COMPILE) return "compile error";
    return pp__status_str(r->status);
}

void pp__report_name_unique(pp_test_result *r, int i) {
    char base[sizeof r->name];
    memcpy(base, r[i].name, sizeof base);
    base[sizeof base - 1] = 0;
    for (int k = 2;; k++) {
        int taken = 0;
        for (int j = 0; j < i && !taken; j++) taken = !strncmp(r[j].name, r[i].name, sizeof r->name);
        if (!taken) return;
        /* the suffix always fits: a long base is cut to make room for it */
        char suffix[16];
        int sl = snprintf(suffix, sizeof suffix, " #%d", k);
        int keep = (int)strnlen(base, sizeof r->name - 1 - (size_t)sl);
        snprintf(r[i].name, sizeof r->name, "%.*s%s", keep, base, suffix);
    }
}

const char *pp__report_points(double p, char *buf, size_t len) {
    if (!isfinite(p))
        snprintf(buf, len, "-");
    else if (fabs(p - round(p)) < 1e-9)
        snprintf(buf, len, "%.0f", round(p) == 0 ? 0.0 : round(p)); /* never "-0" */
    else {
        snprintf(buf, len, "%.2f", p);
        char *e = buf + strlen(buf);
        while (e > buf && e[-1] == '0') *--e = '\0';
    }
    return buf;
}

int pp__report_labs(const pp_test_result *r, int n, const char **labs, int max) {
    int k = 0; /* the labs' own order first (the warm-up, then the schedule table's), then any other */
    for (int j = 0; j < pp__nlabs; j++)
        for (int i = 0; i < n && k < max; i++)
            if (strncmp(r[i].cfg.lab, pp__labs[j].name, sizeof r[i].cfg.lab) == 0) {
                labs[k++] = r[i].cfg.lab;
                break;
            }
    for (int i = 0; i < n && k < max; i++) {
        int seen = 0;
        for (int j = 0; j < k && !seen; j++) seen = strncmp(labs[j], r[i].cfg.lab, sizeof r[i].cfg.lab) == 0;
        if (!seen) labs[k++] = r[i].cfg.lab;
    }
    return k;
}

/* A shared, bounded appender: keeps going after truncation so callers need no checks. */
typedef struct {
    char *buf;
    size_t len, used;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->used + 1 >= b->len) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->buf + b->used, b->len - b->used, fmt, ap);
    va_end(ap);
    if (w > 0) b->used += (size_t)w < b->len - b->used ? (size_t)w : b->len - b->used - 1;
}

/* What the run's failure was, when r->error says nothing. */
static const char *run_failure_fallback(const pp_test_result *r, char *buf, size_t len) {
    if (r->timed_out)
        snprintf(buf, len, "timed out after %.1f s (an endless wait or loop in the schedule?)", r->cfg.time_limit_s);
    else if (r->crashed)
        snprintf(buf, len, "crashed before reporting a result");
    else
        snprintf(buf, len, "%s", pp__status_str(r->status));
    return buf;
}

void pp__report_failure_text(const pp_test_result *r, int with_output, char *buf, size_t len) {
    if (!len) return;
    sbuf b = {buf, len, 0};
    buf[0] = '\0';
    char p1[32], p2[32];
    for (int i = 0; i < nchecks_of(r); i++) {
        const pp_check *c = &r->checks[i];
        if (c->passed) continue;
        char *msg = pp__report_clean(c->msg, sizeof c->msg);
        sb_printf(&b, "- %.*s (%s/%s): %s\n", FIELD(c->name), pp__report_points(c->points, p1, sizeof p1),
                  pp__report_points(c->max, p2, sizeof p2), msg ? msg : "(out of memory)");
        free(msg);
    }
    if (run_failed(r)) {
        char fb[128];
        if (field_len(r->error, sizeof r->error) > 0) {
            char *error = pp__report_error(r);
            sb_printf(&b, "run: %s\n", error ? error : "(out of memory)");
            free(error);
        } else {
            sb_printf(&b, "run: %s\n", run_failure_fallback(r, fb, sizeof fb));
        }
    } else if (b.used == 0 && !pp__report_passed(r)) {
        sb_printf(&b, "scored %s of %s points\n", pp__report_points(r->score, p1, sizeof p1),
                  pp__report_points(r->max, p2, sizeof p2));
    }
    if (with_output && b.used > 0 && field_len(r->output_tail, sizeof r->output_tail) > 0) {
        char *tail = pp__report_quote(r->output_tail, sizeof r->output_tail);
        sb_printf(&b, "output (last lines):\n%s", tail ? tail : PP_REPORT_MARK "(out of memory)");
        free(tail);
    }
    while (b.used > 0 && buf[b.used - 1] == '\n') buf[--b.used] = '\0';
}

/* Prints text, made by pp__report_clean or pp__report_quote (so it holds no control character but tab and
 * newline), one line at a time: the first after first_prefix, the others after prefix; NULL (memory ran out)
 * prints a note instead. Frees text. */
static void print_lines(FILE *out, char *text, const char *first_prefix, const char *prefix) {
    const char *t = text ? text : "(out of memory)";
    size_t n = strlen(t);
    while (n > 0 && t[n - 1] == '\n') n--;
    fputs(first_prefix, out);
    for (size_t i = 0; i < n; i++) {
        fputc(t[i], out);
        if (t[i] == '\n') fputs(prefix, out);
    }
    fputc('\n', out);
    free(text);
}

/* Long failure reports already printed in this run (a deadlock's several lines), so that the same one in a later
 * test is referenced instead of repeated. Reset by the run's first test. */
enum { SEEN_MAX = 64 };
static struct {
    uint64_t hash;
    int index;
    char name[96];
} seen[SEEN_MAX];
static int nseen;

static uint64_t text_hash(const char *s, size_t max) { return pp__hash_text(PP_HASH_INIT, s, max); }

/* The earlier test whose failure text was the same as r's (an index into seen), or -1 after remembering r's. */
static int seen_before(const pp_test_result *r, int index) {
    if (index <= 1) nseen = 0;
    const char *nl = memchr(r->error, '\n', sizeof r->error);
    if (!nl || !memchr(nl + 1, '\n', sizeof r->error - (size_t)(nl + 1 - r->error))) return -1; /* short: repeat */
    uint64_t h = text_hash(r->error, sizeof r->error);
    for (int i = 0; i < nseen; i++)
        if (seen[i].hash == h) return i;
    if (nseen < SEEN_MAX) {
        seen[nseen].hash = h;
        seen[nseen].index = index;
        snprintf(seen[nseen].name, sizeof seen[nseen].name, "%.*s", FIELD(r->name));
        nseen++;
    }
    return -1;
}

/* What a check that was not graded waits for, as the end of "not graded until ...": the file compiling, the run
 * completing, the gradients, or what its own message names ("not graded until the gpipe order is right", the
 * warm-up's). */
static const char *gated_reason(const pp_test_result *r, const pp_check *c) {
    static const char until[] = "not graded until ";
    if (r->status == PP_ERR_COMPILE) return "the file compiles";
    if (run_failed(r)) return "the run completes";
    if (!strncmp(c->msg, until, sizeof until - 1)) return c->msg + sizeof until - 1;
    if (strstr(c->msg, "gradients must be right")) return "the gradients are right";
    return "the checks above pass";
}

void pp__report_progress(FILE *out, const pp_test_result *r, int index, int total, int color) {
    int ok = pp__report_passed(r);
    int width = snprintf(NULL, 0, "%d", total > 0 ? total : 0);
    char p1[32], p2[32], score[80];
    snprintf(score, sizeof score, "%s/%s", pp__report_points(r->score, p1, sizeof p1),
             pp__report_points(r->max, p2, sizeof p2));

    int nlen = field_len(r->name, sizeof r->name);
    fprintf(out, "[%*d/%d] %.*s ", width, index, total, nlen, r->name);
    for (int col = nlen + 1; col < NAME_COL || col < nlen + 3; col++) fputc('.', out);
    const char *word = ok ? "ok" : "FAIL";
    if (color)
        fprintf(out, " %7s  %s%s%s  (%.2f s)\n", score, ok ? C_GREEN : C_RED, word, C_RESET, r->seconds);
    else
        fprintf(out, " %7s  %s  (%.2f s)\n", score, word, r->seconds);
    /* an order that did better than the canonical one keeps its points, and hears by how much and where (a test
     * that lost points hears of its failures instead) */
    for (int i = 0; ok && i < nchecks_of(r); i++) {
        const pp_check *c = &r->checks[i];
        if (!c->passed || !c->better) continue;
        char head[160];
        snprintf(head, sizeof head, "    + %.*s (%s/%s): ", FIELD(c->name), pp__report_points(c->points, p1, sizeof p1),
                 pp__report_points(c->max, p2, sizeof p2));
        print_lines(out, pp__report_clean(c->msg, sizeof c->msg), head, "      ");
    }
    if (ok) return;

    /* the cause first: a failed run, else the failed checks; checks gated on an earlier failure in one line */
    if (run_failed(r)) {
        const char *label = color ? "    " C_YELLOW "run:" C_RESET " " : "    run: ";
        int same = field_len(r->error, sizeof r->error) > 0 ? seen_before(r, index) : -1;
        if (same >= 0) {
            char ref[200];
            snprintf(ref, sizeof ref, "the same failure as [%d] %s, shown in full above", seen[same].index,
                     seen[same].name);
            print_lines(out, pp__report_clean(ref, sizeof ref), label, "      ");
        } else if (field_len(r->error, sizeof r->error) > 0) {
            print_lines(out, pp__report_error(r), label, "      ");
        } else {
            char fb[128];
            run_failure_fallback(r, fb, sizeof fb);
            print_lines(out, pp__report_clean(fb, sizeof fb), label, "      ");
        }
    }
    /* checks gated on another: one line per reason they wait for */
    const char *reasons[PP_MAX_CHECKS];
    int nreasons = 0, gated_total = 0;
    for (int i = 0; i < nchecks_of(r); i++) {
        const pp_check *c = &r->checks[i];
        if (c->passed) continue;
        if (!strncmp(c->msg, "not graded", 10)) {
            const char *why = gated_reason(r, c);
            int k = 0;
            while (k < nreasons && strcmp(reasons[k], why)) k++;
            if (k == nreasons) reasons[nreasons++] = why;
            gated_total++;
            continue;
        }
        char head[160];
        snprintf(head, sizeof head, "    - %.*s (%s/%s): ", FIELD(c->name), pp__report_points(c->points, p1, sizeof p1),
                 pp__report_points(c->max, p2, sizeof p2));
        print_lines(out, pp__report_clean(c->msg, sizeof c->msg), head, "      ");
    }
    for (int k = 0; k < nreasons; k++) {
        int gated = 0;
        double gated_pts = 0;
        for (int i = 0; i < nchecks_of(r); i++) {
            const pp_check *c = &r->checks[i];
            if (!c->passed && !strncmp(c->msg, "not graded", 10) && !strcmp(gated_reason(r, c), reasons[k]))
                gated++, gated_pts += c->max;
        }
        fprintf(out, "    - %d %scheck%s (%s points): not graded until %s\n", gated,
                gated_total < nchecks_of(r) ? "more " : "", gated == 1 ? "" : "s",
                pp__report_points(gated_pts, p1, sizeof p1), reasons[k]);
    }
    if (field_len(r->output_tail, sizeof r->output_tail) > 0) {
        fputs("    output (last lines):\n", out);
        print_lines(out, pp__report_quote(r->output_tail, sizeof r->output_tail), "      ", "      ");
    }
}

void pp__report_summary(FILE *out, const pp_test_result *r, int n, int color) {
    const char *labs[64];
    int nlabs = pp__report_labs(r, n, labs, 64);
    double score = 0, max = 0;
    int lost = 0;
    char p1[32], p2[32], s[80];
    if (nlabs > 0) fputs("Score by lab:\n", out);
    /* the name column is as wide as the longest name, so the scores line up whatever the table holds */
    int wide = 12;
    for (int l = 0; l < nlabs; l++) {
        int w = (int)strnlen(labs[l], sizeof r->cfg.lab);
        if (w > wide) wide = w;
    }
    for (int l = 0; l < nlabs; l++) {
        double ls = 0, lm = 0;
        int tests = 0, passed = 0;
        for (int i = 0; i < n; i++) {
            if (strncmp(r[i].cfg.lab, labs[l], sizeof r[i].cfg.lab) != 0) continue;
            ls += r[i].score;
            lm += r[i].max;
            tests++;
            passed += pp__report_passed(&r[i]);
        }
        snprintf(s, sizeof s, "%s/%s", pp__report_points(ls, p1, sizeof p1), pp__report_points(lm, p2, sizeof p2));
        const char *c0 = !color ? "" : passed == tests ? C_GREEN : C_RED, *c1 = color ? C_RESET : "";
        fprintf(out, "  %-*.*s %s%9s%s   (%d of %d tests passed)\n", wide, (int)sizeof r->cfg.lab, labs[l], c0, s,
                c1, passed, tests);
    }
    int better = 0;
    for (int i = 0; i < n; i++) {
        score += r[i].score;
        max += r[i].max;
        lost += !pp__report_passed(&r[i]);
        int any = 0;
        for (int k = 0; k < nchecks_of(&r[i]); k++) any |= r[i].checks[k].better;
        better += any && pp__report_passed(&r[i]);
    }
    if (better)
        fprintf(out, "%d test%s did better than the canonical order (the + lines): outcomes are graded, not the "
                "order\n", better, better == 1 ? "" : "s");
    fprintf(out, "Score: %s/%s\n", pp__report_points(score, p1, sizeof p1), pp__report_points(max, p2, sizeof p2));
    const char *on = color ? C_BOLD : "", *green = color ? C_GREEN : "", *red = color ? C_RED : "",
               *off = color ? C_RESET : "";
    if (n == 0)
        fprintf(out, "%s%sNOT FULL MARKS: no tests ran%s\n", on, red, off);
    else if (lost == 0)
        fprintf(out, "%s%sFULL MARKS%s\n", on, green, off);
    else
        fprintf(out, "%s%sNOT FULL MARKS: %d test%s lost points%s\n", on, red, lost, lost == 1 ? "" : "s", off);
}

/* "11 9 7 5" when it fits the column, else "max 11"; "-" without ranks. */
static void peak_cell(const pp_test_result *r, char *buf, size_t len) {
    int P = r->cfg.P < 0 ? 0 : r->cfg.P > PP_MAX_RANKS ? PP_MAX_RANKS : r->cfg.P;
    if (P == 0) {
        snprintf(buf, len, "-");
        return;
    }
    sbuf b = {buf, len, 0};
    int mx = r->peak[0];
    for (int i = 0; i < P; i++) {
        sb_printf(&b, i ? " %d" : "%d", r->peak[i]);
        if (r->peak[i] > mx) mx = r->peak[i];
    }
    if (strlen(buf) > PEAK_COL) snprintf(buf, len, "max %d", mx);
}

static void number_cell(char *buf, size_t len, const char *fmt, double x, int valid) {
    if (valid && !isnan(x))
        snprintf(buf, len, fmt, x);
    else
        snprintf(buf, len, "-");
}

/* What sets a test apart beyond lab, P, M and v: its latency, recomputation, steps, sizes, warm-up part, and
 * whether it came from a configuration file; empty for a plain default test. */
static void config_cell(const pp_test_result *t, char *buf, size_t len) {
    sbuf b = {buf, len, 0};
    buf[0] = '\0';
    const pp_test_config *c = &t->cfg;
    char knobs[128];
    pp__test_knobs(c, knobs, sizeof knobs);
    /* a warm-up part runs no model: its part, and whether its cases were drawn, are all that set it apart (never
     * the seed: a student who had it could draw the cases themselves) */
    if (c->part[0]) sb_printf(&b, " part=%.*s", FIELD(c->part));
    else sb_printf(&b, "%s", knobs);
    if (c->part[0] && c->drawn) sb_printf(&b, " drawn cases");
    if (c->secret) sb_printf(&b, " (hidden test)");
    if (b.used > 0) memmove(buf, buf + 1, b.used); /* the leading space */
}

void pp__report_table(FILE *out, const pp_test_result *r, int n) {
    fprintf(out, "# %-11s %4s %4s %3s %8s %8s  %-*s %9s %9s  %-6s %s\n", "lab", "P", "M", "v", "bubble", "theory",
            PEAK_COL, "peak stashes", "grad err", "score", "result", "config");
    for (int i = 0; i < n; i++) {
        const pp_test_result *t = &r[i];
        int done = !run_failed(t);
        char bub[32], th[32], peaks[256], ge[32], p1[32], p2[32], sc[80], cfg[200];
        number_cell(bub, sizeof bub, "%.4f", t->bubble, done);
        number_cell(th, sizeof th, "%.4f", t->theory, 1);
        number_cell(ge, sizeof ge, "%.1e", t->grad_err, done);
        if (done)
            peak_cell(t, peaks, sizeof peaks);
        else
            snprintf(peaks, sizeof peaks, "-");
        snprintf(sc, sizeof sc, "%s/%s", pp__report_points(t->score, p1, sizeof p1),
                 pp__report_points(t->max, p2, sizeof p2));
        config_cell(t, cfg, sizeof cfg);
        const char *verdict = pp__report_passed(t) ? "ok" : "FAIL";
        fprintf(out, "  %-11.*s %4d %4d %3d %8s %8s  %-*s %9s %9s  ", FIELD(t->cfg.lab), t->cfg.P, t->cfg.M, t->cfg.v,
                bub, th, PEAK_COL, peaks, ge, sc);
        /* no trailing blanks on a row without a config note */
        if (cfg[0])
            fprintf(out, "%-6s %s\n", verdict, cfg);
        else
            fprintf(out, "%s\n", verdict);
    }
}

char *pp__report_error(const pp_test_result *r) {
    size_t n = strnlen(r->error, sizeof r->error);
    const char *nl = memchr(r->error, '\n', n);
    /* A compile error is the compiler's messages after the grader's "compile error in FILE:" line; the compiler
     * quotes the student's file, and #line or #error put any text at the start of its lines. In every other error
     * the runtime marked what is not the grader's (a pp_fail message, a driver's detail) as it wrote it. */
    if (!nl || r->status != PP_ERR_COMPILE) return pp__report_clean(r->error, n);
    size_t head = (size_t)(nl + 1 - r->error);
    char *first = pp__report_clean(r->error, head), *rest = pp__report_quote(nl + 1, n - head);
    char *o = first && rest ? malloc(strlen(first) + strlen(rest) + 1) : NULL;
    if (o) strcat(strcpy(o, first), rest);
    free(first);
    free(rest);
    return o;
}

int pp__report_write(const char *path, const char *text, const char *what) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "pplab: cannot write the %s to '%s': %s (check that the folder exists and is writable)\n",
                what, path, strerror(errno));
        return -1;
    }
    size_t len = strlen(text);
    int bad = fwrite(text, 1, len, f) != len;
    int err = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (bad) {
        fprintf(stderr, "pplab: writing the %s to '%s' failed: %s (check the free disk space)\n", what, path,
                strerror(err));
        return -1;
    }
    return 0;
}
