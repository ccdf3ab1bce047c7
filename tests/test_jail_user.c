/* test_jail_user.c: the jail as a normal user, where no uid switch exists: the source attacks in both build
 * views, the arbitrary objects, and every solution and valid variant, graded by a copy of the kit that user owns
 * (the long part of the jail's tests: make check runs it). Tests run from the project root, as root. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "impl_build.h"
#include "policy.h"
#include "runner.h"
#include "uids.h"
#include "view.h"
#include "jail_cases.h"
#include "testutil.h"

TestSuite(jail_user, .timeout = 300);

/* As a normal user: no uid switch, no empty root; the seccomp filters, Landlock and the view remain. The uid is
 * one of the sandbox's range with no account, which stands for any unprivileged user. */
Test(jail_user, hostile_submissions_stop_as_a_normal_user_in_every_view) {
    if (geteuid() != 0) test_skip("already a normal user: the other suites cover this mode");
    if (system("command -v setpriv >/dev/null 2>&1")) test_skip("setpriv (util-linux) not found");
    uid_t user;
    char err[300], dir[PATH_MAX], cmd[4 * PATH_MAX], out[1 << 16];
    cr_assert_eq(pp__uid_take(&user, err, sizeof err), 0, "%s", err);
    kit_copy_for(user, dir, sizeof dir);
    const char *views[] = {"namespaces", "landlock"};
    for (size_t v = 0; v < sizeof views / sizeof *views; v++) {
        pp_sandbox sb; /* a normal user's: no uid switch */
        pp__sandbox_defaults(&sb);
        sb.drop_uid = 0;
        if (pp__sandbox_view(&sb, (pp_view)pp__view_parse(views[v]), err, sizeof err)) {
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
Test(jail_user, arbitrary_objects_meet_the_filters_as_a_normal_user) {
    if (geteuid() != 0) test_skip("already a normal user: test_hostile covers this mode");
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
Test(jail_user, honest_work_keeps_full_marks_as_a_normal_user_in_every_view) {
    if (geteuid() != 0) test_skip("already a normal user: the other suites cover this mode");
    if (system("command -v setpriv >/dev/null 2>&1")) test_skip("setpriv (util-linux) not found");
    user_run u;
    char err[300], dir[PATH_MAX];
    cr_assert_eq(pp__uid_take(&u.user, err, sizeof err), 0, "%s", err);
    kit_copy_for(u.user, dir, sizeof dir);
    u.dir = dir;
    const char *views[] = {"namespaces", "landlock"};
    for (size_t v = 0; v < sizeof views / sizeof *views; v++) {
        pp_sandbox sb; /* a normal user's: no uid switch */
        pp__sandbox_defaults(&sb);
        sb.drop_uid = 0;
        if (pp__sandbox_view(&sb, (pp_view)pp__view_parse(views[v]), err, sizeof err)) {
            cr_log_warn("as a normal user: %s view skipped: %s", views[v], err);
            continue;
        }
        u.view = views[v];
        for (size_t i = 0; i < sizeof honest / sizeof *honest; i++) each_lab_of(honest[i], honest_as_user, &u);
    }
    test_rm_tree(dir);
}
