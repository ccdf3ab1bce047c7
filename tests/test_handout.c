/* test_handout.c: a fresh student handout as a student meets it: built from the tarball `make handout` writes,
 * unpacked into a temporary folder, then its README commands: `make demo` exits 0 and shows the canonical
 * schedules, the theory and where the labs stand; `make grade LAB=gpipe` grades a working GPipe while another lab
 * does not compile yet; `make test` runs the handout's own checks and says what they checked. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "testutil.h"

static char dir[PATH_MAX];
static char out[1 << 20];

/* Runs cmd in the unpacked handout (stdout and stderr into out); returns its exit status. */
static int in_handout(const char *cmd) {
    char full[PATH_MAX + 1024];
    snprintf(full, sizeof full, "cd '%s/pplab' && NO_COLOR=1 %s 2>&1", dir, cmd);
    return test_capture(full, out, sizeof out);
}

static void unpack(void) {
    snprintf(dir, sizeof dir, "/tmp/pplab-handout-XXXXXX");
    cr_assert(mkdtemp(dir));
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "bash scripts/handout.sh '%s/h.tar.gz' > /dev/null && tar -xzf '%s/h.tar.gz' -C '%s'",
             dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "cannot build and unpack the handout");
}

static void cleanup(void) {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TestSuite(handout, .init = unpack, .fini = cleanup, .timeout = 900);

Test(handout, the_first_run_and_a_lab_at_a_time) {
    /* make demo: the kit at work, before any lab is solved, without an error or a gnuplot warning */
    int rc = in_handout("make demo");
    cr_expect_eq(rc, 0, "make demo in a fresh handout exited %d:\n%s", rc, out);
    cr_expect(strstr(out, "GPU 0: F0 F1 F2 F3 F4 F5") != NULL, "no canonical timeline:\n%s", out);
    cr_expect(strstr(out, "== Theory") && strstr(out, "interleaved    4   8   2  0.1579"), "no theory table:\n%s", out);
    /* every lab starts at 0, and the total is the labs' own maxima added up */
    const char *score = strstr(out, "Score: 0/"), *by = strstr(out, "Score by lab:");
    int total = -1, sum = 0, labs = 0;
    if (score) sscanf(score, "Score: 0/%d", &total);
    for (const char *l = by; l && (l = strstr(l + 1, "\n")) && l + 1 < score;) {
        char name[32];
        int got, max;
        if (sscanf(l + 1, " %31s %d/%d", name, &got, &max) != 3) continue;
        sum += max, labs++;
        cr_expect_eq(got, 0, "the untouched %s scored %d", name, got);
    }
    cr_expect(score && total == sum && labs >= 7 && strstr(out, "Start here"), "no labs status or start line "
              "(total %d, labs %d adding to %d):\n%s", total, labs, sum, out);
    cr_expect(!strstr(out, "make: ***") && !strstr(out, "warning:"), "an error or a warning:\n%s", out);

    /* a working GPipe, an interleaved lab that does not compile yet: grading gpipe builds gpipe alone */
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "cp solutions/02-gpipe/gpipe.c '%s/pplab/labs/02-gpipe/gpipe.c' && "
             "echo 'this line is not C' >> '%s/pplab/labs/04-interleaved/interleaved.c'", dir, dir);
    cr_assert_eq(system(cmd), 0);
    rc = in_handout("make grade LAB=gpipe");
    cr_expect_eq(rc, 0, "make grade LAB=gpipe exited %d:\n%s", rc, out);
    cr_expect(strstr(out, "gpipe          148/148") && strstr(out, "FULL MARKS"), "%s", out);
    cr_expect(!strstr(out, "interleaved"), "grading gpipe looked at the interleaved lab:\n%s", out);
    rc = in_handout("make grade LAB=interleaved");
    cr_expect_neq(rc, 0, "a lab that does not compile passed:\n%s", out);
    cr_expect(strstr(out, "interleaved.c") && strstr(out, "0/168"), "the compile error is not reported:\n%s", out);

    /* make test: the handout's own checks, each named */
    snprintf(cmd, sizeof cmd, "sed -i '$d' '%s/pplab/labs/04-interleaved/interleaved.c'", dir);
    cr_assert_eq(system(cmd), 0);
    rc = in_handout("make test");
    cr_expect_eq(rc, 0, "make test in the handout exited %d:\n%s", rc, out);
    cr_expect(strstr(out, "unit tests: none in this tree"), "%s", out);
    cr_expect(strstr(out, "selfcheck: ok   the docs' paths exist and their quick commands print what the docs say") &&
              strstr(out, "selfcheck: 4 passed, 0 failed"), "%s", out);
}
