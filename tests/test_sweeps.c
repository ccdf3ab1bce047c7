/* test_sweeps.c: the grader's long sweeps, run by `make check` (not `make test`): every valid variant under
 * tests/valid/ keeps full marks on every lab it has a file for, and a report is the same on every run (ten
 * gradings of every broken variant, alternating --jobs 1 and 2). Tests run from the project root. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "impl_build.h"
#include "testutil.h"

TestSuite(sweeps, .timeout = 600);

/* Every freedom pp.h and the lab READMEs give keeps full marks on the whole default set: each folder of
 * tests/valid/ holds schedules written another valid way (split backwards, GPipe's micro-batches in another order
 * inside a phase, requests or groups instead of blocking calls, stashes kept anywhere, libc used freely), and
 * each lab folder in it is graded as pplab grade does. A new valid variant only needs its folder. */
Test(sweeps, every_freedom_the_contract_gives_keeps_full_marks) {
    DIR *top = opendir("tests/valid");
    cr_assert(top, "tests/valid is missing");
    int graded = 0;
    struct dirent *e;
    while ((e = readdir(top))) {
        if (e->d_name[0] == '.') continue;
        for (int l = 0; l < pp__nlabs; l++) {
            char path[PATH_MAX], cmd[2 * PATH_MAX];
            snprintf(path, sizeof path, "tests/valid/%s/%s/%s.c", e->d_name, pp__labs[l].folder, pp__labs[l].file);
            if (access(path, F_OK) != 0) continue;
            snprintf(cmd, sizeof cmd, "build/pplab grade --impl tests/valid/%s --lab %s --quiet > /dev/null 2>&1",
                     e->d_name, pp__labs[l].name);
            cr_expect_eq(system(cmd), 0, "the valid %s lost points: build/pplab grade --impl tests/valid/%s --lab %s",
                         path, e->d_name, pp__labs[l].name);
            graded++;
        }
    }
    closedir(top);
    cr_expect_geq(graded, 10, "only %d valid variants found", graded);
}

/* pplab grade --in-process (for gdb, ASan and printf debugging) gives what the sandboxed grade gives, line for
 * line but the first (which says it is unsandboxed) and the wall times: full marks for the solutions on every lab,
 * and the same points and diagnoses for broken work of every lab kind that runs ranks (the grid's mapping, the
 * shards, the replicas, the chunks). */
Test(sweeps, in_process_grading_gives_the_sandboxed_grade, .timeout = 900) {
    static const char *const impls[][2] = {
        {"solutions", "all"}, {"tests/broken/tpgrid-stages-fastest", "tpgrid"},
        {"tests/broken/tp-bias-before-sum", "tpblock"}, {"tests/broken/dp-no-reduce", "dp1f1b"},
        {"tests/valid/tp-bias-on-one-shard", "tpblock"}, {"tests/broken/interleaved-bwd-order", "interleaved"}, {"tests/broken/zbv-turn-message", "zbv"},
    };
    for (size_t i = 0; i < sizeof impls / sizeof *impls; i++) {
        static char out[2][1 << 17];
        for (int mode = 0; mode < 2; mode++) {
            char cmd[PATH_MAX + 256];
            snprintf(cmd, sizeof cmd, "build/pplab grade %s --impl %s --lab %s 2>&1 | tail -n +2 | "
                     "sed -E 's/\\([0-9]+\\.[0-9]+ s\\)$/(time)/'", mode ? "--in-process" : "", impls[i][0],
                     impls[i][1]);
            test_capture(cmd, out[mode], sizeof out[mode]);
        }
        cr_expect_str_eq(out[1], out[0], "%s --lab %s: --in-process graded otherwise", impls[i][0], impls[i][1]);
        cr_expect(strstr(out[0], "Score"), "%s: no score:\n%s", impls[i][0], out[0]);
    }
}

/* Grades one broken variant's lab into out, with --jobs jobs and a time limit of limit seconds; the grade lines'
 * wall times, "(0.12 s)", are the one thing allowed to differ and are blanked. */
static void grade_broken(const char *variant, const char *lab, int jobs, int limit, char *out, size_t len) {
    char cmd[PATH_MAX + 256];
    snprintf(cmd, sizeof cmd, "build/pplab grade --impl tests/broken/%s --lab %s --jobs %d --time-limit %d "
             "2>&1 | sed -E 's/\\([0-9]+\\.[0-9]+ s\\)$/(time)/'", variant, lab, jobs, limit);
    test_capture(cmd, out, len);
}

/* The length of text's first n lines. */
static int lines_len(const char *text, int n) {
    const char *p = text;
    while (*p && n > 0)
        if (*p++ == '\n') n--;
    return (int)(p - text);
}

/* The same submission gives the same report on every run, with one test at a time or several at once: the report
 * is a function of the program (timings aside), not of which rank thread or driver got somewhere first. Every
 * broken variant under tests/broken/, on every lab it has a file for, graded ten times, alternating --jobs 1
 * and 2. The first grading caps each test at 3 s (the slowest test of the others takes 0.65 s on idle cores) so
 * that the endless loop among them stays short. A time limit is the one verdict the wall clock decides, and this
 * suite shares two cores with others: a first grading that ran out of time is graded again with 10 s (two tests
 * at once, so the endless loop's second look costs a minute), and only a variant that runs out of time then too
 * is held to 3 s in the other nine; every other variant gets 30 s. So a loaded machine cannot pass for a report
 * that changed, while a run that hangs now and then still fails. A new broken variant is held to this by its
 * folder alone. About 13 minutes on 2 idle cores, hence its own time limit. */
Test(sweeps, every_report_is_the_same_on_every_run, .timeout = 3600) {
    DIR *top = opendir("tests/broken");
    cr_assert(top, "tests/broken is missing");
    static char first[1 << 17], again[1 << 17];
    const char *out_of_time = "run: no result after ";
    int graded = 0;
    struct dirent *e;
    while ((e = readdir(top))) {
        if (e->d_name[0] == '.') continue;
        for (int l = 0; l < pp__nlabs; l++) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "tests/broken/%s/%s/%s.c", e->d_name, pp__labs[l].folder, pp__labs[l].file);
            if (access(path, F_OK) != 0) continue;
            const char *lab = pp__labs[l].name;
            int limit = 3;
            grade_broken(e->d_name, lab, 1, limit, first, sizeof first);
            if (strstr(first, out_of_time)) {
                grade_broken(e->d_name, lab, 2, 10, again, sizeof again);
                /* out of time with 10 s too: a loop, held to 3 s; else the machine was busy */
                if (!strstr(again, out_of_time)) limit = 30, memcpy(first, again, sizeof first);
            } else {
                limit = 30;
            }
            cr_expect(strstr(first, "NOT FULL MARKS") != NULL, "%s keeps full marks:\n%s", path, first);
            for (int k = 1; k < 10; k++) {
                grade_broken(e->d_name, lab, k % 2 ? 2 : 1, limit, again, sizeof again);
                if (!strcmp(again, first)) continue;
                /* the first line that differs and the lines after it (a test's checks), from both runs: what the
                 * next reader of a failure needs to tell which check moved */
                const char *a = first, *b = again;
                while (*a && *a == *b) a++, b++;
                while (a > first && a[-1] != '\n') a--, b--;
                cr_expect_fail("%s: run %d (--jobs %d, --time-limit %d) differs from run 1 first at\n--- run 1:\n%.*s\n"
                               "--- run %d:\n%.*s", path, k + 1, k % 2 ? 2 : 1, limit, lines_len(a, 12), a, k + 1,
                               lines_len(b, 12), b);
                break;
            }
            graded++;
        }
    }
    closedir(top);
    cr_expect_geq(graded, 50, "only %d broken variants found", graded);
}
