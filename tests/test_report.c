/* test_report.c: the grader's report writers on hand-made results (full marks, a failed check, a timeout
 * whose output needs escaping): terminal progress and summary lines, the demo table, and the JSON, JUnit XML
 * and Gradescope files read back; the JUnit XML validated against tests/junit.xsd, also from a real grading run.
 * Then forged verdicts: output, errors and check messages that hide "Score: 12/12" behind every character some
 * reader breaks a line at, read back from every report as a Python script would, and a real submission that
 * prints them. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"
#include "suite.h"
#include "testutil.h"

/* The student's output of the timed-out test: markup and quote characters, a newline, an escape sequence; and
 * as every report shows it, each line marked, the escape character made visible. */
#define TAIL "step 1 <&>\"'\nstep 2 \033[31mred\033[0m\n"
#define TAIL_SHOWN "| step 1 <&>\"'\n| step 2 ?[31mred?[0m\n"

static pp_check check(const char *name, double max, int passed, const char *msg) {
    pp_check c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.max = max;
    c.points = passed ? max : 0;
    c.passed = passed;
    snprintf(c.msg, sizeof c.msg, "%s", msg);
    return c;
}

static void base(pp_test_result *r, const char *lab, int P, int M, int v, unsigned seed) {
    memset(r, 0, sizeof *r);
    snprintf(r->cfg.lab, sizeof r->cfg.lab, "%s", lab);
    r->cfg.P = P;
    r->cfg.M = M;
    r->cfg.v = v;
    r->cfg.steps = 1;
    r->cfg.seed = seed;
    r->cfg.layers = 8;
    r->cfg.time_limit_s = 10;
    if (v > 1)
        snprintf(r->name, sizeof r->name, "%s P=%d M=%d v=%d seed=%u", lab, P, M, v, seed);
    else
        snprintf(r->name, sizeof r->name, "%s P=%d M=%d seed=%u", lab, P, M, seed);
    r->status = PP_OK;
    r->grad_err = NAN;
    r->bubble = NAN;
}

static void add(pp_test_result *r, pp_check c) {
    r->checks[r->nchecks++] = c;
    r->score += c.points;
    r->max += c.max;
}

/* r[0] gpipe full marks, r[1] 1f1b with a failed gradients check, r[2] interleaved timed out with output,
 * r[3] warm-up full marks. Totals: 10 + 6 + 0 + 5 = 21 of 35. */
static void make_results(pp_test_result r[4]) {
    base(&r[0], "gpipe", 4, 8, 1, 3);
    add(&r[0], check("gradients", 4, 1, "rel err 1.2e-07 <= 1e-05"));
    add(&r[0], check("bubble", 3, 1, "0.2727 == 0.2727"));
    add(&r[0], check("peak stashes", 3, 1, "8 8 8 8 within 8 8 8 8"));
    r[0].bubble = r[0].theory = 3.0 / 11.0;
    for (int i = 0; i < 4; i++) r[0].peak[i] = r[0].peak_bound[i] = 8;
    r[0].grad_err = 1.2e-7;
    r[0].seconds = 0.12;

    base(&r[1], "1f1b", 4, 8, 1, 1);
    add(&r[1], check("gradients", 4, 0,
                     "expected rel err <= 1e-05, got 0.125 on rank 2 W1\nhint: is the loss scaled by 1/M?"));
    add(&r[1], check("bubble", 3, 1, "0.2727 == 0.2727"));
    add(&r[1], check("peak stashes", 3, 1, "4 3 2 1 within 4 3 2 1"));
    r[1].bubble = r[1].theory = 3.0 / 11.0;
    for (int i = 0; i < 4; i++) r[1].peak[i] = r[1].peak_bound[i] = 4 - i;
    r[1].grad_err = 0.125;
    r[1].seconds = 0.2;

    base(&r[2], "interleaved", 4, 8, 2, 2);
    r[2].status = PP_ERR_TIMEOUT;
    r[2].timed_out = 1;
    r[2].max = 10;
    r[2].theory = 0.1579;
    r[2].seconds = 10.05;
    snprintf(r[2].error, sizeof r[2].error, "no progress for 10.0 s: rank 1 waits in recv(mb 3)\nrank 2 waits in "
                                            "send(mb 4)");
    snprintf(r[2].output_tail, sizeof r[2].output_tail, "%s", TAIL);

    base(&r[3], "warmup", 4, 8, 1, 0);
    snprintf(r[3].cfg.part, sizeof r[3].cfg.part, "bubble");
    snprintf(r[3].name, sizeof r[3].name, "warmup bubble");
    add(&r[3], check("bubble formula", 5, 1, "ok"));
    r[3].seconds = 0.01;
}

/* Runs one terminal writer into a string the caller frees. */
#define CAPTURE(var, call)                                                                                      \
    char *var = NULL;                                                                                           \
    do {                                                                                                        \
        size_t len_;                                                                                            \
        FILE *out = open_memstream(&var, &len_);                                                                \
        cr_assert(out != NULL);                                                                                 \
        call;                                                                                                   \
        fclose(out);                                                                                            \
    } while (0)

static int count(const char *hay, const char *needle) {
    int k = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + strlen(needle), needle)) k++;
    return k;
}

static void tmp_path(char *buf, size_t len) {
    const char *dir = getenv("TMPDIR");
    snprintf(buf, len, "%s/pplab-report-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(buf);
    cr_assert(fd >= 0, "cannot create a temporary file %s", buf);
    close(fd);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "report %s was not written", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert(fread(s, 1, (size_t)n, f) == (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

Test(report, progress_full_marks, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    CAPTURE(s, pp__report_progress(out, &r[0], 3, 52, 0));
    cr_expect(strncmp(s, "[ 3/52] gpipe P=4 M=8 seed=3 ....", 33) == 0, "got: %s", s);
    cr_expect(strstr(s, " 10/10  ok  (0.12 s)\n") != NULL, "got: %s", s);
    cr_expect(count(s, "\n") == 1, "a passed test takes one line; got: %s", s);
    cr_expect(strchr(s, '\033') == NULL, "colour without color set: %s", s);
    free(s);
}

Test(report, progress_names_line_up, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    CAPTURE(a, pp__report_progress(out, &r[0], 1, 4, 0));
    CAPTURE(b, pp__report_progress(out, &r[3], 4, 4, 0));
    cr_expect(strstr(a, "  ok") - a == strstr(b, "  ok") - b, "scores not aligned:\n%s%s", a, b);
    free(a);
    free(b);
}

Test(report, progress_failed_check, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    CAPTURE(s, pp__report_progress(out, &r[1], 2, 4, 0));
    cr_expect(strstr(s, "6/10  FAIL  (0.20 s)\n") != NULL, "got: %s", s);
    cr_expect(strstr(s, "\n    - gradients (0/4): expected rel err <= 1e-05, got 0.125 on rank 2 W1\n"
                        "      hint: is the loss scaled by 1/M?\n") != NULL,
              "got: %s", s);
    cr_expect(strstr(s, "bubble") == NULL, "passed checks are not listed: %s", s);
    cr_expect(strstr(s, "run:") == NULL, "the run completed: %s", s);
    free(s);
}

Test(report, progress_timeout_with_output, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    CAPTURE(s, pp__report_progress(out, &r[2], 3, 4, 0));
    cr_expect(strstr(s, "0/10  FAIL") != NULL, "got: %s", s);
    cr_expect(strstr(s, "\n    run: no progress for 10.0 s: rank 1 waits in recv(mb 3)\n      rank 2 waits in "
                        "send(mb 4)\n") != NULL,
              "got: %s", s);
    cr_expect(strstr(s, "\n    output (last lines):\n      | step 1 <&>\"'\n      | step 2 ?[31mred?[0m\n") != NULL,
              "got: %s", s);
    cr_expect(strchr(s, '\033') == NULL, "the student's escape sequences reach the terminal: %s", s);
    free(s);
    snprintf(r[2].output_tail, sizeof r[2].output_tail, "bad \xff byte");
    CAPTURE(t, pp__report_progress(out, &r[2], 3, 4, 0));
    cr_expect(strstr(t, "      | bad ? byte\n") != NULL, "invalid UTF-8 reaches the terminal: %s", t);
    free(t);
}

Test(report, progress_timeout_without_error_text, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    r[2].error[0] = '\0';
    CAPTURE(s, pp__report_progress(out, &r[2], 3, 4, 0));
    cr_expect(strstr(s, "    run: timed out after 10.0 s") != NULL, "got: %s", s);
    free(s);
}

Test(report, progress_colour, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    CAPTURE(a, pp__report_progress(out, &r[0], 1, 4, 1));
    CAPTURE(b, pp__report_progress(out, &r[2], 3, 4, 1));
    cr_expect(strstr(a, "\033[32mok\033[0m") != NULL, "got: %s", a);
    cr_expect(strstr(b, "\033[31mFAIL\033[0m") != NULL, "got: %s", b);
    cr_expect(strstr(b, "\033[33mrun:\033[0m") != NULL, "got: %s", b);
    free(a);
    free(b);
}

Test(report, summary_not_full_marks, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    CAPTURE(s, pp__report_summary(out, r, 4, 0));
    const char *w = strstr(s, "  warmup "), *g = strstr(s, "  gpipe "), *f = strstr(s, "  1f1b "),
               *i = strstr(s, "  interleaved ");
    cr_assert(w && g && f && i, "a lab is missing: %s", s);
    cr_expect(w < g && g < f && f < i, "labs out of order: %s", s);
    cr_expect(strstr(s, "naive") == NULL, "absent labs are not listed: %s", s);
    cr_expect(strstr(w, "5/5") < g && strstr(g, "10/10") < f && strstr(f, "6/10") < i && strstr(i, "0/10"),
              "wrong subtotals: %s", s);
    cr_expect(strstr(s, "\nScore: 21/35\n") != NULL, "got: %s", s);
    size_t n = strlen(s);
    const char *last = "NOT FULL MARKS: 2 tests lost points\n";
    cr_expect(n > strlen(last) && strcmp(s + n - strlen(last), last) == 0, "last line: %s", s);
    free(s);
}

Test(report, summary_full_marks, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    r[1] = r[3];
    CAPTURE(s, pp__report_summary(out, r, 2, 0));
    cr_expect(strstr(s, "Score: 15/15\n") != NULL, "got: %s", s);
    size_t n = strlen(s);
    cr_expect(n >= 11 && strcmp(s + n - 11, "FULL MARKS\n") == 0 && strstr(s, "NOT") == NULL, "got: %s", s);
    free(s);
}

Test(report, summary_one_loss_and_no_tests, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    CAPTURE(a, pp__report_summary(out, r, 2, 0));
    cr_expect(strstr(a, "NOT FULL MARKS: 1 test lost points\n") != NULL, "got: %s", a);
    CAPTURE(b, pp__report_summary(out, r, 0, 0));
    cr_expect(strstr(b, "Score: 0/0\nNOT FULL MARKS: no tests ran\n") != NULL, "got: %s", b);
    free(a);
    free(b);
}

Test(report, table, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    r[3].cfg.P = 0; /* a warm-up part with no ranks */
    for (int i = 0; i < 4; i++) r[i].cfg.steps = 2, r[i].cfg.layers = 0; /* the defaults: no note */
    r[1].cfg.latency = 0.5;
    r[1].cfg.recompute = 1;
    r[2].cfg.secret = 1;
    r[2].cfg.layers = 16;
    CAPTURE(s, pp__report_table(out, r, 4));
    /* latency and recomputation runs are told apart from the plain ones with the same P, M, v */
    cr_expect(strstr(s, "6/10  FAIL   latency=0.5 recompute\n") != NULL, "1f1b row: %s", s);
    cr_expect(strstr(s, "FAIL   layers=16 (hidden test)\n") != NULL, "interleaved row: %s", s);
    cr_expect(strstr(s, "10/10  ok\n") != NULL, "a default test has no note: %s", s);
    cr_expect(strstr(s, "ok     part=bubble\n") != NULL, "warm-up row: %s", s);
    cr_expect(s[0] == '#' && strstr(s, "peak stashes") && strstr(s, "grad err") && strstr(s, "bubble"),
              "header: %s", s);
    cr_expect(count(s, "\n") == 5, "one header and one line per test: %s", s);
    cr_expect(strstr(s, "0.2727") && strstr(s, "8 8 8 8") && strstr(s, "1.2e-07") && strstr(s, "10/10"),
              "gpipe row: %s", s);
    cr_expect(strstr(s, "4 3 2 1") && strstr(s, "1.2e-01") && strstr(s, "6/10"), "1f1b row: %s", s);
    /* Every row's verdict starts in the same column, so the columns line up; none ends in blanks. */
    char *save = NULL, *copy = strdup(s);
    size_t width = 0;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cr_expect(line[strlen(line) - 1] != ' ', "trailing blank: '%s'", line);
        if (line[0] == '#') continue;
        const char *v = strstr(line, "  FAIL") ? strstr(line, "  FAIL") : strstr(line, "  ok");
        cr_assert(v, "no verdict: '%s'", line);
        size_t w = (size_t)(v - line);
        if (!width) width = w;
        cr_expect(w == width, "ragged row: '%s'", line);
    }
    free(copy);
    free(s);
}

Test(report, table_long_peak_list, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    r[0].cfg.P = 16;
    for (int i = 0; i < 16; i++) r[0].peak[i] = 16 - i;
    CAPTURE(s, pp__report_table(out, r, 1));
    cr_expect(strstr(s, "max 16") != NULL, "got: %s", s);
    free(s);
}

Test(report, json, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    char path[256];
    tmp_path(path, sizeof path);
    cr_assert(pp__report_json(path, r, 4, "solutions", "cpu") == 0);
    char *text = slurp(path);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root != NULL, "not JSON: %s", text);
    cr_expect(cJSON_GetObjectItem(root, "score")->valuedouble == 21);
    cr_expect(cJSON_GetObjectItem(root, "max_score")->valuedouble == 35);
    cr_expect_str_eq(cJSON_GetObjectItem(root, "impl")->valuestring, "solutions");
    cr_expect_str_eq(cJSON_GetObjectItem(root, "backend")->valuestring, "cpu");
    cJSON *tests = cJSON_GetObjectItem(root, "tests");
    cr_assert(cJSON_IsArray(tests) && cJSON_GetArraySize(tests) == 4);

    cJSON *t0 = cJSON_GetArrayItem(tests, 0), *t1 = cJSON_GetArrayItem(tests, 1), *t2 = cJSON_GetArrayItem(tests, 2);
    cr_expect_str_eq(cJSON_GetObjectItem(t0, "name")->valuestring, "gpipe P=4 M=8 seed=3");
    cr_expect_str_eq(cJSON_GetObjectItem(t0, "lab")->valuestring, "gpipe");
    cr_expect_str_eq(cJSON_GetObjectItem(t0, "status")->valuestring, "passed");
    cJSON *cfg = cJSON_GetObjectItem(t0, "config");
    cr_expect(cJSON_GetObjectItem(cfg, "P")->valueint == 4 && cJSON_GetObjectItem(cfg, "M")->valueint == 8 &&
              cJSON_GetObjectItem(cfg, "v")->valueint == 1 && cJSON_GetObjectItem(cfg, "seed")->valueint == 3 &&
              cJSON_GetObjectItem(cfg, "steps")->valueint == 1 && cJSON_GetObjectItem(cfg, "latency") &&
              cJSON_GetObjectItem(cfg, "recompute"));
    cr_expect(cJSON_GetObjectItem(t0, "score")->valuedouble == 10 &&
              cJSON_GetObjectItem(t0, "max_score")->valuedouble == 10);
    cr_expect(fabs(cJSON_GetObjectItem(t0, "bubble")->valuedouble - 3.0 / 11.0) < 1e-12);
    cr_expect(cJSON_GetObjectItem(t0, "grad_err")->valuedouble == 1.2e-7);
    cJSON *peaks = cJSON_GetObjectItem(t0, "peak_stashes");
    cr_expect(cJSON_GetArraySize(peaks) == 4 && cJSON_GetArrayItem(peaks, 3)->valueint == 8);
    cr_expect(cJSON_GetArraySize(cJSON_GetObjectItem(t0, "checks")) == 3);

    cr_expect_str_eq(cJSON_GetObjectItem(t1, "status")->valuestring, "failed");
    cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(t1, "checks"), 0);
    cr_expect_str_eq(cJSON_GetObjectItem(c0, "name")->valuestring, "gradients");
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(c0, "passed")));
    cr_expect(cJSON_GetObjectItem(c0, "score")->valuedouble == 0 &&
              cJSON_GetObjectItem(c0, "max_score")->valuedouble == 4);
    cr_expect(strstr(cJSON_GetObjectItem(c0, "message")->valuestring, "1/M?") != NULL);

    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(t2, "timed_out")));
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(t2, "crashed")));
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(t2, "bubble")), "NaN is written as null");
    cr_expect_str_eq(cJSON_GetObjectItem(t2, "output")->valuestring, TAIL_SHOWN);
    cr_expect(strstr(cJSON_GetObjectItem(t2, "error")->valuestring, "recv(mb 3)\nrank 2") != NULL);
    cJSON_Delete(root);
    free(text);
    unlink(path);
}

Test(report, json_cleans_invalid_utf8, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    snprintf(r[2].output_tail, sizeof r[2].output_tail, "bad \xff byte, good \xc3\xa9, cut \xe2\x82");
    char path[256];
    tmp_path(path, sizeof path);
    cr_assert(pp__report_json(path, r, 4, NULL, NULL) == 0);
    char *text = slurp(path);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root != NULL);
    cJSON *t2 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "tests"), 2);
    cr_expect_str_eq(cJSON_GetObjectItem(t2, "output")->valuestring, "| bad ? byte, good \xc3\xa9, cut ??");
    cr_expect_str_eq(cJSON_GetObjectItem(root, "impl")->valuestring, "");
    cJSON_Delete(root);
    free(text);
    unlink(path);
}

Test(report, junit, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    char path[256];
    tmp_path(path, sizeof path);
    cr_assert(pp__report_junit(path, r, 4, "labs", "cpu") == 0);
    char *x = slurp(path);
    cr_expect(strncmp(x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ", 50) == 0, "got: %s", x);
    /* the lost gradients check is a failure, the timeout an error */
    cr_expect(strstr(x, "<testsuites name=\"pplab\" tests=\"4\" failures=\"1\" errors=\"1\"") != NULL, "got: %s", x);
    cr_expect(count(x, "<testsuite ") == 4 && count(x, "</testsuite>") == 4, "one suite per lab: %s", x);
    cr_expect(count(x, "<testcase ") == 4 && count(x, "</testcase>") == 4, "got: %s", x);
    cr_expect(count(x, "<failure ") == 1 && count(x, "</failure>") == 1, "got: %s", x);
    cr_expect(count(x, "<error ") == 1 && count(x, "</error>") == 1, "got: %s", x);
    cr_expect(strstr(x, "name=\"1f1b\" package=\"pplab\" timestamp=\"") != NULL, "got: %s", x);
    cr_expect(strstr(x, "tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"10.050\"") != NULL,
              "the interleaved suite counts its error: %s", x);
    cr_expect(strstr(x, "<testcase name=\"gpipe P=4 M=8 seed=3\" classname=\"pplab.gpipe\" time=\"0.120\">") != NULL,
              "got: %s", x);
    cr_expect(strstr(x, "<system-out>| step 1 &lt;&amp;&gt;&quot;&apos;\n| step 2 ?[31mred?[0m\n</system-out>") != NULL,
              "output tail not escaped: %s", x);
    cr_expect(strstr(x, "<&>") == NULL && strchr(x, '\033') == NULL, "raw markup or control character: %s", x);
    cr_expect(strstr(x, "message=\"scored 6/10; failed: gradients (0/4)\" type=\"failed checks\">") != NULL,
              "got: %s", x);
    cr_expect(strstr(x, "<error message=\"scored 0/10; run: no progress for 10.0 s: rank 1 waits in recv(mb 3)\" "
                        "type=\"timeout\">run: no progress for 10.0 s") != NULL, "got: %s", x);
    cr_expect(strstr(x, "- gradients (0/4): expected rel err &lt;= 1e-05") != NULL, "got: %s", x);
    /* The order of the suites follows the labs' order. */
    cr_expect(strstr(x, "name=\"warmup\"") < strstr(x, "name=\"gpipe\""), "got: %s", x);
    free(x);
    unlink(path);
}

Test(report, junit_attribute_newlines, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    snprintf(r[1].name, sizeof r[1].name, "a\"b\tc\x01");
    char path[256];
    tmp_path(path, sizeof path);
    cr_assert(pp__report_junit(path, r, 4, "x<y", "cpu") == 0);
    char *x = slurp(path);
    cr_expect(strstr(x, "name=\"a&quot;b&#9;c?\"") != NULL, "got: %s", x);
    cr_expect(strstr(x, "value=\"x&lt;y\"") != NULL, "got: %s", x);
    cr_expect(strstr(x, "message=\"scored 0/10; run: no progress for 10.0 s: rank 1 waits in recv(mb 3)\"") != NULL,
              "message keeps the error's first line only: %s", x);
    free(x);
    unlink(path);
}

static int has(cJSON *o, const char *k) { return cJSON_GetObjectItem(o, k) != NULL; }

Test(report, gradescope, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    char path[256];
    tmp_path(path, sizeof path);
    cr_assert(pp__report_gradescope(path, r, 4, "labs", "cpu") == 0);
    char *text = slurp(path);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root != NULL, "not JSON: %s", text);
    cr_expect(has(root, "score") && has(root, "execution_time") && has(root, "output") && has(root, "visibility") &&
              has(root, "stdout_visibility") && has(root, "tests"));
    cr_expect(!has(root, "leaderboard"), "an empty leaderboard shows an empty table on Gradescope");
    cr_expect_str_eq(cJSON_GetObjectItem(root, "output_format")->valuestring, "text");
    cr_expect_str_eq(cJSON_GetObjectItem(root, "test_output_format")->valuestring, "text");
    cr_expect_str_eq(cJSON_GetObjectItem(root, "test_name_format")->valuestring, "text");
    cr_expect(cJSON_GetObjectItem(root, "score")->valuedouble == 21);
    cr_expect(cJSON_GetObjectItem(root, "execution_time")->valuedouble == 11, "ceil(0.12 + 0.2 + 10.05 + 0.01)");
    cr_expect_str_eq(cJSON_GetObjectItem(root, "visibility")->valuestring, "visible");
    cr_expect_str_eq(cJSON_GetObjectItem(root, "stdout_visibility")->valuestring, "hidden");
    const char *summary = cJSON_GetObjectItem(root, "output")->valuestring;
    cr_expect(strstr(summary, "Score: 21/35") && strstr(summary, "NOT FULL MARKS: 2 tests lost points"),
              "got: %s", summary);
    cr_expect(strchr(summary, '\033') == NULL, "colour in a file: %s", summary);
    cJSON *tests = cJSON_GetObjectItem(root, "tests");
    cr_assert(cJSON_GetArraySize(tests) == 4);
    cJSON *t;
    cJSON_ArrayForEach(t, tests) {
        cr_expect(has(t, "name") && has(t, "score") && has(t, "max_score") && has(t, "status") && has(t, "output"));
        cr_expect_str_eq(cJSON_GetObjectItem(t, "visibility")->valuestring, "visible");
    }
    cJSON *t0 = cJSON_GetArrayItem(tests, 0), *t1 = cJSON_GetArrayItem(tests, 1), *t2 = cJSON_GetArrayItem(tests, 2);
    cr_expect_str_eq(cJSON_GetObjectItem(t0, "status")->valuestring, "passed");
    cr_expect_str_eq(cJSON_GetObjectItem(t0, "output")->valuestring, "all 3 checks passed");
    cr_expect_str_eq(cJSON_GetObjectItem(t1, "status")->valuestring, "failed");
    cr_expect(cJSON_GetObjectItem(t1, "score")->valuedouble == 6 &&
              cJSON_GetObjectItem(t1, "max_score")->valuedouble == 10);
    cr_expect_str_eq(cJSON_GetObjectItem(t1, "output")->valuestring,
                     "- gradients (0/4): expected rel err <= 1e-05, got 0.125 on rank 2 W1\n"
                     "hint: is the loss scaled by 1/M?");
    cr_expect_str_eq(cJSON_GetObjectItem(t2, "number")->valuestring, "3");
    cr_expect_str_eq(cJSON_GetObjectItem(t2, "output")->valuestring,
                     "timeout: the run did not complete\n"
                     "run: no progress for 10.0 s: rank 1 waits in recv(mb 3)\nrank 2 waits in send(mb 4)\n"
                     "output (last lines):\n| step 1 <&>\"'\n| step 2 ?[31mred?[0m");
    cJSON_Delete(root);
    free(text);
    unlink(path);
}

Test(report, unwritable_path_fails, .timeout = 10) {
    cr_redirect_stderr();
    pp_test_result r[4];
    make_results(r);
    const char *bad = "/nonexistent-pplab-dir/report.out";
    cr_expect(pp__report_json(bad, r, 4, "labs", "cpu") == -1);
    cr_expect(pp__report_junit(bad, r, 4, "labs", "cpu") == -1);
    cr_expect(pp__report_gradescope(bad, r, 4, "labs", "cpu") == -1);
    fflush(stderr);
    cr_expect_stderr_neq_str("");
}

/* A long report (a deadlock's several lines) already printed in this run is referenced, not repeated; a new run
 * (index 1) starts over. */
Test(report, progress_references_a_repeated_report, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    snprintf(r[2].error, sizeof r[2].error, "deadlock: every rank is blocked\n  rank 0 blocked in pp_send\n"
                                            "  rank 1 blocked in pp_send\nHINT: post a receive first");
    r[3] = r[2];
    snprintf(r[3].name, sizeof r[3].name, "gpipe P=4 M=9 seed=4");
    CAPTURE(a, pp__report_progress(out, &r[2], 1, 4, 0));
    CAPTURE(b, pp__report_progress(out, &r[3], 2, 4, 0));
    cr_expect(strstr(a, "rank 1 blocked in pp_send"), "the first time in full: %s", a);
    cr_expect(!strstr(b, "rank 1 blocked in pp_send"), "the second time referenced: %s", b);
    cr_expect(strstr(b, "run: the same failure as [1] " ), "%s", b);
    CAPTURE(c, pp__report_progress(out, &r[3], 1, 4, 0));
    cr_expect(strstr(c, "rank 1 blocked in pp_send"), "a new run prints it again: %s", c);
    free(a), free(b), free(c);
}

/* ---- the reports as CI systems read them ------------------------------------------------------------------ */

/* A repeated name gets " #2", " #3"; a name at full length is cut to make room; distinct names stay. */
Test(report, names_made_unique, .timeout = 10) {
    pp_test_result r[5];
    make_results(r);
    r[4] = r[0];
    pp__report_name_unique(r, 4);
    cr_expect_str_eq(r[4].name, "gpipe P=4 M=8 seed=3 #2");
    r[3] = r[0];
    pp__report_name_unique(r, 3);
    cr_expect_str_eq(r[3].name, "gpipe P=4 M=8 seed=3 #2");
    snprintf(r[4].name, sizeof r[4].name, "%s", r[0].name);
    pp__report_name_unique(r, 4);
    cr_expect_str_eq(r[4].name, "gpipe P=4 M=8 seed=3 #3");
    pp__report_name_unique(r, 1);
    cr_expect_str_eq(r[1].name, "1f1b P=4 M=8 seed=1", "a distinct name is left alone");
    memset(r[0].name, 'x', sizeof r[0].name - 1);
    r[0].name[sizeof r[0].name - 1] = 0;
    r[1] = r[0];
    pp__report_name_unique(r, 1);
    size_t n = strlen(r[1].name);
    cr_expect(n == sizeof r[1].name - 1 && !strcmp(r[1].name + n - 3, " #2"), "got %s", r[1].name);
}

/* A hidden configuration's test stays hidden until grades are published, and a run that did not complete says
 * so before its checks. */
Test(report, gradescope_hidden_and_crashed, .timeout = 10) {
    pp_test_result r[4];
    make_results(r);
    r[1].cfg.secret = 1;
    snprintf(r[1].name, sizeof r[1].name, "hidden: 1f1b P=4 M=8 seed=1");
    r[1].status = PP_ERR_CRASH;
    r[1].crashed = 1;
    snprintf(r[1].error, sizeof r[1].error, "rank 2 crashed: segmentation fault (SIGSEGV)");
    char path[256];
    tmp_path(path, sizeof path);
    cr_assert(pp__report_gradescope(path, r, 4, "labs", "cpu") == 0);
    char *text = slurp(path);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root != NULL, "not JSON: %s", text);
    cJSON *tests = cJSON_GetObjectItem(root, "tests");
    cJSON *t0 = cJSON_GetArrayItem(tests, 0), *t1 = cJSON_GetArrayItem(tests, 1);
    cr_expect_str_eq(cJSON_GetObjectItem(t0, "visibility")->valuestring, "visible");
    cr_expect_str_eq(cJSON_GetObjectItem(t1, "visibility")->valuestring, "after_published");
    const char *out = cJSON_GetObjectItem(t1, "output")->valuestring;
    cr_expect(!strncmp(out, "crash: the run did not complete\n- gradients (0/4)", 49), "got: %s", out);
    cr_expect(strstr(out, "run: rank 2 crashed: segmentation fault (SIGSEGV)") != NULL, "got: %s", out);
    cJSON_Delete(root);
    free(text);
    unlink(path);
}

/* xmllint --schema tests/junit.xsd on path: its exit status (0: valid), its messages in msg. A machine without
 * xmllint fails the test with the package to install rather than skipping the check. */
static int xmllint(const char *path, char *msg, size_t len) {
    cr_assert(system("command -v xmllint > /dev/null 2>&1") == 0,
              "xmllint not found: install libxml2-utils (scripts/deps.sh and .ci/run do)");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "xmllint --noout --schema tests/junit.xsd '%s' 2>&1", path);
    return test_capture(cmd, msg, len);
}

/* Hand-made results with every kind of verdict validate; the schema itself rejects a repeated name and a suite
 * without its timestamp, so it is a check that can fail. */
Test(report, junit_validates_against_the_schema, .timeout = 30) {
    pp_test_result r[6];
    make_results(r);
    r[4] = r[1];
    snprintf(r[4].name, sizeof r[4].name, "1f1b P=2 M=4 seed=9");
    r[4].status = PP_ERR_COMPILE;
    snprintf(r[4].error, sizeof r[4].error, "labs/03-1f1b/onef1b.c:3:1: error: expected ';'");
    r[5] = r[0];
    snprintf(r[5].name, sizeof r[5].name, "gpipe P=2 M=2 seed=4");
    r[5].status = PP_ERR_DEADLOCK;
    snprintf(r[5].error, sizeof r[5].error, "deadlock: every rank is blocked");
    char path[256], msg[4096];
    tmp_path(path, sizeof path);
    cr_assert(pp__report_junit(path, r, 6, "labs", "cpu") == 0);
    cr_expect_eq(xmllint(path, msg, sizeof msg), 0, "%s", msg);
    char *x = slurp(path);
    cr_expect(strstr(x, "<testsuites name=\"pplab\" tests=\"6\" failures=\"2\" errors=\"2\"") != NULL,
              "a deadlock is the schedule's failure, a compile error an error: %s", x);
    cr_expect(strstr(x, "type=\"compile error\">") != NULL, "%s", x);
    free(x);
    /* a repeated name: the schema's uniqueness constraint must refuse it */
    snprintf(r[5].name, sizeof r[5].name, "%s", r[0].name);
    cr_assert(pp__report_junit(path, r, 6, "labs", "cpu") == 0);
    cr_expect_neq(xmllint(path, msg, sizeof msg), 0, "a repeated test name validated");
    cr_expect(strstr(msg, "unique") != NULL, "%s", msg);
    /* a suite without its timestamp */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "sed -i 's/ timestamp=\"[^\"]*\"//' '%s'", path);
    snprintf(r[5].name, sizeof r[5].name, "gpipe P=2 M=2 seed=4");
    cr_assert(pp__report_junit(path, r, 6, "labs", "cpu") == 0);
    cr_assert_eq(system(cmd), 0);
    cr_expect_neq(xmllint(path, msg, sizeof msg), 0, "a suite without a timestamp validated");
    cr_expect(strstr(msg, "timestamp") != NULL, "%s", msg);
    unlink(path);
}

/* A real grading run over a submission with one lab of each kind (full marks, a compile error, a deadlock, a
 * crash) and a hidden file that repeats a configuration: the JUnit report validates, its counts agree with
 * its elements, and Gradescope keeps hidden tests hidden under names of their own. */
Test(report, real_grading_reports_validate, .timeout = 240) {
    char dir[] = "/tmp/pplab-reports-XXXXXX", bin[PATH_MAX], cmd[4 * PATH_MAX + 512], msg[8192];
    cr_assert(mkdtemp(dir));
    test_build_dir(bin, sizeof bin);
    snprintf(cmd, sizeof cmd,
             "cp -r tests/hostile/warmup-exit/00-warmup solutions/01-naive tests/broken/compile-error/02-gpipe "
             "tests/broken/blocking-1f1b/03-1f1b tests/broken/chunk-order/04-interleaved solutions/05-zerobubble solutions/06-vshape solutions/07-hybrid "
             "solutions/08-tensor solutions/09-scheduler '%s'/ && cp solutions/04-interleaved/loopedbfs.c '%s'/04-interleaved/ && chmod -R a+rX '%s' && "
             "printf 'naive P=2 seed=5\\nnaive P=2 seed=5 time=20\\ngpipe P=2 M=2\\nscheduler P=3 M=4 cap=2\\n' > "
             "'%s/hidden.cfg'",
             dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "'%s/pplab' grade --impl '%s' --lab all --config '%s/hidden.cfg' --quiet --junit '%s/r.xml' "
             "--gradescope '%s/gs.json' > '%s/out.txt' 2>&1",
             bin, dir, dir, dir, dir, dir);
    int st = system(cmd);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "not full marks: exit 1, got %d", st);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/r.xml", dir);
    cr_expect_eq(xmllint(path, msg, sizeof msg), 0, "%s", msg);
    char *x = slurp(path);
    /* the counts on <testsuites> agree with the elements */
    int tests, failures, errors;
    const char *top = strstr(x, "<testsuites ");
    cr_assert(top && sscanf(top, "<testsuites name=\"pplab\" tests=\"%d\" failures=\"%d\" errors=\"%d\"", &tests,
                            &failures, &errors) == 3, "%s", x);
    cr_expect_eq(tests, count(x, "<testcase "));
    cr_expect_eq(failures, count(x, "<failure "));
    cr_expect_eq(errors, count(x, "<error "));
    /* each test's verdict by lab: the warm-up's bubble part crashes and gpipe does not compile (errors), 1f1b
     * deadlocks wherever there is a second stage (failures), the naive solution passes, interleaved's order
     * mistakes and the warm-up's missing functions never count as errors */
    int per_lab = 0;
    for (const char *c = strstr(x, "<testcase "); c; c = strstr(c + 1, "<testcase ")) {
        const char *end = strstr(c, "</testcase>");
        cr_assert(end, "%s", c);
        char one[16384];
        snprintf(one, sizeof one, "%.*s", (int)(end - c), c);
        if (strstr(one, "name=\"warmup bubble\""))
            cr_expect(strstr(one, "<error ") && strstr(one, "type=\"crash\""), "%s", one);
        else if (strstr(one, "classname=\"pplab.gpipe\""))
            cr_expect(strstr(one, "<error ") && strstr(one, "type=\"compile error\""), "%s", one);
        else if (strstr(one, "classname=\"pplab.1f1b\""))
            cr_expect(!strstr(one, "<error ") && (strstr(one, "<failure ") || strstr(one, "P=1 ")), "%s", one);
        else if (strstr(one, "classname=\"pplab.naive\""))
            cr_expect(!strstr(one, "<failure ") && !strstr(one, "<error "), "%s", one);
        else
            cr_expect(!strstr(one, "<error "), "%s", one);
        per_lab++;
    }
    cr_expect_eq(per_lab, tests);
    pp_test_config *all = NULL;
    int ndefault = pp__suite_default("all", 0, &all);
    free(all);
    cr_expect_eq(tests, ndefault + 4, "the default set and the four hidden lines");
    cr_expect(strstr(x, "name=\"hidden: naive P=2 M=1 seed=5\"") && strstr(x, "name=\"hidden: naive P=2 M=1 seed=5 #2\""),
              "a repeated hidden configuration gets a name of its own: %s", x);
    free(x);
    snprintf(path, sizeof path, "%s/gs.json", dir);
    char *text = slurp(path);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root != NULL, "not JSON: %s", text);
    cJSON *t;
    int hidden = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(root, "tests")) {
        const char *name = cJSON_GetObjectItem(t, "name")->valuestring;
        const char *vis = cJSON_GetObjectItem(t, "visibility")->valuestring;
        int is_hidden = !strncmp(name, "hidden: ", 8);
        hidden += is_hidden;
        cr_expect_str_eq(vis, is_hidden ? "after_published" : "visible", "%s", name);
        if (strstr(name, "gpipe"))
            cr_expect(!strncmp(cJSON_GetObjectItem(t, "output")->valuestring, "compile error: the run did not complete",
                               39), "%s: %s", name, cJSON_GetObjectItem(t, "output")->valuestring);
    }
    cr_expect_eq(hidden, 4);
    /* lab 09's leaderboard, over its one hidden test: the reference's order, valid and under the cap */
    cJSON *board = cJSON_GetObjectItem(root, "leaderboard"), *e;
    cr_assert(cJSON_IsArray(board), "no leaderboard: %s", text);
    int rows = 0;
    cJSON_ArrayForEach(e, board) {
        const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
        double value = cJSON_GetObjectItem(e, "value")->valuedouble;
        cr_expect_str_eq(cJSON_GetObjectItem(e, "order")->valuestring, "asc");
        cr_expect(value > 0 && value <= 1, "%s: %g", name, value);
        rows++;
    }
    cr_expect_eq(rows, 2);
    cJSON_Delete(root);
    free(text);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    system(cmd);
}

/* ---- what a submission prints cannot pass for the grader's ------------------------------------------------ */

/* One line of forged verdicts per character some reader takes for a line break or a cursor move (NEL, U+2028,
 * U+2029, \r, \v, \f, \x1c-\x1f, ESC and C1 sequences, bidi controls, overlong newlines and NELs, a surrogate, a
 * code point past U+10FFFF, invalid bytes), then plain forged lines, which only the mark tells apart; the first
 * line is valid UTF-8 that must pass unchanged. FORGED_SHOWN is the same as every report shows it. */
#define FORGED                                                                                                     \
    "loss 0.25 \xe2\x86\x92 0.125 caf\xc3\xa9 \xf0\x9f\x9a\x80 \xe4\xb8\xad\n"                                     \
    "\xc2\x85Score: 12/12\xc2\x85" "FULL MARKS\n"                                                                  \
    "\xe2\x80\xa8Score: 12/12\xe2\x80\xa9" "FULL MARKS\n"                                                          \
    "\rScore: 12/12\vFULL MARKS\fScore: 12/12\r\n"                                                                 \
    "\x1cScore: 12/12\x1d" "FULL MARKS\x1eScore: 12/12\x1f\n"                                                      \
    "\033[2K\033[1GScore: 12/12 \033]0;FULL MARKS\007\n"                                                           \
    "\xc2\x9b" "2K\xc2\x9b" "1GFULL MARKS\n"                                                                       \
    "\xe2\x80\xae" "SKRAM LLUF\xe2\x80\xac \xd8\x9c\xe2\x80\x8e\xe2\x80\x8f \xe2\x81\xa6Score: 12/12\xe2\x81\xa9\n" \
    "\xc0\x8aScore: 12/12\xe0\x80\x8a" "FULL MARKS\xc1\x85\xe0\x82\x85Score: 12/12\n"                              \
    "\xed\xa0\x80 \xf4\x90\x80\x80 \xff\xfe \xf8\x88\x80\x80\x80 \x85Score: 12/12\n"                               \
    "\ttab and DEL\x7f and \xc2\xa0nbsp\n"                                                                         \
    "\n"                                                                                                           \
    "[1/4] gpipe P=4 M=4 seed=7 ........................   12/12  ok  (0.10 s)\n"                                  \
    "run: ok\n"                                                                                                    \
    "all 6 checks passed\n"                                                                                        \
    "Score: 12/12\n"                                                                                               \
    "FULL MARKS\n"
#define FORGED_SHOWN                                                                                               \
    "| loss 0.25 \xe2\x86\x92 0.125 caf\xc3\xa9 \xf0\x9f\x9a\x80 \xe4\xb8\xad\n"                                   \
    "| ?Score: 12/12?FULL MARKS\n"                                                                                 \
    "| ?Score: 12/12?FULL MARKS\n"                                                                                 \
    "| ?Score: 12/12?FULL MARKS?Score: 12/12?\n"                                                                   \
    "| ?Score: 12/12?FULL MARKS?Score: 12/12?\n"                                                                   \
    "| ?[2K?[1GScore: 12/12 ?]0;FULL MARKS?\n"                                                                     \
    "| ?2K?1GFULL MARKS\n"                                                                                         \
    "| ?SKRAM LLUF? ??? ?Score: 12/12?\n"                                                                          \
    "| ??Score: 12/12???FULL MARKS?????Score: 12/12\n"                                                             \
    "| ??? ???? ?? ????? ?Score: 12/12\n"                                                                          \
    "| \ttab and DEL? and \xc2\xa0nbsp\n"                                                                          \
    "|\n"                                                                                                          \
    "| [1/4] gpipe P=4 M=4 seed=7 ........................   12/12  ok  (0.10 s)\n"                                \
    "| run: ok\n"                                                                                                  \
    "| all 6 checks passed\n"                                                                                      \
    "| Score: 12/12\n"                                                                                             \
    "| FULL MARKS\n"
/* A pp_fail message that forges more lines, as the runtime writes it (its first line the runtime's, every line of
 * the schedule's marked), and how reports show it. */
#define FAIL_HEAD "rank 0: the schedule stopped the run with pp_fail, saying:\n"
#define FAIL_MSG FAIL_HEAD "| refusing M=3\n| Score: 12/12\n| FULL MARKS\n| \xc2\x85Score: 12/12\xe2\x80\xa8"   \
    "FULL MARKS"
#define FAIL_SHOWN FAIL_HEAD "| refusing M=3\n| Score: 12/12\n| FULL MARKS\n| ?Score: 12/12?FULL MARKS"
/* The compiler's messages, which #line and #error fill with the student's words. */
#define COMPILE_MSG                                                                                                \
    "compile error in labs/02-gpipe/gpipe.c:\nFULL MARKS:1:2: error: #error Score: 12/12\n    1 | #error\n"       \
    "      |  ^~~~~\n"

static int lines_of(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* The length of the line break at p as Python's str.splitlines() sees one in UTF-8 text (\n, \r, \r\n, \v,
 * \f, \x1c, \x1d, \x1e, U+0085, U+2028, U+2029), 0 when there is none: how a script that reads a report file
 * with open().read().splitlines() cuts it. */
static size_t py_break(const unsigned char *p) {
    if (p[0] == '\r') return p[1] == '\n' ? 2 : 1;
    if (p[0] == '\n' || p[0] == '\v' || p[0] == '\f' || (p[0] >= 0x1c && p[0] <= 0x1e)) return 1;
    if (p[0] == 0xc2 && p[1] == 0x85) return 2;
    if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) return 3;
    return 0;
}

/* The length of the whitespace character at p that Python's str.strip() removes, 0 when there is none. */
static size_t py_space(const unsigned char *p) {
    if (*p == ' ' || (*p >= '\t' && *p <= '\r') || (*p >= 0x1c && *p <= 0x1f)) return 1;
    if (p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0)) return 2;
    if (p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80) return 3; /* U+1680 */
    if (p[0] == 0xe2 && p[1] == 0x80 && ((p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf))
        return 3;
    if (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) return 3; /* U+205F */
    if (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80) return 3; /* U+3000 */
    return 0;
}

/* Splits text as Python's splitlines() does, each line's leading whitespace stripped as strip() does: *lines
 * gets that many malloc'd strings (free with free_lines). */
static int py_lines(const char *text, char ***lines) {
    int n = 0, cap = 16;
    *lines = malloc((size_t)cap * sizeof **lines);
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        const unsigned char *start = p;
        size_t br = 0;
        while (*p && !(br = py_break(p))) p++;
        const unsigned char *s = start;
        for (size_t sp; s < p && (sp = py_space(s)) > 0;) s += sp;
        if (n == cap) *lines = realloc(*lines, (size_t)(cap *= 2) * sizeof **lines);
        (*lines)[n++] = strndup((const char *)s, (size_t)(p - s));
        p += br;
    }
    return n;
}

static void free_lines(char **lines, int n) {
    for (int i = 0; i < n; i++) free(lines[i]);
    free(lines);
}

/* A line the grader writes that starts as a verdict does, and how many such lines the text holds. */
typedef struct {
    const char *start;
    int want;
} genuine;

/* The words a verdict or a report line of the grader's starts with, which a forger would copy. */
static const char *const verdict_words[] = {"Score", "FULL MARKS", "NOT FULL MARKS", "[", "run:", "all ",
                                            "output (last lines)"};

/* Expects text to hold no control character but tab and newline and only valid UTF-8 (cleaning it changes
 * nothing), and of every line as a Python script reads it (splitlines, then strip) that one starting with a
 * verdict's words be one of the grader's own: g[i].want lines start with g[i].start, and no other line starts
 * with any of verdict_words. Returns the number of lines that start with the mark. */
static int expect_only_genuine(const char *what, const char *text, const genuine *g, int ng) {
    char *clean = pp__report_clean(text, SIZE_MAX);
    cr_assert(clean);
    cr_expect_str_eq(clean, text, "%s holds a control character or invalid UTF-8", what);
    free(clean);
    char **lines;
    int n = py_lines(text, &lines), marked = 0, got[16] = {0};
    cr_assert(ng <= 16);
    for (int i = 0; i < n; i++) {
        if (lines[i][0] == PP_REPORT_MARK[0]) {
            marked++;
            continue;
        }
        int verdict = 0, match = -1;
        for (size_t w = 0; w < sizeof verdict_words / sizeof *verdict_words; w++)
            verdict |= !strncmp(lines[i], verdict_words[w], strlen(verdict_words[w]));
        for (int k = 0; k < ng && match < 0; k++)
            if (!strncmp(lines[i], g[k].start, strlen(g[k].start))) match = k;
        if (match >= 0)
            got[match]++;
        else
            cr_expect(!verdict, "%s: line %d passes for a verdict: '%s'", what, i + 1, lines[i]);
    }
    for (int k = 0; k < ng; k++)
        cr_expect_eq(got[k], g[k].want, "%s: %d lines start with '%s', the grader wrote %d", what, got[k], g[k].start,
                     g[k].want);
    free_lines(lines, n);
    return marked;
}

Test(report, clean_hides_every_line_break_and_control, .timeout = 10) {
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"a\nb\tc", "a\nb\tc"},
        {"\r\v\f\033\x01\x1c\x1d\x1e\x1f\x7f", "??????????"},
        {"\xc2\x80|\xc2\x85|\xc2\x9f|\xc2\xa0", "?|?|?|\xc2\xa0"},
        {"\xe2\x80\xa8|\xe2\x80\xa9", "?|?"},
        {"\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae", "????????"},
        {"\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", "????"},
        {"\xc0\x8a|\xc1\x85|\xe0\x80\x8a|\xe0\x82\x85|\xf0\x80\x80\x8a", "??|??|???|???|????"},
        {"\xed\xa0\x80|\xed\xbf\xbf|\xf4\x90\x80\x80|\xf8\x88\x80\x80\x80", "???|???|????|?????"},
        {"\xff\xfe|\x80|\xe2\x86|\xe2", "??|?|??|?"},
        /* what students print stays */
        {"\xe2\x86\x92 caf\xc3\xa9 \xf0\x9f\x9a\x80 \xe4\xb8\xad \xe2\x80\x8b \xef\xbb\xbf \xf4\x8f\xbf\xbf",
         "\xe2\x86\x92 caf\xc3\xa9 \xf0\x9f\x9a\x80 \xe4\xb8\xad \xe2\x80\x8b \xef\xbb\xbf \xf4\x8f\xbf\xbf"},
        {FORGED, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = pp__report_clean(cases[i].in, strlen(cases[i].in));
        cr_assert(got);
        if (cases[i].out) cr_expect_str_eq(got, cases[i].out, "case %zu", i);
        char *again = pp__report_clean(got, strlen(got));
        cr_expect_str_eq(again, got, "cleaning a clean text changes it (case %zu)", i);
        free(again);
        free(got);
    }
    char *cut = pp__report_clean("ab\xe2\x86\x92", 4); /* max cuts the arrow: its start is invalid */
    cr_expect_str_eq(cut, "ab??");
    free(cut);
}

Test(report, quote_marks_every_line, .timeout = 10) {
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"", ""}, {"x", "| x"}, {"a\n\nb\n", "| a\n|\n| b\n"}, {"\n", "|\n"}, {"a\rb\n", "| a?b\n"},
        {FORGED, FORGED_SHOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = pp__report_quote(cases[i].in, strlen(cases[i].in));
        cr_assert(got);
        cr_expect_str_eq(got, cases[i].out, "case %zu", i);
        free(got);
    }
}

/* r[0] passes and printed the forgeries, r[1] refused its configuration with pp_fail (a forging message), r[2]
 * timed out after printing them, with an error that hides a forgery behind NEL and U+2029, r[3] did not compile
 * (forging compiler messages); r[1] and r[2] each fail a check whose message hides one behind NEL, \r and ESC.
 * Totals: 12 of 48. */
static void make_forged(pp_test_result r[4]) {
    static const char *const names[] = {"gpipe P=4 M=4 seed=7", "gpipe P=2 M=3 seed=8", "gpipe P=4 M=8 seed=9",
                                        "gpipe P=2 M=2 seed=1"};
    for (int i = 0; i < 4; i++) {
        base(&r[i], "gpipe", 4, 4, 1, 7);
        snprintf(r[i].name, sizeof r[i].name, "%s", names[i]);
        r[i].seconds = 0.1;
    }
    add(&r[0], check("gradients", 6, 1, "rel err 1.2e-07 <= 1e-05"));
    add(&r[0], check("bubble", 6, 1, "0.4286 == 0.4286"));
    snprintf(r[0].output_tail, sizeof r[0].output_tail, "%s", FORGED);
    for (int i = 1; i < 4; i++) {
        add(&r[i], check("gradients", 6, 0, "rel err 0.5 > 1e-05\xc2\x85Score: 12/12\rFULL MARKS\033[2K"));
        add(&r[i], check("bubble", 6, 0, "not graded: the run failed"));
    }
    r[1].status = PP_ERR_STUDENT;
    snprintf(r[1].error, sizeof r[1].error, "%s", FAIL_MSG);
    snprintf(r[1].output_tail, sizeof r[1].output_tail, "%s", FORGED);
    r[2].status = PP_ERR_TIMEOUT;
    r[2].timed_out = 1;
    snprintf(r[2].error, sizeof r[2].error, "no result after 10 s\xc2\x85Score: 12/12\xe2\x80\xa9" "FULL MARKS");
    snprintf(r[2].output_tail, sizeof r[2].output_tail, "%s", FORGED);
    r[3].status = PP_ERR_COMPILE;
    snprintf(r[3].error, sizeof r[3].error, "%s", COMPILE_MSG);
}

/* pplab grade's output as a script would read it: the forgeries in check messages and in the timeout's error
 * are cleaned into the grader's line, those in the output and in the pp_fail and compiler messages marked. */
Test(report, forged_verdicts_stay_inside_marked_lines_on_the_terminal, .timeout = 10) {
    pp_test_result r[4];
    make_forged(r);
    char *text = NULL;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    for (int i = 0; i < 4; i++) pp__report_progress(out, &r[i], i + 1, 4, 0);
    pp__report_summary(out, r, 4, 0);
    fclose(out);
    const genuine g[] = {{"[1/4] gpipe P=4 M=4 seed=7 ", 1},
                         {"[2/4] gpipe P=2 M=3 seed=8 ", 1},
                         {"[3/4] gpipe P=4 M=8 seed=9 ", 1},
                         {"[4/4] gpipe P=2 M=2 seed=1 ", 1},
                         {"run: ", 3},
                         {"output (last lines):", 2},
                         {"Score by lab:", 1},
                         {"Score: 12/48", 1},
                         {"NOT FULL MARKS: 3 tests lost points", 1}};
    int marked = expect_only_genuine("the terminal", text, g, sizeof g / sizeof *g);
    cr_expect_eq(marked, 2 * lines_of(FORGED) + 4 + 3, "every line of the two outputs, the pp_fail message's and the "
                 "compiler's: %s", text);
    cr_expect(strstr(text, "\n    run: " FAIL_HEAD "      | refusing M=3\n      | Score: 12/12\n"
                           "      | FULL MARKS\n") != NULL,
              "%s", text);
    cr_expect(strstr(text, "\n    run: no result after 10 s?Score: 12/12?FULL MARKS\n") != NULL, "%s", text);
    cr_expect(strstr(text, "\n    run: compile error in labs/02-gpipe/gpipe.c:\n      | FULL MARKS:1:2: error:") != NULL,
              "%s", text);
    cr_expect(strstr(text, "\n    - gradients (0/6): rel err 0.5 > 1e-05?Score: 12/12?FULL MARKS?[2K\n") != NULL,
              "%s", text);
    cr_expect(strstr(text, "\n      | loss 0.25 \xe2\x86\x92 0.125 caf\xc3\xa9 \xf0\x9f\x9a\x80 \xe4\xb8\xad\n") != NULL,
              "valid UTF-8 passes unchanged: %s", text);
    free(text);
}

/* A string value of a parsed report, expected to hold no control character but tab and newline. */
static const char *str_field(cJSON *o, const char *key) {
    cJSON *v = cJSON_GetObjectItem(o, key);
    cr_assert(cJSON_IsString(v), "no string %s", key);
    char *clean = pp__report_clean(v->valuestring, SIZE_MAX);
    cr_expect_str_eq(clean, v->valuestring, "%s holds a control character", key);
    free(clean);
    return v->valuestring;
}

Test(report, forged_verdicts_stay_inside_marked_lines_in_json, .timeout = 10) {
    pp_test_result r[4];
    make_forged(r);
    char path[256];
    tmp_path(path, sizeof path);
    cr_assert(pp__report_json(path, r, 4, "labs", "cpu") == 0);
    char *text = slurp(path);
    /* the file as a script's splitlines() reads it: no verdict of any kind, JSON holds them in strings */
    expect_only_genuine("the JSON file", text, NULL, 0);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root, "not JSON: %s", text);
    cr_expect_eq(cJSON_GetObjectItem(root, "score")->valuedouble, 12);
    cJSON *tests = cJSON_GetObjectItem(root, "tests");
    for (int i = 0; i < 3; i++)
        cr_expect_str_eq(str_field(cJSON_GetArrayItem(tests, i), "output"), FORGED_SHOWN, "test %d", i);
    cr_expect_str_eq(str_field(cJSON_GetArrayItem(tests, 1), "error"), FAIL_SHOWN);
    cr_expect_str_eq(str_field(cJSON_GetArrayItem(tests, 2), "error"), "no result after 10 s?Score: 12/12?FULL MARKS");
    const char *compile = str_field(cJSON_GetArrayItem(tests, 3), "error");
    cr_expect(!strncmp(compile, "compile error in labs/02-gpipe/gpipe.c:\n| FULL MARKS:1:2: error:", 63), "%s", compile);
    cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(tests, 1), "checks"), 0);
    cr_expect_str_eq(str_field(c0, "message"), "rel err 0.5 > 1e-05?Score: 12/12?FULL MARKS?[2K");
    cJSON_Delete(root);
    free(text);
    unlink(path);
}

Test(report, forged_verdicts_stay_inside_marked_lines_in_junit, .timeout = 30) {
    pp_test_result r[4];
    make_forged(r);
    char path[256], msg[4096];
    tmp_path(path, sizeof path);
    cr_assert(pp__report_junit(path, r, 4, "labs", "cpu") == 0);
    cr_expect_eq(xmllint(path, msg, sizeof msg), 0, "%s", msg);
    char *x = slurp(path);
    const genuine g[] = {{"run: ", 3}};
    int marked = expect_only_genuine("the JUnit file", x, g, 1);
    /* each <system-out> starts on its tag's line, so its first line is not counted */
    cr_expect_eq(marked, 3 * (lines_of(FORGED) - 1) + 4 + 3, "%s", x);
    cr_expect_eq(count(x, "<system-out>| loss 0.25 \xe2\x86\x92 0.125 caf\xc3\xa9 \xf0\x9f\x9a\x80"), 3, "%s", x);
    cr_expect(strstr(x, "\nrun: " FAIL_HEAD "| refusing M=3\n| Score: 12/12\n| FULL MARKS\n"
                        "| ?Score: 12/12?FULL MARKS</failure>"),
              "%s", x);
    free(x);
    unlink(path);
}

Test(report, forged_verdicts_stay_inside_marked_lines_on_gradescope, .timeout = 10) {
    pp_test_result r[4];
    make_forged(r);
    char path[256];
    tmp_path(path, sizeof path);
    cr_assert(pp__report_gradescope(path, r, 4, "labs", "cpu") == 0);
    char *text = slurp(path);
    expect_only_genuine("the Gradescope file", text, NULL, 0);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root, "not JSON: %s", text);
    const genuine summary[] = {{"Score by lab:", 1}, {"Score: 12/48", 1}, {"NOT FULL MARKS: 3 tests lost points", 1}};
    expect_only_genuine("the Gradescope summary", str_field(root, "output"), summary, 3);
    /* the tests' feedback, one after another as a student scrolls through it */
    char *all = NULL;
    size_t len;
    FILE *m = open_memstream(&all, &len);
    cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(root, "tests")) fprintf(m, "%s\n", str_field(t, "output"));
    fclose(m);
    const genuine g[] = {{"all 2 checks passed", 1}, {"run: ", 3}, {"output (last lines):", 2}};
    int marked = expect_only_genuine("the Gradescope feedback", all, g, 3);
    cr_expect_eq(marked, 2 * lines_of(FORGED) + 4 + 3, "%s", all);
    cr_expect(strstr(all, "\nrun: " FAIL_HEAD "| refusing M=3\n| Score: 12/12\n| FULL MARKS\n| ?Score: 12/12?FULL MARKS"
                          "\n"
                          "output (last lines):\n" FORGED_SHOWN) != NULL, "%s", all);
    free(all);
    cJSON_Delete(root);
    free(text);
    unlink(path);
}

/* A real grading of tests/hostile/forge-verdict, a correct GPipe that prints forged verdicts behind every
 * character above and refuses M = 3 with a forging pp_fail: it keeps exactly its real points (full marks where
 * it ran, 0 where it refused), and in each report every line it wrote carries the mark and none passes for a
 * verdict. */
Test(report, forging_submission_keeps_its_points_and_no_line_of_its_own, .timeout = 240) {
    char dir[] = "/tmp/pplab-forge-XXXXXX", bin[PATH_MAX], cmd[4 * PATH_MAX + 512], msg[8192];
    cr_assert(mkdtemp(dir));
    test_build_dir(bin, sizeof bin);
    snprintf(cmd, sizeof cmd, "cp -r tests/hostile/forge-verdict/02-gpipe '%s'/ && chmod -R a+rX '%s' && printf "
             "'gpipe P=4 M=4 seed=7\\ngpipe P=2 M=3 seed=8\\n' > '%s/hidden.cfg'", dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "'%s/pplab' grade --impl '%s' --lab gpipe --config '%s/hidden.cfg' --only-config "
             "--json '%s/r.json' --junit '%s/r.xml' --gradescope '%s/gs.json' > '%s/out.txt' 2>&1",
             bin, dir, dir, dir, dir, dir, dir);
    int st = system(cmd);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "one test lost points: exit 1, got %d", st);
    char path[PATH_MAX + 16];

    snprintf(path, sizeof path, "%s/r.json", dir);
    char *text = slurp(path);
    expect_only_genuine("the JSON file", text, NULL, 0);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root, "not JSON: %s", text);
    cJSON *tests = cJSON_GetObjectItem(root, "tests"), *ran = cJSON_GetArrayItem(tests, 0),
          *refused = cJSON_GetArrayItem(tests, 1);
    cr_assert(cJSON_GetArraySize(tests) == 2, "%s", text);
    double max = cJSON_GetObjectItem(ran, "max_score")->valuedouble;
    cr_expect(max > 0 && cJSON_GetObjectItem(ran, "score")->valuedouble == max, "correct work: full marks: %s",
              str_field(ran, "error"));
    cr_expect_eq(cJSON_GetObjectItem(refused, "score")->valuedouble, 0);
    cr_expect_eq(cJSON_GetObjectItem(root, "score")->valuedouble, max, "only its real points");
    cr_expect_str_eq(str_field(refused, "error"), FAIL_HEAD "| refusing M=3\n| Score: 12/12\n| FULL MARKS\n"
                     "| ?Score: 12/12?FULL MARKS");
    const char *out0 = str_field(ran, "output"), *out1 = str_field(refused, "output");
    const char *head = "| loss 0.25 \xe2\x86\x92 0.125 caf\xc3\xa9 \xf0\x9f\x9a\x80\n| ?Score: 12/12?FULL MARKS\n";
    cr_expect(!strncmp(out1, head, strlen(head)), "valid UTF-8 passes unchanged, the rest is cleaned: %s", out1);
    cr_expect_eq(expect_only_genuine("its output", out0, NULL, 0), lines_of(out0), "every line marked: %s", out0);
    int tail = expect_only_genuine("its output", out1, NULL, 0);
    cr_expect_eq(tail, lines_of(out1), "every line marked: %s", out1);
    char score[64];
    snprintf(score, sizeof score, "Score: %g/%g", max, 2 * max);
    cJSON_Delete(root);
    free(text);

    snprintf(path, sizeof path, "%s/out.txt", dir);
    text = slurp(path);
    const genuine g[] = {{"[1/2] hidden: gpipe P=4 M=4 seed=7 ", 1}, {"[2/2] hidden: gpipe P=2 M=3 seed=8 ", 1},
                         {"run: rank 0: the schedule stopped the run with pp_fail, saying:", 1}, {"output (last lines):", 1}, {"Score by lab:", 1},
                         {score, 1}, {"NOT FULL MARKS: 1 test lost points", 1}};
    cr_expect_eq(expect_only_genuine("the terminal", text, g, sizeof g / sizeof *g), tail + 4, "%s", text);
    free(text);

    snprintf(path, sizeof path, "%s/r.xml", dir);
    cr_expect_eq(xmllint(path, msg, sizeof msg), 0, "%s", msg);
    text = slurp(path);
    const genuine run[] = {{"run: rank 0: the schedule stopped the run with pp_fail, saying:", 1}};
    expect_only_genuine("the JUnit file", text, run, 1);
    free(text);

    snprintf(path, sizeof path, "%s/gs.json", dir);
    text = slurp(path);
    expect_only_genuine("the Gradescope file", text, NULL, 0);
    root = cJSON_Parse(text);
    cr_assert(root, "not JSON: %s", text);
    const genuine summary[] = {{"Score by lab:", 1}, {score, 1}, {"NOT FULL MARKS: 1 test lost points", 1}};
    expect_only_genuine("the Gradescope summary", str_field(root, "output"), summary, 3);
    const genuine feedback[] = {{"run: rank 0: the schedule stopped the run with pp_fail, saying:", 1}, {"output (last lines):", 1}};
    cJSON *t1 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "tests"), 1);
    cr_expect_eq(expect_only_genuine("the Gradescope feedback", str_field(t1, "output"), feedback, 2), tail + 4);
    cJSON_Delete(root);
    free(text);
    test_rm_tree(dir);
}

/* The score column lines up whatever the labs' names: one as long as dpinterleaved's included. */
Test(report, the_score_column_fits_every_lab_name) {
    static pp_test_result r[3];
    const char *labs[3] = {"naive", "dp1f1b", "dpinterleaved"};
    for (int i = 0; i < 3; i++) {
        memset(&r[i], 0, sizeof r[i]);
        snprintf(r[i].cfg.lab, sizeof r[i].cfg.lab, "%s", labs[i]);
        r[i].score = r[i].max = 75;
        r[i].status = PP_OK;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    pp__report_summary(f, r, 3, 0);
    fclose(f);
    int col = -1;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *slash = strstr(line, "/75");
        if (!slash) continue;
        int at = (int)(slash - line);
        if (col < 0) col = at;
        cr_expect_eq(at, col, "the scores do not line up:\n%s", line);
    }
    cr_expect_geq(col, 0, "no score lines");
    free(text);
}
