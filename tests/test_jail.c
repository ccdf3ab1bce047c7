/* test_jail.c: the jail in every mode it runs in, each layer on its own. The views a build sees the file
 * system through (namespaces under bubblewrap, Landlock): the toolchain and the build folder, and nothing of a
 * secret; the uid reaper against a chain of processes in sessions of their own; and the hostile submissions
 * graded with namespaces forced off (as a container with Docker's default seccomp profile grades): each still
 * stops for its named reason, and honest work keeps its marks. The same as a normal user, where no uid switch
 * exists, is tests/test_jail_user.c. Tests run from the project root. */
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "impl_build.h"
#include "jail_cases.h"
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
        /* the jail a build enters (as root: uid's), with its view */
        pp_sandbox sb;
        pp__sandbox_defaults(&sb);
        sb.uid = uid, sb.gid = (gid_t)uid, sb.view = view, sb.tools = pp__view_tools(NULL);
        const char *what;
        if (pp__jail_enter(&sb, PP_JAIL_BUILD, &what)) _exit(121);
        char *argv[96];
        int n = 0;
        if (view == PP_VIEW_NAMESPACES) n = pp__view_bwrap_argv(pp__view_tools(NULL), dir, argv, 90);
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
    pp_sandbox sb;
    char err[400];
    pp__sandbox_defaults(&sb);
    sb.uid = 65534, sb.gid = 65534;
    if (pp__sandbox_view(&sb, PP_VIEW_NAMESPACES, err, sizeof err)) test_skip("%s", err);
    view_holds(PP_VIEW_NAMESPACES);
}

Test(jail, the_landlock_view_shows_the_toolchain_and_the_build_folder_alone) {
    if (pp__landlock_abi() <= 0) test_skip("this kernel has no Landlock");
    view_holds(PP_VIEW_LANDLOCK);
}

/* What a survivor of a lost lockdown did before: a chain of processes, each in a session of its own, its parent
 * gone. One kill(-1) as their uid ends them all, and no other process. */
/* A jail lowers limits, never raises them: a build tool started under a caller's own smaller address space
 * (`ulimit -v` around pplab) keeps that one, where asking for its 2 GiB would fail once the build is no longer
 * root, and the compiler would not run at all. */
Test(jail, a_limit_the_caller_set_lower_is_kept) {
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit low = {(rlim_t)1 << 30, (rlim_t)1 << 30}, got;
        if (setrlimit(RLIMIT_AS, &low)) _exit(10);
        pp_sandbox sb;
        pp__sandbox_defaults(&sb);
        const char *what;
        if (pp__jail_enter(&sb, PP_JAIL_TOOL, &what)) _exit(11);
        if (getrlimit(RLIMIT_AS, &got) || got.rlim_max != low.rlim_max || got.rlim_cur != low.rlim_cur) _exit(12);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the tool's jail %s (exit %d)",
              WEXITSTATUS(st) == 11 ? "failed under a lower address-space limit" : "raised the caller's limit",
              WEXITSTATUS(st));
}

Test(jail, one_kill_of_the_uid_ends_a_chain_in_sessions_of_its_own) {
    if (geteuid() != 0) test_skip("not root: there is no uid of the test's own to reap");
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

/* Namespaces forced off: the build's tools see the whole tree through Landlock, and the drivers as before. */
Test(jail, hostile_submissions_stop_with_namespaces_forced_off) {
    if (pp__landlock_abi() <= 0) test_skip("this kernel has no Landlock");
    pp_sandbox sb;
    char err[4096];
    pp__sandbox_defaults(&sb);
    sb.view = PP_VIEW_LANDLOCK;
    cr_assert_eq(pp__sandbox_probe(&sb, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sb.view, PP_VIEW_LANDLOCK);
    pp__runopts_set_sandbox(&sb);
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

/* ---- honest work in every mode -------------------------------------------------------------------------------- */

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
    if (pp__landlock_abi() <= 0) test_skip("this kernel has no Landlock");
    pp_sandbox sb;
    char err[600];
    pp__sandbox_defaults(&sb);
    sb.view = PP_VIEW_LANDLOCK;
    cr_assert_eq(pp__sandbox_probe(&sb, err, sizeof err), 0, "%s", err);
    pp__runopts_set_sandbox(&sb);
    for (size_t i = 0; i < sizeof honest / sizeof *honest; i++) each_lab_of(honest[i], honest_landlock, &sb);
}

