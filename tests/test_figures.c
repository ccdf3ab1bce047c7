/* test_figures.c: `pplab figures` end to end: every figure is written as .dat/.gp/.png/.svg, the PNGs are real
 * images, and the data say what the figures claim: measured bubbles sit on the theory curves, the pipeline's
 * loss curve equals the full-batch reference's and falls. Skips where gnuplot is missing. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static char dir[] = "/tmp/pplab-figures-XXXXXX";

/* Reads gnuplot index block `index` of NAME.dat (blocks separated by two blank lines) into x, y. */
static int read_block(const char *name, int index, double *x, double *y, int max) {
    char path[PATH_MAX], line[256];
    snprintf(path, sizeof path, "%s/%s.dat", dir, name);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s missing", path);
    int block = 0, blanks = 0, n = 0, started = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        if (line[0] == '\n') {
            if (started && ++blanks == 2) block++, blanks = 0;
            continue;
        }
        blanks = 0, started = 1;
        if (block == index && n < max && sscanf(line, "%lf %lf", &x[n], &y[n]) == 2) n++;
    }
    fclose(f);
    return n;
}

static void setup(void) {
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) test_skip("gnuplot is not installed: no figures to test");
    cr_assert(mkdtemp(dir));
    char exe[PATH_MAX], cmd[2 * PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    *strrchr(exe, '/') = 0;
    *strrchr(exe, '/') = 0;
    snprintf(cmd, sizeof cmd, "'%s/pplab' figures --impl solutions --steps 12 --width 32 '%s' > '%s/log' 2>&1", exe, dir, dir);
    cr_assert_eq(system(cmd), 0, "pplab figures failed (log in %s/log)", dir);
}

static void teardown(void) {
    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {}
}

Test(figures, all_written_and_consistent, .init = setup, .fini = teardown, .timeout = 120) {
    static const char *names[] = {"gantt-gpipe", "gantt-1f1b", "gantt-interleaved", "bubble-vs-M",
                                  "bubble-vs-latency", "peak-stashes", "loss-curve"};
    static const char *exts[] = {"dat", "gp", "png", "svg"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        for (int e = 0; e < 4; e++) {
            char path[PATH_MAX];
            struct stat st;
            snprintf(path, sizeof path, "%s/%s.%s", dir, names[i], exts[e]);
            cr_expect(stat(path, &st) == 0 && st.st_size > 50, "%s missing or empty", path);
            if (e == 2) {
                unsigned char sig[8] = {0};
                FILE *f = fopen(path, "rb");
                if (f) {
                    cr_expect_eq(fread(sig, 1, 8, f), 8);
                    fclose(f);
                }
                cr_expect(!memcmp(sig, "\x89PNG\r\n\x1a\n", 8), "%s is not a PNG", path);
                cr_expect_gt(st.st_size, 5000, "%s is suspiciously small (%ld bytes)", path, (long)st.st_size);
            }
        }
    /* measured bubbles (blocks 2..4: gpipe, 1f1b, interleaved v=2) on the formula, P = 4 */
    double x[64], y[64];
    for (int b = 2; b <= 4; b++) {
        int n = read_block("bubble-vs-M", b, x, y, 64), v = b == 4 ? 2 : 1;
        cr_expect_gt(n, 2, "block %d has measured points", b);
        for (int i = 0; i < n; i++) {
            double want = 3.0 / (v * x[i] + 3);
            cr_expect(fabs(y[i] - want) < 1e-6, "block %d, M=%g: measured %.6f, formula %.6f", b, x[i], y[i], want);
        }
    }
    /* the loss curve: pipeline (block 0) equals the full-batch reference (block 1) and falls */
    double xr[64], yr[64];
    int np = read_block("loss-curve", 0, x, y, 64), nr = read_block("loss-curve", 1, xr, yr, 64);
    cr_assert_eq(np, nr, "both curves have the same steps (%d vs %d)", np, nr);
    cr_assert_gt(np, 5);
    for (int i = 0; i < np; i++)
        cr_expect(fabs(y[i] - yr[i]) <= 1e-4 * fabs(yr[i]), "step %g: pipeline %.6f, reference %.6f", x[i], y[i], yr[i]);
    cr_expect_lt(y[np - 1], 0.8 * y[0], "the loss should fall: %.3f -> %.3f", y[0], y[np - 1]);
}
