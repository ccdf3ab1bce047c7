/* schedules.c: the rows of the schedule table and their canonical orders. */
#include "schedules.h"

#include <stdio.h>
#include <string.h>

static int min_int(int a, int b) { return a < b ? a : b; }

/* All forwards in micro-batch order, then all backwards in the same order (GPipe; the naive schedule is its
 * M = 1 case). */
static int gpipe_order(int P, int M, int v, int r, pp_sched_op *ops) {
    int n = 0;
    for (int mb = 0; mb < M; mb++) ops[n++] = (pp_sched_op){'F', mb, 0, 0};
    for (int mb = 0; mb < M; mb++) ops[n++] = (pp_sched_op){'B', mb, 0, 0};
    return n;
}

static int gpipe_peak(int P, int M, int v, int r) { return M; }

/* A warm-up of min(P - r - 1, M) forwards, then one forward and one backward in turn, then the rest of the
 * backwards. */
static int onef1b_order(int P, int M, int v, int r, pp_sched_op *ops) {
    int n = 0, w = min_int(P - r - 1, M);
    for (int mb = 0; mb < w; mb++) ops[n++] = (pp_sched_op){'F', mb, 0, 0};
    for (int i = 0; i < M - w; i++) {
        ops[n++] = (pp_sched_op){'F', w + i, 0, 0};
        ops[n++] = (pp_sched_op){'B', i, 0, 0};
    }
    for (int i = M - w; i < M; i++) ops[n++] = (pp_sched_op){'B', i, 0, 0};
    return n;
}

static int onef1b_peak(int P, int M, int v, int r) { return min_int(P - r, M); }

/* Megatron-LM's interleaved order: the k-th chunk-forward of a rank runs chunk (k mod Pv) div P on micro-batch
 * (k div Pv) * P + k mod P; backwards visit the chunks in reverse. */
static pp_sched_op interleaved_op(int P, int v, int k, int backward) {
    int chunk = (k % (P * v)) / P;
    return (pp_sched_op){backward ? 'B' : 'F', (k / (P * v)) * P + k % P, backward ? v - 1 - chunk : chunk, 0};
}

/* The depth-first order with a warm-up of min(2(P - r - 1) + (v - 1)P, vM) chunk-forwards. */
static int interleaved_order(int P, int M, int v, int r, pp_sched_op *ops) {
    int n = 0, total = v * M, w = min_int(2 * (P - r - 1) + (v - 1) * P, total);
    for (int k = 0; k < w; k++) ops[n++] = interleaved_op(P, v, k, 0);
    for (int i = 0; i < total - w; i++) {
        ops[n++] = interleaved_op(P, v, w + i, 0);
        ops[n++] = interleaved_op(P, v, i, 1);
    }
    for (int i = total - w; i < total; i++) ops[n++] = interleaved_op(P, v, i, 1);
    return n;
}

static int interleaved_peak(int P, int M, int v, int r) { return min_int(2 * (P - r - 1) + (v - 1) * P + 1, v * M); }

/* The default grading set, per schedule: P up to 8, M from below P to 4P, several seeds, latency and
 * recomputation cases, chosen so that the whole set grades in seconds; on_gpu marks the few a CUDA run keeps. */
static const pp_schedule_test naive_tests[] = {
    {.P = 2, .M = 1, .v = 1, .steps = 2, .seed = 1},
    {.P = 3, .M = 1, .v = 1, .steps = 2, .seed = 2},
    {.P = 4, .M = 1, .v = 1, .steps = 3, .seed = 3, .on_gpu = 1},
    {.P = 8, .M = 1, .v = 1, .steps = 2, .seed = 4},
    {.P = 4, .M = 1, .v = 1, .steps = 2, .seed = 5, .latency = 0.5},
    {.P = 6, .M = 1, .v = 1, .steps = 2, .seed = 6},
};
static const pp_schedule_test gpipe_tests[] = {
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
static const pp_schedule_test onef1b_tests[] = {
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
static const pp_schedule_test interleaved_tests[] = {
    {.P = 2, .M = 2, .v = 2, .steps = 2, .seed = 51, .on_gpu = 1},
    {.P = 2, .M = 4, .v = 2, .steps = 2, .seed = 52},
    {.P = 4, .M = 4, .v = 2, .steps = 2, .seed = 53},
    {.P = 4, .M = 8, .v = 2, .steps = 3, .seed = 54},
    {.P = 4, .M = 16, .v = 2, .steps = 2, .seed = 55},
    {.P = 4, .M = 8, .v = 3, .steps = 2, .seed = 56, .on_gpu = 1},
    {.P = 2, .M = 4, .v = 4, .steps = 2, .seed = 57},
    {.P = 8, .M = 8, .v = 2, .steps = 2, .seed = 58},
    {.P = 8, .M = 16, .v = 2, .steps = 2, .seed = 59},
    {.P = 4, .M = 8, .v = 2, .steps = 2, .seed = 60, .latency = 1.0},
    {.P = 3, .M = 6, .v = 2, .steps = 2, .seed = 61},
    {.P = 4, .M = 12, .v = 4, .steps = 2, .seed = 62},
    {.P = 2, .M = 4, .v = 3, .steps = 2, .seed = 63, .latency = 0.5},
    {.P = 6, .M = 12, .v = 2, .steps = 2, .seed = 64},
};

#define TESTS(a) .tests = a, .ntests = (int)(sizeof a / sizeof a[0])

const pp_schedule_def pp__schedules[] = {
    {.name = "naive", .title = "naive", .folder = "01-naive", .file = "naive", .symbol = "pp_naive_step",
     .one_microbatch = 1, .free_phases = 1, .order = gpipe_order, .peak = gpipe_peak, TESTS(naive_tests)},
    {.name = "gpipe", .title = "GPipe", .folder = "02-gpipe", .file = "gpipe", .symbol = "pp_gpipe_step",
     .free_phases = 1, .order = gpipe_order, .peak = gpipe_peak, TESTS(gpipe_tests)},
    {.name = "1f1b", .title = "1F1B", .folder = "03-1f1b", .file = "onef1b", .symbol = "pp_1f1b_step",
     .order = onef1b_order, .peak = onef1b_peak,
     .peak_hint = "warmup should be min(P-r-1, M) forwards, and each stash freed right after its backward",
     TESTS(onef1b_tests)},
    {.name = "interleaved", .title = "interleaved 1F1B", .folder = "04-interleaved", .file = "interleaved",
     .symbol = "pp_interleaved_step", .chunked = 1, .microbatches_per_rank = 1, .order = interleaved_order,
     .peak = interleaved_peak,
     .peak_hint = "warmup should be min(2(P-r-1)+(v-1)P, vM) chunk-forwards, and each stash freed right after its "
                  "backward",
     TESTS(interleaved_tests)},
};
#undef TESTS
const int pp__nschedules = (int)(sizeof pp__schedules / sizeof pp__schedules[0]);

const pp_schedule_def *pp__schedule_def(const char *name) {
    for (int i = 0; name && i < pp__nschedules; i++)
        if (!strcmp(name, pp__schedules[i].name)) return &pp__schedules[i];
    return NULL;
}

/* The names of the rows that `keep` accepts (all when NULL), joined with sep, and last before the final one. */
static const char *names_of(char *buf, size_t len, const char *sep, const char *last,
                            int (*keep)(const pp_schedule_def *)) {
    int total = 0, k = 0;
    for (int i = 0; i < pp__nschedules; i++) total += !keep || keep(&pp__schedules[i]);
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < pp__nschedules && used < len; i++) {
        if (keep && !keep(&pp__schedules[i])) continue;
        const char *join = k == 0 ? "" : k == total - 1 ? last : sep;
        int w = snprintf(buf + used, len - used, "%s%s", join, pp__schedules[i].name);
        if (w < 0) break;
        used += (size_t)w;
        k++;
    }
    return buf;
}

const char *pp__schedule_names(char *buf, size_t len, const char *sep, const char *last) {
    return names_of(buf, len, sep, last, NULL);
}

static int is_chunked(const pp_schedule_def *d) { return d->chunked; }

const char *pp__schedule_names_chunked(char *buf, size_t len, const char *sep, const char *last) {
    return names_of(buf, len, sep, last, is_chunked);
}
