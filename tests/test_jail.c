/* test_jail.c: the jail in every mode it runs in, each layer on its own. The views a build sees the file
 * system through (namespaces under bubblewrap, Landlock): the toolchain and the build folder, and nothing of a
 * secret; the uid reaper against a chain of processes in sessions of their own; and the hostile submissions
 * graded with namespaces forced off (as a container with Docker's default seccomp profile grades) and as a
 * normal user, where no uid switch exists: each still stops for its named reason, and honest work keeps its
 * marks. Tests run from the project root. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "impl.h"
#include "landlock.h"
#include "policy.h"
#include "runner.h"
#include "suite.h"
#include "testutil.h"
#include "uids.h"
#include "view.h"

TestSuite(jail, .timeout = 240);

/* A secret a jailed build must never read: a world-readable file in a world-readable folder, where only the
 * view (not the modes) can hide it. */
static void secret_make(char *path, size_t len) {
    char dir[] = "/tmp/pplab-secret-XXXXXX";
    cr_assert(mkdtemp(dir));
    chmod(dir, 0755);
    snprintf(path, len, "%s/hidden.cfg", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("warmup-seed=4242\n", f);
    fclose(f);
    chmod(path, 0644);
}

/* Runs `sh -c cmd` in the build view `view`, in folder dir, as uid (when root): what a build's tool would do.
 * Returns its exit status. */
static int in_build_view(pp_view view, const char *dir, uid_t uid, const char *cmd) {
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 1), dup2(nul, 2);
        if (chdir(dir)) _exit(120);
        if (geteuid() == 0 && (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, uid, uid, uid) ||
                               syscall(SYS_setresuid, uid, uid, uid)))
            _exit(121);
        char *argv[96];
        int n = 0;
        if (view == PP_VIEW_NAMESPACES) n = pp__view_bwrap_argv(pp__view_tools(NULL), dir, argv, 90);
        if (view == PP_VIEW_LANDLOCK && pp__landlock_build(pp__view_tools(NULL))) _exit(122);
        if (n < 0) _exit(123);
        argv[n++] = "/bin/sh", argv[n++] = "-c", argv[n++] = (char *)cmd, argv[n] = NULL;
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void view_holds(pp_view view) {
    char secret[PATH_MAX], dir[] = "/tmp/pplab-viewtest-XXXXXX", cmd[PATH_MAX + 64];
    secret_make(secret, sizeof secret);
    cr_assert(mkdtemp(dir));
    uid_t uid = getuid();
    char err[300];
    if (geteuid() == 0) {
        cr_assert_eq(pp__uid_take(&uid, err, sizeof err), 0, "%s", err);
        cr_assert_eq(chown(dir, uid, uid), 0);
    }
    const char *name = pp__view_name(view);
    cr_expect_eq(in_build_view(view, dir, uid, "cat /usr/include/stdio.h >/dev/null"), 0, "%s: the toolchain", name);
    cr_expect_eq(in_build_view(view, dir, uid, "echo x > out.txt && cat out.txt >/dev/null"), 0, "%s: its folder", name);
    snprintf(cmd, sizeof cmd, "cat '%s'", secret);
    cr_expect_neq(in_build_view(view, dir, uid, cmd), 0, "%s: a world-readable secret was read", name);
    cr_expect_neq(in_build_view(view, dir, uid, "cat /etc/passwd"), 0, "%s: /etc was read", name);
    cr_expect_neq(in_build_view(view, dir, uid, "ls /tmp | grep -q pplab-secret"), 0, "%s: /tmp was listed", name);
    if (geteuid() == 0) pp__uid_reap(uid);
    test_rm_tree(dir);
    *strrchr(secret, '/') = 0;
    test_rm_tree(secret);
}

Test(jail, the_namespaces_view_shows_the_toolchain_and_the_build_folder_alone) {
    pp_view v;
    char err[400];
    if (pp__view_resolve(PP_VIEW_NAMESPACES, geteuid() == 0, 65534, &v, err, sizeof err))
        cr_skip_test("%s", err);
    view_holds(PP_VIEW_NAMESPACES);
}

Test(jail, the_landlock_view_shows_the_toolchain_and_the_build_folder_alone) {
    if (pp__landlock_abi() <= 0) cr_skip_test("this kernel has no Landlock");
    view_holds(PP_VIEW_LANDLOCK);
}

/* What a survivor of a lost lockdown did before: a chain of processes, each in a session of its own, its parent
 * gone. One kill(-1) as their uid ends them all, and no other process. */
Test(jail, one_kill_of_the_uid_ends_a_chain_in_sessions_of_its_own) {
    if (geteuid() != 0) cr_skip_test("not root: there is no uid of the test's own to reap");
    uid_t uid;
    char err[300];
    cr_assert_eq(pp__uid_take(&uid, err, sizeof err), 0, "%s", err);
    /* as the grader is: the chain's orphans come here, and are reaped here */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_t bystander = fork();
    if (bystander == 0) {
        pause();
        _exit(0);
    }
    pid_t pid = fork();
    if (pid == 0) {
        if (syscall(SYS_setresgid, uid, uid, uid) || syscall(SYS_setresuid, uid, uid, uid)) _exit(1);
        for (int depth = 0; depth < 20; depth++) {
            setsid();
            if (fork() != 0) _exit(0);
        }
        for (;;) pause();
    }
    waitpid(pid, NULL, 0);
    for (int i = 0; i < 200 && pp__uid_tasks(uid) < 1; i++) usleep(5000);
    cr_assert_gt(pp__uid_tasks(uid), 0, "the chain did not start");
    cr_expect_eq(pp__uid_reap(uid), 0, "processes of uid %u are left", (unsigned)uid);
    cr_expect_eq(pp__uid_tasks(uid), 0);
    cr_expect_eq(kill(bystander, 0), 0, "a process of another uid was killed");
    kill(bystander, SIGKILL);
    waitpid(bystander, NULL, 0);
    /* and never a real account */
    cr_expect_eq(pp__uid_kill(0), -1, "a kill(-1) as root was attempted");
}

/* ---- the hostile submissions in each mode -------------------------------------------------------------------- */

/* Source attacks and what stops each: the build, through whichever view the mode has. */
static const struct {
    const char *impl;
    const char *needle; /* NULL: honest work, full marks */
} cases[] = {
    {"tests/hostile/include-secret", "#include \"/etc/passwd\" is not allowed"},
    {"tests/hostile/include-solution", "#include \"../../../../solutions/02-gpipe/gpipe.c\" is not allowed"},
    {"tests/hostile/asm-incbin", "inline assembly (__asm__) is not allowed"},
    {"tests/hostile/section-incbin", "the attribute section is not allowed"},
    {"tests/hostile/line-spoof", "#line"},
    {"tests/hostile/has-include", "__has_include"},
    {"tests/hostile/read-solution", "calls fopen(), which a lab file may not use"},
    {"tests/hostile/fork-daemon", "calls fork(), which a lab file may not use"},
    {"tests/hostile/big-data", "refused: "},
    {"tests/hostile/define-driver-names", NULL},
    {"tests/valid/uses-libc", NULL},
    {"solutions", NULL},
};

static void expect_case(const char *impl, const char *needle, double score, double max, const char *error,
                        const char *mode) {
    if (needle) {
        cr_expect_eq(score, 0, "%s (%s) scored %g", impl, mode, score);
        cr_expect(error && strstr(error, needle), "%s (%s): the error lacks '%s': %s", impl, mode, needle,
                  error ? error : "(none)");
    } else {
        cr_expect(max > 0 && score == max, "%s (%s): honest work got %g/%g: %s", impl, mode, score, max,
                  error ? error : "");
    }
}

/* Namespaces forced off: the build's tools see the whole tree through Landlock, and the drivers as before. */
Test(jail, hostile_submissions_stop_with_namespaces_forced_off) {
    if (pp__landlock_abi() <= 0) cr_skip_test("this kernel has no Landlock");
    pp_sandbox sb;
    char err[4096];
    pp__sandbox_defaults(&sb);
    sb.view = PP_VIEW_LANDLOCK;
    cr_assert_eq(pp__sandbox_probe(&sb, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sb.view, PP_VIEW_LANDLOCK);
    pp__runner_set_sandbox(&sb);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char dir[PATH_MAX];
        cr_assert_eq(pp__impl_dir(cases[i].impl, dir, sizeof dir), 0);
        pp_impl built;
        pp_status st = pp__impl_build(dir, pp__lab_find("gpipe"), &sb, &built, err, sizeof err);
        pp_test_config c = {.lab = "gpipe", .P = 2, .M = 3, .v = 1, .steps = 2, .seed = 5, .time_limit_s = 10};
        pp_test_result r;
        pp__runner_test(&c, st == PP_OK ? &built : NULL, st, err, "cpu", &r);
        expect_case(cases[i].impl, cases[i].needle, r.score, r.max, r.error, "landlock view");
    }
}

/* Copies what grading needs (pplab, its driver, pp.h, the case folders) into a folder a normal user owns, and
 * returns it in dir. */
static void kit_copy_for(uid_t uid, char *dir, size_t len) {
    char build[PATH_MAX], cmd[4 * PATH_MAX];
    test_build_dir(build, sizeof build);
    snprintf(dir, len, "/tmp/pplab-user-XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/build' '%s/lib' '%s/tmp' && cp '%s/pplab' '%s/pplab-driver' '%s/build/' && "
             "cp lib/pp.h '%s/lib/' && cp -r --parents tests/hostile tests/valid solutions '%s/' && "
             "chown -R %u:%u '%s'", dir, dir, dir, build, build, dir, dir, dir, (unsigned)uid, (unsigned)uid, dir);
    cr_assert_eq(system(cmd), 0, "cannot copy the kit for a normal user");
}

/* As a normal user: no uid switch, no empty root; the seccomp filters, Landlock and the view remain. The uid is
 * one of the sandbox's range with no account, which stands for any unprivileged user. */
Test(jail, hostile_submissions_stop_as_a_normal_user_in_every_view) {
    if (geteuid() != 0) cr_skip_test("already a normal user: the other suites cover this mode");
    if (system("command -v setpriv >/dev/null 2>&1")) cr_skip_test("setpriv (util-linux) not found");
    uid_t user;
    char err[300], dir[PATH_MAX], cmd[4 * PATH_MAX], out[1 << 16];
    cr_assert_eq(pp__uid_take(&user, err, sizeof err), 0, "%s", err);
    kit_copy_for(user, dir, sizeof dir);
    const char *views[] = {"namespaces", "landlock"};
    for (size_t v = 0; v < sizeof views / sizeof *views; v++) {
        pp_view want = (pp_view)pp__view_parse(views[v]), got;
        if (pp__view_resolve(want, 0, user, &got, err, sizeof err)) {
            cr_log_warn("as a normal user: %s view skipped: %s", views[v], err);
            continue;
        }
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            snprintf(cmd, sizeof cmd, "cd '%s' && printf 'gpipe P=2 M=3 seed=5\\n' > tmp/one.cfg && setpriv --reuid=%u "
                     "--regid=%u --clear-groups env -i PATH=/usr/bin:/bin TMPDIR='%s/tmp' HOME='%s/tmp' build/pplab grade "
                     "--impl '%s' --lab gpipe --config tmp/one.cfg --only-config --quiet --view %s --json tmp/r.json "
                     ">/dev/null 2>tmp/err.txt; cat tmp/r.json tmp/err.txt", dir, (unsigned)user, (unsigned)user, dir,
                     dir, cases[i].impl, views[v]);
            test_capture(cmd, out, sizeof out);
            cJSON *root = cJSON_Parse(out);
            cr_assert(root, "%s (%s view): no JSON report: %s", cases[i].impl, views[v], out);
            const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "tests"), 0);
            const cJSON *e = cJSON_GetObjectItem(t, "error");
            char mode[64];
            snprintf(mode, sizeof mode, "normal user, %s view", views[v]);
            const cJSON *score = cJSON_GetObjectItem(t, "score"), *max = cJSON_GetObjectItem(t, "max_score");
            cr_assert(cJSON_IsNumber(score) && cJSON_IsNumber(max), "%s (%s view): no score in: %s", cases[i].impl,
                      views[v], out);
            expect_case(cases[i].impl, cases[i].needle, score->valuedouble, max->valuedouble,
                        cJSON_IsString(e) ? e->valuestring : NULL, mode);
            cJSON_Delete(root);
        }
    }
    test_rm_tree(dir);
}

/* The arbitrary objects as a normal user: the filters hold without a uid switch. A child of this test becomes
 * the user and grades each object; its verdicts come back on a pipe. */
Test(jail, arbitrary_objects_meet_the_filters_as_a_normal_user) {
    if (geteuid() != 0) cr_skip_test("already a normal user: test_hostile covers this mode");
    static const struct {
        const char *object, *named;
    } objects[] = {{"open-file", "the schedule called open()"}, {"fork-process", "the schedule called fork()"},
                   {"signal-grader", "the schedule called kill()"}, {"exec-memory", "the schedule called mprotect()"},
                   {"unique-names", "makes main a unique global symbol"}};
    uid_t user;
    char err[300], dir[PATH_MAX], cmd[2 * PATH_MAX];
    cr_assert_eq(pp__uid_take(&user, err, sizeof err), 0, "%s", err);
    kit_copy_for(user, dir, sizeof dir);
    pp_impl impl[sizeof objects / sizeof *objects];
    for (size_t i = 0; i < sizeof objects / sizeof *objects; i++) {
        test_hostile_object(objects[i].object, &impl[i]);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s/tmp/' && chown %u '%s/tmp/hostile-%s.o'", impl[i].object, dir,
                 (unsigned)user, dir, objects[i].object);
        cr_assert_eq(system(cmd), 0);
        snprintf(impl[i].object, sizeof impl[i].object, "%s/tmp/hostile-%s.o", dir, objects[i].object);
        snprintf(impl[i].driver, sizeof impl[i].driver, "%s/build/pplab-driver", dir);
    }
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char tmp[PATH_MAX + 8];
        snprintf(tmp, sizeof tmp, "%s/tmp", dir);
        setenv("TMPDIR", tmp, 1);
        if (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, user, user, user) ||
            syscall(SYS_setresuid, user, user, user))
            _exit(1);
        FILE *out = fdopen(fds[1], "w");
        for (size_t i = 0; i < sizeof objects / sizeof *objects; i++) {
            pp_test_config c = {.lab = "gpipe", .P = 2, .M = 2, .v = 1, .steps = 1, .seed = 3, .time_limit_s = 10};
            pp_test_result r;
            pp__runner_test(&c, &impl[i], PP_OK, NULL, "cpu", &r);
            for (char *p = r.error; *p; p++)
                if (*p == '\n') *p = ' ';
            fprintf(out, "%g %s\n", r.score, r.error);
        }
        fclose(out);
        _exit(0);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    char line[2048];
    for (size_t i = 0; i < sizeof objects / sizeof *objects; i++) {
        cr_assert(fgets(line, sizeof line, in), "no verdict for %s", objects[i].object);
        cr_expect(line[0] == '0' && line[1] == ' ', "%s scored as a normal user: %s", objects[i].object, line);
        cr_expect(strstr(line, objects[i].named), "%s as a normal user: the error lacks '%s': %s", objects[i].object,
                  objects[i].named, line);
    }
    fclose(in);
    waitpid(pid, NULL, 0);
    test_rm_tree(dir);
}

/* ---- honest work in every mode -------------------------------------------------------------------------------- */

/* One small configuration of lab l, as a hidden configuration's line. */
static void one_line_of(const pp_lab_info *l, char *line, size_t len) {
    if (!l->symbol) snprintf(line, len, "warmup part=bubble\n");
    else if (!strcmp(l->name, "naive")) snprintf(line, len, "%s P=2 M=1 seed=3\n", l->name);
    else if (!strcmp(l->name, "interleaved")) snprintf(line, len, "%s P=2 M=4 v=2 seed=3\n", l->name);
    else snprintf(line, len, "%s P=2 M=4 seed=3\n", l->name);
}

/* Calls fn for every lab that implementation folder impl (relative to the project root) holds a file of. */
static void each_lab_of(const char *impl, void (*fn)(const char *impl, const pp_lab_info *l, void *ctx), void *ctx) {
    for (int i = 0; i < pp__nlabs; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s/%s.c", impl, pp__labs[i].folder, pp__labs[i].file);
        if (access(path, R_OK) == 0) fn(impl, &pp__labs[i], ctx);
    }
}

static const char *const honest[] = {"solutions", "tests/valid/any-order", "tests/valid/comm-styles",
                                     "tests/valid/deferred-weight-gpipe", "tests/valid/receive-first",
                                     "tests/valid/slow-rank", "tests/valid/split-backward",
                                     "tests/valid/stash-anywhere", "tests/valid/uses-libc"};

static void honest_landlock(const char *impl, const pp_lab_info *l, void *ctx) {
    pp_sandbox *sb = ctx;
    char dir[PATH_MAX], err[4096], line[128], cfg[] = "/tmp/pplab-honest-XXXXXX";
    cr_assert_eq(pp__impl_dir(impl, dir, sizeof dir), 0);
    int fd = mkstemp(cfg);
    one_line_of(l, line, sizeof line);
    cr_assert(fd >= 0 && write(fd, line, strlen(line)) == (ssize_t)strlen(line));
    close(fd);
    pp_test_config *cfgs = NULL;
    int n = 0;
    cr_assert_eq(pp__suite_load(cfg, l->name, &cfgs, &n, err, sizeof err), 0, "%s", err);
    unlink(cfg);
    pp_impl built;
    pp_status st = pp__impl_build(dir, l, sb, &built, err, sizeof err);
    pp_test_result r;
    pp__runner_test(&cfgs[0], st == PP_OK ? &built : NULL, st, err, "cpu", &r);
    cr_expect(r.max > 0 && r.score == r.max, "%s %s (root, landlock view): %g/%g: %s", impl, l->name, r.score, r.max,
              r.error);
    free(cfgs);
}

/* Namespaces forced off, as root: every solution and every valid variant, one configuration of each lab. */
Test(jail, honest_work_keeps_full_marks_with_namespaces_forced_off) {
    if (pp__landlock_abi() <= 0) cr_skip_test("this kernel has no Landlock");
    pp_sandbox sb;
    char err[600];
    pp__sandbox_defaults(&sb);
    sb.view = PP_VIEW_LANDLOCK;
    cr_assert_eq(pp__sandbox_probe(&sb, err, sizeof err), 0, "%s", err);
    pp__runner_set_sandbox(&sb);
    for (size_t i = 0; i < sizeof honest / sizeof *honest; i++) each_lab_of(honest[i], honest_landlock, &sb);
}

typedef struct user_run {
    uid_t user;
    const char *dir, *view;
} user_run;

static void honest_as_user(const char *impl, const pp_lab_info *l, void *ctx) {
    const user_run *u = ctx;
    char line[128], cmd[4 * PATH_MAX], out[1 << 16];
    one_line_of(l, line, sizeof line);
    snprintf(cmd, sizeof cmd, "cd '%s' && printf '%s' > tmp/one.cfg && setpriv --reuid=%u --regid=%u --clear-groups "
             "env -i PATH=/usr/bin:/bin TMPDIR='%s/tmp' build/pplab grade --impl '%s' --lab %s --config tmp/one.cfg "
             "--only-config --quiet --view %s >tmp/out.txt 2>&1; echo \"rc=$?\"; cat tmp/out.txt", u->dir, line,
             (unsigned)u->user, (unsigned)u->user, u->dir, impl, l->name, u->view);
    test_capture(cmd, out, sizeof out);
    cr_expect(!strncmp(out, "rc=0\n", 5), "%s %s (normal user, %s view) lost points:\n%s", impl, l->name, u->view, out);
}

/* As a normal user, in each view this machine has: the same. */
Test(jail, honest_work_keeps_full_marks_as_a_normal_user_in_every_view) {
    if (geteuid() != 0) cr_skip_test("already a normal user: the other suites cover this mode");
    if (system("command -v setpriv >/dev/null 2>&1")) cr_skip_test("setpriv (util-linux) not found");
    user_run u;
    char err[300], dir[PATH_MAX];
    cr_assert_eq(pp__uid_take(&u.user, err, sizeof err), 0, "%s", err);
    kit_copy_for(u.user, dir, sizeof dir);
    u.dir = dir;
    const char *views[] = {"namespaces", "landlock"};
    for (size_t v = 0; v < sizeof views / sizeof *views; v++) {
        pp_view got;
        if (pp__view_resolve((pp_view)pp__view_parse(views[v]), 0, u.user, &got, err, sizeof err)) {
            cr_log_warn("as a normal user: %s view skipped: %s", views[v], err);
            continue;
        }
        u.view = views[v];
        for (size_t i = 0; i < sizeof honest / sizeof *honest; i++) each_lab_of(honest[i], honest_as_user, &u);
    }
    test_rm_tree(dir);
}
