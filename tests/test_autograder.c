/* test_autograder.c: the Gradescope autograder as Gradescope runs it. `scripts/autograder.sh` (make autograder)
 * writes the zip; it is unpacked into a scratch tree shaped like /autograder, and its setup.sh and run_autograder
 * run as root under tests/tools/no-namespaces, which refuses namespaces as Docker's default seccomp profile does,
 * so the kit falls back to its Landlock view as it does there. The reference solutions' files, submitted flat,
 * get full marks in results.json, lab 07 included; the handout's stubs lose points; a submission without one file
 * loses that lab's tests with a message naming the file. Run by make check (about two minutes). */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "impl_build.h"
#include "testutil.h"

TestSuite(autograder, .timeout = 900);

static char out[1 << 20];

/* Gradescope starts both scripts with an environment of its own: none of this test's (a make running the suite
 * would hand its own variables, SAN=1 among them, to the make in setup.sh). */
#define GRADESCOPE_ENV "env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "

/* The namespace refuser of this build (build/ or build-asan/): the tool this test binary was built beside. */
static void tool_path(char *tool, size_t len) {
    char build[PATH_MAX];
    test_build_dir(build, sizeof build);
    snprintf(tool, len, "%s/tests/tools/no-namespaces", build);
    cr_assert(access(tool, X_OK) == 0, "%s is missing: make builds it with the tests", tool);
}

/* results.json of tree t: its score, the sum of its tests' max_score, and whether a test of lab 07 is in it;
 * every test of a lab whose file is `missing` must fail naming that file. */
static void read_results(const char *t, double *score, double *max, int *hybrid, const char *missing) {
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "cat '%s/autograder/results/results.json'", t);
    test_capture(cmd, out, sizeof out);
    cJSON *r = cJSON_Parse(out);
    cr_assert(r, "results.json does not parse: %.2000s", out);
    *score = cJSON_GetObjectItem(r, "score")->valuedouble;
    *max = 0, *hybrid = 0;
    const cJSON *t1;
    cJSON_ArrayForEach(t1, cJSON_GetObjectItem(r, "tests")) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(t1, "name"));
        const char *output = cJSON_GetStringValue(cJSON_GetObjectItem(t1, "output"));
        *max += cJSON_GetObjectItem(t1, "max_score")->valuedouble;
        *hybrid |= name && (strstr(name, "dp1f1b") || strstr(name, "dpinterleaved"));
        if (missing && name && strstr(name, "gpipe P=")) {
            cr_expect_eq(cJSON_GetObjectItem(t1, "score")->valuedouble, 0, "%s scored without its file", name);
            cr_expect(output && strstr(output, missing), "%s does not name %s: %s", name, missing, output);
        }
    }
    cJSON_Delete(r);
}

/* Fills the submission folder of tree t with each lab file of folder from (skipping `skip`), flat, as a student
 * uploads them, and runs run_autograder. */
static void submit(const char *t, const char *from, const char *skip) {
    char cmd[8 * PATH_MAX], files[4096] = "";
    snprintf(cmd, sizeof cmd, "rm -rf '%s/autograder/submission' '%s/autograder/results' && mkdir -p "
             "'%s/autograder/submission'", t, t, t);
    cr_assert_eq(system(cmd), 0);
    test_capture("build/pplab info --lab-files", files, sizeof files);
    for (char *f = strtok(files, "\n"); f; f = strtok(NULL, "\n")) {
        if (skip && !strcmp(f, skip)) continue;
        snprintf(cmd, sizeof cmd, "cp '%s/%s' '%s/autograder/submission/'", from, f, t);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
    }
    /* the tool is the kit's: run by its absolute name from inside the tree */
    char tool[PATH_MAX];
    tool_path(tool, sizeof tool);
    snprintf(cmd, sizeof cmd, "cd '%s/autograder/source' && " GRADESCOPE_ENV "AUTOGRADER='%s/autograder' '%s' "
             "./run_autograder 2>&1",
             t, t, tool);
    int rc = test_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "run_autograder failed (%d): %.3000s", rc, out);
}

Test(autograder, the_zip_grades_as_gradescope_runs_it) {
    if (geteuid() != 0) test_skip("Gradescope runs the autograder as root");
    if (system("command -v zip >/dev/null && command -v unzip >/dev/null")) test_skip("zip and unzip are needed");
    char t[] = "/tmp/pplab-autograder-XXXXXX", cmd[8 * PATH_MAX], cfg[PATH_MAX + 16], tool[PATH_MAX];
    cr_assert(mkdtemp(t));
    tool_path(tool, sizeof tool);
    snprintf(cfg, sizeof cfg, "%s/hidden.cfg", t);
    FILE *f = fopen(cfg, "w");
    cr_assert(f);
    fputs("gpipe P=3 M=5 seed=9\ndp1f1b P=2 M=4 dp=2 seed=4\n", f);
    fclose(f);

    /* refused: no file, and a file without the warm-up's seed */
    snprintf(cmd, sizeof cmd, "bash scripts/autograder.sh '%s/nope.cfg' '%s/ag.zip' 2>&1", t, t);
    cr_expect_eq(test_capture(cmd, out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "nope.cfg: no such file"), "%s", out);
    snprintf(cmd, sizeof cmd, "bash scripts/autograder.sh '%s' '%s/ag.zip' 2>&1", cfg, t);
    cr_expect_eq(test_capture(cmd, out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "has no warmup-seed=N line"), "%s", out);

    f = fopen(cfg, "a");
    cr_assert(f);
    fputs("warmup-seed=271828   # the term's own\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "bash scripts/autograder.sh '%s' '%s/ag.zip' 2>&1", cfg, t);
    cr_assert_eq(test_capture(cmd, out, sizeof out), 0, "%s", out);

    /* the zip's scripts copy what the schedule table names, and it ships no answers */
    char files[4096] = "", listed[4096] = "";
    test_capture("build/pplab info --lab-files | tr '\\n' ' ' | sed 's/ $//'", files, sizeof files);
    snprintf(cmd, sizeof cmd, "unzip -p '%s/ag.zip' run_autograder | sed -n 's/^files=\"\\(.*\\)\"$/\\1/p'", t);
    test_capture(cmd, listed, sizeof listed);
    listed[strcspn(listed, "\n")] = 0;
    cr_expect_str_eq(listed, files, "run_autograder copies other files than the table's");
    snprintf(cmd, sizeof cmd, "unzip -l '%s/ag.zip' | grep -c ' solutions/'", t);
    test_capture(cmd, out, sizeof out);
    cr_expect_eq(atoi(out), 0, "the zip ships solutions/");

    snprintf(cmd, sizeof cmd, "mkdir -p '%s/autograder/source' && cd '%s/autograder/source' && unzip -q '%s/ag.zip' && "
             GRADESCOPE_ENV "AUTOGRADER='%s/autograder' '%s' bash ./setup.sh > '%s/setup.log' 2>&1", t, t, t, t, tool, t);
    cr_assert_eq(system(cmd), 0, "setup.sh failed: see %s/setup.log", t);
    snprintf(cmd, sizeof cmd, "'%s' '%s/autograder/source/build/pplab' info", tool, t);
    test_capture(cmd, out, sizeof out);
    cr_expect(strstr(out, "view landlock"), "namespaces were not refused: %s", out);

    double score, max;
    int hybrid;
    submit(t, "solutions", NULL);
    read_results(t, &score, &max, &hybrid, NULL);
    cr_expect(max > 0 && score == max, "the reference solutions got %g of %g", score, max);
    cr_expect(hybrid, "lab 07's tests are missing from results.json");

    submit(t, "labs", NULL);
    read_results(t, &score, &max, &hybrid, NULL);
    cr_expect_lt(score, max, "the stubs got full marks (%g)", score);

    submit(t, "solutions", "02-gpipe/gpipe.c");
    read_results(t, &score, &max, &hybrid, "02-gpipe/gpipe.c is missing");
    cr_expect_lt(score, max, "a submission without gpipe.c got full marks");
    cr_expect_gt(score, 0, "the other labs' files earned nothing");
    test_rm_tree(t);
}
