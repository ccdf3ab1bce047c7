/* testutil.h: small helpers shared by the Criterion suites: a seeded random generator and array comparisons
 * that report the worst element (index, values, difference, allowance) when a check fails. Every comparison
 * is |got - ref| <= atol + rtol * |ref|; NaN or inf where the reference is finite always fails. With
 * `--verbose` each comparison also logs its worst difference, which is how the suites measure their noise. */
#ifndef PP_TESTUTIL_H
#define PP_TESTUTIL_H

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Skips. A test skips, with the reason, only where this machine lacks what it needs (a package, root, a kernel
 * feature, a machine of check-hosts' or check-slurm's making). The kit's CI (.ci/run) installs all of it, so there
 * a skip would hide a check that never ran: with PPLAB_CI=1 in the environment (.ci/run exports it) test_skip
 * fails the test instead, naming the reason. The one lack CI cannot fix is a GPU: test_skip_no_gpu skips
 * everywhere, for tests whose reason is that no CUDA device can be opened (none here, or a build without the
 * cuda backend, as make asan's). Every skip of the suites goes through one of the two; the first argument of
 * each is a format string literal, as cr_skip_test's. */
static inline int test_in_ci(void) {
    const char *ci = getenv("PPLAB_CI");
    return ci && ci[0] && strcmp(ci, "0");
}

#define test_skip(...)                                                                                             \
    do {                                                                                                           \
        if (test_in_ci()) cr_assert_fail("would skip, which CI (PPLAB_CI=1) does not allow: " __VA_ARGS__);       \
        cr_skip_test(__VA_ARGS__);                                                                                 \
    } while (0)

#define test_skip_no_gpu(...) cr_skip_test(__VA_ARGS__)

/* splitmix64: tiny, seedable, identical on every platform. */
typedef struct tu_rng {
    uint64_t s;
} tu_rng;

static inline uint64_t tu_rng_next(tu_rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static inline double tu_rng_uniform(tu_rng *r, double lo, double hi) {
    return lo + (hi - lo) * (double)(tu_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n). */
static inline int tu_rng_int(tu_rng *r, int n) { return (int)(tu_rng_next(r) % (uint64_t)n); }

static inline void tu_fill_uniform(tu_rng *r, float *x, size_t n, double lo, double hi) {
    for (size_t i = 0; i < n; i++) x[i] = (float)tu_rng_uniform(r, lo, hi);
}

/* What a comparison found: elements over tolerance, the worst one (largest |diff| / allowance), and the
 * largest absolute difference (the measured noise). */
typedef struct tu_cmp {
    size_t bad, worst;
    double got, ref, diff, allowed, max_abs;
} tu_cmp;

static inline tu_cmp tu__compare(const float *gotf, const double *gotd, const float *reff, const double *refd,
                                 size_t n, double atol, double rtol) {
    tu_cmp c = {0, 0, 0, 0, 0, 0, 0};
    double worst_ratio = -1.0;
    for (size_t i = 0; i < n; i++) {
        double g = gotf ? (double)gotf[i] : gotd[i];
        double r = reff ? (double)reff[i] : refd[i];
        double diff = fabs(g - r);
        double allowed = atol + rtol * fabs(r);
        double ratio;
        if (isnan(g) && isnan(r))
            continue;
        else if (!isfinite(diff))
            ratio = INFINITY;
        else
            ratio = allowed > 0 ? diff / allowed : (diff > 0 ? INFINITY : 0.0);
        if (!(diff <= allowed)) c.bad++;
        if (isfinite(diff) && diff > c.max_abs) c.max_abs = diff;
        if (ratio > worst_ratio) {
            worst_ratio = ratio;
            c.worst = i;
            c.got = g;
            c.ref = r;
            c.diff = diff;
            c.allowed = allowed;
        }
    }
    return c;
}

static inline double tu__report(const char *what, tu_cmp c, size_t n, double atol, double rtol) {
    cr_log_info("%s: max |diff| %.3g; worst vs tolerance at [%zu]: got %.9g ref %.9g (|diff| %.3g, allowed %.3g)",
                what, c.max_abs, c.worst, c.got, c.ref, c.diff, c.allowed);
    cr_expect(c.bad == 0,
              "%s: %zu of %zu elements outside |got-ref| <= %g + %g*|ref|; worst at [%zu]: expected %.9g, "
              "got %.9g (|diff| %.3g, allowed %.3g)",
              what, c.bad, n, atol, rtol, c.worst, c.ref, c.got, c.diff, c.allowed);
    return c.max_abs;
}

/* Expects got[i] close to ref[i] for every i (both float); returns the largest |got - ref|. */
static inline double expect_close_arr(const char *what, const float *got, const float *ref, size_t n, double atol,
                                      double rtol) {
    return tu__report(what, tu__compare(got, NULL, ref, NULL, n, atol, rtol), n, atol, rtol);
}

/* Same, against a double-precision reference. */
static inline double expect_close_arr_d(const char *what, const float *got, const double *ref, size_t n,
                                        double atol, double rtol) {
    return tu__report(what, tu__compare(got, NULL, NULL, ref, n, atol, rtol), n, atol, rtol);
}

/* One value. */
static inline double expect_close(const char *what, double got, double ref, double atol, double rtol) {
    return tu__report(what, tu__compare(NULL, &got, NULL, &ref, 1, atol, rtol), 1, atol, rtol);
}

/* Generates the pristine student stubs (solutions/ without their solution blocks) into a fresh temporary
 * folder and writes its path into dir: what "the untouched handout" means in tests, so a student's own labs/
 * never decide a test. Returns 0 or -1. Run from the project root; remove the folder with test_rm_tree(). */
static inline int test_pristine_labs(char *dir, size_t len) {
    char cmd[512];
    snprintf(dir, len, "/tmp/pplab-pristine-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(cmd, sizeof cmd, "bash scripts/mklabs.sh --out '%s' >/dev/null 2>&1", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Builds lab c->lab from implementation folder impl and grades configuration c, as pplab grade does (sandboxed
 * drivers, the supervisor, the grading in this process). Only for suites that link the grader. */
#ifdef PP_GRADE_H
/* pplab run's flags for test configuration t of `schedule`, as a student types them (no --impl): the knobs of its
 * run configuration (pp__test_to_run), each only where t sets it. */
static inline void test_run_flags(const char *schedule, const pp_test_config *t, char *buf, size_t len) {
    int n = snprintf(buf, len, "--schedule %s --stages %d --microbatches %d --chunks %d", schedule, t->P, t->M,
                     t->v > 0 ? t->v : 1);
#define TU_FLAG(cond, ...) \
    if ((cond) && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, __VA_ARGS__)
    TU_FLAG(t->seed, " --seed %u", t->seed);
    TU_FLAG(t->T > 1, " --tp %d", t->T);
    TU_FLAG(t->D > 1, " --dp %d", t->D);
    TU_FLAG(t->node_size > 0, " --node-size %d", t->node_size);
    TU_FLAG(t->placement[0], " --placement %s", t->placement);
    TU_FLAG(t->latency > 0, " --comm-latency %g", t->latency);
    TU_FLAG(t->edge > 0, " --edge-cost %g", t->edge);
    TU_FLAG(t->layers > 0, " --layers %d", t->layers);
    TU_FLAG(t->layout[0], " --layout %s", t->layout);
    TU_FLAG(t->recompute, " --recompute");
#undef TU_FLAG
}
#endif

#ifdef PP_RUNNER_H
#include "host.h"
static inline void test_grade_config(const char *impl, const pp_test_config *c, pp_test_result *out) {
    char dir[PATH_MAX], err[4096];
    cr_assert_eq(pp__impl_dir(impl, dir, sizeof dir), 0, "no implementation folder %s", impl);
    pp_sandbox sb;
    pp__sandbox_defaults(&sb);
    cr_assert_eq(pp__sandbox_probe(&sb, err, sizeof err), 0, "%s", err);
    static pp_impl built;
    pp_status st = pp__impl_build(dir, pp__lab_find(c->lab), &sb, &built, err, sizeof err);
    pp__runner_test(c, st == PP_OK ? &built : NULL, st, err, "cpu", out);
}

/* Compiles tests/hostile/objects/<name>.c with the compiler alone, inline assembly and all, skipping the kit's
 * build and its checks, into an object of build/tests/, and fills impl to run it in the real driver: what a
 * submission that got past every check would hand the driver. flags: more of the compiler's (-D...). */
static inline void test_hostile_object_with(const char *name, const char *flags, pp_impl *impl) {
    char build[PATH_MAX], cmd[4 * PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", build, sizeof build - 1);
    cr_assert(n > 0, "cannot read /proc/self/exe");
    build[n] = 0;
    *strrchr(build, '/') = 0;
    *strrchr(build, '/') = 0;
    memset(impl, 0, sizeof *impl);
    snprintf(impl->object, sizeof impl->object, "%s/tests/hostile-%s.o", build, name);
    snprintf(impl->driver, sizeof impl->driver, "%s/pplab-driver", build);
    snprintf(cmd, sizeof cmd, "gcc -std=gnu11 -O1 -fPIC -w -Itests/hostile/objects -Ilib %s -c "
             "tests/hostile/objects/%s.c -o '%s'", flags, name, impl->object);
    cr_assert_eq(system(cmd), 0, "cannot compile tests/hostile/objects/%s.c (%s)", name, flags);
}
static inline void test_hostile_object(const char *name, pp_impl *impl) { test_hostile_object_with(name, "", impl); }

/* The run failed with status st and an error holding needle, and scored 0 of a max that still counts. */
static inline void test_expect_failed_run(const pp_test_result *r, pp_status st, const char *needle) {
    cr_expect_eq(r->status, st, "%s: status %s, expected %s (error: %s)", r->name, pp__status_name(r->status),
                 pp__status_name(st), r->error);
    cr_expect(strstr(r->error, needle) != NULL, "%s: the error lacks '%s': %s", r->name, needle, r->error);
    cr_expect_eq(r->score, 0, "%s: a failed run scores 0, got %g", r->name, r->score);
    cr_expect_gt(r->max, 0, "%s: max score still counted", r->name);
}
#endif

/* Runs cmd through the shell with its stdout (append 2>&1 for stderr too) into out, NUL-terminated and cut to
 * len; the rest is drained so the command never blocks on a full pipe. Returns its exit status, 128 when it did
 * not exit. */
static inline int test_capture(const char *cmd, char *out, size_t len) {
    FILE *p = popen(cmd, "r");
    cr_assert(p != NULL, "cannot start %s", cmd);
    size_t got = 0, n;
    while (got + 1 < len && (n = fread(out + got, 1, len - 1 - got, p)) > 0) got += n;
    out[got] = 0;
    char drain[4096];
    while (fread(drain, 1, sizeof drain, p) > 0) continue;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The folder of this build's pplab: the test binary's folder's parent (build/tests -> build, build-asan/tests ->
 * build-asan). */
static inline void test_build_dir(char *buf, size_t len) {
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    cr_assert(n > 0, "cannot read /proc/self/exe");
    buf[n] = 0;
    *strrchr(buf, '/') = 0;
    *strrchr(buf, '/') = 0;
}

/* The address of the driver's own request function for a stop (pp__drv_stop), read from this build's driver's
 * symbol table with nm, as "0x..." in addr: what a hostile object that forges the driver's words calls. */
static inline void test_driver_stop_addr(char *addr, size_t len) {
    char build[PATH_MAX], cmd[PATH_MAX + 128];
    test_build_dir(build, sizeof build);
    snprintf(cmd, sizeof cmd, "nm '%s/pplab-driver' | awk '$3 == \"pp__drv_stop\" { print \"0x\" $1 }'", build);
    addr[0] = 0;
    test_capture(cmd, addr, len);
    addr[strcspn(addr, "\n")] = 0;
    cr_assert(addr[0], "no pp__drv_stop in %s/pplab-driver's symbol table", build);
}

/* Removes a temporary folder a test made (and everything in it). */
static inline void test_rm_tree(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

#endif /* PP_TESTUTIL_H */
