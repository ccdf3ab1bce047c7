/* test_timeline.c: the terminal timeline drawn from hand-made traces (the GPipe forward staircase of the course
 * material, wrapping that never cuts a cell, 1F1B backwards two cells wide, chunk labels when v > 1), and
 * `pplab run --timeline` read back as a student sees it: every lane a row, its cells adding up to the step, the
 * shards' sums on every shard's row. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedules.h"
#include "testset.h"
#include "testutil.h"
#include "timeline.h"

/* One planned op of a rank's schedule; sim() gives it its virtual times as the runtime's clock would. */
typedef struct { pp_op_kind op; int mb, chunk; } plan_op;

/* Replays each rank's plan on the virtual clock (F = 1, B = 2, cross-rank latency lat): an op starts when its
 * rank is free and its input is ready (F: the same micro-batch's F one virtual stage earlier; B: the B one
 * virtual stage later, or the rank's own F on the last virtual stage). Fills traces[0..P). */
static void sim(pp_trace *traces, int P, int v, int M, plan_op *const *plan, const int *len, double lat) {
    int S = P * v;
    double *fend = calloc((size_t)M * S, sizeof *fend), *bend = calloc((size_t)M * S, sizeof *bend);
    char *fdone = calloc((size_t)M * S, 1), *bdone = calloc((size_t)M * S, 1);
    int *pos = calloc((size_t)P, sizeof *pos);
    double *clock = calloc((size_t)P, sizeof *clock);
    for (int left = 1; left;) {
        left = 0;
        int progress = 0;
        for (int r = 0; r < P; r++) {
            while (pos[r] < len[r]) {
                plan_op o = plan[r][pos[r]];
                int s = o.chunk * P + r;
                double ready = 0;
                if (o.op == PP_OP_F && s > 0) {
                    if (!fdone[o.mb * S + s - 1]) break;
                    ready = fend[o.mb * S + s - 1] + lat;
                } else if (o.op == PP_OP_B && s < S - 1) {
                    if (!bdone[o.mb * S + s + 1]) break;
                    ready = bend[o.mb * S + s + 1] + lat;
                } else if (o.op == PP_OP_B) {
                    ready = fend[o.mb * S + s];
                }
                double start = clock[r] > ready ? clock[r] : ready, cost = o.op == PP_OP_F ? 1 : 2;
                pp_event e = {.rank = r, .op = o.op, .mb = o.mb, .chunk = o.chunk, .vstage = s, .peer = -1,
                              .vstart = start, .vend = start + cost};
                pp__trace_add(&traces[r], &e);
                clock[r] = start + cost;
                if (o.op == PP_OP_F) fend[o.mb * S + s] = clock[r], fdone[o.mb * S + s] = 1;
                else bend[o.mb * S + s] = clock[r], bdone[o.mb * S + s] = 1;
                pos[r]++;
                progress = 1;
            }
            if (pos[r] < len[r]) left = 1;
        }
        cr_assert(progress || !left, "test schedule deadlocks");
    }
    free(fend), free(bend), free(fdone), free(bdone), free(pos), free(clock);
}

static void gpipe(pp_trace *t, int P, int M) {
    plan_op *plan[16];
    int len[16];
    for (int r = 0; r < P; r++) {
        plan[r] = calloc((size_t)2 * M, sizeof **plan);
        for (int m = 0; m < M; m++) plan[r][m] = (plan_op){PP_OP_F, m, 0}, plan[r][M + m] = (plan_op){PP_OP_B, m, 0};
        len[r] = 2 * M;
    }
    sim(t, P, 1, M, plan, len, 0);
    for (int r = 0; r < P; r++) free(plan[r]);
}

/* Megatron-LM's 1F1B: min(P-r-1, M) warmup forwards, then F/B pairs, then the remaining backwards. */
static void onef1b(pp_trace *t, int P, int M) {
    plan_op *plan[16];
    int len[16];
    for (int r = 0; r < P; r++) {
        plan[r] = calloc((size_t)2 * M, sizeof **plan);
        int w = P - r - 1 < M ? P - r - 1 : M, n = 0, f = 0, b = 0;
        while (f < w) plan[r][n++] = (plan_op){PP_OP_F, f++, 0};
        while (f < M) plan[r][n++] = (plan_op){PP_OP_F, f++, 0}, plan[r][n++] = (plan_op){PP_OP_B, b++, 0};
        while (b < M) plan[r][n++] = (plan_op){PP_OP_B, b++, 0};
        len[r] = n;
    }
    sim(t, P, 1, M, plan, len, 0);
    for (int r = 0; r < P; r++) free(plan[r]);
}

static char *render(const pp_trace *t, int P, int v, int fwd, int width, int color) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    pp__timeline_print(f, t, P, v, fwd, width, color);
    fclose(f);
    return buf;
}

static void free_traces(pp_trace *t, int P) {
    for (int r = 0; r < P; r++) pp__trace_clear(&t[r]);
}

Test(timeline, gpipe_forward_staircase, .timeout = 10) {
    pp_trace t[4] = {0};
    gpipe(t, 4, 6);
    char *s = render(t, 4, 1, 1, 120, 0);
    cr_assert(strstr(s, "GPU 0: F0 F1 F2 F3 F4 F5 .  .  .\n"), "rank 0 row wrong in:\n%s", s);
    cr_assert(strstr(s, "GPU 1: .  F0 F1 F2 F3 F4 F5 .  .\n"), "rank 1 row wrong in:\n%s", s);
    cr_assert(strstr(s, "GPU 2: .  .  F0 F1 F2 F3 F4 F5 .\n"), "rank 2 row wrong in:\n%s", s);
    cr_assert(strstr(s, "GPU 3: .  .  .  F0 F1 F2 F3 F4 F5\n"), "rank 3 row wrong in:\n%s", s);
    cr_assert(strncmp(s, "GPU 0: ", 7) == 0, "the rows come first, got:\n%s", s);
    const char *last = "Idle fraction: 33%\n";
    size_t n = strlen(s);
    cr_assert(n > strlen(last) && strcmp(s + n - strlen(last), last) == 0, "last line must be '%s', got:\n%s", last, s);
    cr_assert(strstr(s, "Legend: "), "legend line missing in:\n%s", s);
    cr_expect(!strstr(s, "B0"), "forward-only shows no backward:\n%s", s);
    free(s);
    free_traces(t, 4);
}

/* The whole GPipe step: forwards then backwards (each two cells), idle = 1 - 4*18/(4*27) = 33%. */
Test(timeline, gpipe_full_step, .timeout = 10) {
    pp_trace t[4] = {0};
    gpipe(t, 4, 6);
    char *s = render(t, 4, 1, 0, 200, 0);
    cr_assert(strstr(s, "GPU 3: .  .  .  F0 F1 F2 F3 F4 F5 B0 B0 B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 .  .  .  .  .  .\n"),
              "rank 3 row wrong in:\n%s", s);
    cr_assert(strstr(s, "Idle fraction: 33%\n"), "%s", s);
    free(s);
    free_traces(t, 4);
}

Test(timeline, wrap_keeps_cells_whole, .timeout = 10) {
    pp_trace t[4] = {0};
    gpipe(t, 4, 6);
    int width = 30; /* "GPU 0: " + 8 cells of "xx " (less the last space) fit; the 27 cells need 4 blocks */
    char *s = render(t, 4, 1, 0, width, 0);
    int blocks = 0, rows = 0;
    char *save = NULL, *copy = strdup(s);
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "t=", 2) == 0) blocks++;
        if (strncmp(line, "GPU ", 4) != 0) continue;
        rows++;
        cr_assert_leq(strlen(line), (size_t)width, "row wider than %d: '%s'", width, line);
        /* every cell whole: after the prefix, tokens are two-wide labels or a lone '.' */
        char *cells = line + 7, *tsave = NULL;
        for (char *tok = strtok_r(cells, " ", &tsave); tok; tok = strtok_r(NULL, " ", &tsave))
            cr_assert(strcmp(tok, ".") == 0 || (strlen(tok) == 2 && strchr("FB", tok[0])), "cut cell '%s' in:\n%s",
                      tok, s);
    }
    cr_assert_eq(blocks, 4, "expected 4 blocks (t= markers) in:\n%s", s);
    cr_assert_eq(rows, 16, "expected 4 rows per block in:\n%s", s);
    cr_assert(strncmp(s, "t=0\nGPU 0: F0 F1 F2 F3 F4 F5 .  .\n", 31) == 0, "first block wrong:\n%s", s);
    cr_assert(strstr(s, "\n\nt=8\n"), "blocks separated by a blank line, the second at t=8:\n%s", s);
    cr_assert(strstr(s, "t=24\nGPU 0: B4 B5 B5\nGPU 1: B5 .  .\n"), "last block wrong in:\n%s", s);
    free(copy);
    free(s);
    free_traces(t, 4);
}

Test(timeline, onef1b_backward_two_cells, .timeout = 10) {
    pp_trace t[4] = {0};
    onef1b(t, 4, 4);
    char *s = render(t, 4, 1, 0, 200, 0);
    /* rank 3 (last stage): F0 then B0 over two cells, and so on; rank 0 runs three warmup forwards, F3 at once
     * (the host runs ahead), then waits for B0. Bubble (P-1)/(M+P-1) = 3/7. */
    cr_assert(strstr(s, "GPU 3: .  .  .  F0 B0 B0 F1 B1 B1 F2 B2 B2 F3 B3 B3 .  .  .  .  .  .\n"), "rank 3 wrong:\n%s", s);
    cr_assert(strstr(s, "GPU 0: F0 F1 F2 F3 .  .  .  .  .  .  B0 B0 .  B1 B1 .  B2 B2 .  B3 B3\n"), "rank 0 wrong:\n%s", s);
    cr_assert(strstr(s, "GPU 1: .  F0 F1 F2 .  .  .  .  B0 B0 F3 B1 B1 .  B2 B2 .  B3 B3 .  .\n"), "rank 1 wrong:\n%s", s);
    cr_assert(strstr(s, "Idle fraction: 43%\n"), "P=4 M=4 bubble is 3/7:\n%s", s);
    free(s);
    free_traces(t, 4);
}

/* Two ranks, two chunks (virtual stages 0..3), two micro-batches, depth-first order: labels carry the chunk. */
Test(timeline, interleaved_chunk_labels, .timeout = 10) {
    pp_trace t[2] = {0};
    plan_op r0[] = {{PP_OP_F, 0, 0}, {PP_OP_F, 1, 0}, {PP_OP_F, 0, 1}, {PP_OP_F, 1, 1},
                    {PP_OP_B, 0, 1}, {PP_OP_B, 1, 1}, {PP_OP_B, 0, 0}, {PP_OP_B, 1, 0}};
    plan_op r1[] = {{PP_OP_F, 0, 0}, {PP_OP_F, 1, 0}, {PP_OP_F, 0, 1}, {PP_OP_F, 1, 1},
                    {PP_OP_B, 0, 1}, {PP_OP_B, 1, 1}, {PP_OP_B, 0, 0}, {PP_OP_B, 1, 0}};
    plan_op *plan[] = {r0, r1};
    int len[] = {8, 8};
    sim(t, 2, 2, 2, plan, len, 0);
    char *s = render(t, 2, 2, 1, 120, 0);
    cr_assert(strstr(s, "GPU 0: F0.0 F1.0 F0.1 F1.1 .\n"), "rank 0 wrong:\n%s", s);
    cr_assert(strstr(s, "GPU 1: .    F0.0 F1.0 F0.1 F1.1\n"), "rank 1 wrong:\n%s", s);
    cr_assert(strstr(s, "micro-batch m and local chunk c (Fm.c)"), "legend must explain m.c:\n%s", s);
    cr_assert(strstr(s, "Idle fraction: 20%\n"), "%s", s);
    free(s);
    s = render(t, 2, 2, 0, 200, 0);
    cr_assert(strstr(s, "B1.1 B1.1"), "backward labels with chunk, two cells:\n%s", s);
    free(s);
    free_traces(t, 2);
}

Test(timeline, color_only_when_asked, .timeout = 10) {
    pp_trace t[2] = {0};
    gpipe(t, 2, 2);
    char *plain = render(t, 2, 1, 0, 120, 0), *col = render(t, 2, 1, 0, 120, 1);
    cr_assert(!strchr(plain, '\x1b'), "no escape codes without colour:\n%s", plain);
    cr_assert(strstr(col, "\x1b[32mF0\x1b[0m"), "F in green");
    cr_assert(strstr(col, "\x1b[34mB0\x1b[0m"), "B in blue");
    cr_assert(strstr(col, "\x1b[2m.\x1b[0m"), "idle dim");
    free(plain);
    free(col);
    free_traces(t, 2);
}

Test(timeline, empty_trace, .timeout = 10) {
    pp_trace t[2] = {0};
    char *s = render(t, 2, 1, 0, 120, 0);
    cr_assert(strstr(s, "Idle fraction: 0%\n"), "%s", s);
    free(s);
}

/* 1F1B interleaves forwards with backwards; shown alone, its forwards replay into the same staircase. */
Test(timeline, forward_only_replays_1f1b, .timeout = 10) {
    pp_trace t[4] = {0};
    onef1b(t, 4, 4);
    char *s = render(t, 4, 1, 1, 120, 0);
    cr_assert(strstr(s, "GPU 0: F0 F1 F2 F3 .  .  .\n"), "rank 0 wrong:\n%s", s);
    cr_assert(strstr(s, "GPU 3: .  .  .  F0 F1 F2 F3\n"), "rank 3 wrong:\n%s", s);
    cr_assert(strstr(s, "Idle fraction: 43%\n"), "%s", s);
    free(s);
    free_traces(t, 4);
}

/* ---- pplab run --timeline, parsed ---- */

/* One lane as the text draws it: its name and its columns' texts ("." where idle). */
typedef struct tv_lane {
    char name[64];
    char **col;
    int n;
} tv_lane;

/* A parsed timeline: its lanes, the columns' starts (start[ncols] is the step), and the figures under it. */
typedef struct tv_view {
    tv_lane lane[128];
    int nlanes, ncols;
    double *start;
    double unit;    /* > 0: uniform columns; 0: a cut grid, its starts read from the ruler rows */
    double step;    /* "every lane spans the step, 0 to X" */
    double sums;    /* "Shards' sums on shard 0's lanes: X", -1 when absent */
} tv_view;

/* A run of equal columns on one lane: one cell. */
typedef struct tv_cell {
    char text[32];
    double dur;
    int ncols;
} tv_cell;

static void tv_add_col(tv_lane *l, const char *tok) {
    l->col = realloc(l->col, (size_t)(l->n + 1) * sizeof *l->col);
    l->col[l->n++] = strdup(tok);
}

/* One row of a block: its name before the first ':', then one token per column. The ruler row ("t") adds the
 * columns' starts; lane rows repeat in the same order in every block. */
static void tv_row(tv_view *v, char *line, int *row, double **ruler, int *nruler) {
    char *colon = strchr(line, ':');
    cr_assert(colon, "a row without ':': '%s'", line);
    *colon = 0;
    char *name = line;
    while (*name == ' ') name++;
    char *save = NULL;
    if (!strcmp(name, "t")) {
        for (char *tok = strtok_r(colon + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            *ruler = realloc(*ruler, (size_t)(*nruler + 1) * sizeof **ruler);
            (*ruler)[(*nruler)++] = strtod(tok, NULL);
        }
        return;
    }
    cr_assert_lt(*row, 128);
    tv_lane *l = &v->lane[*row];
    if (*row >= v->nlanes) snprintf(l->name, sizeof l->name, "%s", name), v->nlanes = *row + 1;
    cr_assert_str_eq(l->name, name, "row %d is another lane in a later block", *row);
    for (char *tok = strtok_r(colon + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) tv_add_col(l, tok);
    (*row)++;
}

/* The figures under the rows. */
static void tv_notes(tv_view *v, const char *text) {
    const char *p;
    if ((p = strstr(text, "One cell = 1 time unit "))) v->unit = 1;
    else if ((p = strstr(text, "One cell = "))) v->unit = strtod(p + strlen("One cell = "), NULL);
    else cr_assert(strstr(text, "Cells are cut where an op starts or ends"), "no grid line in:\n%s", text);
    p = strstr(text, "every lane spans the step, 0 to ");
    cr_assert(p, "no step in:\n%s", text);
    v->step = strtod(p + strlen("every lane spans the step, 0 to "), NULL);
    p = strstr(text, "Shards' sums on shard 0's lanes: ");
    v->sums = p ? strtod(p + strlen("Shards' sums on shard 0's lanes: "), NULL) : -1;
}

/* Parses a timeline out of a run's output (its rows start at its first line; its legend at "Legend: "). */
static void tv_parse(tv_view *v, const char *out) {
    memset(v, 0, sizeof *v);
    const char *legend = strstr(out, "Legend: ");
    cr_assert(legend, "no legend in:\n%s", out);
    char *rows = strndup(out, (size_t)(legend - out)), *save = NULL;
    double *ruler = NULL;
    int nruler = 0, row = 0;
    for (char *line = strtok_r(rows, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "t=", 2)) row = 0; /* a block: its rows are the lanes again */
        else tv_row(v, line, &row, &ruler, &nruler);
    }
    free(rows);
    tv_notes(v, legend);
    cr_assert_gt(v->nlanes, 0, "no rows in:\n%s", out);
    v->ncols = v->lane[0].n;
    v->start = calloc((size_t)v->ncols + 1, sizeof *v->start);
    if (v->unit > 0) {
        for (int j = 0; j <= v->ncols; j++) v->start[j] = j * v->unit;
        cr_assert_float_eq(v->ncols * v->unit, v->step, 1e-6, "%d cells of %g are not the step %g", v->ncols, v->unit,
                           v->step);
    } else {
        cr_assert_eq(nruler, v->ncols, "%d ruler times for %d columns", nruler, v->ncols);
        for (int j = 0; j < v->ncols; j++) v->start[j] = ruler[j];
    }
    v->start[v->ncols] = v->step;
    free(ruler);
}

static void tv_free(tv_view *v) {
    for (int i = 0; i < v->nlanes; i++) {
        for (int j = 0; j < v->lane[i].n; j++) free(v->lane[i].col[j]);
        free(v->lane[i].col);
    }
    free(v->start);
}

/* Lane i's cells (runs of equal columns, idle ones included as "."), into cells; returns their count. */
static int tv_cells(const tv_view *v, int i, tv_cell *cells, int cap) {
    int n = 0;
    for (int j = 0; j < v->lane[i].n; j++) {
        const char *t = v->lane[i].col[j];
        if (n == 0 || strcmp(cells[n - 1].text, t)) {
            cr_assert_lt(n, cap);
            cells[n] = (tv_cell){.dur = 0, .ncols = 0};
            snprintf(cells[n].text, sizeof cells[n].text, "%s", t);
            n++;
        }
        cells[n - 1].dur += v->start[j + 1] - v->start[j];
        cells[n - 1].ncols++;
    }
    return n;
}

/* Runs `pplab run ARGS --timeline` as a student would (no colour, 120 columns) with --trace into a CSV; returns
 * its output (caller frees) and the latest virtual end of a compute op or reduce in the trace. */
static char *tv_run(const char *args, double *trace_step) {
    char dir[PATH_MAX], csv[] = "/tmp/pplab-timeline-XXXXXX.csv", cmd[PATH_MAX + 1024];
    close(mkstemps(csv, 4));
    test_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "NO_COLOR=1 COLUMNS=120 '%s/pplab' run --impl solutions %s --timeline --trace %s 2>&1",
             dir, args, csv);
    size_t cap = 1 << 20;
    char *out = malloc(cap);
    cr_assert_eq(test_capture(cmd, out, cap), 0, "pplab run %s failed:\n%s", args, out);
    *trace_step = 0;
    FILE *f = fopen(csv, "r");
    cr_assert(f, "no trace written by pplab run %s", args);
    char line[512], op[16];
    double s, e;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%*d,%15[^,],%*d,%*d,%*d,%*d,%*u,%lf,%lf", op, &s, &e) == 3 && strcmp(op, "SEND") &&
            strcmp(op, "RECV") && e > *trace_step)
            *trace_step = e;
    fclose(f);
    unlink(csv);
    return out;
}

/* A run's timeline read back: no line wider than the terminal's 120 columns, P*D*T compute rows named as its lanes
 * are, each lane's cells adding up to the step the run reports, no cell narrower than its duration's whole units (a
 * 2-unit backward at least as wide as two 1-unit forwards), and under --tp the sums on every shard's row, their
 * total on shard 0's the figure printed. */
static void check_run(const char *args, int P, int D, int T) {
    double trace_step;
    char *out = tv_run(args, &trace_step);
    tv_view v;
    tv_parse(&v, out);
    const char *vs = strstr(out, "virtual step: ");
    double step = vs ? strtod(vs + strlen("virtual step: "), NULL) : trace_step;
    cr_expect(fabs(v.step - step) < 1e-3, "%s: the text spans %g, the run's step is %g:\n%s", args, v.step, step, out);
    cr_expect(fabs(v.step - trace_step) < 1e-3, "%s: the text spans %g, the trace %g", args, v.step, trace_step);
    for (int j = 0; j < v.ncols; j++)
        cr_assert_gt(v.start[j + 1] - v.start[j], 0, "%s: column %d is empty or backwards:\n%s", args, j, out);
    int compute = 0;
    double sums = 0;
    static tv_cell cells[4096];
    for (int i = 0; i < v.nlanes; i++) {
        const tv_lane *l = &v.lane[i];
        cr_assert_eq(l->n, v.ncols, "%s: row %s has %d columns of %d:\n%s", args, l->name, l->n, v.ncols, out);
        int n = tv_cells(&v, i, cells, 4096), ns = 0;
        double total = 0, min_f = INFINITY;
        for (int c = 0; c < n; c++) {
            total += cells[c].dur;
            if (cells[c].text[0] == '.') continue;
            cr_expect_geq(cells[c].ncols, (int)ceil(cells[c].dur - 1e-3), "%s: %s on %s: %g units in %d cells", args,
                          cells[c].text, l->name, cells[c].dur, cells[c].ncols);
            if (v.unit > 0)
                cr_expect_float_eq(cells[c].ncols * v.unit, cells[c].dur, 1e-6, "%s: %s", args, cells[c].text);
            if (cells[c].text[0] == 'F' && cells[c].dur < min_f) min_f = cells[c].dur;
            if (cells[c].text[0] == 'S') {
                ns++;
                if (strstr(l->name, "shard 0") || T == 1) sums += cells[c].dur;
            }
        }
        cr_expect_float_eq(total, v.step, 1e-9, "%s: row %s adds up to %g, not the step %g", args, l->name, total,
                           v.step);
        if (!strcmp(l->name, "AR")) continue;
        for (int c = 0; c < n; c++)
            if (cells[c].text[0] == 'B') {
                cr_expect_geq(cells[c].dur, 2 * min_f - 1e-3, "%s: %s on %s lasts %g, a forward %g", args,
                              cells[c].text, l->name, cells[c].dur, min_f);
                cr_expect_geq(cells[c].ncols, 2, "%s: %s on %s is one cell wide:\n%s", args, cells[c].text, l->name,
                              out);
            }
        char want[64];
        int p = compute / T % P, d = compute / T / P, t = compute % T;
        if (T > 1 && D > 1) snprintf(want, sizeof want, "replica %d, GPU %d, shard %d", d, p, t);
        else if (T > 1) snprintf(want, sizeof want, "GPU %d, shard %d", p, t);
        else if (D > 1) snprintf(want, sizeof want, "replica %d, GPU %d", d, p);
        else snprintf(want, sizeof want, "GPU %d", p);
        cr_expect_str_eq(l->name, want, "%s: compute row %d", args, compute);
        if (T > 1) cr_expect_gt(ns, 0, "%s: no sums on %s:\n%s", args, l->name, out);
        compute++;
    }
    cr_expect_eq(compute, P * D * T, "%s: %d compute rows, P*D*T = %d:\n%s", args, compute, P * D * T, out);
    if (T > 1) {
        cr_expect_gt(v.sums, 0, "%s: no sums figure:\n%s", args, out);
        cr_expect(fabs(sums - v.sums) < 1e-3, "%s: the S cells on shard 0's rows add up to %g, the figure is %g:\n%s",
                  args, sums, v.sums, out);
    } else {
        cr_expect_lt(v.sums, 0, "%s: a sums figure without --tp:\n%s", args, out);
    }
    const char *idle = strstr(out, "\nIdle fraction: ");
    cr_expect(idle, "%s", out);
    for (const char *line = out; idle && line <= idle; line += strcspn(line, "\n") + 1)
        cr_expect_leq(strcspn(line, "\n"), (size_t)120, "%s: a line wider than 120 columns:\n%s", args, out);
    tv_free(&v);
    free(out);
}

TestSuite(timeline_cli, .timeout = 240);

/* Every schedule's first graded configuration, tpgrid with its grid and nodes. */
Test(timeline_cli, every_schedule_reads_back) {
    for (int i = 0; i < pp__nschedules; i++) {
        int n;
        const pp_test_config *t = pp__testset(pp__schedules[i].name, &n);
        cr_assert_gt(n, 0, "%s has no tests", pp__schedules[i].name);
        char args[512];
        test_run_flags(pp__schedules[i].name, &t[0], args, sizeof args);
        check_run(args, t[0].P, t[0].D > 1 ? t[0].D : 1, t[0].T > 1 ? t[0].T : 1);
    }
}

Test(timeline_cli, tpblock_two_shards) {
    check_run("--schedule tpblock --tp 2 --stages 2 --microbatches 4", 2, 1, 2);
}

Test(timeline_cli, dp1f1b_two_replicas) {
    check_run("--schedule dp1f1b --stages 2 --microbatches 4 --dp 2", 2, 2, 1);
}

/* A latency of half a unit is drawn on half-unit cells; one of 0.3 on cut cells, read from the ruler. */
Test(timeline_cli, latency_grids) {
    double step;
    char *out = tv_run("--schedule 1f1b --stages 3 --microbatches 3 --comm-latency 0.5", &step);
    cr_expect(strstr(out, "One cell = 0.5 time units") && strstr(out, "B0 B0 B0 B0"), "%s", out);
    free(out);
    out = tv_run("--schedule 1f1b --stages 3 --microbatches 3 --comm-latency 0.3", &step);
    cr_expect(strstr(out, "Cells are cut where an op starts or ends") && strstr(out, "t: 0 "), "%s", out);
    free(out);
    check_run("--schedule 1f1b --stages 3 --microbatches 3 --comm-latency 0.5", 3, 1, 1);
    check_run("--schedule 1f1b --stages 3 --microbatches 3 --comm-latency 0.3", 3, 1, 1);
}

/* --forward-only under --tp: every shard's row still, its forwards and their sums alone, replayed. */
Test(timeline_cli, forward_only_keeps_every_shard) {
    double step;
    char *out = tv_run("--schedule tpblock --tp 2 --stages 2 --microbatches 4 --forward-only", &step);
    tv_view v;
    tv_parse(&v, out);
    cr_expect_eq(v.nlanes, 4, "%s", out);
    static tv_cell cells[4096];
    for (int i = 0; i < v.nlanes; i++) {
        int n = tv_cells(&v, i, cells, 4096), ns = 0;
        double total = 0;
        for (int c = 0; c < n; c++) {
            total += cells[c].dur;
            ns += cells[c].text[0] == 'S';
            cr_expect(strchr(".FS", cells[c].text[0]), "%s in a forward-only picture:\n%s", cells[c].text, out);
        }
        cr_expect_eq(ns, 4, "%s: %d sums, one per forward:\n%s", v.lane[i].name, ns, out);
        cr_expect_float_eq(total, v.step, 1e-9, "%s", v.lane[i].name);
    }
    tv_free(&v);
    free(out);
}

/* One node per rank: every sum crosses nodes, and says so. */
Test(timeline_cli, sums_between_nodes_marked) {
    double step;
    const char *args = "--schedule tpblock --tp 2 --stages 2 --microbatches 2 --node-size 1";
    char *out = tv_run(args, &step);
    cr_expect(strstr(out, " S0* ") && strstr(out, "S..* = sums whose ring crossed nodes") && strstr(out, "all between nodes"), "%s",
              out);
    free(out);
    check_run(args, 2, 1, 2);
}

/* A recomputing run draws its rebuilt forward as R before its backward. */
Test(timeline_cli, recompute_draws_r) {
    double step;
    char *out = tv_run("--schedule gpipe --stages 2 --microbatches 3 --recompute", &step);
    cr_expect(strstr(out, "R = forward run again to rebuild a dropped stash"), "%s", out);
    cr_expect(strstr(out, "R0 B0 B0"), "%s", out);
    free(out);
    check_run("--schedule gpipe --stages 2 --microbatches 3 --recompute", 2, 1, 1);
}
