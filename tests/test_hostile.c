/* test_hostile.c: proves the trust boundary. Every submission under tests/hostile/ attacks the grading in one
 * way (forging measurements, borrowing the reference, outliving or stopping the grader, reading secrets,
 * exhausting a resource); each must score 0, or lose exactly what it forged, for the named reason, and leave
 * behind no process and an unchanged project tree. Tests run from the project root. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checks.h"
#include "impl.h"
#include "runner.h"
#include "host.h"
#include "suite.h"
#include "testutil.h"

/* ---- what every hostile grading must leave as it was ------------------------------------------------------ */

static uint64_t g_hash;

static int fold_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)ftw;
    const char *base = path + 2; /* "./" */
    if (flag == FTW_D && (!strcmp(base, ".git") || !strncmp(base, "build", 5) || !strcmp(base, "dist") ||
                          !strcmp(base, "out")))
        return FTW_SKIP_SUBTREE;
    uint64_t h = g_hash ^ 1469598103934665603ull;
    for (const char *p = path; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    if (flag == FTW_F) {
        h = (h ^ (uint64_t)st->st_size) * 1099511628211ull;
        h = (h ^ (uint64_t)st->st_mtim.tv_sec) * 1099511628211ull;
        h = (h ^ (uint64_t)st->st_mtim.tv_nsec) * 1099511628211ull;
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

/* The processes whose parent is this one. Grading makes this process a subreaper, so anything a test left
 * running, however it forked, would be found here. */
static int children(char *names, size_t len) {
    DIR *d = opendir("/proc");
    int n = 0;
    names[0] = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = 0;
        char *paren = strrchr(buf, ')');
        char state;
        long ppid;
        if (paren && sscanf(paren + 1, " %c %ld", &state, &ppid) == 2 && ppid == getpid()) {
            n++;
            size_t used = strlen(names);
            snprintf(names + used, len - used, " %.*s", (int)(paren - buf), buf);
        }
    }
    if (d) closedir(d);
    return n;
}

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

TestSuite(hostile, .timeout = 120);

/* ---- forging the run's own measurements ------------------------------------------------------------------- */

Test(hostile, including_the_runtime_is_refused_before_compiling) {
    pp_test_result r;
    hostile("include-internals", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "includes \"../../../../lib/runtime.h\", which is neither pp.h nor a header");
}

Test(hostile, calling_runtime_internals_does_not_link) {
    pp_test_result r;
    hostile("extern-internals", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_COMPILE, "undefined reference to `pp__trace_add'");
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
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "includes \"../../../../solutions/02-gpipe/gpipe.c\"");
    hostile("dlopen-solution", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule called open(), which a schedule never needs: it may use only "
                                       "pp.h and memory");
    hostile("read-solution", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule called open()");
    cr_expect(!strstr(r.output_tail, "pp_stage_forward"), "the solution's text reached the report: %s", r.output_tail);
}

Test(hostile, no_file_reaches_the_build_through_includes_or_assembly) {
    pp_test_result r;
    hostile("include-secret", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "includes \"/etc/passwd\"");
    cr_expect(!strstr(r.error, "root:"), "the file's contents reached the report: %s", r.error);
    hostile("asm-incbin", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "02-gpipe/gpipe.c:5 uses inline assembly (__asm__)");
    hostile("section-incbin", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "produced the assembler directive .incbin");
}

/* ---- code that would run before the lockdown ------------------------------------------------------------ */

Test(hostile, startup_code_is_refused_at_build_time) {
    pp_test_result r;
    hostile("constructor", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "has a constructor");
    hostile("preinit", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, ".preinit_array");
    hostile("ifunc", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "defines helper as an ifunc");
}

Test(hostile, its_own_prctl_and_seccomp_load_do_not_undo_the_lockdown) {
    pp_test_result r;
    hostile("interpose-lockdown", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule called open()");
    cr_expect(!strstr(r.output_tail, "bypassed"), "%s", r.output_tail);
}

/* ---- outliving, signalling, tracing, writing to the grader ----------------------------------------------- */

Test(hostile, a_daemon_is_refused_at_fork) {
    pp_test_result r;
    hostile("fork-daemon", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule called fork()");
}

/* Without the sandbox (trusted code only) the daemon does start; the supervisors still end it. */
Test(hostile, an_escaped_daemon_is_reaped_without_the_sandbox) {
    pp_sandbox sb;
    pp__sandbox_defaults(&sb);
    sb.lockdown = 0, sb.drop_uid = 0;
    pp__runner_set_sandbox(&sb);
    pp_test_result r;
    hostile("fork-daemon", "gpipe", 2, 2, 10, &r);
    cr_expect_eq(r.score, 0, "%s", r.error);
}

Test(hostile, the_grader_cannot_be_signalled_traced_or_written) {
    pp_test_result r;
    hostile("kill-grader", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule called kill()");
    hostile("ptrace-grader", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule called ptrace()");
    hostile("vm-write", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule called process_vm_writev()");
    hostile("socket-out", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the schedule called socket()");
}

/* It does the work: its fake verdicts change nothing, so it keeps exactly its real points. */
Test(hostile, fake_verdicts_on_every_descriptor_change_nothing) {
    pp_test_result r;
    hostile("write-fds", "gpipe", 4, 4, 10, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect_eq(r.score, r.max, "valid work with fake verdicts: %g/%g", r.score, r.max);
    cr_expect(strstr(r.output_tail, "FULL MARKS"), "its output is captured, not read: %s", r.output_tail);
}

/* ---- secrets, and who a schedule is ----------------------------------------------------------------------- */

Test(hostile, a_schedule_gets_an_empty_environment_and_three_descriptors) {
    pp_test_result r;
    hostile("read-environment", "gpipe", 2, 2, 10, &r);
    cr_expect_eq(r.score, 0);
    cr_expect(strstr(r.output_tail, "environment variables: 0; PPLAB_TOKEN=(none)"), "%s", r.output_tail);
    hostile("whoami", "gpipe", 2, 2, 10, &r);
    pp_sandbox sb;
    pp__sandbox_defaults(&sb);
    char want[96];
    if (geteuid() == 0)
        snprintf(want, sizeof want, "whoami uid=%u euid=%u gid=%u fds=3", (unsigned)sb.uid, (unsigned)sb.uid,
                 (unsigned)sb.gid);
    else
        snprintf(want, sizeof want, "whoami uid=%u euid=%u", (unsigned)getuid(), (unsigned)geteuid());
    cr_expect(strstr(r.output_tail, want), "expected '%s' in: %s", want, r.output_tail);
}

/* ---- resources -------------------------------------------------------------------------------------------- */

Test(hostile, memory_cpu_and_output_run_out_with_their_names) {
    pp_test_result r;
    hostile("memory-hog", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_LIMIT, "the schedule ran out of memory (an allocation of 67108864 bytes failed)");
    /* the loader maps what fits of its .bss; the first page past it faults */
    hostile("static-hog", "gpipe", 2, 2, 10, &r);
    test_expect_failed_run(&r, PP_ERR_CRASH, "a schedule's process may use 256 MiB (--memory-limit), large arrays included");
    hostile("cpu-spin", "gpipe", 2, 2, 2, &r);
    test_expect_failed_run(&r, PP_ERR_TIMEOUT, "no result after 2 s");
    cr_expect(r.timed_out);
    hostile("output-flood", "gpipe", 2, 2, 3, &r);
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

/* Threads are allowed; ones it never joins end with it. */
Test(hostile, threads_that_never_end_cost_no_points_and_leave_nothing) {
    pp_test_result r;
    hostile("thread-bomb", "gpipe", 2, 4, 20, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect_eq(r.score, r.max, "%g/%g", r.score, r.max);
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
    test_expect_failed_run(&r, PP_ERR_SANDBOX, "the warm-up code called open(), which it never needs: it may use only memory");
}

/* ---- the whole grader: alive, exit 1, every report complete and its own ----------------------------------- */

Test(hostile, the_grader_survives_and_reports_every_test) {
    char dir[] = "/tmp/pplab-hostile-XXXXXX", cmd[4 * PATH_MAX];
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp -r tests/hostile/warmup-exit/00-warmup tests/hostile/kill-grader/02-gpipe '%s'/",
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

/* What a schedule may use besides pp.h: printf, malloc, qsort, assert, a sleep, a thread. */
Test(hostile, what_a_schedule_may_use_still_works) {
    pp_test_result r;
    hostile("tests/valid/uses-libc", "gpipe", 4, 6, 20, &r);
    cr_expect_eq(r.status, PP_OK, "%s", r.error);
    cr_expect_eq(r.score, r.max, "%g/%g", r.score, r.max);
    cr_expect(strstr(r.output_tail, "rank 3: 6 micro-batches, backwards in order 0..5"), "%s", r.output_tail);
}
