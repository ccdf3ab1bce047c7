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

#include "schedules.h"
#include "testset.h"
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

#define MAX_PIDS 16
#define MAX_TIDS 64

/* Checks the format; returns the number of compute slices of the virtual clock (its ops, not the slices nested in
 * them) and sets *flows to its flows. A slice of category "sum" or "recompute" must nest exactly inside the op slice
 * before it on its thread (ts and ts + dur within the op's, in the doubles a viewer adds); the ops themselves never
 * overlap. */
static int validate(const cJSON *root, int *flows) {
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    cr_assert(cJSON_IsArray(events), "no traceEvents array");
    int n = cJSON_GetArraySize(events), slices = 0;
    *flows = 0;
    /* per (pid, tid): the start and end of the last op slice, and whether the thread got a name */
    static double last_ts[MAX_PIDS][MAX_TIDS], last_end[MAX_PIDS][MAX_TIDS];
    int named[MAX_PIDS][MAX_TIDS] = {{0}}, used[MAX_PIDS][MAX_TIDS] = {{0}}, proc_named[MAX_PIDS] = {0},
        virt[MAX_PIDS] = {0};
    for (int p = 0; p < MAX_PIDS; p++)
        for (int t = 0; t < MAX_TIDS; t++) last_ts[p][t] = last_end[p][t] = -1;
    for (int i = 0; i < n; i++) { /* the virtual clock's processes, by name */
        const cJSON *e = cJSON_GetArrayItem(events, i);
        const cJSON *a = cJSON_GetObjectItem(e, "args");
        if (str(e, "name") && !strcmp(str(e, "name"), "process_name") && a && str(a, "name") &&
            !strncmp(str(a, "name"), "virtual clock", 13) && num(e, "pid") >= 0 && num(e, "pid") < MAX_PIDS)
            virt[(int)num(e, "pid")] = 1;
    }
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(events, i);
        const char *ph = str(e, "ph"), *name = str(e, "name");
        double pid = num(e, "pid"), tid = num(e, "tid");
        cr_assert(ph && name && !isnan(pid), "event %d lacks ph, name or pid", i);
        cr_assert(pid >= 1 && pid < MAX_PIDS, "event %d: pid %g", i, pid);
        int p = (int)pid;
        if (!strcmp(ph, "M")) {
            cr_assert(cJSON_IsObject(cJSON_GetObjectItem(e, "args")), "metadata %d without args", i);
            if (!strcmp(name, "thread_name")) named[p][(int)tid] = 1;
            if (!strcmp(name, "process_name")) proc_named[p] = 1;
            continue;
        }
        double ts = num(e, "ts");
        cr_assert(!isnan(ts) && ts >= 0 && !isnan(tid) && tid >= 0 && tid < MAX_TIDS, "event %d (%s): ts %g tid %g", i,
                  name, ts, tid);
        int t = (int)tid;
        used[p][t] = 1;
        if (!strcmp(ph, "X")) {
            double dur = num(e, "dur");
            const char *cat = str(e, "cat");
            cr_assert(!isnan(dur) && dur >= 0 && cat, "%s: dur %g", name, dur);
            cr_assert(cJSON_IsObject(cJSON_GetObjectItem(e, "args")), "%s without args", name);
            if (!strcmp(cat, "sum") || !strcmp(cat, "recompute")) {
                cr_expect(ts >= last_ts[p][t] && ts + dur <= last_end[p][t], "%s at %.17g..%.17g on pid %d tid %d is "
                          "not inside its op (%.17g..%.17g)", name, ts, ts + dur, p, t, last_ts[p][t], last_end[p][t]);
                continue;
            }
            cr_expect_geq(ts, last_end[p][t] - 1e-6, "%s at %g on pid %d tid %d starts before the slice before it "
                          "ends (%g)", name, ts, p, t, last_end[p][t]);
            last_ts[p][t] = ts, last_end[p][t] = ts + dur;
            if (virt[p]) slices++;
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
            if (virt[p] && !strcmp(ph, "s")) (*flows)++;
        } else {
            cr_assert_fail("event %d (%s): unexpected phase %s", i, name, ph);
        }
    }
    for (int p = 1; p < MAX_PIDS; p++) {
        int any = 0;
        for (int t = 0; t < MAX_TIDS; t++) {
            cr_expect(!used[p][t] || named[p][t], "pid %d tid %d has no name", p, t);
            any |= used[p][t];
        }
        cr_expect(!any || proc_named[p], "process %d has no name", p);
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
                    fabs(num(e, "dur") - (ve - vs) * PP_TRACE_JSON_US_PER_UNIT) < 1e-6 &&
                    /* a split backward's input half is drawn as I */
                    (str(e, "name")[0] == op[0] || (op[0] == 'B' && str(e, "name")[0] == 'I'));
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

/* The run's flags for a test configuration with T shards and D replicas, as a student types them. */
static void config_args(const pp_schedule_def *d, const pp_test_config *t, int T, int D, char *buf, size_t len) {
    pp_test_config u = *t;
    u.T = T, u.D = D;
    int k = snprintf(buf, len, "--impl solutions ");
    test_run_flags(d->name, &u, buf + k, len - (size_t)k);
}

/* The shards' sums the timeline's note reports, "(--tp): 3.2 of the 40.0 busy units"; 0 without that note. */
static double note_sums(const char *out) {
    static const char note[] = "Shards' sums on shard 0's lanes: ";
    const char *p = strstr(out, note);
    double v = -1;
    if (p) sscanf(p + strlen(note), "%lf", &v);
    return v;
}

/* One run's JSON trace held to its lanes: a named thread per rank and shard (world rank) on the virtual clock, the
 * shards' sums as slices of category "sum" nested in a compute slice of their thread, totalling both the ops' own
 * shards_sums_virtual_time and the timeline's note. */
static void check_lanes(const char *args, int P, int D, int T) {
    char cmd[2 * PATH_MAX], *out = malloc(1 << 20), path[PATH_MAX];
    snprintf(cmd, sizeof cmd, "COLUMNS=200 '%s/pplab' run %s --timeline --trace '%s/l.json' 2>&1", g_bin, args, g_dir);
    int rc = test_capture(cmd, out, 1 << 20);
    cr_assert_eq(rc, 0, "%s exited %d: %s", cmd, rc, out);
    snprintf(path, sizeof path, "%s/l.json", g_dir);
    char *json = slurp(path);
    cJSON *root = cJSON_Parse(json);
    cr_assert(root, "%s: not JSON", args);
    int flows, W = P * D * T, threads[MAX_TIDS] = {0}, sums = 0;
    validate(root, &flows);
    double sum_dur = 0, op_sums = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents")) {
        const char *ph = str(e, "ph"), *cat = str(e, "cat");
        int pid = (int)num(e, "pid"), tid = (int)num(e, "tid");
        if (pid < 1 || pid > D) continue; /* the virtual clock's processes: one per replica */
        if (!strcmp(ph, "M") && !strcmp(str(e, "name"), "thread_name") && tid >= 0 && tid < MAX_TIDS) threads[tid]++;
        if (strcmp(ph, "X")) continue;
        const cJSON *a = cJSON_GetObjectItem(e, "args");
        if (!strcmp(cat, "sum")) {
            sums++;
            cr_expect(str(a, "op") && str(a, "link") && (!strcmp(str(a, "link"), "inside a node") ||
                      !strcmp(str(a, "link"), "between nodes")), "%s: a sum slice without its op or link", args);
            if (tid < P * D) sum_dur += num(e, "dur") / PP_TRACE_JSON_US_PER_UNIT; /* shard 0's: the run's report */
        } else if (tid < P * D && cJSON_IsNumber(cJSON_GetObjectItem(a, "shards_sums_virtual_time"))) {
            op_sums += num(a, "shards_sums_virtual_time");
        }
    }
    for (int g = 0; g < MAX_TIDS; g++)
        cr_expect_eq(threads[g], g < W ? 1 : 0, "%s: %d thread names for rank %d of %d", args, threads[g], g, W);
    if (T > 1) {
        cr_expect_gt(sums, 0, "%s: no sum slice", args);
        cr_expect(fabs(sum_dur - op_sums) < 1e-6, "%s: sum slices total %.9g, the ops' sums %.9g", args, sum_dur, op_sums);
        /* the note prints 4 decimals */
        cr_expect(fabs(sum_dur - note_sums(out)) <= 5e-5 + 1e-9, "%s: sum slices total %.9g, the timeline says %.4f",
                  args, sum_dur, note_sums(out));
    } else {
        cr_expect_eq(sums, 0, "%s: sum slices without --tp", args);
    }
    cJSON_Delete(root);
    free(json);
    free(out);
}

/* One configuration of every schedule (each one's first of the default set), tpblock at --tp 2 and dp1f1b at
 * --dp 2 too, through pplab run as a student runs it. */
Test(tracefile, every_schedule_has_a_thread_per_rank_and_shard_with_its_sums) {
    char args[512];
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *d = &pp__schedules[i];
        int n;
        const pp_test_config *t = pp__testset(d->name, &n);
        if (!t || n < 1) continue;
        int T = t->T > 1 ? t->T : 1, D = t->D > 1 ? t->D : 1;
        config_args(d, t, T, D, args, sizeof args);
        check_lanes(args, t->P, D, T);
        if (!strcmp(d->name, "tpblock") || !strcmp(d->name, "dp1f1b")) {
            pp_test_config u = *t;
            u.node_size = 0;
            if (!strcmp(d->name, "tpblock")) T = 2, u.P = 2, u.M = 4; /* two stages' shards */
            else D = 2;
            config_args(d, &u, T, D, args, sizeof args);
            check_lanes(args, u.P, D, T);
        }
    }
}

/* A backward that rebuilt its stash under --tp, on times no binary fraction holds: its rebuilt forward and each
 * pass's sums are slices of their own, each nested exactly inside the op (validate), the sums as long as the ops
 * say. */
Test(tracefile, a_rebuilt_forward_and_the_sums_nest_in_their_op) {
    pp_trace t[1] = {{0}};
    double third = 1.0 / 3;
    pp_event f = {.rank = 0, .op = PP_OP_F, .mb = 0, .peer = -1, .vstart = third, .vend = third + 1.1,
                  .tp_time = 0.1, .tp_across = 0};
    pp_event b = {.rank = 0, .op = PP_OP_B, .mb = 0, .peer = -1, .flags = PP_EV_RECOMPUTED, .vstart = 7 * third,
                  .vend = 7 * third + 3.3, .tp_time = 0.3, .tp_across = 1};
    pp__trace_add(&t[0], &f);
    pp__trace_add(&t[0], &b);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/r.json", g_dir);
    cr_assert_eq(pp__tracefile_write_json(t, 1, 1, path), 0);
    char *json = slurp(path);
    cJSON *root = cJSON_Parse(json);
    cr_assert(root);
    int flows;
    cr_expect_eq(validate(root, &flows), 2, "two ops, whatever is nested in them");
    int recomputes = 0, sums = 0, across = 0;
    double sum_dur = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents")) {
        if (num(e, "pid") != 1 || strcmp(str(e, "ph"), "X")) continue;
        recomputes += !strcmp(str(e, "cat"), "recompute");
        if (strcmp(str(e, "cat"), "sum")) continue;
        sums++, sum_dur += num(e, "dur") / PP_TRACE_JSON_US_PER_UNIT;
        across += !strcmp(str(cJSON_GetObjectItem(e, "args"), "link"), "between nodes");
    }
    cr_expect_eq(recomputes, 1);
    cr_expect_eq(sums, 3, "the forward's, the rebuilt forward's and the backward's");
    cr_expect_eq(across, 2, "the backward's two passes crossed nodes");
    cr_expect(fabs(sum_dur - 0.4) < 1e-9, "sums total %.17g", sum_dur);
    cJSON_Delete(root);
    free(json);
    pp__trace_clear(&t[0]);
}
