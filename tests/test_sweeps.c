/* test_sweeps.c: the grader's long sweeps, run by `make check` (not `make test`): every valid variant under
 * tests/valid/ keeps full marks on every lab it has a file for, and a report is the same on every run (ten
 * gradings of every broken variant, alternating --jobs 1 and 2). Tests run from the project root. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "impl.h"
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

/* The same submission gives the same report on every run, with one test at a time or several at once: the report
 * is a function of the program (timings aside), not of which rank thread or driver got somewhere first. Every
 * broken variant under tests/broken/, on every lab it has a file for, graded ten times, alternating --jobs 1
 * and 2; each test's time limit is capped at 3 s (the slowest test of the others takes 0.65 s) so that the
 * endless loop among them stays short. A new broken variant is held to this by its folder alone. About 11
 * minutes on 2 idle cores, hence its own time limit. */
Test(sweeps, every_report_is_the_same_on_every_run, .timeout = 2400) {
    DIR *top = opendir("tests/broken");
    cr_assert(top, "tests/broken is missing");
    static char first[1 << 17], again[1 << 17];
    int graded = 0;
    struct dirent *e;
    while ((e = readdir(top))) {
        if (e->d_name[0] == '.') continue;
        for (int l = 0; l < pp__nlabs; l++) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "tests/broken/%s/%s/%s.c", e->d_name, pp__labs[l].folder, pp__labs[l].file);
            if (access(path, F_OK) != 0) continue;
            for (int k = 0; k < 10; k++) {
                char cmd[PATH_MAX + 256];
                /* a grade line ends with the test's wall time, "(0.12 s)": the one thing allowed to differ */
                snprintf(cmd, sizeof cmd, "build/pplab grade --impl tests/broken/%s --lab %s --jobs %d --time-limit 3 "
                         "2>&1 | sed -E 's/\\([0-9]+\\.[0-9]+ s\\)$/(time)/'", e->d_name, pp__labs[l].name,
                         k % 2 ? 2 : 1);
                test_capture(cmd, k ? again : first, sizeof first);
                if (!k) cr_expect(strstr(first, "NOT FULL MARKS") != NULL, "%s keeps full marks:\n%s", path, first);
                if (k && strcmp(again, first)) {
                    /* the first line that differs, from both runs: what the next reader of a failure needs */
                    const char *a = first, *b = again;
                    while (*a && *a == *b) a++, b++;
                    while (a > first && a[-1] != '\n') a--, b--;
                    cr_expect_fail("%s: run %d (--jobs %d) differs from run 1 first at\n  run 1: %.*s\n  run %d: %.*s",
                                   path, k + 1, k % 2 ? 2 : 1, (int)strcspn(a, "\n"), a, k + 1, (int)strcspn(b, "\n"),
                                   b);
                    break;
                }
            }
            graded++;
        }
    }
    closedir(top);
    cr_expect_geq(graded, 50, "only %d broken variants found", graded);
}
