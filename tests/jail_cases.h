/* jail_cases.h: what tests/test_jail.c and tests/test_jail_user.c grade in each mode of the jail: the source
 * attacks and what stops each, the honest folders, and a copy of the kit a normal user can grade from. */
#ifndef PP_JAIL_CASES_H
#define PP_JAIL_CASES_H

#include <unistd.h>

#include "impl_build.h"
#include "testutil.h"

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
    {"tests/hostile/gadget-syscall", "the schedule called open(), which a schedule never needs"},
    {"tests/hostile/link-solution", "refused: 02-gpipe/gpipe.c is a symbolic link"},
    {"tests/hostile/define-driver-names", NULL},
    {"tests/valid/uses-libc", NULL},
    {"solutions", NULL},
};

static inline void expect_case(const char *impl, const char *needle, double score, double max, const char *error,
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

/* Copies what grading needs (pplab, its driver, pp.h, the case folders) into a folder a normal user owns, and
 * returns it in dir. */
static inline void kit_copy_for(uid_t uid, char *dir, size_t len) {
    char build[PATH_MAX], cmd[4 * PATH_MAX];
    test_build_dir(build, sizeof build);
    snprintf(dir, len, "/tmp/pplab-user-XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/build' '%s/lib' '%s/tmp' && cp '%s/pplab' '%s/pplab-driver' '%s/build/' && "
             "cp lib/pp.h '%s/lib/' && cp -r --parents tests/hostile tests/valid solutions '%s/' && "
             "chown -R %u:%u '%s'", dir, dir, dir, build, build, dir, dir, dir, (unsigned)uid, (unsigned)uid, dir);
    cr_assert_eq(system(cmd), 0, "cannot copy the kit for a normal user");
}

/* One small configuration of lab l, as a hidden configuration's line. */
static inline void one_line_of(const pp_lab_info *l, char *line, size_t len) {
    if (!strcmp(l->name, "warmup")) snprintf(line, len, "warmup part=bubble\n");
    else if (!strcmp(l->name, "scheduler")) snprintf(line, len, "scheduler P=4 M=8 cap=2 seed=3\n");
    else if (!strcmp(l->name, "naive")) snprintf(line, len, "%s P=2 M=1 seed=3\n", l->name);
    else if (!strcmp(l->name, "interleaved")) snprintf(line, len, "%s P=2 M=4 v=2 seed=3\n", l->name);
    else snprintf(line, len, "%s P=2 M=4 seed=3\n", l->name);
}

/* Calls fn for every lab that implementation folder impl (relative to the project root) holds a file of. */
static inline void each_lab_of(const char *impl, void (*fn)(const char *impl, const pp_lab_info *l, void *ctx), void *ctx) {
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

#endif /* PP_JAIL_CASES_H */
