/* test_hostile.c: proves the trust boundary. Every submission under tests/hostile/ attacks the grading in one
 * way (forging measurements, borrowing the reference, outliving or stopping the grader, reading secrets,
 * exhausting a resource); each must score 0, or lose exactly what it forged, for the named reason, and leave
 * behind no process and an unchanged project tree. The source files go through the kit's build, whose checks
 * stop most of them; the objects of tests/hostile/objects are compiled here straight to objects, inline
 * assembly and all, and handed to the real driver, as if they had got past every check: they show that the
 * loader, the seccomp filters, the uid, the empty root, Landlock and the limits hold on their own. Tests run
 * from the project root. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checks.h"
#include "hash.h"
#include "impl_build.h"
#include "runner.h"
#include "host.h"
#include "report.h"
#include "rpc.h"
#include "suite.h"
#include "testutil.h"
#include "uids.h"

/* ---- what every hostile grading must leave as it was ------------------------------------------------------ */

static uint64_t g_hash;

static int fold_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)ftw;
    const char *base = path + 2; /* "./" */
    if (flag == FTW_D && (!strcmp(base, ".git") || !strncmp(base, "build", 5) || !strcmp(base, "dist") ||
                          !strcmp(base, "out")))
        return FTW_SKIP_SUBTREE;
    uint64_t h = pp__hash_text(g_hash ^ PP_HASH_INIT, path, SIZE_MAX);
    if (flag == FTW_F) {
        h = pp__hash_bytes(h, &st->st_size, sizeof st->st_size);
        h = pp__hash_bytes(h, &st->st_mtim, sizeof st->st_mtim);
    }
    g_hash = h;
    return FTW_CONTINUE;
}

/* Names, sizes and modification times of everything in the project but the build folders and .git. */
static uint64_t tree_fingerprint(void) {
    g_hash = 0;
    nftw(".", fold_entry, 32, FTW_PHYS | FTW_ACTIONRETVAL);
    return g_hash;
}

/* Every process of /proc for which keep(status text, its pid) holds, listed into names as " pid:name": what a
 * test left running. */
static int processes(int (*keep)(const char *status), char *names, size_t len) {
    DIR *d = opendir("/proc");
    int n = 0;
    names[0] = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = 0;
        if (!keep(buf)) continue;
        n++;
        const char *nm = strncmp(buf, "Name:", 5) ? "?" : buf + 5;
        nm += strspn(nm, " \t");
        size_t used = strlen(names);
        snprintf(names + used, len - used, " %s:%.*s", e->d_name, (int)strcspn(nm, "\n"), nm);
    }
    if (d) closedir(d);
    return n;
}

/* Its parent is this process. Grading makes this process a subreaper, so anything a test left running, however
 * it forked, would be found so. */
static int child_of_me(const char *status) {
    const char *at = strstr(status, "\nPPid:");
    return at && atol(at + 6) == (long)getpid();
}

static int children(char *names, size_t len) { return processes(child_of_me, names, len); }

/* Grades configuration (lab, P, M) of tests/hostile/<name> (or of the folder name when it holds a '/'), and
 * checks what every grading must leave: no process behind, the project tree as it was. */
static void hostile(const char *name, const char *lab, int P, int M, double limit, pp_test_result *r) {
    char impl[PATH_MAX];
    snprintf(impl, sizeof impl, strchr(name, '/') ? "%s" : "tests/hostile/%s", name);
    uint64_t before = tree_fingerprint();
    pp_test_config c = {.P = P, .M = M, .v = 1, .steps = 2, .seed = 7, .time_limit_s = limit};
    snprintf(c.lab, sizeof c.lab, "%s", lab);
    if (!strcmp(lab, "warmup")) snprintf(c.part, sizeof c.part, "bubble");
    test_grade_config(impl, &c, r);
    char left[2048];
    cr_expect_eq(children(left, sizeof left), 0, "%s left processes behind:%s", name, left);
    cr_expect_eq(tree_fingerprint(), before, "%s changed the project tree", name);
    cr_log_info("%s: %s, %g/%g: %s", name, pp__status_name(r->status), r->score, r->max, r->error);
}

/* Its real uid is one this process's tests were given: what a test leaves of its jails. */
static int of_a_jailed_uid(const char *status) {
    int nuids;
    const uid_t *uids = pp__runner_uids(&nuids);
    const char *at = strstr(status, "\nUid:");
    unsigned u;
    if (!at || sscanf(at + 5, "%u", &u) != 1) return 0;
    for (int i = 0; i < nuids; i++)
        if (uids[i] == (uid_t)u) return 1;
    return 0;
}

static int jailed_tasks(char *names, size_t len) { return processes(of_a_jailed_uid, names, len); }

/* Compiles tests/hostile/objects/<name>.c with the compiler alone (no checks of the kit's) into an object, and
 * grades configuration (lab, P, M) of it in the real driver, with sandbox sb (NULL: the default). */
static void hostile_object(const char *name, const char *lab, int P, int M, const pp_sandbox *sb, pp_test_result *r) {
    static pp_impl impl;
    test_hostile_object(name, &impl);
    if (sb) pp__runopts_set_sandbox(sb);
    pp_test_config c = {.P = P, .M = M, .v = 1, .steps = 2, .seed = 7, .time_limit_s = 10};
    snprintf(c.lab, sizeof c.lab, "%s", lab);
    uint64_t before = tree_fingerprint();
    pp__runner_test(&c, &impl, PP_OK, NULL, "cpu", r);
    char left[2048];
    cr_expect_eq(children(left, sizeof left), 0, "%s left processes behind:%s", name, left);
    cr_expect_eq(jailed_tasks(left, sizeof left), 0, "%s left processes of a jailed uid:%s", name, left);
    cr_expect_eq(tree_fingerprint(), before, "%s changed the project tree", name);
    cr_log_info("object %s: %s, %g/%g: %s", name, pp__status_name(r->status), r->score, r->max, r->error);
}

/* The default sandbox, probed, for a test to change one thing of. */
static pp_sandbox probed_sandbox(void) {
    pp_sandbox sb;
    char err[600];
    pp__sandbox_defaults(&sb);
    cr_assert_eq(pp__sandbox_probe(&sb, err, sizeof err), 0, "%s", err);
    return sb;
}

TestSuite(hostile, .timeout = 120);

/* ---- forging the run's own measurements ------------------------------------------------------------------- */

Test(hostile, including_the_runtime_is_refused_before_compiling) {
    pp_test_result r;
    hostile("include-internals", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "#include \"../../../../lib/run/runtime.h\" is not allowed in a lab file");
}

Test(hostile, calling_runtime_internals_is_refused_before_the_run) {
    pp_test_result r;
    hostile("extern-internals", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "calls pp__trace_add(), which a lab file may not use");
}

Test(hostile, forged_handles_get_the_in_process_errors) {
    pp_test_result r;
    hostile("made-up-handle", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "rank 0: pp_send: tensor (0x12345678) is not a tensor pplab handed out");
    hostile("other-rank-handle", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "rank 0: pp_send: tensor belongs to rank 1");
    hostile("stale-handle", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "rank 0: pp_send: tensor comes from an earlier step");
}

/* ---- borrowing the reference's work --------------------------------------------------------------------- */

Test(hostile, the_reference_cannot_be_included_loaded_or_read) {
    pp_test_result r;
    hostile("include-solution", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "#include \"../../../../solutions/02-gpipe/gpipe.c\" is not allowed");
    hostile("dlopen-solution", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "calls dlopen(), which a lab file may not use");
    hostile("read-solution", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "calls fopen(), which a lab file may not use");
    cr_expect(!strstr(r.output_tail, "pp_stage_forward"), "the solution's text reached the report: %s", r.output_tail);
}

Test(hostile, no_file_reaches_the_build_through_includes_or_assembly) {
    pp_test_result r;
    hostile("include-secret", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "#include \"/etc/passwd\" is not allowed");
    cr_expect(!strstr(r.error, "root:"), "the file's contents reached the report: %s", r.error);
    hostile("asm-incbin", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "02-gpipe/gpipe.c:5: inline assembly (__asm__) is not allowed");
    hostile("section-incbin", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the attribute section is not allowed");
    hostile("incbin-comment", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "02-gpipe/gpipe.c:5: inline assembly (__asm__) is not allowed");
    hostile("pasted-asm", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "02-gpipe/gpipe.c:5: token pasting (##) is not allowed");
}

/* The check reads tokens after the translation phases, not lines as written: a #line that claims a system
 * header, trigraphs and digraphs for '#', a splice inside a word, pragmas, __has_include. */
Test(hostile, directives_and_spellings_that_hide_from_text_filters_are_refused) {
    pp_test_result r;
    hostile("line-spoof", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "02-gpipe/gpipe.c:6: ");
    cr_expect(strstr(r.error, "#line"), "the directive is named: %s", r.error);
    hostile("trigraph-pragma", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "02-gpipe/gpipe.c:6: ");
    cr_expect(strstr(r.error, "pragma"), "the directive is named: %s", r.error);
    hostile("pragma-weak", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "02-gpipe/gpipe.c:5: ");
    hostile("has-include", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "__has_include");
    cr_expect(!strstr(r.error, "solutions are at"), "the probe's answer reached the report: %s", r.error);
}

/* ---- code that would run before the lockdown ------------------------------------------------------------ */

Test(hostile, startup_code_is_refused_at_build_time) {
    pp_test_result r;
    hostile("constructor", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the attribute constructor is not allowed");
    hostile("preinit", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the attribute section is not allowed");
    hostile("ifunc", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the attribute ifunc is not allowed");
}

/* Nothing is linked with the driver: names of its own stay its own. Plain functions called main, seccomp_load,
 * prctl, memcpy and pp__drv_lockdown cost an honest submission nothing; the same names as UNIQUE symbols are
 * refused; and an object whose own seccomp_load and prctl would "succeed" is still filtered. */
Test(hostile, no_name_of_the_submission_stands_in_for_the_drivers) {
    pp_test_result r;
    hostile("define-driver-names", "gpipe", 4, 4, 10, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect_eq(r.score, r.max, "honest work with the driver's names: %g/%g", r.score, r.max);
    hostile("interpose-lockdown", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "calls fopen(), which a lab file may not use");
    hostile_object("interpose-lockdown", "gpipe", 2, 2, NULL, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule called open(), which a schedule never needs");
    hostile_object("unique-names", "gpipe", 2, 2, NULL, &r);
    /* the loader's reason is the driver's word, so it is shown as the submission's */
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule's driver refused the lab's object; the driver said:\n"
                                               "| refused: the lab file makes main a unique global symbol");
}

/* The line of text that p points into holds "| " before p: p is on a line marked as the submission's. Lines end
 * at a newline, or at JSON's and XML's escapes of one. */
static int on_marked_line(const char *text, const char *p) {
    const char *q = p;
    while (q > text && q[-1] != '\n' && !(q - text >= 2 && q[-2] == '\\' && q[-1] == 'n') &&
           !(q - text >= 5 && !strncmp(q - 5, "&#10;", 5)))
        q--;
    for (; q + 1 < p; q++)
        if (q[0] == '|' && q[1] == ' ') return 1;
    return 0;
}

/* A stop request a hostile object sends through the driver's own request function. */
typedef struct forged_stop {
    int op, code;
    long arg;
} forged_stop;

/* Every request that carries a driver's text (pp_fail; MISUSE, SETUP_FAILED and LOAD_FAILED sent straight to the
 * driver's own request function, its address read from the symbol table; and a code the runtime does not know),
 * with a detail written in the grader's voice: in the terminal report, JSON, JUnit and Gradescope, none of its
 * words stands outside a marked line, no escape byte survives, and the run scores nothing. A start-up request
 * sent while the step runs is refused unread: only a starting driver sends one. */
Test(hostile, no_word_from_a_driver_is_the_graders, .timeout = 240) {
    char addr[64];
    test_driver_stop_addr(addr, sizeof addr);
    static const forged_stop kinds[] = {
        {0, 0, 0},
        {PP_RPC_MISUSE, PP_STOP_FOREIGN_RANK, 11},
        {PP_RPC_MISUSE, PP_STOP_NO_STEP, 0},
        {PP_RPC_SETUP_FAILED, PP_STOP_LOCKDOWN, 1},
        {PP_RPC_SETUP_FAILED, PP_STOP_SEAL, 38},
        {PP_RPC_LOAD_FAILED, PP_STOP_OBJECT, 0},
        {PP_RPC_LOAD_FAILED, PP_STOP_LOCKDOWN, 0},
        {PP_RPC_MISUSE, 99, -7},
    };
    static const char *const words[] = {"seccomp is broken", "--unsafe-no-sandbox", "[ 1/1] gpipe", "12/12  ok",
                                        "the grader's checks passed", "regrade by hand"};
    char dir[] = "/tmp/pplab-forge-XXXXXX";
    cr_assert(mkdtemp(dir));
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        char flags[256], path[PATH_MAX + 32];
        snprintf(flags, sizeof flags, "-DFORGE_ADDR=%s -DFORGE_OP=%d -DFORGE_CODE=%d -DFORGE_ARG=%ldL", addr,
                 kinds[k].op, kinds[k].code, kinds[k].arg);
        static pp_impl impl;
        test_hostile_object_with("forge-reason", flags, &impl);
        pp_test_result r;
        pp_test_config c = {.P = 2, .M = 2, .v = 1, .steps = 2, .seed = 7, .time_limit_s = 10};
        snprintf(c.lab, sizeof c.lab, "gpipe");
        pp__runner_test(&c, &impl, PP_OK, NULL, "cpu", &r);
        cr_expect_neq(r.status, PP_OK, "%s: the run passed", flags);
        cr_expect_eq(r.score, 0, "%s: scored %g", flags, r.score);
        snprintf(path, sizeof path, "%s/term.txt", dir);
        FILE *f = fopen(path, "w");
        cr_assert(f);
        pp__report_progress(f, &r, 1, 1, 0);
        fclose(f);
        const char *outs[] = {"term.txt", "r.json", "r.xml", "gs.json"};
        snprintf(path, sizeof path, "%s/r.json", dir);
        cr_expect_eq(pp__report_json(path, &r, 1, "forge", "cpu"), 0);
        snprintf(path, sizeof path, "%s/r.xml", dir);
        cr_expect_eq(pp__report_junit(path, &r, 1, "forge", "cpu"), 0);
        snprintf(path, sizeof path, "%s/gs.json", dir);
        cr_expect_eq(pp__report_gradescope(path, &r, 1, "forge", "cpu"), 0);
        int shown = 0;
        for (int o = 0; o < 4; o++) {
            static char text[1 << 18];
            snprintf(path, sizeof path, "%s/%s", dir, outs[o]);
            f = fopen(path, "r");
            cr_assert(f, "no %s", outs[o]);
            text[fread(text, 1, sizeof text - 1, f)] = 0;
            fclose(f);
            cr_expect(!strchr(text, 0x1b) && !strstr(text, "\\u001b"), "%s: an escape byte reached %s", flags,
                      outs[o]);
            for (size_t w = 0; w < sizeof words / sizeof *words; w++)
                for (const char *p = strstr(text, words[w]); p; p = strstr(p + 1, words[w])) {
                    shown = 1;
                    cr_expect(on_marked_line(text, p), "%s: \"%s\" stands unmarked in %s:\n%s", flags, words[w],
                              outs[o], text);
                }
            for (const char *p = strstr(text, "FULL MARKS"); p; p = strstr(p + 1, "FULL MARKS"))
                cr_expect((p - text >= 4 && !strncmp(p - 4, "NOT ", 4)) || on_marked_line(text, p),
                          "%s: FULL MARKS stands unmarked in %s:\n%s", flags, outs[o], text);
        }
        /* what may come from a running step shows its words, marked; the start-up requests are refused unread */
        int running = kinds[k].op == 0 || (kinds[k].op == PP_RPC_MISUSE && kinds[k].code == PP_STOP_FOREIGN_RANK);
        if (running) cr_expect(shown, "%s: the driver's words were not shown at all: %s", flags, r.error);
        else cr_expect(strstr(r.error, "start-up request") && !shown, "%s: %s", flags, r.error);
        cr_log_info("%s: %s (shown: %d)", flags, r.error, shown);
    }
    test_rm_tree(dir);
}

/* The grid lab's mapping runs before the first step, yet after the driver's own start-up: whatever stop request
 * either function sends, in whatever kind, is refused as the submission's, never read as the driver's (no "could
 * not lock itself down", no "does not define"); and a mapping that sleeps is a time-out scored 0. */
Test(hostile, the_grid_mapping_speaks_as_the_submission, .timeout = 240) {
    char addr[64];
    test_driver_stop_addr(addr, sizeof addr);
    static const forged_stop kinds[] = {
        {PP_RPC_MISUSE, PP_STOP_NO_STEP, 1},    {PP_RPC_MISUSE, PP_STOP_NO_STEP, 2},
        {PP_RPC_SETUP_FAILED, PP_STOP_LOCKDOWN, 1}, {PP_RPC_SETUP_FAILED, PP_STOP_SEAL, 38},
        {PP_RPC_LOAD_FAILED, PP_STOP_OBJECT, 0}, {PP_RPC_MISUSE, PP_STOP_FOREIGN_RANK, 3},
        {PP_RPC_NEXT + 1, 0, 0},
    };
    for (int in = 1; in <= 2; in++)
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
            char flags[256];
            snprintf(flags, sizeof flags, "-DFORGE_IN=%d -DFORGE_ADDR=%s -DFORGE_OP=%d -DFORGE_CODE=%d "
                     "-DFORGE_ARG=%ldL", in, addr, kinds[k].op, kinds[k].code, kinds[k].arg);
            static pp_impl impl;
            test_hostile_object_with("forge-grid", flags, &impl);
            pp_test_result r;
            pp_test_config c = {.P = 2, .M = 2, .v = 1, .T = 2, .D = 1, .steps = 1, .seed = 7, .time_limit_s = 10};
            snprintf(c.lab, sizeof c.lab, "tpgrid");
            pp__runner_test(&c, &impl, PP_OK, NULL, "cpu", &r);
            cr_expect_eq(r.score, 0, "%s: scored %g", flags, r.score);
            cr_expect(r.status == PP_ERR_SANDBOX && strstr(r.error, "refused: the schedule's code sent a request") &&
                      strstr(r.error, "while pp_tpgrid_place or pp_tpgrid_group ran") &&
                      !strstr(r.error, "lock itself down") && !strstr(r.error, "does not define") &&
                      !strstr(r.error, "HINT"),
                      "%s: %s: %s", flags, pp__status_name(r.status), r.error);
        }
    static pp_impl sleeper;
    test_hostile_object_with("forge-grid", "-DFORGE_IN=2 -DFORGE_OP=-1", &sleeper);
    pp_test_result r;
    pp_test_config c = {.P = 2, .M = 2, .v = 1, .T = 2, .D = 1, .steps = 1, .seed = 7, .time_limit_s = 2};
    snprintf(c.lab, sizeof c.lab, "tpgrid");
    pp__runner_test(&c, &sleeper, PP_OK, NULL, "cpu", &r);
    test_expect_failed_run(&r, PP_ERR_TIMEOUT, "no result after 2 s");
}

/* Plain C, which the build lets through, finds the driver's own syscall() by its bytes from printf's address and
 * asks for openat: the kernel's filter stops it and names the call. */
Test(hostile, plain_c_that_finds_the_drivers_syscall_meets_the_filter) {
    pp_test_result r;
    hostile("gadget-syscall", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule called open(), which a schedule never needs");
}

/* Code that got past every build check (here: compiled without them) meets the filters: each call it may not
 * make is named. */
Test(hostile, arbitrary_code_meets_the_seccomp_filters) {
    static const struct {
        const char *object, *named;
    } cases[] = {
        {"open-file", "the schedule called open()"},        {"fork-process", "the schedule called fork()"},
        {"signal-grader", "the schedule called kill()"},   {"trace-grader", "the schedule called ptrace()"},
        {"write-grader", "the schedule called process_vm_writev()"}, {"socket-out", "the schedule called socket()"},
        {"exec-memory", "the schedule called mprotect()"}, {"new-filter", "the schedule called seccomp()"},
        {"raise-limits", "the schedule called prlimit64()"}, {"exec-driver", "the schedule called execve()"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_test_result r;
        hostile_object(cases[i].object, "gpipe", 2, 2, NULL, &r);
        test_expect_failed_run(&r, PP_ERR_SANDBOX, cases[i].named);
    }
}

/* ---- outliving, signalling, tracing, writing to the grader ----------------------------------------------- */

Test(hostile, a_daemon_is_refused_at_fork) {
    pp_test_result r;
    hostile("fork-daemon", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "calls fork(), which a lab file may not use");
}

/* With both seccomp filters off (a knob for this test), the layers under them: the escapee's chain of
 * processes in sessions of their own ends with its test (one kill(-1) of the test's uid), it opens nothing (an
 * empty root as root, Landlock), and an honest submission graded right after keeps its full marks. */
Test(hostile, without_seccomp_the_uid_root_and_landlock_still_hold) {
    pp_sandbox sb = probed_sandbox();
    sb.test_without_seccomp = 1;
    pp_test_result r;
    hostile_object("escape", "gpipe", 2, 2, &sb, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect(strstr(r.output_tail, "escape: fork started a process"), "seccomp was off: %s", r.output_tail);
    cr_expect(!strstr(r.output_tail, "opened"), "a file was opened: %s", r.output_tail);
    cr_expect(strstr(r.output_tail, "escape: open /etc/passwd: refused"), "%s", r.output_tail);
    /* plain C that finds the driver's syscall() by its bytes opens nothing either: the root is empty, the
     * files are the grader's uid's, Landlock allows no path */
    pp__runopts_set_sandbox(&sb);
    hostile("gadget-syscall", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_STUDENT, "gadget-syscall: openat returned -");
    sb.test_without_seccomp = 0;
    pp__runopts_set_sandbox(&sb);
    hostile("tests/valid/uses-libc", "gpipe", 4, 6, 20, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect_eq(r.score, r.max, "the honest submission after it: %g/%g", r.score, r.max);
}

/* Without the sandbox (trusted code only) the daemon does start; the supervisors still end it. */
Test(hostile, an_escaped_daemon_is_reaped_without_the_sandbox) {
    pp_sandbox sb;
    pp__sandbox_defaults(&sb);
    sb.lockdown = 0, sb.drop_uid = 0;
    pp_test_result r;
    hostile_object("fork-process", "gpipe", 2, 2, &sb, &r);
    cr_expect_eq(r.score, 0, "%s", r.error);
}

/* It does the work: its fake verdicts, written to every descriptor, change nothing, so it keeps exactly its real
 * points. */
Test(hostile, fake_verdicts_on_every_descriptor_change_nothing) {
    pp_test_result r;
    hostile_object("write-fds", "gpipe", 4, 4, NULL, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect_eq(r.score, r.max, "valid work with fake verdicts: %g/%g", r.score, r.max);
    cr_expect(strstr(r.output_tail, "FULL MARKS"), "its output is captured, not read: %s", r.output_tail);
}

/* ---- secrets, and who a schedule is ----------------------------------------------------------------------- */

Test(hostile, a_schedule_has_a_uid_of_its_test_and_only_its_output) {
    pp_test_result r;
    hostile("read-environment", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "uses environ, which a lab file may not use");
    hostile_object("whoami", "gpipe", 2, 2, NULL, &r);
    unsigned uid = 0, euid = 0, gid = 0;
    int writable = -1;
    const char *at = strstr(r.output_tail, "whoami ");
    cr_assert(at && sscanf(at, "whoami uid=%u euid=%u gid=%u writable=%d", &uid, &euid, &gid, &writable) == 4, "%s",
              r.output_tail);
    if (geteuid() == 0) {
        cr_expect(uid >= PP_UID_BASE && uid - PP_UID_BASE < PP_UID_SPAN, "uid %u is not one of the sandbox's", uid);
        cr_expect(euid == uid && gid == uid, "uid %u euid %u gid %u", uid, euid, gid);
        /* every test its own */
        pp_test_result again;
        hostile_object("whoami", "gpipe", 2, 2, NULL, &again);
        unsigned uid2 = 0;
        at = strstr(again.output_tail, "whoami ");
        cr_expect(at && sscanf(at, "whoami uid=%u", &uid2) == 1 && uid2 != uid, "two tests, one uid %u: %s", uid,
                  again.output_tail);
    } else {
        cr_expect(uid == getuid() && euid == geteuid(), "uid %u euid %u", uid, euid);
    }
    cr_expect_eq(writable, 2, "only its output (1 and 2) is writable, got %d", writable);
}

/* ---- resources -------------------------------------------------------------------------------------------- */

Test(hostile, memory_cpu_and_output_run_out_with_their_names) {
    pp_test_result r;
    hostile("memory-hog", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_LIMIT, "the schedule ran out of memory (an allocation of 67108864 bytes failed)");
    hostile("static-hog", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "code and data need more than the 8192 KiB a lab file may have");
    hostile("cpu-spin", "gpipe", 2, 2, 2, &r);
    test_expect_failed_run(&r, PP_ERR_TIMEOUT, "no result after 2 s");
    cr_expect(r.timed_out);
    /* 64 MiB of output takes well under a second alone; the limit leaves room for a loaded machine */
    hostile("output-flood", "gpipe", 2, 2, 8, &r);
    test_expect_failed_run(&r, PP_ERR_TIMEOUT, "it had printed the whole output limit by then");
}

Test(hostile, the_runtime_caps_what_a_step_can_make) {
    pp_test_result r;
    hostile("loss-grad-flood", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_LIMIT, "pp_loss_grad: this step made more than 72 loss gradients");
    hostile("forward-flood", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_LIMIT, "pp_stage_forward: this step made more than 72 forwards");
    hostile("request-flood", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_LIMIT, "pp_isend: this step made more than 288 messages");
}

/* Threads are allowed, as many as the test's task limit (all its drivers' together, as RLIMIT_NPROC counts per
 * uid); ones it never joins end with it. */
Test(hostile, threads_are_capped_and_cost_no_points_and_leave_nothing) {
    pp_test_result r;
    hostile("thread-bomb", "gpipe", 2, 4, 20, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect_eq(r.score, r.max, "%g/%g", r.score, r.max);
    int total = 0;
    for (const char *at = strstr(r.output_tail, "thread-bomb: rank "); at; at = strstr(at + 1, "thread-bomb: rank ")) {
        int rank, made;
        cr_assert_eq(sscanf(at, "thread-bomb: rank %d started %d threads", &rank, &made), 2);
        total += made;
    }
    cr_expect_gt(total, 0, "threads are allowed: %s", r.output_tail);
    /* the cap is the test's: its drivers' threads together, with a few tasks to spare (policy.c) */
    cr_expect_leq(total, 2 * PP_SANDBOX_THREADS_PER_DRIVER + 4, "the test's two drivers started %d threads", total);
}

Test(hostile, a_build_too_large_to_keep_is_refused) {
    pp_test_result r;
    hostile("big-data", "gpipe", 2, 2, 20, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "refused: ");
    cr_expect(strstr(r.error, "larger than") || strstr(r.error, "more than"), "the size is named: %s", r.error);
}

Test(hostile, a_build_that_does_not_end_is_stopped) {
    pp__impl_set_compile_limit(5);
    pp_test_result r;
    hostile("compile-bomb", "gpipe", 2, 2, 10, &r);
    cr_expect_eq(r.score, 0);
    cr_expect(r.status == PP_ERR_SANDBOX || r.status == PP_ERR_COMPILE, "%s", r.error);
    cr_expect(strstr(r.error, "took longer than 5 s") || strstr(r.error, "limit"), "%s", r.error);
}

Test(hostile, an_oversized_file_is_refused_unread) {
    char dir[] = "/tmp/pplab-huge-XXXXXX", path[PATH_MAX];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/02-gpipe", dir);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/02-gpipe/gpipe.c", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("#include \"pp.h\"\nvoid pp_gpipe_step(pp_rank *r) { (void)r; }\n/*", f);
    for (int i = 0; i < 20000; i++) fputs("an endless comment line, to make the file larger than any lab file\n", f);
    fputs("*/\n", f);
    fclose(f);
    pp_test_result r;
    hostile(dir, "gpipe", 2, 2, 10, &r);
    test_rm_tree(dir);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "is larger than the 1024 KiB a lab file may have");
}

/* ---- the warm-up: its answers are graded by the grader alone ---------------------------------------------- */

Test(hostile, warmup_verdicts_exits_and_reads_score_nothing) {
    pp_test_result r;
    hostile("warmup-verdict", "warmup", 0, 0, 10, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect_eq(r.score, 0, "a printed verdict earned %g", r.score);
    cr_expect(strstr(r.output_tail, "FULL MARKS"), "%s", r.output_tail);
    hostile("warmup-exit", "warmup", 0, 0, 10, &r);
    test_expect_failed_run(&r, PP_ERR_CRASH, "the warm-up code's process exited (status 0) in the middle of its answers");
    /* the weight the part declares: what a failed part reports for every one of its checks */
    pp_test_config bubble = {.lab = "warmup", .part = "bubble"};
    pp_test_result declared;
    memset(&declared, 0, sizeof declared);
    pp__warmup_fail(&bubble, PP_ERR_CRASH, "", &declared);
    cr_expect(declared.max > 1 && r.max == declared.max, "a part that crashed keeps its weight: max %g of %g", r.max,
              declared.max);
    hostile("warmup-open", "warmup", 0, 0, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "calls fopen(), which a lab file may not use");
}

/* ---- the whole grader: alive, exit 1, every report complete and its own ----------------------------------- */

Test(hostile, the_grader_survives_and_reports_every_test) {
    char dir[] = "/tmp/pplab-hostile-XXXXXX", cmd[4 * PATH_MAX];
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp -r tests/hostile/warmup-exit/00-warmup tests/hostile/fork-daemon/02-gpipe '%s'/",
             dir);
    cr_assert_eq(system(cmd), 0);
    uint64_t before = tree_fingerprint();
    snprintf(cmd, sizeof cmd, "build/pplab grade --impl '%s' --lab all --quiet --json '%s/r.json' --junit '%s/r.xml' "
             "--gradescope '%s/gs.json' > '%s/out.txt' 2>&1", dir, dir, dir, dir, dir);
    int st = system(cmd);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "the grader should exit 1 (not full marks), got %d", st);
    cr_expect_eq(tree_fingerprint(), before, "grading changed the project tree");
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/r.json", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f, "no JSON report");
    static char text[1 << 20];
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root, "the JSON report does not parse");
    pp_test_config *all = NULL;
    int n = pp__suite_default("all", 0, &all);
    free(all);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "tests")), n, "every default test is reported");
    cr_expect_eq(cJSON_GetObjectItem(root, "score")->valuedouble, 0, "a hostile submission scored");
    cJSON_Delete(root);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    f = fopen(path, "r");
    text[f ? fread(text, 1, sizeof text - 1, f) : 0] = 0;
    if (f) fclose(f);
    cr_expect(strstr(text, "NOT FULL MARKS"), "the summary is printed: %s", text);
    test_rm_tree(dir);
}

/* 1 when the file at path holds needle. */
static int file_holds(const char *path, const char *needle) {
    static char text[1 << 20];
    FILE *f = fopen(path, "r");
    text[f ? fread(text, 1, sizeof text - 1, f) : 0] = 0;
    if (f) fclose(f);
    return strstr(text, needle) != NULL;
}

/* A lab file is read as the file it is, never through a name: a link to the reference or to a file only the
 * grader may read, a FIFO, a hard link and a folder that is a link are each refused by name before anything reads
 * them, and the target's first line (what a compile error would quote) reaches no output. */
Test(hostile, a_lab_file_is_read_as_itself_never_through_a_name) {
    char top[] = "/tmp/pplab-links-XXXXXX", cmd[8 * PATH_MAX], cwd[PATH_MAX];
    cr_assert(mkdtemp(top) && getcwd(cwd, sizeof cwd));
    const char *mark = "PPLAB_SECRET_LINE_5ba1";
    char secret[PATH_MAX + 32];
    snprintf(secret, sizeof secret, "%s/secret.txt", top);
    FILE *f = fopen(secret, "w");
    cr_assert(f);
    fprintf(f, "%s only the grader may read this\n", mark);
    fclose(f);
    chmod(secret, 0600);
    struct {
        const char *make, *named; /* shell run inside the lab folder's parent (sub/), and the entry refused */
    } cases[] = {
        {"ln -sf '%2$s' 02-gpipe/gpipe.c", "02-gpipe/gpipe.c is a symbolic link"},
        {"ln -sf '%1$s/solutions/02-gpipe/gpipe.c' 02-gpipe/gpipe.c", "02-gpipe/gpipe.c is a symbolic link"},
        {"ln -sf ../../secret.txt 02-gpipe/gpipe.c", "02-gpipe/gpipe.c is a symbolic link"},
        {"ln -s '%2$s' 02-gpipe/notes.h", "02-gpipe/notes.h is a symbolic link"},
        {"mkfifo 02-gpipe/pipe", "02-gpipe/pipe is a FIFO"},
        {"rm 02-gpipe/gpipe.c && mkfifo 02-gpipe/gpipe.c", "02-gpipe/gpipe.c is a FIFO"},
        {"ln 02-gpipe/gpipe.c twin.c", "02-gpipe/gpipe.c has 2 names"},
        {"mv 02-gpipe real && ln -s real 02-gpipe", "02-gpipe is a symbolic link"},
        {"rm -r 02-gpipe && ln -s '%1$s/solutions/02-gpipe' 02-gpipe", "02-gpipe is a symbolic link"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char dir[PATH_MAX + 16], make[2 * PATH_MAX];
        snprintf(dir, sizeof dir, "%s/sub%zu", top, i);
        snprintf(make, sizeof make, cases[i].make, cwd, secret);
        snprintf(cmd, sizeof cmd, "mkdir -p '%s/02-gpipe' && cp labs/02-gpipe/gpipe.c '%s/02-gpipe/' && cd '%s' && %s",
                 dir, dir, dir, make);
        cr_assert_eq(system(cmd), 0, "cannot set up: %s", make);
        snprintf(cmd, sizeof cmd, "build/pplab grade --impl '%s' --lab gpipe --json '%s/r.json' --junit '%s/r.xml' "
                 "--gradescope '%s/gs.json' > '%s/out.txt' 2>&1", dir, top, top, top, top);
        int st = system(cmd);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s: the grader should exit 1, got %d", make, st);
        const char *outs[] = {"out.txt", "r.json", "r.xml", "gs.json"};
        for (int k = 0; k < 4; k++) {
            char path[PATH_MAX + 16];
            snprintf(path, sizeof path, "%s/%s", top, outs[k]);
            cr_expect(!file_holds(path, mark), "%s: the linked file's text reached %s", make, outs[k]);
            cr_expect(file_holds(path, cases[i].named), "%s: %s does not say \"%s\"", make, outs[k],
                      cases[i].named);
            cr_expect(!file_holds(path, "FULL MARKS") || file_holds(path, "NOT FULL MARKS"), "%s scored", make);
        }
    }
    test_rm_tree(top);
}

/* What a schedule may use besides pp.h: printf, malloc, qsort, assert, a sleep, a thread. */
Test(hostile, what_a_schedule_may_use_still_works) {
    pp_test_result r;
    hostile("tests/valid/uses-libc", "gpipe", 4, 6, 20, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect_eq(r.score, r.max, "%g/%g", r.score, r.max);
    cr_expect(strstr(r.output_tail, "rank 3: 6 micro-batches, backwards in order 0..5"), "%s", r.output_tail);
}
