/* testset.c: the default grading set (testset.h). */
#include "testset.h"

#include <stddef.h>
#include <string.h>

/* The default grading set, per schedule: P up to 8, M from below P to 4P, several seeds, latency and
 * recomputation cases, chosen so that the whole set grades in seconds; on_gpu marks the few a CUDA run keeps. */
static const pp_test_config naive_tests[] = {
    {.P = 2, .M = 1, .v = 1, .steps = 2, .seed = 1},
    {.P = 3, .M = 1, .v = 1, .steps = 2, .seed = 2},
    {.P = 4, .M = 1, .v = 1, .steps = 3, .seed = 3, .on_gpu = 1},
    {.P = 8, .M = 1, .v = 1, .steps = 2, .seed = 4},
    {.P = 4, .M = 1, .v = 1, .steps = 2, .seed = 5, .latency = 0.5},
    {.P = 6, .M = 1, .v = 1, .steps = 2, .seed = 6},
};
static const pp_test_config gpipe_tests[] = {
    {.P = 2, .M = 1, .v = 1, .steps = 2, .seed = 11},
    {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 12},
    {.P = 3, .M = 5, .v = 1, .steps = 2, .seed = 13, .on_gpu = 1},
    {.P = 4, .M = 4, .v = 1, .steps = 2, .seed = 14},
    {.P = 4, .M = 6, .v = 1, .steps = 3, .seed = 15},
    {.P = 4, .M = 16, .v = 1, .steps = 2, .seed = 16},
    {.P = 8, .M = 8, .v = 1, .steps = 2, .seed = 17},
    {.P = 8, .M = 32, .v = 1, .steps = 2, .seed = 18},
    {.P = 4, .M = 8, .v = 1, .steps = 2, .seed = 19, .latency = 1.0, .on_gpu = 1},
    {.P = 4, .M = 8, .v = 1, .steps = 2, .seed = 20, .recompute = 1},
    {.P = 2, .M = 3, .v = 1, .steps = 2, .seed = 21, .recompute = 1},
    {.P = 6, .M = 12, .v = 1, .steps = 2, .seed = 22},
};
static const pp_test_config onef1b_tests[] = {
    {.P = 2, .M = 2, .v = 1, .steps = 2, .seed = 31},
    {.P = 2, .M = 8, .v = 1, .steps = 2, .seed = 32},
    {.P = 4, .M = 2, .v = 1, .steps = 2, .seed = 33, .on_gpu = 1},
    {.P = 4, .M = 4, .v = 1, .steps = 2, .seed = 34},
    {.P = 4, .M = 8, .v = 1, .steps = 3, .seed = 35},
    {.P = 4, .M = 16, .v = 1, .steps = 2, .seed = 36},
    {.P = 3, .M = 7, .v = 1, .steps = 2, .seed = 37, .on_gpu = 1},
    {.P = 8, .M = 8, .v = 1, .steps = 2, .seed = 38},
    {.P = 8, .M = 32, .v = 1, .steps = 2, .seed = 39},
    {.P = 4, .M = 8, .v = 1, .steps = 2, .seed = 40, .latency = 0.5},
    {.P = 8, .M = 3, .v = 1, .steps = 2, .seed = 41},
    {.P = 1, .M = 4, .v = 1, .steps = 2, .seed = 42},
    {.P = 6, .M = 6, .v = 1, .steps = 2, .seed = 43},
};
static const pp_test_config interleaved_tests[] = {
    {.P = 2, .M = 2, .v = 2, .steps = 2, .seed = 51, .on_gpu = 1},
    {.P = 4, .M = 6, .v = 2, .steps = 2, .seed = 52},
    {.P = 4, .M = 4, .v = 2, .steps = 2, .seed = 53},
    {.P = 4, .M = 8, .v = 2, .steps = 3, .seed = 54},
    {.P = 4, .M = 16, .v = 2, .steps = 2, .seed = 55},
    {.P = 4, .M = 8, .v = 3, .steps = 2, .seed = 56, .on_gpu = 1},
    {.P = 2, .M = 4, .v = 4, .steps = 2, .seed = 57},
    {.P = 8, .M = 5, .v = 2, .steps = 2, .seed = 58},
    {.P = 8, .M = 16, .v = 2, .steps = 2, .seed = 59},
    {.P = 4, .M = 8, .v = 2, .steps = 2, .seed = 60, .latency = 1.0},
    {.P = 3, .M = 8, .v = 2, .steps = 2, .seed = 61},
    {.P = 4, .M = 12, .v = 4, .steps = 2, .seed = 62},
    {.P = 2, .M = 4, .v = 3, .steps = 2, .seed = 63, .latency = 0.5},
    {.P = 6, .M = 12, .v = 2, .steps = 2, .seed = 64},
};

/* Breadth-first: M below P and not a multiple of it (depth-first refuses both), and latency, which it hides. */
static const pp_test_config loopedbfs_tests[] = {
    {.P = 2, .M = 2, .v = 2, .steps = 2, .seed = 131, .on_gpu = 1},
    {.P = 2, .M = 5, .v = 2, .steps = 2, .seed = 132},
    {.P = 4, .M = 4, .v = 2, .steps = 2, .seed = 133},
    {.P = 4, .M = 8, .v = 2, .steps = 3, .seed = 134},
    {.P = 4, .M = 6, .v = 3, .steps = 2, .seed = 135, .on_gpu = 1},
    {.P = 4, .M = 2, .v = 2, .steps = 2, .seed = 136},
    {.P = 8, .M = 12, .v = 2, .steps = 2, .seed = 137},
    {.P = 4, .M = 8, .v = 2, .steps = 2, .seed = 138, .latency = 1.0},
    {.P = 3, .M = 7, .v = 2, .steps = 2, .seed = 139, .latency = 0.5},
    {.P = 2, .M = 4, .v = 4, .steps = 2, .seed = 140},
};

static const pp_test_config zbh1_tests[] = {
    {.P = 2, .M = 2, .v = 1, .steps = 2, .seed = 71},
    {.P = 2, .M = 6, .v = 1, .steps = 2, .seed = 72},
    {.P = 4, .M = 4, .v = 1, .steps = 2, .seed = 73, .on_gpu = 1},
    {.P = 4, .M = 8, .v = 1, .steps = 3, .seed = 74},
    {.P = 4, .M = 16, .v = 1, .steps = 2, .seed = 75},
    {.P = 3, .M = 7, .v = 1, .steps = 2, .seed = 76},
    {.P = 8, .M = 8, .v = 1, .steps = 2, .seed = 77},
    {.P = 8, .M = 24, .v = 1, .steps = 2, .seed = 78},
    {.P = 4, .M = 8, .v = 1, .steps = 2, .seed = 79, .latency = 1.0},
    {.P = 6, .M = 3, .v = 1, .steps = 2, .seed = 80},
};
static const pp_test_config zbh2_tests[] = {
    {.P = 2, .M = 2, .v = 1, .steps = 2, .seed = 81},
    {.P = 2, .M = 6, .v = 1, .steps = 2, .seed = 82},
    {.P = 4, .M = 4, .v = 1, .steps = 2, .seed = 83},
    {.P = 4, .M = 8, .v = 1, .steps = 3, .seed = 84, .on_gpu = 1},
    {.P = 4, .M = 16, .v = 1, .steps = 2, .seed = 85},
    {.P = 3, .M = 9, .v = 1, .steps = 2, .seed = 86},
    {.P = 8, .M = 16, .v = 1, .steps = 2, .seed = 87},
    {.P = 4, .M = 8, .v = 1, .steps = 2, .seed = 88, .latency = 1.0},
    {.P = 4, .M = 12, .v = 1, .steps = 2, .seed = 89, .latency = 0.5},
    {.P = 8, .M = 32, .v = 1, .steps = 2, .seed = 90, .latency = 1.0},
};

/* Interleaved zero bubble: M below P, between P and 2P (one round of M), and multiples of P; latency. */
static const pp_test_config zbinterleaved_tests[] = {
    {.P = 2, .M = 2, .v = 2, .steps = 2, .seed = 141},
    {.P = 2, .M = 6, .v = 2, .steps = 2, .seed = 142},
    {.P = 4, .M = 4, .v = 2, .steps = 2, .seed = 143, .on_gpu = 1},
    {.P = 4, .M = 8, .v = 2, .steps = 3, .seed = 144},
    {.P = 4, .M = 6, .v = 2, .steps = 2, .seed = 145},
    {.P = 4, .M = 2, .v = 2, .steps = 2, .seed = 146},
    {.P = 4, .M = 8, .v = 3, .steps = 2, .seed = 147},
    {.P = 8, .M = 16, .v = 2, .steps = 2, .seed = 148},
    {.P = 4, .M = 8, .v = 2, .steps = 2, .seed = 149, .latency = 1.0},
    {.P = 3, .M = 9, .v = 2, .steps = 2, .seed = 150, .latency = 0.5},
};

static const pp_test_config zbv_tests[] = {
    {.P = 2, .M = 2, .v = 2, .steps = 2, .seed = 91},
    {.P = 2, .M = 6, .v = 2, .steps = 2, .seed = 92},
    {.P = 4, .M = 4, .v = 2, .steps = 2, .seed = 93, .on_gpu = 1},
    {.P = 4, .M = 8, .v = 2, .steps = 3, .seed = 94},
    {.P = 4, .M = 16, .v = 2, .steps = 2, .seed = 95},
    {.P = 3, .M = 7, .v = 2, .steps = 2, .seed = 96},
    {.P = 8, .M = 16, .v = 2, .steps = 2, .seed = 97},
    {.P = 4, .M = 8, .v = 2, .steps = 2, .seed = 98, .latency = 1.0},
    {.P = 6, .M = 9, .v = 2, .steps = 2, .seed = 99},
};
static const pp_test_config dualpipev_tests[] = {
    {.P = 2, .M = 4, .v = 2, .steps = 2, .seed = 101},
    {.P = 2, .M = 8, .v = 2, .steps = 2, .seed = 102},
    {.P = 4, .M = 8, .v = 2, .steps = 3, .seed = 103, .on_gpu = 1},
    {.P = 4, .M = 16, .v = 2, .steps = 2, .seed = 104},
    {.P = 3, .M = 9, .v = 2, .steps = 2, .seed = 105},
    {.P = 8, .M = 16, .v = 2, .steps = 2, .seed = 106},
    {.P = 4, .M = 12, .v = 2, .steps = 2, .seed = 107, .latency = 1.0},
    {.P = 6, .M = 24, .v = 2, .steps = 2, .seed = 108},
};
/* Full DualPipe: P even, M even and at least 2P; the shortest M, longer ones, latency, and uneven stages. */
static const pp_test_config dualpipe_tests[] = {
    {.P = 2, .M = 4, .v = 2, .steps = 2, .seed = 161},
    {.P = 2, .M = 8, .v = 2, .steps = 2, .seed = 162},
    {.P = 4, .M = 8, .v = 2, .steps = 3, .seed = 163, .on_gpu = 1},
    {.P = 4, .M = 16, .v = 2, .steps = 2, .seed = 164},
    {.P = 6, .M = 12, .v = 2, .steps = 2, .seed = 165},
    {.P = 8, .M = 16, .v = 2, .steps = 2, .seed = 166},
    {.P = 4, .M = 12, .v = 2, .steps = 2, .seed = 167, .latency = 1.0},
};

/* Lab 07: D = 1 (the pipeline alone: a reduce is free), 2 and 4 replicas, small enough that D*P sandboxed ranks
 * grade in a second or two each. */
static const pp_test_config dp1f1b_tests[] = {
    {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 111, .D = 1},
    {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 112, .D = 2, .on_gpu = 1},
    {.P = 4, .M = 8, .v = 1, .steps = 2, .seed = 113, .D = 2},
    {.P = 2, .M = 3, .v = 1, .steps = 2, .seed = 114, .D = 4},
    {.P = 3, .M = 6, .v = 1, .steps = 2, .seed = 115, .D = 2, .latency = 0.5},
};
static const pp_test_config dpinterleaved_tests[] = {
    {.P = 2, .M = 4, .v = 2, .steps = 2, .seed = 121, .D = 1},
    {.P = 2, .M = 4, .v = 2, .steps = 2, .seed = 122, .D = 2, .on_gpu = 1},
    {.P = 4, .M = 8, .v = 2, .steps = 2, .seed = 123, .D = 2},
    {.P = 2, .M = 4, .v = 3, .steps = 2, .seed = 124, .D = 4},
    {.P = 2, .M = 6, .v = 2, .steps = 2, .seed = 125, .D = 2, .latency = 0.5},
};

/* Lab 08, part 1: T = 2 and 4 shards of each stage, one to four stages, a deeper model on two of them so that a
 * stage holds several blocks; T*P sandboxed ranks, at most 8. */
static const pp_test_config tpblock_tests[] = {
    {.P = 1, .M = 2, .v = 1, .steps = 2, .seed = 171, .T = 2},
    {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 172, .T = 2, .on_gpu = 1},
    {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 173, .T = 4},
    {.P = 2, .M = 3, .v = 1, .steps = 2, .seed = 174, .T = 2, .layers = 6},
    {.P = 4, .M = 8, .v = 1, .steps = 2, .seed = 175, .T = 2},
    {.P = 1, .M = 3, .v = 1, .steps = 3, .seed = 176, .T = 4, .layers = 3},
};

/* Lab 08, part 2: grids of up to 8 ranks on nodes of 2 to 4, the canonical placement's step the bar. */
static const pp_test_config tpgrid_tests[] = {
    {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 181, .T = 2, .D = 2, .node_size = 4, .on_gpu = 1},
    {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 182, .T = 2, .D = 1, .node_size = 2},
    {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 183, .T = 4, .D = 1, .node_size = 4},
    {.P = 1, .M = 3, .v = 1, .steps = 2, .seed = 184, .T = 2, .D = 2, .node_size = 2},
    {.P = 4, .M = 8, .v = 1, .steps = 2, .seed = 185, .T = 2, .D = 1, .node_size = 4},
    {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 186, .T = 2, .D = 2, .node_size = 2},
};

/* Lab 09, the student's scheduler: one stage per rank and a V, the cap at P, below it and at one stash, latency with
 * a heavier first and last stage (the embedding and the head); the default cap is P * v. Each small enough for the
 * integer program to prove its optimum (make optima), so that a handout grades them against it. */
static const pp_test_config scheduler_tests[] = {
    {.P = 4, .M = 8, .v = 1, .steps = 2, .seed = 201},
    {.P = 4, .M = 4, .v = 1, .steps = 2, .seed = 202, .cap = 2},
    {.P = 4, .M = 6, .v = 1, .steps = 2, .seed = 203, .latency = 0.5, .edge = 1},
    {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 204, .cap = 1},
    {.P = 3, .M = 6, .v = 1, .steps = 2, .seed = 205, .cap = 2, .latency = 0.5},
    {.P = 2, .M = 6, .v = 2, .steps = 2, .seed = 206, .cap = 4},
};

static const struct {
    const char *name;
    const pp_test_config *tests;
    int n;
} parts[] = {
    {"naive", naive_tests, (int)(sizeof naive_tests / sizeof naive_tests[0])},
    {"gpipe", gpipe_tests, (int)(sizeof gpipe_tests / sizeof gpipe_tests[0])},
    {"1f1b", onef1b_tests, (int)(sizeof onef1b_tests / sizeof onef1b_tests[0])},
    {"interleaved", interleaved_tests, (int)(sizeof interleaved_tests / sizeof interleaved_tests[0])},
    {"loopedbfs", loopedbfs_tests, (int)(sizeof loopedbfs_tests / sizeof loopedbfs_tests[0])},
    {"zbh1", zbh1_tests, (int)(sizeof zbh1_tests / sizeof zbh1_tests[0])},
    {"zbh2", zbh2_tests, (int)(sizeof zbh2_tests / sizeof zbh2_tests[0])},
    {"zbinterleaved", zbinterleaved_tests, (int)(sizeof zbinterleaved_tests / sizeof zbinterleaved_tests[0])},
    {"zbv", zbv_tests, (int)(sizeof zbv_tests / sizeof zbv_tests[0])},
    {"dualpipev", dualpipev_tests, (int)(sizeof dualpipev_tests / sizeof dualpipev_tests[0])},
    {"dualpipe", dualpipe_tests, (int)(sizeof dualpipe_tests / sizeof dualpipe_tests[0])},
    {"dp1f1b", dp1f1b_tests, (int)(sizeof dp1f1b_tests / sizeof dp1f1b_tests[0])},
    {"dpinterleaved", dpinterleaved_tests, (int)(sizeof dpinterleaved_tests / sizeof dpinterleaved_tests[0])},
    {"tpblock", tpblock_tests, (int)(sizeof tpblock_tests / sizeof tpblock_tests[0])},
    {"tpgrid", tpgrid_tests, (int)(sizeof tpgrid_tests / sizeof tpgrid_tests[0])},
    {"scheduler", scheduler_tests, (int)(sizeof scheduler_tests / sizeof scheduler_tests[0])},
};

const pp_test_config *pp__testset(const char *name, int *n) {
    for (size_t i = 0; name && i < sizeof parts / sizeof parts[0]; i++)
        if (!strcmp(parts[i].name, name)) {
            *n = parts[i].n;
            return parts[i].tests;
        }
    *n = 0;
    return NULL;
}
