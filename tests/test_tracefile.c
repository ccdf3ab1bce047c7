/* test_tracefile.c: `--trace FILE.json` against the Trace Event Format that ui.perfetto.dev and chrome://tracing
 * read: every event has its required fields, complete events on one thread never go back in time or overlap,
 * each async message has one begin and one end, each flow one start and one finish bound to a compute slice of
 * the same category and time, every thread is named; and the trace holds the run: one slice per compute op with
 * the CSV trace's virtual times, one flow per boundary message. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tracefile.h"

static char g_dir[64], g_bin[PATH_MAX];

static void setup(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/pp_test_trace_XXXXXX");
    cr_assert(mkdtemp(g_dir));
    test_build_dir(g_bin, sizeof g_bin);
}

static void teardown(void) { test_rm_tree(g_dir); }

TestSuite(tracefile, .init = setup, .fini = teardown, .timeout = 120);

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

static double num(const cJSON *o, const char *k) {
    const cJSON *x = cJSON_GetObjectItem(o, k);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k) {
    const cJSON *x = cJSON_GetObjectItem(o, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* Checks the format; returns the number of compute slices of the virtual clock and sets *flows to its flows. */
static int validate(const cJSON *root, int *flows) {
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    cr_assert(cJSON_IsArray(events), "no traceEvents array");
    int n = cJSON_GetArraySize(events), slices = 0;
    *flows = 0;
    /* per (pid, tid): the end of the last complete event, and whether the thread got a name */
    double last_end[3][64];
    int named[3][64] = {{0}}, used[3][64] = {{0}}, proc_named[3] = {0};
    for (int p = 0; p < 3; p++)
        for (int t = 0; t < 64; t++) last_end[p][t] = -1;
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(events, i);
        const char *ph = str(e, "ph"), *name = str(e, "name");
        double pid = num(e, "pid"), tid = num(e, "tid");
        cr_assert(ph && name && !isnan(pid), "event %d lacks ph, name or pid", i);
        cr_assert(pid == 1 || pid == 2, "event %d: pid %g", i, pid);
        int p = (int)pid;
        if (!strcmp(ph, "M")) {
            cr_assert(cJSON_IsObject(cJSON_GetObjectItem(e, "args")), "metadata %d without args", i);
            if (!strcmp(name, "thread_name")) named[p][(int)tid] = 1;
            if (!strcmp(name, "process_name")) proc_named[p] = 1;
            continue;
        }
        double ts = num(e, "ts");
        cr_assert(!isnan(ts) && ts >= 0 && !isnan(tid) && tid >= 0 && tid < 64, "event %d (%s): ts %g tid %g", i, name,
                  ts, tid);
        int t = (int)tid;
        used[p][t] = 1;
        if (!strcmp(ph, "X")) {
            double dur = num(e, "dur");
            cr_assert(!isnan(dur) && dur >= 0, "%s: dur %g", name, dur);
            cr_expect_geq(ts, last_end[p][t] - 1e-6, "%s at %g on pid %d tid %d starts before the slice before it "
                          "ends (%g)", name, ts, p, t, last_end[p][t]);
            last_end[p][t] = ts + dur;
            cr_assert(cJSON_IsObject(cJSON_GetObjectItem(e, "args")), "%s without args", name);
            if (p == 1) slices++;
        } else if (!strcmp(ph, "b") || !strcmp(ph, "e")) {
            cr_assert(str(e, "id"), "async %s without id", name);
            int found = 0;
            for (int j = 0; j < n; j++) {
                const cJSON *o = cJSON_GetArrayItem(events, j);
                const char *oph = str(o, "ph"), *oid = str(o, "id");
                if (j == i || !oph || !oid || strcmp(oid, str(e, "id")) || num(o, "pid") != pid) continue;
                if (strcmp(oph, !strcmp(ph, "b") ? "e" : "b")) continue;
                found++;
                double b = !strcmp(ph, "b") ? ts : num(o, "ts"), en = !strcmp(ph, "b") ? num(o, "ts") : ts;
                cr_expect_geq(en, b, "async %s ends before it begins", name);
            }
            cr_expect_eq(found, 1, "async %s (id %s): %d partners", name, str(e, "id"), found);
        } else if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
            double id = num(e, "id");
            int partners = 0, bound = 0;
            for (int j = 0; j < n; j++) {
                const cJSON *o = cJSON_GetArrayItem(events, j);
                const char *oph = str(o, "ph");
                if (!oph || num(o, "pid") != pid) continue;
                if (j != i && num(o, "id") == id && !strcmp(oph, !strcmp(ph, "s") ? "f" : "s")) partners++;
                /* chrome://tracing binds by pid, tid, category and time */
                if (!strcmp(oph, "X") && num(o, "tid") == tid && num(o, "ts") == ts && str(o, "cat") && str(e, "cat") &&
                    !strcmp(str(o, "cat"), str(e, "cat")))
                    bound++;
            }
            cr_expect_eq(partners, 1, "flow %g (%s): %d partners", id, ph, partners);
            cr_expect_geq(bound, 1, "flow %g (%s) at %g on tid %g binds to no slice", id, ph, ts, tid);
            if (p == 1 && !strcmp(ph, "s")) (*flows)++;
        } else {
            cr_assert_fail("event %d (%s): unexpected phase %s", i, name, ph);
        }
    }
    for (int p = 1; p <= 2; p++) {
        cr_expect(proc_named[p], "process %d has no name", p);
        for (int t = 0; t < 64; t++) cr_expect(!used[p][t] || named[p][t], "pid %d tid %d has no name", p, t);
    }
    return slices;
}

/* Runs pplab with args and --trace <dir>/name; returns the file's text (caller frees). */
static char *traced(const char *args, const char *name) {
    char cmd[2 * PATH_MAX], out[4096];
    snprintf(cmd, sizeof cmd, "'%s/pplab' run %s --trace '%s/%s' 2>&1", g_bin, args, g_dir, name);
    int rc = test_capture(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "%s exited %d: %s", cmd, rc, out);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    return slurp(path);
}

/* One schedule's run as JSON, checked against the format and against the CSV trace of the same run. */
static void check_run(const char *args, int want_flows) {
    char *json = traced(args, "t.json"), *csv = traced(args, "t.csv");
    cJSON *root = cJSON_Parse(json);
    cr_assert(root, "not JSON: %.200s", json);
    int flows, slices = validate(root, &flows);
    /* the same compute ops with the same virtual times, rank by rank */
    int csv_ops = 0;
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        int rank;
        char op[8];
        double vs, ve;
        if (sscanf(line + 1, "%d,%7[A-Z],%*d,%*d,%*d,%*d,%*u,%lf,%lf", &rank, op, &vs, &ve) != 4) continue;
        if (strcmp(op, "F") && strcmp(op, "B") && strcmp(op, "W")) continue;
        csv_ops++;
        int found = 0;
        for (int i = 0; i < cJSON_GetArraySize(events) && !found; i++) {
            const cJSON *e = cJSON_GetArrayItem(events, i);
            found = str(e, "ph") && !strcmp(str(e, "ph"), "X") && num(e, "pid") == 1 && num(e, "tid") == rank &&
                    fabs(num(e, "ts") - vs * PP_TRACE_JSON_US_PER_UNIT) < 1e-6 &&
                    fabs(num(e, "dur") - (ve - vs) * PP_TRACE_JSON_US_PER_UNIT) < 1e-6 && !strncmp(str(e, "name"), op, 1);
        }
        cr_expect(found, "%s: rank %d's %s at %g..%g is not in the JSON trace", args, rank, op, vs, ve);
    }
    cr_expect_eq(slices, csv_ops, "%s: %d compute slices, %d compute ops in the CSV", args, slices, csv_ops);
    cr_expect_eq(flows, want_flows, "%s: %d flows, expected one per boundary message (%d)", args, flows, want_flows);
    cJSON_Delete(root);
    free(json);
    free(csv);
}

Test(tracefile, runs_validate_and_hold_every_op_and_message) {
    /* 2M(vP-1) boundary messages each */
    check_run("--impl solutions --schedule 1f1b --stages 4 --microbatches 8 --comm-latency 0.5", 2 * 8 * 3);
    check_run("--impl solutions --schedule interleaved --stages 2 --chunks 2 --microbatches 4", 2 * 4 * 3);
    check_run("--impl solutions --schedule zbh1 --stages 4 --microbatches 8", 2 * 8 * 3);
    check_run("--canonical --schedule gpipe --stages 3 --microbatches 4", 0); /* a replay has no messages */
}

Test(tracefile, a_name_of_another_kind_is_refused_before_the_run) {
    char cmd[2 * PATH_MAX], out[4096];
    snprintf(cmd, sizeof cmd, "'%s/pplab' run --impl solutions --schedule gpipe --stages 2 --microbatches 2 "
             "--trace '%s/t.txt' 2>&1", g_bin, g_dir);
    int rc = test_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d: %s", rc, out);
    cr_expect(strstr(out, "--trace") && strstr(out, ".csv") && strstr(out, ".json"), "%s", out);
    cr_expect(!strstr(out, "bubble:"), "the run went ahead: %s", out);
}

/* pplab grade --plot-dir DIR writes each test's run as a JSON trace that validates too. */
Test(tracefile, grade_plots_write_one_trace_per_test) {
    char cmd[2 * PATH_MAX], out[4096], path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/cfg", g_dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("1f1b P=3 M=3 seed=5\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/pplab' grade --impl solutions --lab 1f1b --config '%s' --only-config --quiet "
             "--plot-dir '%s/plots' 2>&1", g_bin, path, g_dir);
    int rc = test_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "exit %d: %s", rc, out);
    snprintf(path, sizeof path, "%s/plots/hidden_1f1b_P-3_M-3_seed-5.json", g_dir);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "no %s; %s", path, out);
    char *json = slurp(path);
    cJSON *root = cJSON_Parse(json);
    cr_assert(root, "not JSON");
    int flows;
    cr_expect_eq(validate(root, &flows), 3 * 3 * 2, "one slice per F and B of 3 ranks x 3 micro-batches");
    cr_expect_eq(flows, 2 * 3 * 2, "2M(P-1) messages");
    cJSON_Delete(root);
    free(json);
}

/* Lab 07's reduces are named by the chunk they reduce, on every rank of every replica: "REDUCE chunk 1". */
Test(tracefile, a_reduce_is_named_by_its_chunk) {
    char *json = traced("--impl solutions --schedule dpinterleaved --stages 2 --chunks 2 --microbatches 4 --dp 2",
                        "dp.json");
    cJSON *root = cJSON_Parse(json);
    cr_assert(root, "not JSON: %.200s", json);
    int named[2] = {0, 0}, unnamed = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents")) {
        const char *cat = str(e, "cat"), *name = str(e, "name");
        if (!cat || strcmp(cat, "reduce") || !name || strcmp(str(e, "ph"), "b")) continue;
        int c = -1;
        if (sscanf(name, "REDUCE chunk %d", &c) == 1 && c >= 0 && c < 2) named[c]++;
        else unnamed++;
    }
    /* each of the 4 ranks reduces both its chunks, on both clocks */
    cr_expect_eq(named[0], 8, "chunk 0's reduces: %d", named[0]);
    cr_expect_eq(named[1], 8, "chunk 1's reduces: %d", named[1]);
    cr_expect_eq(unnamed, 0, "%d reduces are not named by their chunk", unnamed);
    cJSON_Delete(root);
    free(json);
}
