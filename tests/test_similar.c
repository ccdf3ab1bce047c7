/* test_similar.c: pplab similar on the kit's own files, run as an instructor runs it: copies of the reference
 * solutions disguised the ways students disguise them (every local name renamed, functions moved and statements
 * swapped, re-indented with comments stripped, and all of it at once) are each reported against the kit's file;
 * two students sharing a copy are reported as a pair; solutions written apart (tests/valid) and students who
 * share only the stub they all start from are not; every bad input ends in one line and exit status 2; the
 * JSON holds what the text says, with sim_c's own shares. Tests run from the project root, each in a folder of
 * its own under /tmp. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

/* The scratch folder of the running test: the submissions, the scripts that disguise copies, the reports. */
static char work[PATH_MAX];
static char out[1 << 16];

/* Renames every identifier but C's keywords, a few of libc's names and pp.h's own (pp_, PP_): each becomes q1, q2,
 * ... in the order first seen, the same name for every use, so the copy still compiles; #include lines stay. */
static const char rename_awk[] =
    "BEGIN {\n"
    "    n = split(\"auto break case char const continue default do double else enum extern float for goto if \" \\\n"
    "              \"inline int long register restrict return short signed sizeof static struct switch typedef \" \\\n"
    "              \"union unsigned void volatile while size_t NULL calloc malloc realloc free memset memcpy \" \\\n"
    "              \"abs snprintf strcmp\", k, \" \")\n"
    "    for (i = 1; i <= n; i++) keep[k[i]] = 1\n"
    "}\n"
    "/^[ \\t]*#/ { print; next }\n"
    "{\n"
    "    o = \"\"; s = $0\n"
    "    while (length(s) > 0) {\n"
    "        c = substr(s, 1, 1)\n"
    "        if (c ~ /[0-9]/) {\n"
    "            match(s, /^[0-9A-Za-z_.]+/); o = o substr(s, 1, RLENGTH); s = substr(s, RLENGTH + 1); continue\n"
    "        }\n"
    "        if (c ~ /[A-Za-z_]/) {\n"
    "            match(s, /^[A-Za-z_][A-Za-z0-9_]*/); w = substr(s, 1, RLENGTH); s = substr(s, RLENGTH + 1)\n"
    "            if (!(w in keep) && w !~ /^(pp_|PP_)/) { if (!(w in name)) name[w] = \"q\" (++m); w = name[w] }\n"
    "            o = o w; continue\n"
    "        }\n"
    "        o = o c; s = substr(s, 2)\n"
    "    }\n"
    "    print o\n"
    "}\n";

/* Moves the functions around: each top-level piece that ends at a line "}" is printed in reverse order, after the
 * #include lines and a prototype of every function (so that the file still compiles). */
static const char reorder_awk[] =
    "/^#include/ { inc = inc $0 \"\\n\"; next }\n"
    "{ cur = cur $0 \"\\n\" }\n"
    "/^[A-Za-z_].*\\) *\\{$/ { p = $0; sub(/ *\\{$/, \";\", p); protos = protos p \"\\n\" }\n"
    "/^\\}/ { piece[++n] = cur; cur = \"\" }\n"
    "END { printf \"%s%s\", inc, protos; for (i = n; i >= 1; i--) printf \"%s\", piece[i]; printf \"%s\", cur }\n";

/* Swaps the statements that may come in either order: a stash freed right after a send of the backward's output
 * is freed before it instead. */
static const char swap_awk[] =
    "{ line[NR] = $0 }\n"
    "END {\n"
    "    for (i = 2; i <= NR; i++)\n"
    "        if (line[i] ~ /pp_stash_free\\(/ && line[i - 1] ~ /pp_i?send\\(.*;[ \\t]*$/) {\n"
    "            t = line[i]; line[i] = line[i - 1]; line[i - 1] = t\n"
    "        }\n"
    "    for (i = 1; i <= NR; i++) print line[i]\n"
    "}\n";

/* What each disguise runs, from the file on stdin to the copy on stdout (the scripts above are in work/.tools). */
static char rename_cmd[PATH_MAX + 64], reorder_cmd[2 * PATH_MAX + 64], reformat_cmd[PATH_MAX + 256];
static int have_clang_format;

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0, "cannot write %s", path);
}

/* Runs a shell command made from fmt; expects exit status 0. */
static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    cr_assert_eq(system(cmd), 0, "this command failed: %s", cmd);
}

static void setup(void) {
    snprintf(work, sizeof work, "/tmp/pplab-similar-test-XXXXXX");
    cr_assert(mkdtemp(work), "cannot make a scratch folder");
    char tools[PATH_MAX + 16], path[PATH_MAX + 64];
    snprintf(tools, sizeof tools, "%s/.tools", work);
    cr_assert_eq(mkdir(tools, 0755), 0);
    snprintf(path, sizeof path, "%s/rename.awk", tools), write_file(path, rename_awk);
    snprintf(path, sizeof path, "%s/reorder.awk", tools), write_file(path, reorder_awk);
    snprintf(path, sizeof path, "%s/swap.awk", tools), write_file(path, swap_awk);
    snprintf(rename_cmd, sizeof rename_cmd, "awk -f '%s/rename.awk'", tools);
    snprintf(reorder_cmd, sizeof reorder_cmd, "awk -f '%s/reorder.awk' | awk -f '%s/swap.awk'", tools, tools);
    /* comments stripped by the preprocessor (directives kept), then another house style: GNU's, braces on their
     * own lines, 3-column indents, 72 columns; without clang-format, braces moved and tabs by sed */
    have_clang_format = system("command -v clang-format >/dev/null 2>&1") == 0;
    snprintf(reformat_cmd, sizeof reformat_cmd, "gcc -x c -fpreprocessed -dD -E -P - | %s",
             have_clang_format ? "clang-format --style='{BasedOnStyle: GNU, IndentWidth: 3, ColumnLimit: 72}'"
                               : "sed -e 's/^\\( *\\)\\(.*[^ ]\\) {$/\\1\\2\\n\\1{/' -e 's/    /\\t/g'");
}

static void teardown(void) { test_rm_tree(work); }

TestSuite(similar, .init = setup, .fini = teardown, .timeout = 60);

static void need_sim(void) {
    if (system("command -v sim_c >/dev/null 2>&1") != 0)
        test_skip("sim_c is not installed (apt-get install similarity-tester, or make deps)");
}

/* Writes work/dst from src (relative to the project root) through the shell pipeline via (NULL: a plain copy). */
static void put(const char *dst, const char *src, const char *via) {
    sh("mkdir -p \"$(dirname '%s/%s')\" && (%s) < '%s' > '%s/%s'", work, dst, via ? via : "cat", src, work, dst);
}

/* Runs `pplab similar ARGS` in work (stdout and stderr together, into out); returns its exit status. */
static int similar(const char *args) {
    char build[PATH_MAX], cmd[2 * PATH_MAX + 2048];
    test_build_dir(build, sizeof build);
    snprintf(cmd, sizeof cmd, "cd '%s' && NO_COLOR=1 '%s/pplab' similar %s 2>&1", work, build, args);
    return test_capture(cmd, out, sizeof out);
}

/* The JSON report the last run wrote to work/report.json. */
static cJSON *report(void) {
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/report.json", work);
    FILE *f = fopen(path, "r");
    cr_assert(f, "no JSON report at %s; the run said:\n%s", path, out);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    cJSON *j = cJSON_Parse(text);
    cr_assert(j, "the JSON report does not parse:\n%s", text);
    return j;
}

/* The pair of the report for lab file lab between submission a and b (a submission's name, or "kit:PATH" for the
 * kit's file PATH), either way round; NULL when it is not there. */
static const cJSON *pair(const cJSON *j, const char *lab, const char *a, const char *b) {
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(j, "pairs")) {
        if (strcmp(cJSON_GetObjectItem(p, "lab_file")->valuestring, lab)) continue;
        char names[2][PATH_MAX];
        for (int s = 0; s < 2; s++) {
            const cJSON *side = cJSON_GetObjectItem(p, s ? "b" : "a");
            if (cJSON_IsTrue(cJSON_GetObjectItem(side, "kit")))
                snprintf(names[s], sizeof names[s], "kit:%s", cJSON_GetObjectItem(side, "file")->valuestring);
            else
                snprintf(names[s], sizeof names[s], "%s", cJSON_GetObjectItem(side, "submission")->valuestring);
        }
        if ((!strcmp(names[0], a) && !strcmp(names[1], b)) || (!strcmp(names[0], b) && !strcmp(names[1], a))) return p;
    }
    return NULL;
}

static int percent(const cJSON *p) { return p ? cJSON_GetObjectItem(p, "percent")->valueint : -1; }

/* Expects submission who's copy of the kit's `ref` (a lab file "NN-lab/file.c") reported against the kit's file at
 * the default threshold or above, with the text's block and at least one line range. */
static void expect_copy_found(const cJSON *j, const char *who, const char *lab, const char *how) {
    char kit[PATH_MAX];
    snprintf(kit, sizeof kit, "kit:solutions/%s", lab);
    const cJSON *p = pair(j, lab, who, kit);
    cr_expect(percent(p) >= 50, "%s's %s copy of solutions/%s: expected at 50%% or more against the kit's file, "
              "got %d%% (-1: not listed):\n%s", who, how, lab, percent(p), out);
    if (!p) return;
    cr_expect_gt(cJSON_GetArraySize(cJSON_GetObjectItem(p, "runs")), 0, "%s's pair lists no line ranges", who);
    char head[PATH_MAX];
    snprintf(head, sizeof head, "%s %s ~ kit: solutions/%s %d%%\n", who, lab, lab, percent(p));
    const char *at = strstr(out, head);
    cr_expect(at && strstr(at, "\n  lines "), "expected the block '%s' and its line ranges in:\n%s", head, out);
}

/* Copies of a reference solution, each disguised one way and all ways at once, by four students. */
static void disguised_copies(const char *lab) {
    char src[PATH_MAX], dst[PATH_MAX], all[4 * PATH_MAX];
    snprintf(src, sizeof src, "solutions/%s", lab);
    snprintf(all, sizeof all, "%s | %s | %s", reorder_cmd, rename_cmd, reformat_cmd);
    const char *who[] = {"renamed", "reordered", "reformatted", "all"};
    const char *via[] = {rename_cmd, reorder_cmd, reformat_cmd, all};
    for (int i = 0; i < 4; i++) {
        snprintf(dst, sizeof dst, "%s/labs/%s", who[i], lab);
        put(dst, src, via[i]);
    }
    cr_assert_eq(similar("renamed reordered reformatted all --json report.json"), 1,
                 "copies of %s: expected exit status 1 (pairs at the threshold):\n%s", src, out);
    cJSON *j = report();
    for (int i = 0; i < 4; i++) expect_copy_found(j, who[i], lab, who[i]);
    cJSON_Delete(j);
}

Test(similar, disguised_copies_of_onef1b) {
    need_sim();
    disguised_copies("03-1f1b/onef1b.c");
}

Test(similar, disguised_copies_of_gpipe) {
    need_sim();
    disguised_copies("02-gpipe/gpipe.c");
}

/* Several functions, so the reordered copy really moves them. */
Test(similar, disguised_copies_of_zbv_and_tpgrid) {
    need_sim();
    disguised_copies("06-vshape/zbv.c");
    disguised_copies("08-tensor/tpgrid.c");
}

/* The renamed copy keeps the layout: its line ranges are the reference's. */
Test(similar, a_renamed_copy_matches_line_for_line) {
    need_sim();
    put("alice/labs/02-gpipe/gpipe.c", "solutions/02-gpipe/gpipe.c", rename_cmd);
    cr_assert_eq(similar("alice --json report.json"), 1, "%s", out);
    cJSON *j = report();
    const cJSON *p = pair(j, "02-gpipe/gpipe.c", "alice", "kit:solutions/02-gpipe/gpipe.c");
    cr_assert_eq(percent(p), 100, "a renamed copy is the reference token for token: expected 100%%:\n%s", out);
    const cJSON *run;
    cJSON_ArrayForEach(run, cJSON_GetObjectItem(p, "runs")) {
        const cJSON *a = cJSON_GetObjectItem(run, "a_lines"), *b = cJSON_GetObjectItem(run, "b_lines");
        cr_expect(cJSON_GetArrayItem(a, 0)->valueint == cJSON_GetArrayItem(b, 0)->valueint &&
                  cJSON_GetArrayItem(a, 1)->valueint == cJSON_GetArrayItem(b, 1)->valueint,
                  "a renamed copy's lines are the reference's:\n%s", out);
    }
    cJSON_Delete(j);
}

/* A copy padded with code of its own (here two whole solutions of other labs, as functions never called) is a
 * small share of the copy, but the reference is all in it: the larger share is the pair's. */
Test(similar, a_padded_copy_is_found_from_the_other_side) {
    need_sim();
    sh("mkdir -p '%s/mallory' && (cat solutions/02-gpipe/gpipe.c; sed 's/^void pp_[a-z0-9]*_step/static void pad_%%d/' "
       "tests/valid/comm-styles/03-1f1b/onef1b.c tests/valid/comm-styles/04-interleaved/interleaved.c) "
       "> '%s/mallory/gpipe.c'", work, work);
    cr_assert_eq(similar("mallory --json report.json"), 1, "%s", out);
    cJSON *j = report();
    const cJSON *p = pair(j, "02-gpipe/gpipe.c", "mallory", "kit:solutions/02-gpipe/gpipe.c");
    cr_assert(p, "mallory's padded copy is not reported:\n%s", out);
    cr_expect_lt(cJSON_GetObjectItem(p, "a_in_b")->valueint, 50, "the padding is most of mallory's file:\n%s", out);
    cr_expect_eq(cJSON_GetObjectItem(p, "b_in_a")->valueint, 100, "the reference is all in it:\n%s", out);
    cr_expect_eq(percent(p), 100, "%s", out);
    cJSON_Delete(j);
}

/* Two students handing in one renamed copy, one in a tree and one as a flat upload, are a pair; so is each with
 * the kit. A third student's own work is in no pair. */
Test(similar, two_students_sharing_a_copy_are_a_pair) {
    need_sim();
    put("alice/labs/03-1f1b/onef1b.c", "solutions/03-1f1b/onef1b.c", rename_cmd);
    put("bob/submission/onef1b.c", "solutions/03-1f1b/onef1b.c", rename_cmd);
    put("carol/onef1b.c", "tests/valid/comm-styles/03-1f1b/onef1b.c", NULL);
    cr_assert_eq(similar("alice bob carol --json report.json"), 1, "%s", out);
    cJSON *j = report();
    cr_expect_eq(percent(pair(j, "03-1f1b/onef1b.c", "alice", "bob")), 100, "alice and bob share a copy:\n%s", out);
    cr_expect(strstr(out, "alice 03-1f1b/onef1b.c ~ bob 100%\n  alice/labs/03-1f1b/onef1b.c ~ "
                          "bob/submission/onef1b.c: 100% of the first in the second, 100% the other way\n"),
              "the pair's block names both files as found:\n%s", out);
    cr_expect(!pair(j, "03-1f1b/onef1b.c", "carol", "alice") && !pair(j, "03-1f1b/onef1b.c", "carol", "bob") &&
              !pair(j, "03-1f1b/onef1b.c", "carol", "kit:solutions/03-1f1b/onef1b.c"),
              "carol's solution was written apart: no pair of hers expected:\n%s", out);
    cJSON_Delete(j);
}

/* The valid solutions of tests/valid written apart from the reference (their headers say how), each against the
 * reference of its lab: none reaches the default threshold. */
Test(similar, solutions_written_apart_are_not_copies) {
    need_sim();
    const char *valid[] = {"comm-styles/02-gpipe/gpipe.c",       "comm-styles/03-1f1b/onef1b.c",
                           "comm-styles/04-interleaved/interleaved.c", "comm-styles/05-zerobubble/zbh1.c",
                           "zbv-from-the-handout/06-vshape/zbv.c"};
    char args[4096] = "--json report.json";
    for (size_t i = 0; i < sizeof valid / sizeof *valid; i++) {
        char src[PATH_MAX], dst[PATH_MAX];
        snprintf(src, sizeof src, "tests/valid/%s", valid[i]);
        snprintf(dst, sizeof dst, "s%zu/%s", i, strchr(valid[i], '/') + 1);
        put(dst, src, NULL);
        snprintf(args + strlen(args), sizeof args - strlen(args), " s%zu", i);
    }
    cr_expect_eq(similar(args), 0, "no solution written apart reaches 50%%: expected exit status 0:\n%s", out);
    cJSON *j = report();
    cr_expect_eq(cJSON_GetObjectItem(j, "pairs_at_threshold")->valueint, 0, "%s", out);
    cr_expect_eq(cJSON_GetObjectItem(j, "pairs_compared")->valueint >= 5, 1, "each was compared with the kit:\n%s",
                 out);
    cJSON_Delete(j);
}

/* Writes work/dst: the stub with lines put in after its first line that starts with `after`: from `src` (a
 * solution of the same lab, relative to the project root), its lines after the same line up to the function's
 * closing brace; or, with src NULL, the lines of `text`. A student who keeps every comment and line the stub gave
 * and writes the rest. */
static void stub_with(const char *dst, const char *stub, const char *after, const char *src, const char *text) {
    char path[PATH_MAX], body[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/%s", work, dst);
    snprintf(body, sizeof body, "%s/.body", work);
    if (src) sh("awk -v after='%s' 'index($0, after) == 1 && !inb { inb = 1; next } /^}/ { inb = 0 } inb' '%s' > '%s'",
                after, src, body);
    else write_file(body, text);
    sh("mkdir -p \"$(dirname '%s')\" && awk -v after='%s' -v body='%s' "
       "'{ print } index($0, after) == 1 && !done { while ((getline l < body) > 0) print l; done = 1 }' '%s' > '%s'",
       path, after, body, stub, path);
}

/* Every student starts from the stub: two who each kept its comments, signatures and given lines and wrote the
 * rest apart share all of that, which sim_c alone counts; pplab similar leaves the stub's text out. */
Test(similar, the_stub_everyone_starts_from_is_not_copying) {
    need_sim();
    /* two 1F1Bs written apart (tests/valid), each put into the stub as a student would */
    const char *decl = "    int first = me == 0, last = me == P - 1;";
    stub_with("alice/labs/03-1f1b/onef1b.c", "labs/03-1f1b/onef1b.c", decl, "tests/valid/comm-styles/03-1f1b/onef1b.c",
              NULL);
    stub_with("bob/labs/03-1f1b/onef1b.c", "labs/03-1f1b/onef1b.c", decl, "tests/valid/stash-anywhere/03-1f1b/onef1b.c",
              NULL);
    /* the warm-up, whose stub is most of the file: alice and bob each answered one exercise their own way, carol
     * and dave handed it in untouched */
    stub_with("alice/labs/00-warmup/warmup.c", "labs/00-warmup/warmup.c", "    double bubble = 0;", NULL,
              "    if (!strcmp(schedule, \"naive\")) bubble = (double)(P - 1) / P;\n"
              "    else if (!strcmp(schedule, \"gpipe\") || !strcmp(schedule, \"1f1b\"))\n"
              "        bubble = (double)(P - 1) / (M + P - 1);\n");
    stub_with("bob/labs/00-warmup/warmup.c", "labs/00-warmup/warmup.c", "    int rc = -1;", NULL,
              "    double total = 0, sum = 0;\n"
              "    for (int i = 0; i < nlayers; i++) total += cost[i];\n"
              "    int s = 0;\n"
              "    first[0] = 0;\n"
              "    for (int i = 0; i < nlayers && s < P - 1; i++)\n"
              "        if ((sum += cost[i]) >= total / P) first[++s] = i + 1, sum = 0;\n"
              "    first[P] = nlayers;\n"
              "    rc = s == P - 1 ? 0 : -1;\n");
    put("carol/labs/00-warmup/warmup.c", "labs/00-warmup/warmup.c", NULL);
    put("dave/labs/00-warmup/warmup.c", "labs/00-warmup/warmup.c", NULL);
    /* what sim_c alone says of alice's and bob's warm-ups: the stub's text makes them look copied */
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "cd '%s' && sim_c -e -a -p alice/labs/00-warmup/warmup.c bob/labs/00-warmup/warmup.c",
             work);
    cr_assert_eq(test_capture(cmd, out, sizeof out), 0, "%s", out);
    int alone = 0;
    const char *at = strstr(out, "consists for ");
    cr_assert(at && sscanf(at, "consists for %d %%", &alone) == 1, "sim_c -p printed:\n%s", out);
    cr_expect_gt(alone, 50, "sim_c alone should see a copy in two warm-ups that share only the stub (the case this "
                 "test is for):\n%s", out);

    /* bob's 1F1B is a variant of the reference's (tests/valid/stash-anywhere): his pair with the kit is expected */
    cr_assert_eq(similar("alice bob carol dave --json report.json"), 1, "%s", out);
    cJSON *j = report();
    const char *names[] = {"alice", "bob", "carol", "dave"};
    for (int a = 0; a < 4; a++) {
        for (int b = a + 1; b < 4; b++) {
            cr_expect(!pair(j, "00-warmup/warmup.c", names[a], names[b]), "%s and %s share only the warm-up's "
                      "stub: no pair expected:\n%s", names[a], names[b], out);
            cr_expect(!pair(j, "03-1f1b/onef1b.c", names[a], names[b]), "%s and %s wrote 1F1B apart in one stub: "
                      "no pair expected:\n%s", names[a], names[b], out);
        }
        cr_expect(!pair(j, "00-warmup/warmup.c", names[a], "kit:solutions/00-warmup/warmup.c"),
                  "%s's warm-up shares only the stub with the kit's:\n%s", names[a], out);
    }
    cr_expect(!pair(j, "03-1f1b/onef1b.c", "alice", "kit:solutions/03-1f1b/onef1b.c"), "%s", out);
    cr_expect(percent(pair(j, "03-1f1b/onef1b.c", "bob", "kit:solutions/03-1f1b/onef1b.c")) >= 50, "%s", out);
    cJSON_Delete(j);
}

/* The stub's lines are left out only where they hold the stub's text: a copy packed onto one line with the stub's
 * signature, which emptying that line would hide, is still found. */
Test(similar, a_copy_packed_onto_the_stub_s_lines_is_found) {
    need_sim();
    sh("mkdir -p '%s/trudy' && gcc -x c -fpreprocessed -dD -E -P - < solutions/02-gpipe/gpipe.c | "
       "awk '/^#/ { print; next } { printf \"%%s \", $0 } END { print \"\" }' > '%s/trudy/gpipe.c'", work, work);
    cr_assert_eq(similar("trudy --json report.json"), 1, "%s", out);
    cJSON *j = report();
    cr_expect_geq(percent(pair(j, "02-gpipe/gpipe.c", "trudy", "kit:solutions/02-gpipe/gpipe.c")), 90,
                  "trudy's GPipe is the reference on one line:\n%s", out);
    cJSON_Delete(j);
}

/* The shares are sim_c's own (-p): without stubs to leave out, each pair's two shares are what sim_c -e -a -p
 * prints for the same two files. */
Test(similar, the_shares_are_sim_c_s_own) {
    need_sim();
    put("a/gpipe.c", "tests/valid/stash-anywhere/02-gpipe/gpipe.c", NULL);
    put("b/gpipe.c", "tests/valid/uses-libc/02-gpipe/gpipe.c", NULL);
    sh("mkdir -p '%s/nostubs'", work);
    cr_assert_eq(similar("a b --stubs nostubs --threshold 1 --json report.json"), 1, "%s", out);
    cr_expect(strstr(out, "no stubs in nostubs: text every student starts from counts as shared\n") != NULL, "%s", out);
    cJSON *j = report();
    const cJSON *p = pair(j, "02-gpipe/gpipe.c", "a", "b");
    cr_assert(p, "%s", out);
    int ab = cJSON_GetObjectItem(p, "a_in_b")->valueint, ba = cJSON_GetObjectItem(p, "b_in_a")->valueint;
    cJSON_Delete(j);
    char cmd[PATH_MAX + 128], want[256];
    snprintf(cmd, sizeof cmd, "cd '%s' && sim_c -e -a -p a/gpipe.c b/gpipe.c", work);
    cr_assert_eq(test_capture(cmd, out, sizeof out), 0, "%s", out);
    snprintf(want, sizeof want, "a/gpipe.c consists for %d %% of b/gpipe.c material", ab);
    cr_expect(strstr(out, want) != NULL, "expected '%s' from sim_c:\n%s", want, out);
    snprintf(want, sizeof want, "b/gpipe.c consists for %d %% of a/gpipe.c material", ba);
    cr_expect(strstr(out, want) != NULL, "expected '%s' from sim_c:\n%s", want, out);
}

/* The JSON parses back and holds the pairs the text lists, in its order, with the same figures, and the summary. */
Test(similar, the_json_holds_what_the_text_says) {
    need_sim();
    put("alice/labs/02-gpipe/gpipe.c", "solutions/02-gpipe/gpipe.c", reorder_cmd);
    put("bob/gpipe.c", "solutions/02-gpipe/gpipe.c", rename_cmd);
    put("bob/onef1b.c", "solutions/03-1f1b/onef1b.c", reformat_cmd);
    put("carol/gpipe.c", "tests/valid/comm-styles/02-gpipe/gpipe.c", NULL);
    cr_assert_eq(similar("alice bob carol --json report.json"), 1, "%s", out);
    cJSON *j = report();
    int n = 0;
    const cJSON *p;
    const char *at = out;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(j, "pairs")) {
        const cJSON *a = cJSON_GetObjectItem(p, "a"), *b = cJSON_GetObjectItem(p, "b");
        char head[PATH_MAX];
        int kit = cJSON_IsTrue(cJSON_GetObjectItem(b, "kit"));
        snprintf(head, sizeof head, "%s %s ~ %s%s %d%%\n", cJSON_GetObjectItem(a, "submission")->valuestring,
                 cJSON_GetObjectItem(p, "lab_file")->valuestring, kit ? "kit: " : "",
                 cJSON_GetObjectItem(b, kit ? "file" : "submission")->valuestring, percent(p));
        const char *found = strstr(at, head);
        cr_expect(found, "the JSON's pair %d, '%.*s', is not next in the text:\n%s", n, (int)strlen(head) - 1, head,
                  out);
        if (found) at = found + strlen(head);
        const cJSON *run;
        cJSON_ArrayForEach(run, cJSON_GetObjectItem(p, "runs")) {
            char line[160];
            const cJSON *ra = cJSON_GetObjectItem(run, "a_lines"), *rb = cJSON_GetObjectItem(run, "b_lines");
            snprintf(line, sizeof line, "  lines %d-%d ~ lines %d-%d (%d tokens)\n",
                     cJSON_GetArrayItem(ra, 0)->valueint, cJSON_GetArrayItem(ra, 1)->valueint,
                     cJSON_GetArrayItem(rb, 0)->valueint, cJSON_GetArrayItem(rb, 1)->valueint,
                     cJSON_GetObjectItem(run, "tokens")->valueint);
            cr_expect(strstr(out, line) != NULL, "the JSON's run '%.*s' is not in the text:\n%s",
                      (int)strlen(line) - 1, line, out);
        }
        n++;
    }
    cr_expect_eq(n, cJSON_GetObjectItem(j, "pairs_at_threshold")->valueint, "%s", out);
    cr_expect_geq(n, 4, "alice, bob and the kit's GPipe are three pairs, bob's 1F1B and the kit's a fourth:\n%s", out);
    char summary[128];
    snprintf(summary, sizeof summary, "%d pairs compared, %d at or above 50%%\n",
             cJSON_GetObjectItem(j, "pairs_compared")->valueint, n);
    cr_expect(strlen(out) >= strlen(summary) && !strcmp(out + strlen(out) - strlen(summary), summary),
              "expected the summary '%s' last:\n%s", summary, out);
    const cJSON *subs = cJSON_GetObjectItem(j, "submissions");
    cr_expect(cJSON_GetArraySize(subs) == 3 && !strcmp(cJSON_GetArrayItem(subs, 2)->valuestring, "carol"), "%s",
              out);
    cJSON_Delete(j);
}

/* A copy of an answer source (here a made-up kit whose order interpreter a student renamed and pasted into GPipe)
 * is found against it. */
Test(similar, a_copy_of_an_answer_source_is_found) {
    need_sim();
    static const char interpreter[] =
        "#include \"pp.h\"\n"
        "typedef struct op { char kind; int mb; } op;\n"
        "void run_order(pp_rank *r, const op *ops, int n, pp_stash **stash) {\n"
        "    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), me = pp_rank_id(r);\n"
        "    for (int i = 0; i < n; i++) {\n"
        "        int mb = ops[i].mb;\n"
        "        if (ops[i].kind == 'F') {\n"
        "            pp_tensor *x = me == 0 ? NULL : pp_recv(r, me - 1, pp_tag(PP_FWD, mb, me));\n"
        "            pp_tensor *y = pp_stage_forward(r, 0, mb, x, &stash[mb]);\n"
        "            if (me < P - 1) pp_send(r, y, me + 1, pp_tag(PP_FWD, mb, me + 1));\n"
        "        } else {\n"
        "            pp_tensor *dy = me == P - 1 ? pp_loss_grad(r, 1.0f / (float)M)\n"
        "                                        : pp_recv(r, me + 1, pp_tag(PP_BWD, mb, me));\n"
        "            pp_tensor *dx = pp_stage_backward(r, stash[mb], dy);\n"
        "            if (me > 0) pp_send(r, dx, me - 1, pp_tag(PP_BWD, mb, me - 1));\n"
        "            pp_stash_free(r, stash[mb]);\n"
        "        }\n"
        "    }\n"
        "    pp_optimizer_step(r);\n"
        "}\n";
    char path[PATH_MAX + 64];
    sh("mkdir -p '%s/kit/solutions/02-gpipe' '%s/kit/labs/02-gpipe' '%s/kit/lib'", work, work, work);
    snprintf(path, sizeof path, "%s/kit/lib/order.c", work);
    write_file(path, interpreter);
    sh("cp solutions/02-gpipe/gpipe.c '%s/kit/solutions/02-gpipe/' && cp labs/02-gpipe/gpipe.c '%s/kit/labs/02-gpipe/'",
       work, work);
    sh("cd '%s' && mkdir eve && (%s) < kit/lib/order.c > eve/gpipe.c", work, rename_cmd);
    cr_assert_eq(similar("eve --kit kit --answer-sources 'lib/order.c lib/gone.c' --json report.json"), 1, "%s",
                 out);
    cr_expect(strstr(out, "pplab similar: kit/lib/gone.c is missing: not compared (the build's list of answer "
                          "sources is out of date)\n") != NULL, "a listed source the kit lacks is said:\n%s", out);
    cJSON *j = report();
    cr_expect_geq(percent(pair(j, "02-gpipe/gpipe.c", "eve", "kit:lib/order.c")), 90,
                  "eve's GPipe is the kit's interpreter renamed:\n%s", out);
    cJSON_Delete(j);
}

/* The answer sources this build was given exist in this kit: the Makefile's list and the files agree. */
Test(similar, the_build_s_answer_sources_are_in_the_kit) {
    need_sim();
    put("alice/gpipe.c", "tests/valid/comm-styles/02-gpipe/gpipe.c", NULL);
    int rc = similar("alice");
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(!strstr(out, "is missing"), "every answer source of the build's list is in the kit:\n%s", out);
    cr_expect(!strstr(out, "no reference code"), "the kit has its reference code:\n%s", out);
}

/* Where the kit has no reference code (a student handout), the submissions are compared with each other, and the
 * report says so in one line. */
Test(similar, a_handout_compares_the_submissions_alone) {
    need_sim();
    sh("mkdir -p '%s/handout/labs' && cp -r labs/02-gpipe '%s/handout/labs/'", work, work);
    put("alice/gpipe.c", "solutions/02-gpipe/gpipe.c", rename_cmd);
    put("bob/gpipe.c", "solutions/02-gpipe/gpipe.c", reformat_cmd);
    cr_assert_eq(similar("alice bob --kit handout"), 1, "%s", out);
    const char *want = "no reference code in handout (a student handout?): the submissions are compared with each "
                       "other only\nalice 02-gpipe/gpipe.c ~ bob 100%\n";
    cr_expect(!strncmp(out, want, strlen(want)), "expected the note, then the pair:\n%s", out);
    cr_expect(strstr(out, "\n1 pair compared, 1 at or above 50%\n") != NULL, "%s", out);
}

/* Every bad input: one line naming it, exit status 2. */
static void expect_refused(const char *args, const char *line) {
    int rc = similar(args);
    cr_expect_eq(rc, 2, "pplab similar %s: expected exit status 2, got %d:\n%s", args, rc, out);
    cr_expect_str_eq(out, line, "pplab similar %s", args);
}

Test(similar, bad_inputs_are_refused_in_one_line) {
    need_sim();
    put("ok/gpipe.c", "solutions/02-gpipe/gpipe.c", NULL);
    expect_refused("ok missing", "pplab similar: missing: No such file or directory (see: pplab similar --help)\n");
    sh("mkdir -p '%s/empty/notes' && echo hello > '%s/empty/notes/README'", work, work);
    expect_refused("ok empty", "pplab similar: empty holds no lab file: none of the names pplab info --lab-files "
                               "lists is in it (see: pplab similar --help)\n");
    sh("mkdir -p '%s/linked/sub' && ln -s /etc/passwd '%s/linked/sub/gpipe.c'", work, work);
    expect_refused("ok linked", "pplab similar: linked/sub/gpipe.c is a symbolic link where a lab file should be: "
                                "refused (give the file itself) (see: pplab similar --help)\n");
    sh("mkdir -p '%s/tree/labs/02-gpipe' && ln -s ../../../ok/gpipe.c '%s/tree/labs/02-gpipe/gpipe.c'", work, work);
    expect_refused("tree", "pplab similar: tree/labs/02-gpipe/gpipe.c is a symbolic link where a lab file should "
                           "be: refused (give the file itself) (see: pplab similar --help)\n");
    sh("mkdir -p '%s/twice/a' '%s/twice/b' && cp '%s/ok/gpipe.c' '%s/twice/a/' && cp '%s/ok/gpipe.c' '%s/twice/b/'",
       work, work, work, work, work, work);
    int rc = similar("twice");
    cr_expect(rc == 2 && strstr(out, "pplab similar: twice holds two files named gpipe.c, ") &&
              strstr(out, ": keep the one to compare (see: pplab similar --help)\n") && !strchr(out, '\n')[1],
              "two files of one name: one line, status 2, got %d:\n%s", rc, out);
    sh("mkdir -p '%s/piped' && mkfifo '%s/piped/gpipe.c'", work, work);
    expect_refused("piped", "pplab similar: piped/gpipe.c is not a plain file (see: pplab similar --help)\n");
    expect_refused("ok/gpipe.c notes.txt", "pplab similar: notes.txt: No such file or directory (see: pplab similar "
                                           "--help)\n");
    sh("echo x > '%s/notes.txt'", work);
    expect_refused("notes.txt", "pplab similar: notes.txt: not a lab file: a file given alone must be named as one "
                                "(pplab info --lab-files lists them) (see: pplab similar --help)\n");
    expect_refused("ok ok",
                   "pplab similar: ok is given twice: name each submission once (see: pplab similar --help)\n");
    expect_refused("", "pplab similar: name the submissions to compare: folders (students' trees or a Gradescope "
                       "export's uploads) or lab files (see: pplab similar --help)\n");
    expect_refused("ok --threshold 0", "pplab similar: --threshold needs an integer in 1..100, got '0' (see: pplab "
                                       "similar --help)\n");
    expect_refused("ok --kit nowhere", "pplab similar: --kit nowhere: no such folder: name the kit's root (its "
                                       "solutions/ and labs/) (see: pplab similar --help)\n");
    expect_refused("ok --json nodir/r.json", "pplab similar: --json nodir/r.json: its folder nodir does not exist: "
                                             "create it first (see: pplab similar --help)\n");
}

/* A folder's name is shown cleaned: an escape sequence in it cannot repaint the instructor's terminal. */
Test(similar, names_are_shown_cleaned) {
    need_sim();
    sh("mkdir -p \"%s/$(printf 'evil\\033[2J')\" && cp solutions/02-gpipe/gpipe.c \"%s/$(printf 'evil\\033[2J')/\"",
       work, work);
    cr_assert_eq(similar("\"$(printf 'evil\\033[2J')\""), 1, "%s", out);
    cr_expect(!strchr(out, '\033'), "no escape character may reach the terminal:\n%s", out);
    cr_expect(strstr(out, "evil?[2J 02-gpipe/gpipe.c ~ kit: solutions/02-gpipe/gpipe.c 100%\n") != NULL, "%s", out);
}

/* Without sim_c: one line that says what to install, exit status 2. */
Test(similar, without_sim_c_it_says_what_to_install) {
    put("ok/gpipe.c", "solutions/02-gpipe/gpipe.c", NULL);
    char build[PATH_MAX], cmd[2 * PATH_MAX + 128];
    test_build_dir(build, sizeof build);
    snprintf(cmd, sizeof cmd, "cd '%s' && PATH=/nonexistent '%s/pplab' similar ok 2>&1", work, build);
    int rc = test_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect_str_eq(out, "pplab similar: sim_c not found: apt-get install similarity-tester\n");
}
