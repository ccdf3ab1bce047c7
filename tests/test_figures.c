/* test_figures.c: `pplab figures` end to end: every figure is written as .dat/.gp/.png/.svg, the PNGs are real
 * images, and the data say what the figures claim: measured bubbles sit on the theory curves, the pipeline's
 * loss curve equals the full-batch reference's and falls. `pplab figures --lab X`: the reference solutions' runs
 * drawn beside the canonical order (real PNGs, both sides in the data), the stubs' one line and no figure, a bad
 * lab's one line. Skips where gnuplot is missing. */
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

/* Reads gnuplot index block `index` of FOLDER/NAME.dat (blocks separated by two blank lines) into x, y. */
static int read_block_in(const char *folder, const char *name, int index, double *x, double *y, int max) {
    char path[PATH_MAX], line[256];
    snprintf(path, sizeof path, "%s/%s.dat", folder, name);
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

static int read_block(const char *name, int index, double *x, double *y, int max) {
    return read_block_in(dir, name, index, x, y, max);
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

/* ---- pplab figures --lab ---------------------------------------------------------------------------------- */

static char labdir[] = "/tmp/pplab-figlab-XXXXXX";

static void lab_setup(void) {
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) test_skip("gnuplot is not installed: no figures to test");
    cr_assert(mkdtemp(labdir));
}

static void lab_teardown(void) {
    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", labdir);
    if (system(cmd)) {}
}

/* Runs `pplab figures ARGS LABDIR`, its stdout and stderr into LABDIR/log; returns its exit status. */
static int figures_lab(const char *args) {
    char exe[PATH_MAX], cmd[3 * PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    *strrchr(exe, '/') = 0;
    *strrchr(exe, '/') = 0;
    snprintf(cmd, sizeof cmd, "'%s/pplab' figures %s --width 32 '%s' > '%s/log' 2>&1", exe, args, labdir, labdir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* LABDIR/log's lines (the last one into last, when given). */
static int log_lines(char *last, size_t len) {
    char path[PATH_MAX], line[1024];
    snprintf(path, sizeof path, "%s/log", labdir);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (last) snprintf(last, len, "%s", line);
        n++;
    }
    fclose(f);
    return n;
}

/* LABDIR/NAME.png is a PNG: its signature, then an IHDR chunk whose width and height are a real figure's. */
static void expect_png(const char *name) {
    char path[PATH_MAX];
    unsigned char h[24] = {0};
    snprintf(path, sizeof path, "%s/%s.png", labdir, name);
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s missing", path);
    size_t got = fread(h, 1, sizeof h, f);
    fclose(f);
    cr_assert_eq(got, sizeof h, "%s is shorter than a PNG's header", path);
    cr_expect(!memcmp(h, "\x89PNG\r\n\x1a\n", 8), "%s has no PNG signature", path);
    cr_expect(!memcmp(h + 12, "IHDR", 4), "%s does not start with an IHDR chunk", path);
    unsigned w = (unsigned)h[16] << 24 | h[17] << 16 | h[18] << 8 | h[19];
    unsigned ht = (unsigned)h[20] << 24 | h[21] << 16 | h[22] << 8 | h[23];
    cr_expect(w >= 400 && w <= 4000 && ht >= 300 && ht <= 4000, "%s is %ux%u", path, w, ht);
}

/* How many PNGs LABDIR holds. */
static int pngs(void) {
    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "exit $(ls '%s' | grep -c '[.]png$')", labdir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The compute cells (F, B, I, W, R: column 7) of shard 0's lanes (a world rank, column 11, below the first other
 * shard's, which the block's header names) in block `index` of LABDIR/NAME.dat. */
static int compute_cells(const char *name, int index) {
    char path[PATH_MAX], line[512];
    snprintf(path, sizeof path, "%s/%s.dat", labdir, name);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s missing", path);
    int block = 0, blanks = 0, n = 0, started = 0, first_shard = 1 << 30;
    while (fgets(line, sizeof line, f)) {
        int lane, rank;
        if (line[0] == '#') {
            /* "#   lane 3: GPU 0, shard 1 (compute, world rank 2)" */
            char *s = strstr(line, ", shard 1 ("), *w = strstr(line, "world rank ");
            if (block == index && s && w && atoi(w + 11) < first_shard) first_shard = atoi(w + 11);
            continue;
        }
        if (line[0] == '\n') {
            if (started && ++blanks == 2) block++, blanks = 0;
            continue;
        }
        blanks = 0, started = 1;
        char letter[8];
        if (block != index || sscanf(line, "%d %*s %*s %*s %*s %*s %7s", &lane, letter) != 2 || lane < 0) continue;
        /* column 11: skip the quoted label (column 8) by finding its closing quote */
        const char *q = strchr(line, '"');
        q = q ? strchr(q + 1, '"') : NULL;
        if (!q || sscanf(q + 1, "%*s %*s %d", &rank) != 1) continue;
        n += strspn(letter, "FBIWR") == strlen(letter) && rank < first_shard;
    }
    fclose(f);
    return n;
}

/* The lab's figures: every PNG real, the Gantt pair's data holding the run and the canonical order, and the
 * reference solution's measured points on the canonical line (it runs that order). */
static void expect_lab(const char *lab, const char *name, const char *extra) {
    char what[64];
    cr_assert_eq(figures_lab(lab), 0, "pplab figures %s failed (log in %s/log)", lab, labdir);
    const char *figs[] = {"gantt", "bubble-vs-M", "bubble-vs-latency", "peak-stashes", extra};
    for (size_t i = 0; i < sizeof figs / sizeof *figs; i++) {
        if (!figs[i]) continue;
        snprintf(what, sizeof what, "%s-%s", name, figs[i]);
        expect_png(what);
    }
    snprintf(what, sizeof what, "%s-gantt", name);
    double x[512], y[512], cx[512], cy[512];
    /* the pair's two blocks: a row per cell of the run, then of the canonical order; shard 0's compute cells
     * alike in both (the replay prices shard 0's ranks, so the other shards' lanes and the sums are the run's) */
    int nrun = compute_cells(what, 0), ncanon = compute_cells(what, 1);
    cr_expect_gt(nrun, 4, "%s: the run's ops", what);
    cr_expect_eq(nrun, ncanon, "%s: the run has %d compute cells on shard 0, the canonical order %d", what, nrun,
                 ncanon);
    snprintf(what, sizeof what, "%s-bubble-vs-M", name);
    int nc = read_block_in(labdir, what, 0, cx, cy, 512), nm = read_block_in(labdir, what, 1, x, y, 512);
    cr_expect_gt(nm, 1, "%s: measured points", what);
    cr_expect_eq(nc, nm, "%s: a canonical point for every measured one", what);
    for (int i = 0; i < nm && i < nc; i++)
        cr_expect(x[i] == cx[i] && fabs(y[i] - cy[i]) < 1e-6, "%s, M=%g: measured %.6f, canonical %.6f", what, x[i],
                  y[i], cy[i]);
}

Test(figures_lab, solutions_beside_canonical, .init = lab_setup, .fini = lab_teardown, .timeout = 120) {
    expect_lab("--impl solutions --lab 05", "zbh1", NULL);
    expect_lab("--impl solutions --lab dp1f1b", "dp1f1b", "reduce");
    expect_lab("--impl solutions --lab 08", "tpblock", "sums");
}

Test(figures_lab, stub_is_one_line, .init = lab_setup, .fini = lab_teardown, .timeout = 60) {
    char last[1024];
    cr_assert_eq(figures_lab("--impl labs --lab 05"), 3, "an unsolved lab exits 3 (log in %s/log)", labdir);
    cr_expect_eq(log_lines(last, sizeof last), 1, "one line, got: %s", last);
    cr_expect(strstr(last, "lab 05 (zbh1) is not solved yet") && strstr(last, "make plots LAB=05"), "%s", last);
    cr_expect_eq(pngs(), 0, "no figure for an unsolved lab");
    /* the grid lab's stub fails before any op, at its mapping: not solved either */
    cr_assert_eq(figures_lab("--impl labs --lab tpgrid"), 3, "log in %s/log", labdir);
    cr_expect_eq(log_lines(last, sizeof last), 1, "one line, got: %s", last);
    cr_expect(strstr(last, "lab 08 (tpgrid) is not solved yet") && strstr(last, "make plots LAB=tpgrid"), "%s", last);
    cr_expect_eq(pngs(), 0, "no figure for an unsolved lab");
}

Test(figures_lab, bad_lab_is_one_line, .init = lab_setup, .fini = lab_teardown, .timeout = 60) {
    char last[1024];
    cr_assert_eq(figures_lab("--lab 42"), 2);
    cr_expect_eq(log_lines(last, sizeof last), 1, "one line, got: %s", last);
    cr_expect(strstr(last, "--lab 42: no such lab") && strstr(last, "zbh1"), "%s", last);
    cr_expect_eq(pngs(), 0);
}
