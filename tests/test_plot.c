/* test_plot.c: gnuplot figures from hand-made traces and series: every file of each figure is written, the
 * images are real PNGs of non-trivial size, and the .dat rows have the documented columns. Skipped where
 * gnuplot is not installed. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot.h"
#include "schedules.h"
#include "testset.h"
#include "testutil.h"

static char dir[] = "/tmp/pplab-test-plot-XXXXXX";

static void setup(void) {
    if (!pp__plot_available()) test_skip("gnuplot is not on PATH (apt-get install gnuplot)");
    cr_assert(mkdtemp(dir), "cannot make a temporary folder");
}

static void teardown(void) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* GPipe on P ranks, M micro-batches, v = 1: F at r + m, B after the forward phase, costs F = 1, B = 2. */
static void gpipe_traces(pp_trace *t, int P, int M) {
    for (int r = 0; r < P; r++)
        for (int m = 0; m < M; m++) {
            pp_event f = {.rank = r, .op = PP_OP_F, .mb = m, .vstage = r, .peer = -1, .vstart = r + m,
                          .vend = r + m + 1};
            double b0 = (M + P - 1) + 2.0 * (P - 1 - r) + 2.0 * m;
            pp_event b = {.rank = r, .op = PP_OP_B, .mb = m, .vstage = r, .peer = -1, .vstart = b0, .vend = b0 + 2};
            pp_event s = {.rank = r, .op = PP_OP_SEND, .mb = m, .vstage = r, .peer = r + 1, .vstart = r + m + 1,
                          .vend = r + m + 1};
            pp__trace_add(&t[r], &f);
            pp__trace_add(&t[r], &b);
            if (r + 1 < P) pp__trace_add(&t[r], &s); /* messages are not drawn */
        }
}

static char *path_of(const char *base, const char *ext) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s%s", dir, base, ext);
    return buf[k];
}

static long file_size(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static void expect_png(const char *base) {
    const char *p = path_of(base, ".png");
    FILE *f = fopen(p, "rb");
    cr_assert(f, "%s was not written", p);
    unsigned char h[8] = {0};
    size_t n = fread(h, 1, 8, f);
    fclose(f);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    cr_assert(n == 8 && memcmp(h, sig, 8) == 0, "%s is not a PNG", p);
    cr_assert_gt(file_size(p), 4000, "%s is suspiciously small (%ld bytes)", p, file_size(p));
    const char *svg = path_of(base, ".svg");
    cr_assert_gt(file_size(svg), 1000, "%s missing or tiny", svg);
    cr_assert_gt(file_size(path_of(base, ".gp")), 0, "%s.gp missing", base);
}

/* Fields of a data row, a "quoted string" counting as one. */
static int count_fields(const char *line) {
    int n = 0;
    for (const char *c = line; *c;) {
        while (*c && isspace((unsigned char)*c)) c++;
        if (!*c) break;
        n++;
        if (*c == '"') {
            for (c++; *c && *c != '"'; c++) {}
            if (*c) c++;
        } else {
            while (*c && !isspace((unsigned char)*c)) c++;
        }
    }
    return n;
}

/* Checks every data row of base.dat has `fields` fields; returns the number of rows. */
static int check_dat(const char *base, int fields) {
    const char *p = path_of(base, ".dat");
    FILE *f = fopen(p, "r");
    cr_assert(f, "%s was not written", p);
    char line[1024];
    int rows = 0, lineno = 0, comment_first = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (lineno == 1) comment_first = line[0] == '#';
        if (line[0] == '#' || count_fields(line) == 0) continue;
        cr_assert_eq(count_fields(line), fields, "%s:%d has %d fields, want %d: %s", p, lineno, count_fields(line),
                     fields, line);
        rows++;
    }
    fclose(f);
    cr_assert(comment_first, "%s must open with a comment documenting its columns", p);
    return rows;
}

Test(plot, gantt, .init = setup, .fini = teardown, .timeout = 30) {
    pp_trace t[4] = {0};
    gpipe_traces(t, 4, 6);
    cr_assert_eq(pp__plot_gantt(t, 4, "GPipe P=4 M=6", path_of("gantt", "")), 0);
    expect_png("gantt");
    /* 48 compute ops (messages are not drawn) + the placeholder row */
    cr_assert_eq(check_dat("gantt", 14), 49);
    for (int r = 0; r < 4; r++) pp__trace_clear(&t[r]);
}

Test(plot, gantt_chunk_labels, .init = setup, .fini = teardown, .timeout = 30) {
    pp_trace t[2] = {0};
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 4; k++) {
            pp_event e = {.rank = r, .op = PP_OP_F, .mb = k % 2, .chunk = k / 2, .vstage = (k / 2) * 2 + r,
                          .peer = -1, .vstart = r + k, .vend = r + k + 1};
            pp__trace_add(&t[r], &e);
        }
    cr_assert_eq(pp__plot_gantt(t, 2, NULL, path_of("gantt2", "")), 0);
    expect_png("gantt2");
    check_dat("gantt2", 14);
    FILE *f = fopen(path_of("gantt2", ".dat"), "r");
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    cr_assert(strstr(buf, "\"F1.1\""), "labels carry the chunk when v > 1:\n%s", buf);
    for (int r = 0; r < 2; r++) pp__trace_clear(&t[r]);
}

Test(plot, gantt_pair, .init = setup, .fini = teardown, .timeout = 30) {
    pp_trace s[4] = {0}, ref[4] = {0};
    gpipe_traces(s, 4, 4);
    gpipe_traces(ref, 4, 4);
    s[0].ev[0].vstart += 3, s[0].ev[0].vend += 3; /* a late start the student should see */
    cr_assert_eq(pp__plot_gantt_pair(s, ref, 4, path_of("pair", ""), NULL), 0);
    expect_png("pair");
    cr_assert_eq(check_dat("pair", 14), 2 * (32 + 1));
    for (int r = 0; r < 4; r++) pp__trace_clear(&s[r]), pp__trace_clear(&ref[r]);
}

/* Under a topology every row names its node, and a dashed line parts rows on different nodes: the nodes of a
 * placement that puts stages 0 and 2 together (pdt on nodes of 2 at P = 4: 0 1 | 2 3, here as the grid lab's own
 * mapping might give them), read off the configuration. */
Test(plot, gantt_by_node, .init = setup, .fini = teardown, .timeout = 30) {
    pp_trace t[4] = {0};
    gpipe_traces(t, 4, 4);
    pp_run_config c;
    pp__config_defaults(&c);
    c.P = 4, c.node_size = 2;
    static const int place[4] = {0, 2, 1, 3};
    c.place = place;
    int *node = pp__plot_nodes(&c, 4);
    cr_assert(node);
    cr_expect(node[0] == 0 && node[1] == 1 && node[2] == 0 && node[3] == 1, "%d %d %d %d", node[0], node[1],
              node[2], node[3]);
    cr_assert_eq(pp__plot_gantt_pair(t, t, 4, path_of("nodes", ""), node), 0);
    free(node);
    FILE *f = fopen(path_of("nodes", ".gp"), "r");
    char buf[1 << 15];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    cr_expect(strstr(buf, "\"GPU 2, node 0\" 2"), "the rows name their nodes:\n%s", buf);
    int arrows = 0;
    for (const char *p = buf; (p = strstr(p, "set arrow from 0,")); p++) arrows++;
    /* the script draws the chart twice, as PNG and as SVG */
    cr_expect_eq(arrows, 2 * 2 * 3, "a line between each two rows on different nodes, in both panels:\n%s", buf);
    c.node_size = 0;
    cr_expect_null(pp__plot_nodes(&c, 4), "no topology, no nodes");
    for (int r = 0; r < 4; r++) pp__trace_clear(&t[r]);
}

Test(plot, gantt_empty_run, .init = setup, .fini = teardown, .timeout = 30) {
    pp_trace t[2] = {0};
    cr_assert_eq(pp__plot_gantt(t, 2, "nothing ran", path_of("empty", "")), 0);
    cr_assert_gt(file_size(path_of("empty", ".png")), 0);
}

Test(plot, xy, .init = setup, .fini = teardown, .timeout = 30) {
    double M[] = {1, 2, 4, 8, 16}, meas[5], tx[32], ty[32];
    for (int i = 0; i < 5; i++) meas[i] = 3.0 / (M[i] + 3);
    for (int i = 0; i < 32; i++) tx[i] = i + 1, ty[i] = 3.0 / (tx[i] + 3);
    pp_plot_series ser[] = {{"theory (P-1)/(M+P-1)", tx, ty, 32, PP_PLOT_LINES, 1},
                            {"gpipe \"measured\"", M, meas, 5, PP_PLOT_POINTS, 1},
                            {"1f1b", M, meas, 5, PP_PLOT_LINESPOINTS, 0},
                            {"empty", NULL, NULL, 0, PP_PLOT_POINTS, 0}};
    cr_assert_eq(pp__plot_xy(path_of("xy", ""), "bubble vs M, P=4", "micro-batches M", "bubble", ser, 4), 0);
    expect_png("xy");
    cr_assert_eq(check_dat("xy", 2), 42);
}

Test(plot, bars, .init = setup, .fini = teardown, .timeout = 30) {
    const char *groups[] = {"GPU 0", "GPU 1", "GPU 2", "GPU 3"}, *names[] = {"gpipe", "1f1b", "interleaved"};
    double vals[] = {8, 8, 8, 8, 4, 3, 2, 1, 5.5, 4.5, 3.5, 2.5};
    cr_assert_eq(pp__plot_bars(path_of("bars", ""), "peak stashes", "stashes", groups, 4, names, vals, 3), 0);
    expect_png("bars");
    cr_assert_eq(check_dat("bars", 4), 4);
}

Test(plot, unwritable_folder_fails, .init = setup, .fini = teardown, .timeout = 30) {
    pp_trace t[1] = {0};
    cr_assert_eq(pp__plot_gantt(t, 1, NULL, "/nonexistent-folder/x"), -1);
}

/* A run of two replicas: every rank of each gets its row, named by replica and GPU, with a reduce lane under it
 * holding its reduces by chunk, and the axis reaches the last reduce's end, past the last compute op. */
Test(plot, gantt_replicas_with_reduce_lanes, .init = setup, .fini = teardown, .timeout = 30) {
    enum { P = 2, D = 2 };
    pp_trace t[P * D] = {0};
    for (int d = 0; d < D; d++) gpipe_traces(t + d * P, P, 3);
    for (int r = 0; r < P * D; r++) {
        pp_event red = {.rank = r, .op = PP_OP_REDUCE, .mb = -1, .chunk = 0, .vstage = r % P, .peer = -1,
                        .vstart = 20, .vend = 27.5};
        pp__trace_add(&t[r], &red);
    }
    cr_assert_eq(pp__plot_gantt_replicas(t, P, D, "two replicas", path_of("gantt-dp", ""), NULL), 0);
    expect_png("gantt-dp");
    /* 6 compute ops a rank (3 F, 3 B) and one reduce, 4 ranks, + the placeholder row */
    cr_assert_eq(check_dat("gantt-dp", 14), 4 * 7 + 1);
    FILE *f = fopen(path_of("gantt-dp", ".gp"), "r");
    char gp[16384];
    gp[fread(gp, 1, sizeof gp - 1, f)] = 0;
    fclose(f);
    cr_expect(strstr(gp, "\"replica 1, GPU 1\" 6, \"reduce\" 7"), "rows by replica and GPU, each with its lane: %s", gp);
    cr_expect(strstr(gp, "set xrange [0:27.5]"), "the axis stops before the reduces end: %s", gp);
    f = fopen(path_of("gantt-dp", ".dat"), "r");
    gp[fread(gp, 1, sizeof gp - 1, f)] = 0;
    fclose(f);
    cr_expect(strstr(gp, "\n7 23.75 7 3.75 0.25 6 AR \"c0\" 20 27.5 3 "), "rank 3's reduce on row 7, named by its chunk: %s",
              gp);
    for (int r = 0; r < P * D; r++) pp__trace_clear(&t[r]);
}

/* ---- pplab run --plot, as a student runs it ---------------------------------------------------------------- */

/* The PNG's width and height from its IHDR chunk, after checking its signature; 0 when it is no PNG. */
static int png_size(const char *p, unsigned *w, unsigned *h) {
    FILE *f = fopen(p, "rb");
    unsigned char b[24] = {0};
    size_t n = f ? fread(b, 1, sizeof b, f) : 0;
    if (f) fclose(f);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 24 || memcmp(b, sig, 8) || memcmp(b + 12, "IHDR", 4)) return 0;
    *w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
    *h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
    return 1;
}

/* The distinct lanes (column 1, rows of index 0) of base.dat that hold cells of each kind letter; the letters seen
 * in *letters. */
static int dat_lanes(const char *base, char *letters, size_t len) {
    FILE *f = fopen(path_of(base, ".dat"), "r");
    cr_assert(f, "no %s.dat", base);
    char line[1024], seen[256] = {0};
    int lanes = 0;
    letters[0] = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n') break; /* index 0 ends at its blank lines */
        int lane;
        char letter[8];
        if (line[0] == '#' || sscanf(line, "%d %*s %*s %*s %*s %*s %7s", &lane, letter) != 2 || lane < 0) continue;
        cr_assert_lt(lane, 256);
        if (!seen[lane]) seen[lane] = 1, lanes++;
        if (!strstr(letters, letter) && strlen(letters) + strlen(letter) + 2 < len) strcat(strcat(letters, letter), " ");
    }
    fclose(f);
    return lanes;
}

/* The size the script asks of the PNG ("pngcairo size W,H"). */
static void gp_size(const char *base, unsigned *w, unsigned *h) {
    FILE *f = fopen(path_of(base, ".gp"), "r");
    cr_assert(f, "no %s.gp", base);
    char line[512];
    *w = *h = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, " set terminal pngcairo size %u,%u", w, h) == 2) break;
    fclose(f);
}

/* pplab run ARGS --plot: a real PNG of the size its script sets, and a lane per rank and shard of every replica, and
 * a reduce lane per rank once it reduces. */
static void check_run_plot(const char *args, int lanes, const char *kinds) {
    char cmd[2 * PATH_MAX], bin[PATH_MAX], out[8192], letters[64];
    test_build_dir(bin, sizeof bin);
    snprintf(cmd, sizeof cmd, "'%s/pplab' run %s --plot '%s' 2>&1", bin, args, path_of("run", ".png"));
    int rc = test_capture(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "%s exited %d: %s", cmd, rc, out);
    unsigned w, h, gw, gh;
    cr_assert(png_size(path_of("run", ".png"), &w, &h), "%s: run.png is not a PNG", args);
    gp_size("run", &gw, &gh);
    cr_expect(w == gw && h == gh && w > 0, "%s: the PNG is %ux%u, its script asks %ux%u", args, w, h, gw, gh);
    check_dat("run", 14);
    cr_expect_eq(dat_lanes("run", letters, sizeof letters), lanes, "%s: %d lanes in the chart, want %d", args,
                 dat_lanes("run", letters, sizeof letters), lanes);
    /* a legend entry for each kind of cell the chart holds */
    FILE *f = fopen(path_of("run", ".gp"), "r");
    cr_assert(f);
    static char gp[1 << 16];
    gp[fread(gp, 1, sizeof gp - 1, f)] = 0;
    fclose(f);
    char copy[64], *save = NULL;
    snprintf(copy, sizeof copy, "%s", letters);
    for (char *l = strtok_r(copy, " ", &save); l; l = strtok_r(NULL, " ", &save)) {
        char want[32];
        snprintf(want, sizeof want, "title \"%s = ", l);
        cr_expect(strstr(gp, want), "%s: no legend entry for %s", args, l);
    }
    for (const char *k = kinds; *k; k++) {
        char want[4] = {*k, ' ', 0, 0};
        if (*k == 'A') want[1] = 'R', want[2] = ' ', k++;
        cr_expect(strstr(letters, want), "%s: no %s cell among %s", args, want, letters);
    }
}

/* One configuration of every schedule (the first of its default set), tpblock at --tp 2 and dp1f1b at --dp 2: P*D*T
 * compute lanes, and P*D reduce lanes where ranks reduce. */
Test(plot, every_schedule_has_a_lane_per_rank_and_shard, .init = setup, .fini = teardown, .timeout = 240) {
    char args[512];
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *d = &pp__schedules[i];
        int n;
        const pp_test_config *t = pp__testset(d->name, &n);
        if (!t || n < 1) continue;
        for (int extra = 0; extra < 2; extra++) {
            int T = t->T > 1 ? t->T : 1, D = t->D > 1 ? t->D : 1, node_size = t->node_size;
            if (extra && strcmp(d->name, "tpblock") && strcmp(d->name, "dp1f1b")) break;
            pp_test_config u = *t;
            if (extra && !strcmp(d->name, "tpblock")) T = 2, node_size = 0, u.P = 2, u.M = 4; /* two stages' shards */
            if (extra && !strcmp(d->name, "dp1f1b")) D = 2;
            u.T = T, u.D = D, u.node_size = node_size;
            int k = snprintf(args, sizeof args, "--impl solutions ");
            test_run_flags(d->name, &u, args + k, sizeof args - (size_t)k);
            /* replicas reduce, and DualPipe sums a stage's two copies */
            int reduces = (d->reduce != PP_REDUCE_NONE && D > 1) || d->dual;
            check_run_plot(args, u.P * D * T + (reduces ? u.P * D : 0),
                           T > 1 ? "FS" : reduces ? "FAR" : d->weight_halves ? "FIW" : "FB");
        }
    }
}
