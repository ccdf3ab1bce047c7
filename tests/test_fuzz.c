/* test_fuzz.c: every fuzz target of tests/fuzz/, built without libFuzzer (tests/fuzz/replay.c), replays the
 * inputs the tree keeps for it: its seed corpus and every finding once fixed (tests/fuzz/regress/NAME/). A bug
 * fuzzing found stays fixed on every machine make test runs on, clang or not. Tests run from the project root. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* The folder of this test binary: build/tests, where the replay targets are built as fuzz/NAME. */
static void here(char *dir, size_t len) {
    ssize_t n = readlink("/proc/self/exe", dir, len - 1);
    cr_assert(n > 0, "cannot read /proc/self/exe");
    dir[n] = 0;
    *strrchr(dir, '/') = 0;
}

Test(fuzz, every_kept_input_replays_clean, .timeout = 600) {
    char dir[PATH_MAX];
    here(dir, sizeof dir);
    DIR *d = opendir("tests/fuzz");
    cr_assert(d, "tests/fuzz is missing (run from the project root)");
    int targets = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "fuzz_", 5) || n < 3 || strcmp(e->d_name + n - 2, ".c")) continue;
        char name[256], cmd[3 * PATH_MAX], out[8192];
        snprintf(name, sizeof name, "%.*s", (int)(n - 2), e->d_name);
        snprintf(cmd, sizeof cmd, "'%s/fuzz/%s' tests/fuzz/corpus/%s tests/fuzz/regress/%s 2>&1; echo \"exit=$?\"", dir,
                 name, name, name);
        test_capture(cmd, out, sizeof out);
        cr_expect(strstr(out, "exit=0") && strstr(out, "replayed "), "%s failed on a kept input:\n%s", name, out);
        cr_expect(!strstr(out, "replayed 0 inputs"), "%s has no kept input: give it a seed in tests/fuzz/corpus/%s",
                  name, name);
        targets++;
    }
    closedir(d);
    cr_expect_geq(targets, 1, "no fuzz target in tests/fuzz");
}
