/* report_junit.c: the grader's JUnit XML report, one <testsuite> per lab, so CI systems show each graded
 * configuration as a test case with its failed checks and the student's output. The shape is the one Ant's
 * XMLJUnitResultFormatter writes and Jenkins, GitLab and GitHub read; tests/junit.xsd pins it down. */
#include "report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Writes up to max bytes of s cleaned (pp__report_clean: of the control characters only tab and newline are
 * left) and XML-escaped. In attributes, tab and newline become character references (a parser would fold them
 * into spaces otherwise); the non-characters U+FFFE and U+FFFF cannot appear in XML 1.0 at all and become '?'. */
static void xml_put(FILE *f, const char *s, size_t max, int attr) {
    char *clean = pp__report_clean(s ? s : "", s ? max : 1);
    if (!clean) return; /* the caller notices through the stream's error state or out of memory later */
    for (const unsigned char *p = (const unsigned char *)clean; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        case '\n': fputs(attr ? "&#10;" : "\n", f); break;
        case '\t': fputs(attr ? "&#9;" : "\t", f); break;
        default:
            if (p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf)) {
                fputc('?', f);
                p += 2;
            } else {
                fputc(*p, f);
            }
        }
    }
    free(clean);
}

static void xml_str(FILE *f, const char *s) { xml_put(f, s, s ? strlen(s) : 0, 1); }

/* JUnit tells an <error> (the test could not run to its verdict: a crash, a timeout, a file that does not
 * compile, a call the sandbox refused, a limit hit) from a <failure> (the schedule ran and a check found it
 * wrong). A deadlock or a misused handle is the schedule's own mistake, diagnosed like a wrong gradient, so it
 * is a failure. */
static int is_error(const pp_test_result *r) {
    if (r->timed_out || r->crashed) return 1;
    switch (r->status) {
    case PP_ERR_CRASH:
    case PP_ERR_TIMEOUT:
    case PP_ERR_COMPILE:
    case PP_ERR_SANDBOX:
    case PP_ERR_LIMIT:
    case PP_ERR_IO:
    case PP_ERR_BACKEND:
    case PP_ERR_NODEVICE:
    case PP_ERR_LOST:
    case PP_ERR_INTERNAL:
        return 1;
    default:
        return 0;
    }
}

/* Why a test failed, kind first: the type attribute. */
static const char *failure_type(const pp_test_result *r) {
    const char *v = pp__report_run_verdict(r);
    return v ? v : "failed checks";
}

/* The failure's message attribute: score, the failed checks' names and the error's first line. */
static void failure_message(FILE *f, const pp_test_result *r) {
    char p1[32], p2[32], *msg = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&msg, &len);
    if (!m) return;
    fprintf(m, "scored %s/%s", pp__report_points(r->score, p1, sizeof p1), pp__report_points(r->max, p2, sizeof p2));
    int nchecks = r->nchecks < 0 ? 0 : r->nchecks > PP_MAX_CHECKS ? PP_MAX_CHECKS : r->nchecks;
    int first = 1;
    for (int i = 0; i < nchecks; i++) {
        const pp_check *c = &r->checks[i];
        if (c->passed) continue;
        fprintf(m, "%s%.*s (%s/%s)", first ? "; failed: " : ", ", (int)strnlen(c->name, sizeof c->name), c->name,
                pp__report_points(c->points, p1, sizeof p1), pp__report_points(c->max, p2, sizeof p2));
        first = 0;
    }
    if (r->status != PP_OK || r->timed_out || r->crashed) {
        size_t elen = strnlen(r->error, sizeof r->error);
        const char *nl = memchr(r->error, '\n', elen);
        if (elen > 0)
            fprintf(m, "; run: %.*s", (int)(nl ? (size_t)(nl - r->error) : elen), r->error);
        else
            fprintf(m, "; run: %s", r->timed_out ? "timed out" : r->crashed ? "crashed" : pp__status_str(r->status));
    }
    if (fclose(m) == 0) xml_put(f, msg, len, 1);
    free(msg);
}

static void write_case(FILE *f, const pp_test_result *r) {
    fputs("    <testcase name=\"", f);
    xml_put(f, r->name, sizeof r->name, 1);
    fputs("\" classname=\"pplab.", f);
    xml_put(f, r->cfg.lab, sizeof r->cfg.lab, 1);
    fprintf(f, "\" time=\"%.3f\">\n", r->seconds);
    if (!pp__report_passed(r)) {
        const char *tag = is_error(r) ? "error" : "failure";
        char text[8192];
        pp__report_failure_text(r, 0, text, sizeof text);
        fprintf(f, "      <%s message=\"", tag);
        failure_message(f, r);
        fprintf(f, "\" type=\"%s\">", failure_type(r));
        xml_put(f, text, sizeof text, 0);
        fprintf(f, "</%s>\n", tag);
    }
    if (strnlen(r->output_tail, sizeof r->output_tail) > 0) {
        char *tail = pp__report_quote(r->output_tail, sizeof r->output_tail);
        fputs("      <system-out>", f);
        xml_put(f, tail ? tail : PP_REPORT_MARK "(out of memory)", SIZE_MAX, 0);
        fputs("</system-out>\n", f);
        free(tail);
    }
    fputs("    </testcase>\n", f);
}

/* Counts of one lab's tests (lab NULL: all of them) that lost points by a failure and by an error. */
static void count(const pp_test_result *r, int n, const char *lab, int *tests, int *failures, int *errors,
                  double *seconds, double *score, double *max) {
    *tests = *failures = *errors = 0;
    *seconds = *score = *max = 0;
    for (int i = 0; i < n; i++) {
        if (lab && strncmp(r[i].cfg.lab, lab, sizeof r[i].cfg.lab) != 0) continue;
        ++*tests;
        if (!pp__report_passed(&r[i])) ++*(is_error(&r[i]) ? errors : failures);
        *seconds += r[i].seconds;
        *score += r[i].score;
        *max += r[i].max;
    }
}

static void write_suites(FILE *f, const pp_test_result *r, int n, const char *impl, const char *backend) {
    int tests, failures, errors;
    double seconds, score, max;
    count(r, n, NULL, &tests, &failures, &errors, &seconds, &score, &max);
    /* Ant's format: local time without a zone, and the machine's name, on every suite */
    char stamp[32] = "1970-01-01T00:00:00", host[256] = "localhost";
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm)) strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    if (gethostname(host, sizeof host - 1) != 0 || !host[0]) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = 0;
    char p1[32], p2[32];
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<testsuites name=\"pplab\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n", tests,
            failures, errors, seconds);
    const char *labs[64];
    int nlabs = pp__report_labs(r, n, labs, 64);
    for (int l = 0; l < nlabs; l++) {
        int lt, lf, le;
        double secs, ls, lm;
        count(r, n, labs[l], &lt, &lf, &le, &secs, &ls, &lm);
        fprintf(f, "  <testsuite id=\"%d\" name=\"", l);
        xml_put(f, labs[l], sizeof r->cfg.lab, 1);
        fprintf(f, "\" package=\"pplab\" timestamp=\"%s\" hostname=\"", stamp);
        xml_str(f, host);
        fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" time=\"%.3f\">\n", lt, lf, le, secs);
        fputs("    <properties>\n      <property name=\"impl\" value=\"", f);
        xml_str(f, impl);
        fputs("\"/>\n      <property name=\"backend\" value=\"", f);
        xml_str(f, backend);
        fprintf(f, "\"/>\n      <property name=\"score\" value=\"%s\"/>\n", pp__report_points(ls, p1, sizeof p1));
        fprintf(f, "      <property name=\"max_score\" value=\"%s\"/>\n    </properties>\n",
                pp__report_points(lm, p2, sizeof p2));
        for (int i = 0; i < n; i++)
            if (strncmp(r[i].cfg.lab, labs[l], sizeof r[i].cfg.lab) == 0) write_case(f, &r[i]);
        fputs("  </testsuite>\n", f);
    }
    fprintf(f, "  <!-- score %s/%s -->\n", pp__report_points(score, p1, sizeof p1),
            pp__report_points(max, p2, sizeof p2));
    fputs("</testsuites>\n", f);
}

int pp__report_junit(const char *path, const pp_test_result *r, int n, const char *impl, const char *backend) {
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) {
        fprintf(stderr, "pplab: cannot build the JUnit report for '%s': out of memory (free some memory and rerun)\n",
                path);
        return -1;
    }
    write_suites(m, r, n, impl, backend);
    int bad = ferror(m);
    if (fclose(m) != 0 || bad || !text) {
        free(text);
        fprintf(stderr, "pplab: cannot build the JUnit report for '%s': out of memory (free some memory and rerun)\n",
                path);
        return -1;
    }
    int rc = pp__report_write(path, text, "JUnit report");
    free(text);
    return rc;
}
