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
    cr_expect(strstr(out, "== Theory") && strstr(out, "interleaved      4   8   2  0.1579"), "no theory table:\n%s", out);
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

/* Every tool the handout's help lists works there, and says only its own words: make help offers no reference
 * solutions, make plots draws its figures (the canonical order where a stub does not run yet), make handout
 * and make autograder say in one line that they belong to the kit, make test prints its verdicts alone and
 * pplab run --help offers no --impl solutions. */
Test(handout, its_tools_work_there) {
    int rc = in_handout("make -s help");
    cr_expect_eq(rc, 0, "make help: %s", out);
    cr_expect(!strstr(out, "solutions") && !strstr(out, "check-hosts") && !strstr(out, "make handout "),
              "the handout's help lists the kit's targets: %s", out);
    rc = in_handout("make -s plots");
    cr_expect_eq(rc, 0, "make plots exited %d:\n%s", rc, out);
    cr_expect(strstr(out, "out/gantt-gpipe-P4-M6.png") && strstr(out, "out/bubble-vs-M.png"), "%s", out);
    cr_expect(!strstr(out, "Error"), "%s", out);
    static const char *const kit_only[] = {"make -s handout", "make -s autograder HIDDEN=x.cfg"};
    for (int i = 0; i < 2; i++) {
        rc = in_handout(kit_only[i]);
        cr_expect_eq(rc, 0, "%s exited %d: %s", kit_only[i], rc, out);
        cr_expect(strstr(out, "this is the handout") && strchr(out, '\n') == out + strlen(out) - 1,
                  "%s: one line saying why: %s", kit_only[i], out);
    }
    /* a student's first grade says nothing of folder modes: make made build/ private from its start */
    rc = in_handout("make -s grade LAB=naive");
    cr_expect(!strstr(out, "made it private"), "a first grade changed a folder's mode: %s", out);
    rc = in_handout("build/pplab run --help");
    cr_expect(!strstr(out, "solutions"), "run --help offers the solutions: %s", out);
    rc = in_handout("make -s test");
    cr_expect_eq(rc, 0, "make test exited %d:\n%s", rc, out);
    /* its lines are its verdicts, their timings and the suites' summary: no grading output between them */
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
        cr_expect(!strncmp(line, "selfcheck", 9) || !strncmp(line, "self-check", 10) ||
                      !strncmp(line, "unit tests", 10) || !strncmp(line, "all of it", 9) || !strncmp(line, "pplab:", 6),
                  "make test printed a line of something else: %s", line);
}

/* The handout asks; it does not answer. The forms of the answers once found in it (the warm-up lengths, the
 * memory per rank, the group size, the bubble formulas, a chunk's last backward) appear nowhere in it: not in
 * comments, READMEs, figure legends or titles. */
Test(handout, states_no_answer_it_asks_for) {
    static const char *const forms[] = {"min(P - r", "min(P-r", "P − r", "(P-1)/(M+P-1)", "(P-1)/(2M+P-1)",
                                        "groups of P micro-batches", "min(2(P", "2P-1 forwards before",
                                        "micro-batch M−1 (groups", "3M+P-1", "6M ops", "2M(vP-1)", "4M(P-1)"};
    char cmd[2 * PATH_MAX + 256];
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        /* text files only, and the chapters' questions as the handout ships them (kit-only blocks are gone) */
        snprintf(cmd, sizeof cmd, "cd '%s/pplab' && grep -rIlF --exclude-dir=build --exclude-dir=out -- '%s' .",
                 dir, forms[i]);
        char found[4096];
        test_capture(cmd, found, sizeof found);
        cr_expect(!found[0], "the handout states \"%s\" in:\n%s", forms[i], found);
    }
}
