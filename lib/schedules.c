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

const pp_schedule_def pp__schedules[] = {
    {.name = "naive", .title = "naive", .folder = "01-naive", .file = "naive", .symbol = "pp_naive_step",
     .one_microbatch = 1, .free_phases = 1, .order = gpipe_order, .peak = gpipe_peak},
    {.name = "gpipe", .title = "GPipe", .folder = "02-gpipe", .file = "gpipe", .symbol = "pp_gpipe_step",
     .free_phases = 1, .order = gpipe_order, .peak = gpipe_peak},
    {.name = "1f1b", .title = "1F1B", .folder = "03-1f1b", .file = "onef1b", .symbol = "pp_1f1b_step",
     .order = onef1b_order, .peak = onef1b_peak,
     .peak_hint = "warmup should be min(P-r-1, M) forwards, and each stash freed right after its backward"},
    {.name = "interleaved", .title = "interleaved 1F1B", .folder = "04-interleaved", .file = "interleaved",
     .symbol = "pp_interleaved_step", .chunked = 1, .microbatches_per_rank = 1, .order = interleaved_order,
     .peak = interleaved_peak,
     .peak_hint = "warmup should be min(2(P-r-1)+(v-1)P, vM) chunk-forwards, and each stash freed right after its "
                  "backward"},
};
const int pp__nschedules = (int)(sizeof pp__schedules / sizeof pp__schedules[0]);

const pp_schedule_def *pp__schedule_def(const char *name) {
    for (int i = 0; name && i < pp__nschedules; i++)
        if (!strcmp(name, pp__schedules[i].name)) return &pp__schedules[i];
    return NULL;
}

const char *pp__schedule_names(char *buf, size_t len, const char *sep, const char *last) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < pp__nschedules && used < len; i++) {
        const char *join = i == 0 ? "" : i == pp__nschedules - 1 ? last : sep;
        int w = snprintf(buf + used, len - used, "%s%s", join, pp__schedules[i].name);
        if (w < 0) break;
        used += (size_t)w;
    }
    return buf;
}
