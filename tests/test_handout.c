/* test_handout.c: a fresh student handout as a student meets it: built from the tarball `make handout` writes,
 * unpacked into a temporary folder, then its README commands: `make demo` exits 0 and shows the canonical
 * schedules, the theory and where the labs stand; `make grade LAB=gpipe` grades a working GPipe while another lab
 * does not compile yet; `pplab train` trains with a working 1F1B on the corpus the handout ships; `make test` runs
 * the handout's own checks and says what they checked. And the handout holds no answer key: none of the kit's
 * answer code is in its sources or objects, it answers for its recorded public configurations alone and as the kit
 * does there, it refuses what needs the kit's answers in one line, and the reference solutions copied into it get
 * full marks where the stubs get 0. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "schedules.h"
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
    /* a working 1F1B trains the kit's model on the corpus the handout ships */
    snprintf(cmd, sizeof cmd, "cp solutions/03-1f1b/onef1b.c '%s/pplab/labs/03-1f1b/onef1b.c'", dir);
    cr_assert_eq(system(cmd), 0);
    rc = in_handout("build/pplab train --steps 5 --width 32 --layers 2 --seq 16 --sample 20");
    cr_expect_eq(rc, 0, "pplab train with a working 1F1B exited %d:\n%s", rc, out);
    cr_expect(strstr(out, "corpus: data/shakespeare.txt") && strstr(out, "\ntrained 5 steps in ") &&
              strstr(out, "\nsample (20 bytes"), "%s", out);
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
                                        "micro-batch M−1 (groups", "3M+P-1", "6M ops", "2M(vP-1)", "4M(P-1)",
                                        /* lab 08: where the sums go */
                                        "the one way from partial to whole", "returns n x h, partial",
                                        "the sums belong on", "partial products summed first",
                                        /* ... and its attention half's */
                                        "sum after proj", "summed after Wo", "after pp_block_proj",
                                        "pp_block_allreduce(b, x1)"};
    char cmd[2 * PATH_MAX + 256];
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        /* text files only, and the chapters' questions as the handout ships them (kit-only blocks are gone) */
        snprintf(cmd, sizeof cmd, "cd '%s/pplab' && grep -rIlF --exclude-dir=build --exclude-dir=out -- '%s' .",
                 dir, forms[i]);
        char found[4096];
        test_capture(cmd, found, sizeof found);
        cr_expect(!found[0], "the handout states \"%s\" in:\n%s", forms[i], found);
    }
    /* and no closed bubble, however it is spaced or typeset: (P - 1) / (...), (P−1)/(...) */
    char found[4096];
    snprintf(cmd, sizeof cmd, "cd '%s/pplab' && grep -rIlE --exclude-dir=build --exclude-dir=out -- "
             "'\\(P *(-|−) *1\\) *(/|÷) *\\(' .", dir);
    test_capture(cmd, found, sizeof found);
    cr_expect(!found[0], "the handout states a closed bubble (P - 1) / (...) in:\n%s", found);
}

/* Builds the unpacked handout (make), once per test that needs it. */
static void build_handout(void) {
    int rc = in_handout("make -s -j2");
    cr_assert_eq(rc, 0, "make in the handout failed:\n%s", out);
}

/* Appends to list (a space-separated set, len bytes) every name `nm --defined-only` finds in the objects (a
 * shell glob or a list); returns the number added. */
static int names_in(const char *objects, char *list, size_t len) {
    char cmd[8192];
    static char found[1 << 20];
    /* functions, and tables of a name long enough to be one's own (a one-letter static is anyone's) */
    snprintf(cmd, sizeof cmd, "nm --defined-only %s 2>/dev/null | awk 'NF == 3 && ($2 ~ /^[Tt]$/ || ($2 ~ "
             "/^[DdRrBb]$/ && length($3) >= 6)) {print $3}' | sed 's/\\..*//' | sort -u", objects);
    test_capture(cmd, found, sizeof found);
    int n = 0;
    for (char *name = strtok(found, "\n"); name; name = strtok(NULL, "\n")) {
        size_t used = strlen(list);
        if (used + strlen(name) + 3 < len) snprintf(list + used, len - used, " %s ", name), n++;
    }
    return n;
}

static int listed(const char *list, const char *name) {
    char key[256];
    snprintf(key, sizeof key, " %s ", name);
    return strstr(list, key) != NULL;
}

/* None of the kit's answer code is in the handout. The files are the kit's answer column (make answer-files); the
 * functions and tables are every name their objects define, read with nm from the kit's own build, but for the
 * interface the handout's twins define too and the names the kit's shared code also uses (a static of the same
 * name in the engine is no answer). No object the handout builds defines one, and no C source of it names one. */
Test(handout, holds_no_answer_code) {
    build_handout();
    char build[PATH_MAX], cmd[4 * PATH_MAX];
    test_build_dir(build, sizeof build);
    static char files[8192], kit_objs[16384], answers[1 << 18], twins[1 << 16], shared[1 << 20];
    test_capture("make -s --no-print-directory answer-files", files, sizeof files);
    int nfiles = 0;
    kit_objs[0] = 0;
    for (char *f = strtok(files, "\n"); f; f = strtok(NULL, "\n")) {
        nfiles++;
        snprintf(cmd, sizeof cmd, "test -e '%s/pplab/%s'", dir, f);
        cr_expect_neq(system(cmd), 0, "the handout holds the kit's answer file %s", f);
        size_t n = strlen(f);
        if (n > 2 && !strcmp(f + n - 2, ".c"))
            snprintf(kit_objs + strlen(kit_objs), sizeof kit_objs - strlen(kit_objs), " '%s/obj/%.*s.o'", build,
                     (int)(n - 2), f);
    }
    cr_assert_geq(nfiles, 4, "make answer-files lists %d files", nfiles);
    answers[0] = twins[0] = shared[0] = 0;
    int nanswers = names_in(kit_objs, answers, sizeof answers);
    snprintf(cmd, sizeof cmd, "'%s/pplab/build/obj/lib/schedule/answers_recorded.o' "
             "'%s/pplab/build/obj/grader/grade/warmup_recorded.o' '%s/pplab/build/obj/grader/grade/order_interp_absent.o' "
             "'%s/pplab/build/obj/grader/theory/sched_refs_recorded.o'",
             dir, dir, dir, dir);
    cr_assert_gt(names_in(cmd, twins, sizeof twins), 0, "the handout built none of its twins");
    snprintf(cmd, sizeof cmd, "$(find '%s/obj' -name '*.o' %s)", build,
             "! -path '*/schedule/canonical.o' ! -path '*/schedule/answers_generated.o' "
             "! -path '*/grade/warmup_keys.o' ! -path '*/grade/order_interp.o' ! -path '*/theory/sched_refs.o' "
             "! -path '*/theory/sched_greedy.o' ! -path '*/theory/sched_ilp.o' ! -path '*/theory/sched_ilp_absent.o'");
    names_in(cmd, shared, sizeof shared);
    /* the generators of every row are among the names: the list is not empty by accident */
    cr_expect(listed(answers, "pp__canonical") && listed(answers, "pp__warmup_key") && nanswers > 40,
              "%d names read from the kit's answer objects: %.400s", nanswers, answers);
    static char handout_objs[1 << 20];
    handout_objs[0] = 0;
    snprintf(cmd, sizeof cmd, "$(find '%s/pplab/build' -name '*.o')", dir);
    names_in(cmd, handout_objs, sizeof handout_objs);
    int checked = 0;
    static char copy[1 << 18];
    snprintf(copy, sizeof copy, "%s", answers);
    for (char *name = strtok(copy, " "); name; name = strtok(NULL, " ")) {
        if (listed(twins, name) || listed(shared, name)) continue;
        checked++;
        cr_expect(!listed(handout_objs, name), "an object of the handout defines %s, which the kit's answer code "
                  "defines", name);
        /* a definition or declaration starts its line (the kit's style), a use is indented */
        snprintf(cmd, sizeof cmd, "cd '%s/pplab' && grep -rnE --include='*.c' --include='*.h' -- "
                 "'^[A-Za-z_].*[^A-Za-z0-9_]%s *(\\(|\\[|=)' . | head -3", dir, name);
        char where[1024];
        test_capture(cmd, where, sizeof where);
        cr_expect(!where[0], "the handout's sources define %s, an answer function or table of the kit: %s", name,
                  where);
    }
    cr_expect_gt(checked, 30, "only %d of the kit's answer names were distinctive enough to look for", checked);
}

/* What a handout does not record it refuses to answer, for every schedule, in one line naming what it records;
 * and what it records it answers as the kit does: the same canonical timeline, bubble, theory and peaks. */
Test(handout, answers_its_record_as_the_kit_and_refuses_the_rest) {
    build_handout();
    char build[PATH_MAX], cmd[4 * PATH_MAX], kit[1 << 16];
    test_build_dir(build, sizeof build);
    /* every recorded configuration, both ways */
    snprintf(cmd, sizeof cmd, "sed -n 's/^messages \\([a-z0-9]*\\) \\([0-9]*\\) \\([0-9]*\\) \\([0-9]*\\) = .*/\\1 \\2 "
             "\\3 \\4/p' '%s/pplab/lib/schedule/answers.rec'", dir);
    static char configs[1 << 16];
    test_capture(cmd, configs, sizeof configs);
    int compared = 0;
    for (char *line = strtok(configs, "\n"); line; line = strtok(NULL, "\n")) {
        char name[32];
        int P, M, v;
        if (sscanf(line, "%31s %d %d %d", name, &P, &M, &v) != 4) continue;
        char args[256];
        snprintf(args, sizeof args, "run --canonical --schedule %s --stages %d --microbatches %d --chunks %d --timeline",
                 name, P, M, v);
        snprintf(cmd, sizeof cmd, "NO_COLOR=1 COLUMNS=400 '%s/pplab' %s 2>&1", build, args);
        int rk = test_capture(cmd, kit, sizeof kit);
        int rh = in_handout((snprintf(cmd, sizeof cmd, "COLUMNS=400 build/pplab %s", args), cmd));
        cr_expect(rk == 0 && rh == 0 && !strcmp(kit, out), "%s: the kit (exit %d) and the handout (exit %d) differ:\n"
                  "%s\n---\n%s", args, rk, rh, kit, out);
        compared++;
    }
    cr_expect_gt(compared, 100, "%d recorded configurations", compared);
    /* every schedule: a configuration its rules take that the record does not hold */
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *d = &pp__schedules[i];
        int refused = 0;
        for (int M = 2 * 5; M <= 64 && !refused; M += 2 * 5) {
            char args[256];
            int v = d->chunked ? 2 : 1, P = d->one_microbatch ? 5 : 10, m = d->one_microbatch ? 1 : M;
            snprintf(args, sizeof args, "run --canonical --schedule %s --stages %d --microbatches %d --chunks %d%s",
                     d->name, P, m, v, d->grid ? " --tp 2 --node-size 2" : d->own_blocks ? " --tp 2" : "");
            snprintf(cmd, sizeof cmd, "NO_COLOR=1 '%s/pplab' %s > /dev/null 2>&1", build, args);
            if (system(cmd) != 0) continue; /* the kit refuses it too: not a configuration of this row */
            int rc = in_handout((snprintf(cmd, sizeof cmd, "build/pplab %s", args), cmd));
            cr_expect_eq(rc, 2, "%s: exit %d in the handout: %s", args, rc, out);
            cr_expect(strstr(out, "this handout records") && strstr(out, "the instructor's kit computes any)") &&
                          strchr(out, '\n') == out + strlen(out) - 1,
                      "%s: not one line naming what the handout records: %s", args, out);
            refused = 1;
        }
        cr_expect(refused, "%s: no unrecorded configuration tried", d->name);
    }
    /* a run still runs anywhere, without a comparison; what needs the kit's code is refused with the reason */
    int rc = in_handout("build/pplab run --schedule gpipe --stages 5 --microbatches 7");
    cr_expect(strstr(out, "theory: none here: this handout records") && !strstr(out, "(theory"), "%s", out);
    rc = in_handout("build/pplab run --schedule gpipe --stages 2 --microbatches 4 --tp 2");
    cr_expect(rc == 2 && strstr(out, "library's own tensor-parallel block, which this handout leaves to you") &&
                  strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
    rc = in_handout("build/pplab run --order x.csv --schedule gpipe --stages 2 --microbatches 4");
    cr_expect(rc == 2 && strstr(out, "--order runs an order through the kit's own interpreter") &&
                  strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
    rc = in_handout("printf 'gpipe P=5 M=7\\n' > my.cfg && build/pplab grade --lab gpipe --config my.cfg --only-config");
    cr_expect(rc == 2 && strstr(out, "gpipe P=5 M=7 v=1: this handout records"), "%s", out);
    rc = in_handout("printf 'warmup part=bubble\\nwarmup-seed=77\\n' > seed.cfg && "
                    "build/pplab grade --lab warmup --config seed.cfg --only-config");
    cr_expect(rc == 2 && strstr(out, "its warmup-seed line draws warm-up cases whose answer keys only the instructor's "
                                     "kit computes"), "%s", out);
}

/* The reference solutions copied in get full marks on the public set, and say which set that is; the stubs get 0. */
Test(handout, grades_its_public_set_full_for_the_reference_and_zero_for_the_stubs) {
    build_handout();
    int rc = in_handout("build/pplab grade --impl labs --lab all --quiet");
    cr_expect_eq(rc, 1, "the stubs: exit %d\n%s", rc, out);
    cr_expect(strstr(out, "Score: 0/"), "the stubs scored:\n%s", out);
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "for f in solutions/*/*.c; do cp \"$f\" '%s/pplab/labs/'\"${f#solutions/}\"; done", dir);
    cr_assert_eq(system(cmd), 0);
    rc = in_handout("build/pplab grade --impl labs --lab all");
    cr_expect_eq(rc, 0, "the reference solutions: exit %d\n%s", rc, out);
    cr_expect(strstr(out, "FULL MARKS") && strstr(out, "this handout grades its public configurations"), "%s", out);
}
