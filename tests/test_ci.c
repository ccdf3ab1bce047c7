/* test_ci.c: the CI templates of docs/ci/ as their platforms run them. tests/tools/git_server.py is the forge: it
 * serves bare repositories over git's smart HTTP on the loopback and answers 401 to a request that lacks the token
 * granted to its repository. tests/tools/ci_run.py is the platform: it reads a workflow (GitHub Actions) or a
 * .gitlab-ci.yml (GitLab CI) from its repository on that forge and runs one job as the platform does (its
 * emulation, and what it refuses, are in its own header). The repositories come from the recipes of the
 * instructor's guide (the fenced block after each "<!-- ci-recipe: NAME -->" line of docs/instructor.md), run as an
 * instructor runs them, in a copy of this tree as the kit's private repository
 * holds it: the starter repository from `make handout`; three students cloned from it (alice: the reference
 * solutions' lab files; bob: the stubs; carol: alice's files, gpipe.c replaced by a link); the grading
 * repository with docs/ci/hidden-sample.cfg and a roster naming the three and one that does not exist. Per
 * platform: a missing setting stops the hidden grading at its first step, naming it, before anything is fetched;
 * a wrong kit token stops it at the kit's fetch, with the forge's 401 in the log and nothing graded; with the
 * right tokens it grades alice at full marks and bob at 0 on the hidden configuration, leaves carol's link out,
 * names the missing repository in one line and fails at its end; a push does not start it (GitLab); no token
 * reaches a log, a report or a file of the job's; and each student's own workflow grades their repository on the
 * public configurations with no secret, failing below full marks. Run by make check-long (about four minutes on
 * two cores: the kit and the handout are built twice per platform). */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

TestSuite(ci, .timeout = 1500);

#define PY "/usr/bin/python3"
/* an instructor's shell: none of this test's environment (a make running the suite hands its own variables down),
 * a home of its own, an identity for git */
#define USER_ENV                                                                                                    \
    "env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME='%s/home' "      \
    "GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=Instructor GIT_AUTHOR_EMAIL=staff@pplab.invalid "                       \
    "GIT_COMMITTER_NAME=Instructor GIT_COMMITTER_EMAIL=staff@pplab.invalid "

static char t[PATH_MAX], root[PATH_MAX], url[64];
static char out[1 << 21], logtext[1 << 20];
static pid_t server = -1;
/* set where a test reaches its end: a test stopped by a failed assertion keeps its folder to look at */
static int passed;
/* the tokens the forge grants: the kit's, the one that reads every student's repository, and each job's own */
static char tok_kit[40], tok_sub[40], tok_grading[40], tok_alice[40], tok_bob[40];

/* Runs the bash command fmt in t, its output into out; returns its exit status. */
static int run(const char *fmt, ...) {
    char body[16384], path[PATH_MAX + 16], cmd[2 * PATH_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "%s/command.sh", t);
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fprintf(f, "%s\n", body);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cd '%s' && bash '%s' 2>&1", t, path);
    return test_capture(cmd, out, sizeof out);
}

#define SH(...)                                                                                                     \
    do {                                                                                                            \
        int rc_ = run(__VA_ARGS__);                                                                                 \
        cr_assert_eq(rc_, 0, "a setup command failed (%d), in %s:\n%.4000s", rc_, t, out);                         \
    } while (0)

static void slurp(const char *path, char *buf, size_t len) {
    FILE *f = fopen(path, "r");
    buf[0] = 0;
    if (!f) return;
    buf[fread(buf, 1, len - 1, f)] = 0;
    fclose(f);
}

static void random_token(char *tok, size_t len, const char *what) {
    unsigned char b[12];
    FILE *f = fopen("/dev/urandom", "r");
    cr_assert(f && fread(b, 1, sizeof b, f) == sizeof b, "cannot read /dev/urandom");
    fclose(f);
    int n = snprintf(tok, len, "%s-", what);
    for (size_t i = 0; i < sizeof b; i++) n += snprintf(tok + n, len - (size_t)n, "%02x", b[i]);
}

/* The recipe NAME of the instructor's guide, run in the kit's copy as an instructor runs it there. */
static void recipe(const char *name) {
    int rc = run("awk -v m='<!-- ci-recipe: %s -->' '$0 == m { f = 1; next } f && /^```/ { if (b) exit; b = 1; "
                 "next } f && b' '%s/docs/instructor.md' > 'recipe-%s.sh' && test -s 'recipe-%s.sh'",
                 name, root, name, name);
    cr_assert_eq(rc, 0, "no recipe %s: docs/instructor.md has no '<!-- ci-recipe: %s -->' line followed by a fenced "
                 "block", name, name);
    rc = run("cd pplab && " USER_ENV "bash -e '%s/recipe-%s.sh'", t, t, name);
    cr_assert_eq(rc, 0, "the guide's recipe %s failed (%d):\n%.4000s", name, rc, out);
}

static void commit_bare(const char *dir, const char *bare, const char *message) {
    SH(USER_ENV "sh -c 'cd \"%s\" && git add -A && git commit -q -m \"%s\"' && git clone -q --bare '%s' "
       "'srv/%s.git'", t, dir, message, dir, bare);
}

/* Starts the forge on t/srv with the grants of fmt (--grant PREFIX=TOKEN ...); url is then its address. */
static void start_forge(const char *fmt, ...) {
    char grants[2048], path[PATH_MAX + 16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(grants, sizeof grants, fmt, ap);
    va_end(ap);
    SH("setsid " PY " '%s/tests/tools/git_server.py' --root srv %s --port-file port --log forge.log > forge.out 2>&1 "
       "< /dev/null & echo $! > forge.pid", root, grants);
    snprintf(path, sizeof path, "%s/forge.pid", t);
    slurp(path, out, sizeof out);
    server = (pid_t)atoi(out);
    snprintf(path, sizeof path, "%s/port", t);
    for (int i = 0; i < 200 && access(path, R_OK) != 0; i++) usleep(50000);
    slurp(path, out, sizeof out);
    cr_assert_gt(atoi(out), 0, "the forge did not start: see %s/forge.out", t);
    snprintf(url, sizeof url, "http://127.0.0.1:%d", atoi(out));
}

/* The world of one platform's test: the kit, the starter, three students and the grading repository, on a forge
 * of their own. */
static void world(const char *platform) {
    if (system(PY " -c 'import yaml' 2>/dev/null") != 0)
        test_skip("needs python3 and PyYAML (python3-yaml, in scripts/deps.sh's list)");
    if (system("command -v git >/dev/null") != 0) test_skip("needs git (in scripts/deps.sh's list)");
    cr_assert(getcwd(root, sizeof root), "cannot read the working folder");
    snprintf(t, sizeof t, "/tmp/pplab-ci-XXXXXX");
    cr_assert(mkdtemp(t), "cannot make a scratch folder");
    random_token(tok_kit, sizeof tok_kit, "kit");
    random_token(tok_sub, sizeof tok_sub, "submissions");
    random_token(tok_grading, sizeof tok_grading, "grading-job");
    random_token(tok_alice, sizeof tok_alice, "alice-job");
    random_token(tok_bob, sizeof tok_bob, "bob-job");
    SH("mkdir -p home srv/school srv/students srv/staff pplab");

    /* the kit's private repository: this tree's files as git would commit them (build outputs left out) */
    SH("(cd '%s' && git ls-files -z --cached --others --exclude-standard) | (cd '%s' && while IFS= read -r -d '' f; "
       "do if [ -e \"$f\" ] || [ -L \"$f\" ]; then printf '%%s\\0' \"$f\"; fi; done) | (cd '%s' && xargs -0 cp -P "
       "--parents -t '%s/pplab')", root, root, root, t);
    SH("cd pplab && " USER_ENV "git init -q -b main", t);
    commit_bare("pplab", "school/pplab-kit", "the kit");

    /* the starter repository, then the students: clones of it */
    char step[64];
    recipe("starter");
    snprintf(step, sizeof step, "starter-%s", platform);
    recipe(step);
    SH("test -x pplab/build/pplab && pplab/build/pplab info --lab-files > lab-files && test -s lab-files");
    SH("for s in alice bob carol; do git clone -q starter/pplab \"$s\"; done && "
       "while read -r f; do cp \"pplab/solutions/$f\" \"alice/labs/$f\"; cp \"pplab/solutions/$f\" \"carol/labs/$f\"; "
       "done < lab-files && rm carol/labs/02-gpipe/gpipe.c && "
       "ln -s ../../../pplab-grading/hidden.cfg carol/labs/02-gpipe/gpipe.c");
    commit_bare("alice", "students/alice-pplab", "my labs");
    commit_bare("carol", "students/carol-pplab", "my labs, gpipe.c from elsewhere");
    SH("git clone -q --bare bob srv/students/bob-pplab.git");

    /* the grading repository, its roster made the test's */
    recipe("grading");
    snprintf(step, sizeof step, "grading-%s", platform);
    recipe(step);
    SH("printf '%%s\\n' '# the class' students/alice-pplab 'students/bob-pplab     # the stubs' "
       "students/carol-pplab '' 'students/nobody-pplab  # no such repository' > pplab-grading/roster.txt");
    commit_bare("pplab-grading", "staff/pplab-grading", "the class");

    /* the forge: each repository readable with its own tokens only */
    start_forge("--grant school/pplab-kit=%s --grant students/=%s --grant students/alice-pplab=%s "
                "--grant students/bob-pplab=%s --grant staff/pplab-grading=%s",
                tok_kit, tok_sub, tok_alice, tok_bob, tok_grading);

    /* the forge refuses a request without the token, and serves one with it */
    cr_assert_neq(run(USER_ENV "GIT_TERMINAL_PROMPT=0 git ls-remote '%s/students/alice-pplab'", t, url), 0,
                  "the forge served a repository without a token:\n%s", out);
    cr_assert_eq(run(USER_ENV "git -c http.extraHeader=\"Authorization: Basic $(printf 'x:%s' | base64 -w0)\" "
                     "ls-remote '%s/students/alice-pplab'", t, tok_sub, url), 0,
                 "the forge refused the token granted to it:\n%s", out);
    SH("grep -q 'GET /students/alice-pplab/info/refs 401' forge.log");
}

static void cleanup(void) {
    if (server > 0) kill(server, SIGTERM);
    server = -1;
    if (passed && t[0]) test_rm_tree(t);
    else if (t[0]) fprintf(stderr, "test_ci: kept %s to look at\n", t);
}

/* Where the forge's log stood when the last job started: what the forge answered that job comes after it. */
static long forge_at;

static long forge_size(void) {
    char path[PATH_MAX + 16];
    struct stat st;
    snprintf(path, sizeof path, "%s/forge.log", t);
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* Whether the forge's answers to the last job (into out) hold needle. */
static int forge_log_has(const char *needle) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/forge.log", t);
    slurp(path, out, sizeof out);
    long at = forge_at < (long)strlen(out) ? forge_at : (long)strlen(out);
    memmove(out, out + at, strlen(out + at) + 1);
    return strstr(out, needle) != NULL;
}

/* Runs one job with tests/tools/ci_run.py (ARGS after the platform's name), in the work folder t/NAME, its log
 * t/NAME.log into logtext; returns the runner's exit status. */
static int ci(const char *name, const char *fmt, ...) {
    char args[4096], cmd[8192], path[PATH_MAX + 32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && " PY " tests/tools/ci_run.py %s --work '%s/%s' > '%s/%s.log' 2>&1", root,
             args, t, name, t, name);
    forge_at = forge_size();
    int st = system(cmd);
    snprintf(path, sizeof path, "%s/%s.log", t, name);
    slurp(path, logtext, sizeof logtext);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The lines of text holding both a and b. */
static int lines_with(const char *text, const char *a, const char *b) {
    int n = 0;
    for (const char *l = text; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
        n += strstr(line, a) && (!b || strstr(line, b));
        l = e ? e + 1 : NULL;
    }
    return n;
}

static cJSON *report(const char *rel) {
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", t, rel);
    slurp(path, out, sizeof out);
    cJSON *r = cJSON_Parse(out);
    cr_assert(r, "%s is missing or does not parse: %.300s", path, out);
    return r;
}

static double num(const cJSON *o, const char *key) { return cJSON_GetNumberValue(cJSON_GetObjectItem(o, key)); }

/* A report of the hidden grading: the score (and max), and what the hidden configuration put in it. */
static void read_hidden(const char *rel, double *score, double *max, int *hidden, int *drawn) {
    cJSON *r = report(rel);
    *score = num(r, "score"), *max = num(r, "max_score"), *hidden = 0, *drawn = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(r, "tests")) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(x, "name"));
        *hidden += name && !strncmp(name, "hidden: ", 8);
        *drawn += cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(x, "config"), "drawn_cases"));
    }
    cJSON_Delete(r);
}

/* carol's report: every gpipe test at 0 naming the missing file, the labs she has at full marks */
static void expect_carol(const char *rel) {
    cJSON *r = report(rel);
    int gpipe = 0, naive = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(r, "tests")) {
        const char *lab = cJSON_GetStringValue(cJSON_GetObjectItem(x, "lab"));
        const char *err = cJSON_GetStringValue(cJSON_GetObjectItem(x, "error"));
        if (lab && !strcmp(lab, "gpipe")) {
            gpipe++;
            cr_expect_eq(num(x, "score"), 0, "carol's linked gpipe.c scored");
            cr_expect(err && strstr(err, "02-gpipe/gpipe.c is missing"), "the gpipe test does not name the file: %s",
                      err);
        }
        if (lab && !strcmp(lab, "naive")) {
            naive++;
            cr_expect_eq(num(x, "score"), num(x, "max_score"), "carol's naive.c lost points");
        }
    }
    cr_expect(gpipe > 0 && naive > 0, "carol's report lacks the gpipe or the naive tests");
    cJSON_Delete(r);
}

/* No token, nor the Basic credentials made of it, in the job's files or its log. */
static void expect_no_token(const char *name) {
    const char *toks[] = {tok_kit, tok_sub, tok_grading, tok_alice, tok_bob};
    for (int i = 0; i < 5; i++) {
        int rc = run("grep -rlF -e '%s' -e \"$(printf 'x-access-token:%%s' '%s' | base64 -w0)\" "
                     "-e \"$(printf 'oauth2:%%s' '%s' | base64 -w0)\" -e \"$(printf 'gitlab-ci-token:%%s' '%s' | "
                     "base64 -w0)\" '%s' '%s.log'",
                     toks[i], toks[i], toks[i], toks[i], name, name);
        cr_expect_eq(rc, 1, "%s: the token %s (or its credentials) is in: %s", name, toks[i], out);
    }
}

/* What the hidden grading gave, wherever the platform keeps the reports (dir, relative to t). */
static void expect_graded_class(const char *name, const char *dir) {
    char rel[PATH_MAX];
    double score, max;
    int hidden, drawn;
    snprintf(rel, sizeof rel, "%s/students+alice-pplab.json", dir);
    read_hidden(rel, &score, &max, &hidden, &drawn);
    cr_expect(max > 0 && score == max, "%s: alice (the reference solutions) got %g of %g", name, score, max);
    cr_expect(hidden > 0, "%s: alice's report has no test of hidden.cfg", name);
    cr_expect(drawn > 0, "%s: no warm-up case was drawn from hidden.cfg's seed", name);
    snprintf(rel, sizeof rel, "%s/students+bob-pplab.json", dir);
    read_hidden(rel, &score, &max, &hidden, &drawn);
    cr_expect(max > 0 && score == 0, "%s: bob (the stubs) got %g of %g", name, score, max);
    cr_expect(hidden > 0, "%s: bob's report has no test of hidden.cfg", name);
    snprintf(rel, sizeof rel, "%s/students+carol-pplab.json", dir);
    expect_carol(rel);
    cr_expect_eq(lines_with(logtext, "pplab: students/carol-pplab: fetched", "labs/02-gpipe/gpipe.c is not a plain file"), 1,
                 "%s: carol's link is not named once:\n%s", name, logtext);
    snprintf(rel, sizeof rel, "%s/%s/students+nobody-pplab.json", t, dir);
    cr_expect(access(rel, F_OK) != 0, "%s: a report for a repository that does not exist", name);

    /* the missing repository: one line when it is fetched, a verdict naming it at the end */
    cr_expect_eq(lines_with(logtext, "students/nobody-pplab", "could not fetch it"), 1,
                 "%s: the missing repository is not named in one line:\n%s", name, logtext);
    cr_expect(strstr(logtext, "pplab: 1 of 4 students could not be graded"), "%s: no verdict:\n%s", name, logtext);
    cr_expect(forge_log_has("GET /students/nobody-pplab.git/info/refs 404"), "%s: the forge was not asked for it",
              name);
    /* every request carried its token from the first: a 401 would be a refused token, or credentials that git
     * sends only when asked (a user:token@ URL, a credential helper) */
    cr_expect(!forge_log_has(" 401 "), "%s: the forge refused a request:\n%s", name, out);

    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s/summary.md", t, dir);
    slurp(path, out, sizeof out);
    cr_expect(strstr(out, "| students/alice-pplab |") && strstr(out, "| full marks |") &&
                  strstr(out, "| students/bob-pplab |") && strstr(out, "| students/nobody-pplab | - | - | not fetched"),
              "%s: the summary table is not the class's:\n%s", name, out);
    snprintf(path, sizeof path, "%s/%s/students+alice-pplab.junit.xml", t, dir);
    slurp(path, out, sizeof out);
    cr_expect(strstr(out, "classname=\"students/alice-pplab.gpipe\""), "%s: alice's JUnit classnames do not name her",
              name);
    expect_no_token(name);
}

Test(ci, github_actions, .fini = cleanup) {
    world("github");
    char hidden[1024];
    snprintf(hidden, sizeof hidden, "github --server %s --repository staff/pplab-grading --workflow "
             ".github/workflows/grade.yml --job grade --event workflow_dispatch --token %s", url, tok_grading);

    /* settings left out: the first step names each, and nothing is fetched */
    int rc = ci("gh-unset", "%s --secret PPLAB_KIT_TOKEN=%s", hidden, tok_kit);
    cr_expect_eq(rc, 1, "a run without its settings did not fail (%d):\n%s", rc, logtext);
    cr_expect_eq(lines_with(logtext, "the secret PPLAB_SUBMISSIONS_TOKEN is not set",
                            "Settings > Secrets and variables > Actions"), 1, "%s", logtext);
    cr_expect_eq(lines_with(logtext, "the variable PPLAB_KIT_REPO is not set", "Settings"), 1, "%s", logtext);
    cr_expect(!strstr(logtext, "PPLAB_KIT_TOKEN is not set"), "a secret that is set was named:\n%s", logtext);
    cr_expect(!forge_log_has("school/"), "the kit was fetched without the settings:\n%s", out);

    /* a wrong kit token: the kit's fetch stops on the forge's 401, nothing is built or graded */
    rc = ci("gh-badtoken", "%s --secret PPLAB_KIT_TOKEN=wrong-%s --secret PPLAB_SUBMISSIONS_TOKEN=%s "
            "--var PPLAB_KIT_REPO=school/pplab-kit", hidden, tok_kit, tok_sub);
    cr_expect_eq(rc, 1, "a wrong kit token did not fail the job (%d):\n%s", rc, logtext);
    cr_expect(strstr(logtext, "HTTP 401") && strstr(logtext, "Bad credentials"), "no 401 in the log:\n%s", logtext);
    cr_expect(forge_log_has("GET /api/v3/repos/school/pplab-kit 401"), "the forge did not refuse it:\n%s", out);
    cr_expect_eq(run("test ! -e gh-badtoken/workspace/kit/build && test ! -e gh-badtoken/workspace/reports && "
                     "test -z \"$(ls -A gh-badtoken/artifacts)\""), 0, "something was built, graded or kept");

    /* the hidden grading */
    rc = ci("gh-hidden", "%s --secret PPLAB_KIT_TOKEN=%s --secret PPLAB_SUBMISSIONS_TOKEN=%s "
            "--var PPLAB_KIT_REPO=school/pplab-kit", hidden, tok_kit, tok_sub);
    cr_expect_eq(rc, 1, "the job did not fail for the missing repository (%d):\n%s", rc, logtext);
    expect_graded_class("gh-hidden", "gh-hidden/artifacts/pplab-hidden-reports");
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/gh-hidden/summary.md", t);
    slurp(path, out, sizeof out);
    cr_expect(strstr(out, "| students/alice-pplab |"), "the job summary has no table:\n%s", out);

    /* the students' workflow: no secret (a read of one is refused), the public configurations, fails below full
     * marks */
    rc = ci("gh-alice", "github --server %s --repository students/alice-pplab --workflow .github/workflows/pplab.yml "
            "--job grade --event push --token %s --forbid-secrets", url, tok_alice);
    cr_expect_eq(rc, 0, "alice's own workflow failed (%d):\n%s", rc, logtext);
    double score, max;
    int hid, drawn;
    read_hidden("gh-alice/artifacts/pplab-reports/pplab.json", &score, &max, &hid, &drawn);
    cr_expect(max > 0 && score == max && hid == 0 && drawn == 0, "alice's own grading: %g of %g, %d hidden tests, "
              "%d drawn", score, max, hid, drawn);
    snprintf(path, sizeof path, "%s/gh-alice/summary.md", t);
    slurp(path, out, sizeof out);
    cr_expect(strstr(out, "Score by lab:") && strstr(out, "FULL MARKS"), "alice's job summary:\n%s", out);
    expect_no_token("gh-alice");
    rc = ci("gh-bob", "github --server %s --repository students/bob-pplab --workflow .github/workflows/pplab.yml "
            "--job grade --event push --token %s --forbid-secrets", url, tok_bob);
    cr_expect_eq(rc, 1, "bob's stubs passed his own workflow (%d):\n%s", rc, logtext);
    read_hidden("gh-bob/artifacts/pplab-reports/pplab.json", &score, &max, &hid, &drawn);
    cr_expect(max > 0 && score == 0, "bob's own grading: %g of %g", score, max);
    passed = 1;
}

Test(ci, gitlab_ci, .fini = cleanup) {
    world("gitlab");
    char hidden[1024];
    snprintf(hidden, sizeof hidden, "gitlab --server %s --project staff/pplab-grading --job grade-hidden "
             "--job-token %s", url, tok_grading);

    /* a push does not start the hidden grading */
    int rc = ci("gl-push", "%s --source push --var PPLAB_KIT_TOKEN=%s --var PPLAB_KIT_PROJECT=school/pplab-kit "
                "--var PPLAB_SUBMISSIONS_TOKEN=%s", hidden, tok_kit, tok_sub);
    cr_expect_eq(rc, 4, "a push pipeline holds the hidden grading (%d):\n%s", rc, logtext);

    /* settings left out */
    rc = ci("gl-unset", "%s --source web --var PPLAB_KIT_PROJECT=school/pplab-kit", hidden);
    cr_expect_eq(rc, 1, "a run without its variables did not fail (%d):\n%s", rc, logtext);
    cr_expect_eq(lines_with(logtext, "the variable PPLAB_KIT_TOKEN is not set", "Settings > CI/CD > Variables"), 1,
                 "%s", logtext);
    cr_expect_eq(lines_with(logtext, "the variable PPLAB_SUBMISSIONS_TOKEN is not set", "Settings"), 1, "%s",
                 logtext);
    cr_expect(!strstr(logtext, "PPLAB_KIT_PROJECT is not set"), "a variable that is set was named:\n%s", logtext);
    cr_expect(!forge_log_has("school/"), "the kit was fetched without the variables:\n%s", out);

    /* a wrong kit token */
    rc = ci("gl-badtoken", "%s --source web --var PPLAB_KIT_TOKEN=wrong-%s --var PPLAB_KIT_PROJECT=school/pplab-kit "
            "--var PPLAB_SUBMISSIONS_TOKEN=%s", hidden, tok_kit, tok_sub);
    cr_expect_eq(rc, 1, "a wrong kit token did not fail the job (%d):\n%s", rc, logtext);
    cr_expect_eq(lines_with(logtext, "pplab: could not fetch the kit", "PPLAB_KIT_TOKEN"), 1, "%s", logtext);
    cr_expect(forge_log_has("GET /school/pplab-kit.git/info/refs 401"), "the forge did not refuse it:\n%s", out);
    cr_expect_eq(run("test ! -e gl-badtoken/builds/staff/pplab-grading/kit/build && "
                     "test ! -e gl-badtoken/builds/staff/pplab-grading/reports && test -z \"$(ls -A gl-badtoken/artifacts)\""),
                 0, "something was built, graded or kept");

    /* the hidden grading */
    rc = ci("gl-hidden", "%s --source web --var PPLAB_KIT_TOKEN=%s --var PPLAB_KIT_PROJECT=school/pplab-kit "
            "--var PPLAB_SUBMISSIONS_TOKEN=%s", hidden, tok_kit, tok_sub);
    cr_expect_eq(rc, 1, "the job did not fail for the missing repository (%d):\n%s", rc, logtext);
    expect_graded_class("gl-hidden", "gl-hidden/artifacts/reports");
    cr_expect_eq(run("ls gl-hidden/junit/reports/*.junit.xml | wc -l"), 0);
    cr_expect_eq(atoi(out), 3, "GitLab did not read the three JUnit reports:\n%s", out);

    /* the students' pipeline */
    rc = ci("gl-alice", "gitlab --server %s --project students/alice-pplab --job grade --source push --job-token %s",
            url, tok_alice);
    cr_expect_eq(rc, 0, "alice's own pipeline failed (%d):\n%s", rc, logtext);
    double score, max;
    int hid, drawn;
    read_hidden("gl-alice/artifacts/pplab.json", &score, &max, &hid, &drawn);
    cr_expect(max > 0 && score == max && hid == 0, "alice's own grading: %g of %g, %d hidden tests", score, max, hid);
    cr_expect_eq(run("test -s gl-alice/junit/pplab-junit.xml"), 0, "GitLab did not read alice's JUnit report");
    expect_no_token("gl-alice");
    rc = ci("gl-bob", "gitlab --server %s --project students/bob-pplab --job grade --source push --job-token %s", url,
            tok_bob);
    cr_expect_eq(rc, 1, "bob's stubs passed his own pipeline (%d):\n%s", rc, logtext);
    read_hidden("gl-bob/artifacts/pplab.json", &score, &max, &hid, &drawn);
    cr_expect(max > 0 && score == 0, "bob's own grading: %g of %g", score, max);
    passed = 1;
}

/* The runner stands for a platform only as far as it emulates it: what it does not know stops it, naming it, and
 * the shells behave as the platforms' do (GitHub's unspecified shell has no pipefail; `shell: bash` and GitLab's
 * have it). */
Test(ci, the_runner_refuses_what_it_does_not_emulate, .fini = cleanup) {
    if (system(PY " -c 'import yaml' 2>/dev/null") != 0) test_skip("needs python3 and PyYAML (python3-yaml)");
    cr_assert(getcwd(root, sizeof root), "cannot read the working folder");
    snprintf(t, sizeof t, "/tmp/pplab-ci-XXXXXX");
    cr_assert(mkdtemp(t), "cannot make a scratch folder");
    random_token(tok_grading, sizeof tok_grading, "probe-job");
    SH("mkdir -p home srv/staff probe/.github/workflows probe-bad && for d in probe probe-bad; do (cd $d && "
       USER_ENV "git init -q -b main); done", t);
    const char *files[][2] = {
        {"probe/.github/workflows/expr.yml", "on: push\njobs:\n  j:\n    runs-on: ubuntu-24.04\n    steps:\n"
                                             "      - run: echo ${{ github.actor }}\n"},
        {"probe/.github/workflows/key.yml", "on: push\njobs:\n  j:\n    runs-on: ubuntu-24.04\n    steps:\n"
                                            "      - run: 'true'\n        retries: 3\n"},
        {"probe/.github/workflows/action.yml", "on: push\njobs:\n  j:\n    runs-on: ubuntu-24.04\n    steps:\n"
                                               "      - uses: actions/cache@v4\n"},
        {"probe/.github/workflows/pipe.yml", "on: push\njobs:\n  plain:\n    runs-on: ubuntu-24.04\n    steps:\n"
                                             "      - run: false | true\n  bash:\n    runs-on: ubuntu-24.04\n"
                                             "    steps:\n      - run: false | true\n        shell: bash\n"},
        {"probe/.github/workflows/secret.yml", "on: push\njobs:\n  j:\n    runs-on: ubuntu-24.04\n    steps:\n"
                                               "      - run: test -n \"$X\"\n        env:\n"
                                               "          X: ${{ secrets.X }}\n"},
        {"probe/.gitlab-ci.yml", "default:\n  image: debian:bookworm\nok:\n  script:\n    - 'true'\npipe:\n"
                                 "  script:\n    - false | true\n"},
        {"probe-bad/.gitlab-ci.yml", "default:\n  image: debian:bookworm\ncached:\n  cache:\n    paths: [x]\n"
                                     "  script:\n    - 'true'\n"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", t, files[i][0]);
        FILE *f = fopen(path, "w");
        cr_assert(f, "cannot write %s", path);
        fputs(files[i][1], f);
        fclose(f);
    }
    commit_bare("probe", "staff/probe", "probes");
    commit_bare("probe-bad", "staff/probe-bad", "a probe");
    start_forge("--grant staff/=%s", tok_grading);

    struct {
        const char *name, *args, *said;
        int rc;
    } cases[] = {
        {"expr", "github --repository staff/probe --event push --workflow .github/workflows/expr.yml --job j",
         "the expression ${{ github.actor }} is not emulated", 2},
        {"key", "github --repository staff/probe --event push --workflow .github/workflows/key.yml --job j",
         "the key 'retries' is not emulated", 2},
        {"action", "github --repository staff/probe --event push --workflow .github/workflows/action.yml --job j",
         "uses 'actions/cache@v4': not emulated", 2},
        {"event", "github --repository staff/probe --event schedule --workflow .github/workflows/key.yml --job j",
         "the workflow does not run on schedule", 2},
        {"secret", "github --repository staff/probe --event push --workflow .github/workflows/secret.yml --job j "
                   "--forbid-secrets", "${{ secrets.X }}: this repository holds no secrets", 2},
        {"plain", "github --repository staff/probe --event push --workflow .github/workflows/pipe.yml --job plain",
         "job plain succeeded", 0},
        {"bash", "github --repository staff/probe --event push --workflow .github/workflows/pipe.yml --job bash",
         "Process completed with exit code 1", 1},
        {"gl-ok", "gitlab --project staff/probe --source push --job ok", "job ok succeeded", 0},
        {"gl-pipe", "gitlab --project staff/probe --source push --job pipe", "Job failed: exit code 1", 1},
        {"gl-cache", "gitlab --project staff/probe-bad --source push --job cached", "the key 'cache' is not emulated",
         2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int gl = !strncmp(cases[i].args, "gitlab", 6);
        int rc = ci(cases[i].name, "%s --server %s %s %s", cases[i].args, url, gl ? "--job-token" : "--token",
                    tok_grading);
        cr_expect_eq(rc, cases[i].rc, "%s: exit %d, expected %d:\n%s", cases[i].name, rc, cases[i].rc, logtext);
        cr_expect(strstr(logtext, cases[i].said), "%s: the log does not say '%s':\n%s", cases[i].name, cases[i].said,
                  logtext);
    }
    /* and the forge: nothing without a token, nor with another's */
    cr_expect_neq(run(USER_ENV "GIT_TERMINAL_PROMPT=0 git ls-remote '%s/staff/probe'", t, url), 0,
                  "the forge served a repository without a token:\n%s", out);
    cr_expect_neq(run(USER_ENV "GIT_TERMINAL_PROMPT=0 git -c http.extraHeader=\"Authorization: Basic "
                      "$(printf 'x:wrong-%s' | base64 -w0)\" ls-remote '%s/staff/probe'", t, tok_grading, url), 0,
                  "the forge served a repository for a wrong token:\n%s", out);
    cr_expect(forge_log_has("GET /staff/probe/info/refs 401 (no credentials") &&
                  strstr(out, "GET /staff/probe/info/refs 401 (a token, not granted)"),
              "the forge's log does not show the two 401s:\n%s", out);
    passed = 1;
}
