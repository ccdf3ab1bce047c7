/* test_timeline.c: the terminal timeline drawn from hand-made traces: the GPipe forward staircase of the
 * course material, wrapping that never cuts a cell, 1F1B backwards two cells wide, chunk labels when v > 1. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

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
