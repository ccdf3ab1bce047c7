/* fuzz_report.c: the machine-readable reports over results whose text the student wrote. The input is a few
 * pp_test_result values: their names, errors, check names and messages, output tails and warm-up parts are its
 * bytes (control characters, invalid UTF-8, quotes, "]]>", "<", NULs that cut a field short, fields filled to
 * their last byte without a NUL, as a child's pipe may deliver them), their verdicts and figures its other bytes
 * (any status, NaN and infinite figures, counts of checks and ranks out of range). Names are made unique as pplab
 * grade makes them; then the JSON report, the JUnit XML and the Gradescope results.json are written to a memory
 * file. Each JSON file must parse (cJSON) and hold every test, under its cleaned name, with its checks' cleaned
 * messages and its marked output; the XML must parse (libxml2), hold no control character but newline and tab,
 * and name every test case, in the report's lab order, as cleaned. */
#include <cjson/cJSON.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "labs.h"
#include "report.h"

#define MAX_TESTS 4

/* ---- the input, read in order; zeros once it runs out ------------------------------------------------------ */

static struct {
    const uint8_t *p;
    size_t n, at;
} in;

static unsigned take(void) { return in.at < in.n ? in.p[in.at++] : 0; }

/* A text field of size bytes: a length (one byte, or two where long), then that many bytes of the input. A length
 * past the field fills it to its last byte with no NUL. */
static void take_text(char *field, size_t size, int wide) {
    size_t len = take();
    if (wide) len |= (size_t)take() << 8;
    if (len > size) len = size;
    if (len > in.n - in.at) len = in.n - in.at;
    memset(field, 0, size);
    memcpy(field, in.p + in.at, len);
    in.at += len;
}

/* A figure: small and exact, or any double (NaN and infinities included). */
static double take_num(void) {
    unsigned k = take();
    if (k < 0xf0) return (double)k / 4;
    double x;
    unsigned char b[sizeof x];
    for (size_t i = 0; i < sizeof b; i++) b[i] = (unsigned char)take();
    memcpy(&x, b, sizeof x);
    return x;
}

static void take_result(pp_test_result *r) {
    memset(r, 0, sizeof *r);
    take_text(r->name, sizeof r->name, 0);
    /* the lab is the grader's (a configuration's): a kit lab, or a name of the input, always terminated */
    unsigned lab = take();
    if (lab % 8 < 7 && pp__nlabs > 0) snprintf(r->cfg.lab, sizeof r->cfg.lab, "%s", pp__labs[lab % pp__nlabs].name);
    else take_text(r->cfg.lab, sizeof r->cfg.lab - 1, 0);
    take_text(r->cfg.part, sizeof r->cfg.part, 0);
    take_text(r->cfg.layout, sizeof r->cfg.layout, 0);
    unsigned flags = take();
    r->status = (pp_status)(take() % PP_STATUS_COUNT);
    r->timed_out = flags & 1, r->crashed = flags >> 1 & 1;
    r->cfg.secret = flags >> 2 & 1, r->cfg.drawn = flags >> 3 & 1;
    r->cfg.P = (signed char)take(), r->cfg.M = (signed char)take(), r->cfg.v = (signed char)take();
    r->cfg.seed = take();
    r->cfg.time_limit_s = take_num();
    for (size_t i = 0; i < sizeof r->cfg.file_sha256; i += 8) r->cfg.file_sha256[i] = (unsigned char)take();
    take_text(r->error, sizeof r->error, 1);
    /* the reports clamp a count they did not make: one past either end is as good as any */
    r->nchecks = (int)(take() % (PP_MAX_CHECKS + 3)) - 1;
    for (int i = 0; i < PP_MAX_CHECKS && i < r->nchecks; i++) {
        pp_check *c = &r->checks[i];
        take_text(c->name, sizeof c->name, 0);
        take_text(c->msg, sizeof c->msg, 1);
        unsigned v = take();
        c->passed = v & 1, c->better = v >> 1 & 1;
        c->max = take_num(), c->points = c->passed ? c->max : take_num();
        r->score += c->points, r->max += c->max;
    }
    if (flags & 0x10) r->score = take_num(); /* a score that is not its checks' sum, as a partial credit writes */
    r->bubble = take_num(), r->theory = take_num(), r->grad_err = take_num(), r->weight_err = take_num();
    r->loss_err = take_num(), r->seconds = take_num(), r->exposed = take_num();
    for (int i = 0; i < PP_MAX_RANKS; i += 8) r->peak[i] = (signed char)take(), r->peak_bound[i] = (signed char)take();
    take_text(r->output_tail, sizeof r->output_tail, 1);
}

/* ---- what the reports must say ----------------------------------------------------------------------------- */

/* s cleaned as every report cleans it (a malloc'd string). */
static char *cleaned(const char *s, size_t max) {
    char *c = pp__report_clean(s, max);
    if (!c) abort();
    return c;
}

/* ...and as XML 1.0 can hold it: U+FFFE and U+FFFF become '?', in place. */
static char *xml_cleaned(const char *s, size_t max) {
    char *c = cleaned(s, max), *o = c;
    for (const char *p = c; *p;)
        if ((unsigned char)p[0] == 0xef && (unsigned char)p[1] == 0xbf &&
            ((unsigned char)p[2] == 0xbe || (unsigned char)p[2] == 0xbf))
            *o++ = '?', p += 3;
        else
            *o++ = *p++;
    *o = 0;
    return c;
}

static const char *json_str(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int nchecks_of(const pp_test_result *r) {
    return r->nchecks < 0 ? 0 : r->nchecks > PP_MAX_CHECKS ? PP_MAX_CHECKS : r->nchecks;
}

static void check_json(const char *text, size_t len, const pp_test_result *r, int n) {
    cJSON *root = cJSON_ParseWithLength(text, len);
    fuzz_require(root, "the JSON report does not parse near byte %td: %.200s",
                 cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text : -1, cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "");
    const cJSON *tests = cJSON_GetObjectItemCaseSensitive(root, "tests");
    fuzz_require(cJSON_IsArray(tests) && cJSON_GetArraySize(tests) == n, "the JSON report holds %d tests, not %d",
                 cJSON_GetArraySize(tests), n);
    for (int i = 0; i < n; i++) {
        const cJSON *t = cJSON_GetArrayItem(tests, i);
        char *name = cleaned(r[i].name, sizeof r[i].name);
        char *output = pp__report_quote(r[i].output_tail, sizeof r[i].output_tail);
        const char *got = json_str(t, "name"), *got_output = json_str(t, "output");
        fuzz_require(got && !strcmp(got, name), "JSON test %d is named '%s', not '%s'", i, got ? got : "(none)", name);
        fuzz_require(output && got_output && !strcmp(got_output, output), "JSON test %d's output is not its tail", i);
        const char *status = json_str(t, "status");
        fuzz_require(status && !strcmp(status, pp__report_passed(&r[i]) ? "passed" : "failed"), "JSON test %d is %s", i,
                     status ? status : "(none)");
        const cJSON *checks = cJSON_GetObjectItemCaseSensitive(t, "checks");
        fuzz_require(cJSON_IsArray(checks) && cJSON_GetArraySize(checks) == nchecks_of(&r[i]),
                     "JSON test %d holds %d checks, not %d", i, cJSON_GetArraySize(checks), nchecks_of(&r[i]));
        for (int k = 0; k < nchecks_of(&r[i]); k++) {
            char *msg = cleaned(r[i].checks[k].msg, sizeof r[i].checks[k].msg);
            const char *got_msg = json_str(cJSON_GetArrayItem(checks, k), "message");
            fuzz_require(got_msg && !strcmp(got_msg, msg), "JSON test %d check %d's message is not its own", i, k);
            free(msg);
        }
        free(name);
        free(output);
    }
    cJSON_Delete(root);
}

static void check_gradescope(const char *text, size_t len, const pp_test_result *r, int n) {
    cJSON *root = cJSON_ParseWithLength(text, len);
    fuzz_require(root, "results.json does not parse near byte %td: %.200s",
                 cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text : -1, cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "");
    fuzz_require(json_str(root, "output"), "results.json has no output");
    const cJSON *tests = cJSON_GetObjectItemCaseSensitive(root, "tests");
    fuzz_require(cJSON_IsArray(tests) && cJSON_GetArraySize(tests) == n, "results.json holds %d tests, not %d",
                 cJSON_GetArraySize(tests), n);
    for (int i = 0; i < n; i++) {
        const cJSON *t = cJSON_GetArrayItem(tests, i);
        char *name = cleaned(r[i].name, sizeof r[i].name);
        const char *got = json_str(t, "name"), *vis = json_str(t, "visibility");
        fuzz_require(got && !strcmp(got, name), "results.json test %d is named '%s', not '%s'", i, got ? got : "(none)",
                     name);
        fuzz_require(json_str(t, "output"), "results.json test %d has no output", i);
        fuzz_require(vis && !strcmp(vis, r[i].cfg.secret ? "after_published" : "visible"),
                     "results.json test %d is %s", i, vis ? vis : "(none)");
        free(name);
    }
    cJSON_Delete(root);
}

static void check_junit(const char *text, size_t len, const pp_test_result *r, int n) {
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        fuzz_require(c >= 0x20 || c == '\n' || c == '\t', "the JUnit report holds control character 0x%02x at byte %zu",
                     c, i);
    }
    xmlDocPtr doc = xmlReadMemory(text, (int)len, "junit.xml", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR |
                                                                    XML_PARSE_NOWARNING);
    const xmlError *e = doc ? NULL : xmlGetLastError();
    fuzz_require(doc, "the JUnit report does not parse: %s (line %d)", e && e->message ? e->message : "?",
                 e ? e->line : 0);
    /* the test cases in document order: lab by lab, each lab's in the results' order */
    const char *labs[64];
    int nlabs = pp__report_labs(r, n, labs, 64), expect[MAX_TESTS], k = 0;
    for (int l = 0; l < nlabs; l++)
        for (int i = 0; i < n; i++)
            if (!strncmp(r[i].cfg.lab, labs[l], sizeof r[i].cfg.lab)) expect[k++] = i;
    int cases = 0;
    xmlNodePtr top = xmlDocGetRootElement(doc);
    fuzz_require(top && !xmlStrcmp(top->name, (const xmlChar *)"testsuites"), "the JUnit root is not <testsuites>");
    for (xmlNodePtr suite = top->children; suite; suite = suite->next) {
        if (suite->type != XML_ELEMENT_NODE) continue;
        for (xmlNodePtr tc = suite->children; tc; tc = tc->next) {
            if (tc->type != XML_ELEMENT_NODE || xmlStrcmp(tc->name, (const xmlChar *)"testcase")) continue;
            fuzz_require(cases < k, "the JUnit report holds more than %d test cases", k);
            const pp_test_result *t = &r[expect[cases++]];
            xmlChar *name = xmlGetProp(tc, (const xmlChar *)"name");
            char *want = xml_cleaned(t->name, sizeof t->name);
            fuzz_require(name && !strcmp((const char *)name, want), "JUnit test case %d is named '%s', not '%s'",
                         cases - 1, name ? (const char *)name : "(none)", want);
            int verdicts = 0;
            for (xmlNodePtr v = tc->children; v; v = v->next)
                verdicts += v->type == XML_ELEMENT_NODE && (!xmlStrcmp(v->name, (const xmlChar *)"failure") ||
                                                            !xmlStrcmp(v->name, (const xmlChar *)"error"));
            fuzz_require(verdicts == !pp__report_passed(t), "JUnit test case '%s' has %d failures and errors", want,
                         verdicts);
            free(want);
            xmlFree(name);
        }
    }
    fuzz_require(cases == n, "the JUnit report holds %d test cases, not %d", cases, n);
    xmlFreeDoc(doc);
}

/* ---- the target -------------------------------------------------------------------------------------------- */

/* A file the writers replace at a path (theirs are fopen(path, "w")), read back through its descriptor. */
static int report_fd = -1;
static char report_path[64];
static char *report_text;
static size_t report_cap;

static size_t read_report(void) {
    struct stat st;
    if (fstat(report_fd, &st)) abort();
    size_t len = (size_t)st.st_size;
    if (len + 1 > report_cap) {
        free(report_text);
        report_cap = len + 1;
        report_text = malloc(report_cap);
        if (!report_text) abort();
    }
    if (len && pread(report_fd, report_text, len, 0) != (ssize_t)len) abort();
    report_text[len] = 0;
    return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (report_fd < 0) {
        xmlInitParser();
        report_fd = memfd_create("report", MFD_CLOEXEC);
        if (report_fd < 0) abort();
        snprintf(report_path, sizeof report_path, "/proc/self/fd/%d", report_fd);
    }
    in.p = data, in.n = size, in.at = 0;
    static pp_test_result r[MAX_TESTS];
    int n = (int)(take() % (MAX_TESTS + 1));
    char impl[32] = {0}, backend[16] = {0}; /* the last byte stays the NUL a command line's string has */
    take_text(impl, sizeof impl - 1, 0);
    take_text(backend, sizeof backend - 1, 0);
    for (int i = 0; i < n; i++) take_result(&r[i]);
    /* as pplab grade does before it writes a report: CI systems and Gradescope key tests by name */
    for (int i = 0; i < n; i++) pp__report_name_unique(r, i);

    fuzz_require(pp__report_json(report_path, r, n, impl, backend) == 0, "the JSON report was not written");
    size_t len = read_report();
    check_json(report_text, len, r, n);
    fuzz_require(pp__report_junit(report_path, r, n, impl, backend) == 0, "the JUnit report was not written");
    len = read_report();
    check_junit(report_text, len, r, n);
    fuzz_require(pp__report_gradescope(report_path, r, n, impl, backend) == 0, "results.json was not written");
    len = read_report();
    check_gradescope(report_text, len, r, n);
    return 0;
}
