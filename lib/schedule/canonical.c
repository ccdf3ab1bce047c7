/* canonical.c: the canonical order of every row of the schedule table, each rank's stash peak in it, and its
 * closed bubble where it has one: the kit's generators, which compute what the labs grade for any configuration.
 * A student handout has no copy of this file (answers.h). */
#include "canonical.h"

#include <stdio.h>
#include <string.h>

static int min_int(int a, int b) { return a < b ? a : b; }

static pp_sched_op op_of(char kind, int mb, int chunk) { return (pp_sched_op){.kind = kind, .mb = mb, .chunk = chunk}; }

/* All forwards in micro-batch order, then all backwards in the same order (GPipe; the naive schedule is its
 * M = 1 case). */
static int gpipe_order(int P, int M, int v, int r, pp_sched_op *ops) {
    int n = 0;
    for (int mb = 0; mb < M; mb++) ops[n++] = op_of('F', mb, 0);
    for (int mb = 0; mb < M; mb++) ops[n++] = op_of('B', mb, 0);
    return n;
}

static int gpipe_peak(int P, int M, int v, int r) { return M; }

/* A warm-up of forwards, then one forward and one backward in turn, then the rest of the backwards. How long
 * each rank's warm-up is, and why, is lab 03's question; the code answers it, no comment here does. */
static int onef1b_order(int P, int M, int v, int r, pp_sched_op *ops) {
    int n = 0, w = min_int(P - r - 1, M);
    for (int mb = 0; mb < w; mb++) ops[n++] = op_of('F', mb, 0);
    for (int i = 0; i < M - w; i++) {
        ops[n++] = op_of('F', w + i, 0);
        ops[n++] = op_of('B', i, 0);
    }
    for (int i = M - w; i < M; i++) ops[n++] = op_of('B', i, 0);
    return n;
}

static int onef1b_peak(int P, int M, int v, int r) { return min_int(P - r, M); }

/* Megatron-LM's interleaved order as PyTorch's ScheduleInterleaved1F1B builds it (torch 2.15;
 * tests/fixtures/torch-looped-orders.txt): micro-batches go through a rank's chunks in rounds of R = M / max(1,
 * M div P) (P itself where P divides M), and backwards visit the chunks in reverse. Which chunk and micro-batch the
 * k-th op runs is lab 04's question. */
static pp_sched_op interleaved_op(int R, int v, int k, int backward) {
    int chunk = (k % (R * v)) / R;
    return op_of(backward ? 'B' : 'F', (k / (R * v)) * R + k % R, backward ? v - 1 - chunk : chunk);
}

/* The warm-up of the depth-first order, in chunk-forwards (lab 04 asks how many). */
static int interleaved_warmup(int P, int M, int v, int r) {
    return min_int(2 * (P - r - 1) + (v - 1) * (M / pp__schedule_rounds(P, M)), v * M);
}

/* The depth-first order: the warm-up's chunk-forwards, then one of each in turn, then the rest of the backwards. */
static int interleaved_order(int P, int M, int v, int r, pp_sched_op *ops) {
    int n = 0, total = v * M, w = interleaved_warmup(P, M, v, r), R = M / pp__schedule_rounds(P, M);
    for (int k = 0; k < w; k++) ops[n++] = interleaved_op(R, v, k, 0);
    for (int i = 0; i < total - w; i++) {
        ops[n++] = interleaved_op(R, v, w + i, 0);
        ops[n++] = interleaved_op(R, v, i, 1);
    }
    for (int i = total - w; i < total; i++) ops[n++] = interleaved_op(R, v, i, 1);
    return n;
}

static int interleaved_peak(int P, int M, int v, int r) { return min_int(interleaved_warmup(P, M, v, r) + 1, v * M); }

/* The classic schedules' theoretical bubble (the warm-up's bubble part asks for it). */
static double classic_bubble(int P, int M, int v) { return (double)(P - 1) / (v * M + P - 1); }

/* Breadth-first (Lamy-Poirier, "Breadth-First Pipeline Parallelism", MLSys 2023), op for op PyTorch's
 * ScheduleLoopedBFS (torch 2.15; tests/fixtures/torch-looped-orders.txt): the same looped placement as the
 * depth-first order, every forward before any backward, chunk after chunk. In which order the micro-batches of a
 * chunk run each way is lab 04's second question. */
static int loopedbfs_order(int P, int M, int v, int r, pp_sched_op *ops) {
    int n = 0;
    for (int chunk = 0; chunk < v; chunk++)
        for (int mb = 0; mb < M; mb++) ops[n++] = op_of('F', mb, chunk);
    for (int chunk = v - 1; chunk >= 0; chunk--)
        for (int mb = M - 1; mb >= 0; mb--) ops[n++] = op_of('B', mb, chunk);
    return n;
}

static int loopedbfs_peak(int P, int M, int v, int r) { return v * M; }

/* Depth-first's bubble once a chunk's micro-batches outlast a round of the ring (M >= P); with fewer, rank 0
 * waits between its chunks, and the replay says how long. */
static double loopedbfs_bubble(int P, int M, int v) { return M >= P ? classic_bubble(P, M, v) : -1; }

/* Depth-first's too: its rounds hold P micro-batches or more once M >= P, whether or not P divides M; with fewer,
 * the replay says how long the ranks wait. */
static double interleaved_bubble(int P, int M, int v) { return M >= P ? classic_bubble(P, M, v) : -1; }

/* Zero bubble (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024): 1F1B with each backward split into its
 * input half B, which the previous stage waits for, and its weight half W, which nobody waits for. A warm-up of
 * w forwards, then F and B in turn, then the remaining B's; rank r runs each W only once r more backwards have
 * run after its B, and the r it still holds at the end last. The later a rank, the earlier it starts, so the
 * more of the cool-down's waiting it can fill with weight halves while its B's go upstream at once. */
static int zb_order(int M, int r, int w, pp_sched_op *ops) {
    int n = 0, nb = 0, nw = 0;
    w = min_int(w, M);
    for (int mb = 0; mb < w; mb++) ops[n++] = op_of('F', mb, 0);
    for (int i = 0; i < M; i++) {
        if (w + i < M) ops[n++] = op_of('F', w + i, 0);
        ops[n++] = op_of('B', i, 0);
        if (++nb - nw > r) ops[n++] = op_of('W', nw++, 0);
    }
    while (nw < M) ops[n++] = op_of('W', nw++, 0);
    return n;
}

/* ZB-H1: 1F1B's warm-up. */
static int zbh1_order(int P, int M, int v, int r, pp_sched_op *ops) { return zb_order(M, r, P - r - 1, ops); }

/* ZB-H2: a longer warm-up than ZB-H1's; the extra forwards give every message time to arrive. */
static int zbh2_order(int P, int M, int v, int r, pp_sched_op *ops) { return zb_order(M, r, 2 * (P - r - 1), ops); }

/* Interleaved zero bubble, op for op PyTorch's ScheduleInterleavedZeroBubble (torch 2.15;
 * tests/fixtures/torch-looped-orders.txt): interleaved 1F1B's chunk order over rounds of R = M / max(1, M div P)
 * micro-batches, with every backward split. Its warm-up is one forward per hop shorter than Megatron-LM's; rank r
 * holds its first r weight halves back, then runs the oldest one after each input half, and the rest at the end.
 * Why the warm-up can be shorter here, and what the held weight halves fill, is lab 05's third question. */
static int zbinterleaved_order(int P, int M, int v, int r, pp_sched_op *ops) {
    int R = M / pp__schedule_rounds(P, M), total = v * M, w = min_int((v - 1) * R + P - 1 - r, total);
    int next_f[16] = {0}, next_b[16] = {0}, n = 0, nb = 0, nw = 0;
    for (int k = 0; k < total + w; k++) {
        if (k < total) {
            int chunk = (k / R) % v;
            ops[n++] = op_of('F', next_f[chunk]++, chunk);
        }
        if (k < w) continue;
        int chunk = v - 1 - ((k - w) / R) % v;
        ops[n++] = op_of('B', next_b[chunk]++, chunk);
        nb++;
        if (k - w >= r) ops[n++] = op_of('W', -1, -1), nw++;
    }
    while (nw < nb) ops[n++] = op_of('W', -1, -1), nw++;
    /* the weight halves run in the input halves' order: the i-th W is the i-th B's */
    for (int i = 0, j = 0; i < n; i++) {
        if (ops[i].kind != 'W') continue;
        while (ops[j].kind != 'B') j++;
        ops[i].mb = ops[j].mb, ops[i].chunk = ops[j].chunk, j++;
    }
    return n;
}

/* Every rank's peak: a round's chunk-forwards per later chunk and one per rank of the ring, capped at vM. */
static int zbinterleaved_peak(int P, int M, int v, int r) {
    return min_int((v - 1) * (M / pp__schedule_rounds(P, M)) + P, v * M);
}

/* The stash peaks, counted from the order (the warm-up's peaks part asks for them). */
static int zbh1_peak(int P, int M, int v, int r) { return min_int(min_int(P - r - 1, M) + 1 + r, M); }
static int zbh2_peak(int P, int M, int v, int r) { return min_int(min_int(2 * (P - r - 1), M) + 1 + r, M); }

/* The same floor with two chunks per rank. */
static double v_bubble(int P, int M, int v) { return M >= 2 * P ? (double)(P - 1) / (6 * M + P - 1) : -1; }

/* ---- V-shaped placement: rank r holds virtual stages r (chunk 0) and 2P-1-r (chunk 1) ------------------ */

/* An order under construction, dropping ops of micro-batches that do not exist: the V orders are written for
 * at least 2P-1 micro-batches and cut down, as PyTorch does. */
typedef struct order_out {
    pp_sched_op *ops;
    int n, M;
} order_out;

static void put(order_out *o, char kind, int mb, int chunk) {
    if (mb < o->M) o->ops[o->n++] = op_of(kind, mb, chunk);
}

/* ZBV (Qi et al., "Zero Bubble Pipeline Parallelism", section 6), op for op PyTorch's ScheduleZBVZeroBubble
 * (torch 2.15; tests/fixtures/torch-v-orders.txt holds its pipeline_order): a warm-up down chunk 0, then chunk 1's
 * forwards interleaved, then F, B, W of one chunk after the other's, every backward split, the cool-down's input
 * halves first and their weight halves last. */
static int zbv_order(int P, int M, int v, int r, pp_sched_op *ops) {
    order_out o = {ops, 0, M};
    int nm = M > 2 * P - 1 ? M : 2 * P - 1, f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    for (int i = 0; i < 2 * (P - r) - 1; i++) put(&o, 'F', f0++, 0);
    for (int i = 0; i < r; i++) put(&o, 'F', f1++, 1), put(&o, 'F', f0++, 0);
    for (int i = 0; i < P - r; i++) put(&o, 'F', f1++, 1), put(&o, 'B', b1, 1), put(&o, 'W', b1++, 1);
    while (f1 < f0 || f0 < nm) {
        if (f0 < nm) put(&o, 'F', f0++, 0);
        put(&o, 'B', b0, 0), put(&o, 'W', b0++, 0);
        put(&o, 'F', f1++, 1), put(&o, 'B', b1, 1), put(&o, 'W', b1++, 1);
    }
    int w0 = b0, w1 = b1;
    for (int i = 0; i < r; i++) put(&o, 'B', b0++, 0), put(&o, 'B', b1++, 1);
    for (int i = 0; i < P - r; i++) put(&o, 'B', b0++, 0), put(&o, 'W', w0++, 0);
    while (w1 < b1) put(&o, 'W', w1++, 1);
    while (w0 < b0) put(&o, 'W', w0++, 0);
    return o.n;
}

/* The stash peak of the V, counted as the order runs (lab 06 asks for it). */
static int zbv_peak(int P, int M, int v, int r) { return min_int(min_int(2 * P, M + 1 + r), 2 * M); }

/* DualPipeV's state: per chunk the next forward and the next backward, and the weight halves held back. */
typedef struct dpv {
    order_out o;
    int f[2], b[2];
    int wq_chunk[2048], wq_mb[2048], wq_head, wq_tail;
} dpv;

static void dpv_f(dpv *d, int ch) { put(&d->o, 'F', d->f[ch]++, ch); }
static void dpv_whole(dpv *d, int ch) { put(&d->o, 'B', d->b[ch]++, ch); }

static void dpv_input(dpv *d, int ch) {
    d->wq_chunk[d->wq_tail] = ch, d->wq_mb[d->wq_tail++] = d->b[ch];
    put(&d->o, 'B', d->b[ch]++, ch);
}

static void dpv_weight(dpv *d) {
    if (d->wq_head < d->wq_tail) put(&d->o, 'W', d->wq_mb[d->wq_head], d->wq_chunk[d->wq_head]), d->wq_head++;
}

/* DualPipeV (DeepSeek-V3's DualPipe folded into a V), op for op PyTorch's ScheduleDualPipeV (torch 2.15;
 * tests/fixtures/torch-v-orders.txt): its "overlapped" F-and-B slots are written as the F, then the whole B. A
 * warm-up down chunk 0, forwards of both chunks, chunk 1's split backwards, then the main phase of overlapped
 * pairs, and a cool-down that splits the second half of its backwards to fill the drain with weight halves. */
static int dualpipev_order(int P, int M, int v, int r, pp_sched_op *ops) {
    static _Thread_local dpv d;
    memset(&d, 0, sizeof d);
    d.o = (order_out){ops, 0, M};
    for (int i = 0; i < 2 * (P - r - 1); i++) dpv_f(&d, 0);
    for (int i = 0; i < r + 1; i++) dpv_f(&d, 0), dpv_f(&d, 1);
    for (int i = 0; i < P - r - 1; i++) dpv_input(&d, 1), dpv_weight(&d), dpv_f(&d, 1);
    /* (PyTorch keeps rank P-1's first pair apart, not overlapped; the order of its ops is the same) */
    for (int i = 0; i < M - 2 * P + r + 1; i++) dpv_f(&d, 0), dpv_whole(&d, 1), dpv_f(&d, 1), dpv_whole(&d, 0);
    for (int i = 0; i < P - r - 1; i++) dpv_whole(&d, 1), dpv_f(&d, 1), dpv_whole(&d, 0);
    int zb = 0, half = (r + 1) / 2;
    for (int i = 0; i < r + 1; i++) {
        if (i == half && r % 2 == 1) zb = 1;
        zb ? dpv_input(&d, 1) : dpv_whole(&d, 1);
        if (i == half && r % 2 == 0) zb = 1;
        zb ? dpv_input(&d, 0) : dpv_whole(&d, 0);
    }
    for (int i = 0; i < P - r - 1; i++) {
        dpv_weight(&d);
        zb ? dpv_input(&d, 0) : dpv_whole(&d, 0);
    }
    for (int i = 0; i < r + 1; i++) dpv_weight(&d);
    return d.o.n;
}

/* Full DualPipe (DeepSeek-V3, section 3.2.1), op for op deepseek-ai/DualPipe's DualPipe.step
 * (tests/fixtures/deepseek-dualpipe-orders.txt, replayed by tests/fixtures/dump-deepseek-dualpipe-orders.py). Rank r
 * holds stage r of the pipeline fed at rank 0 (chunk 0, micro-batches 0..M/2-1) and stage P-1-r of the one fed at
 * rank P-1 (chunk 1, the other half). Each half of the ranks runs DualPipeV's order for rank min(r, P-1-r) of P/2
 * on M/2 micro-batches a direction: the reference's "phase 0" is the direction that runs towards the middle, which
 * is chunk 0 on the first half and chunk 1 on the second, so DualPipeV's turn on its last rank becomes the step
 * across the middle of the full pipeline. */
int pp__schedule_dualpipe_order(int P, int M, int r, pp_sched_op *ops) {
    int half = r < P - 1 - r ? r : P - 1 - r, second = r >= P / 2;
    int n = dualpipev_order(P / 2, M / 2, 2, half, ops);
    for (int i = 0; i < n; i++) {
        ops[i].chunk ^= second;
        if (ops[i].chunk == 1) ops[i].mb += M / 2;
    }
    return n;
}

/* The stash peak of DualPipeV, counted as its order runs. */
static int dualpipev_peak(int P, int M, int v, int r) { return 2 * P + 1; }

static int dualpipe_order(int P, int M, int v, int r, pp_sched_op *ops) { return pp__schedule_dualpipe_order(P, M, r, ops); }
/* Each half runs DualPipeV's order at half the ranks: its peak, at P/2. */
static int dualpipe_peak(int P, int M, int v, int r) { return P + 1; }
/* And its bubble, at half the ranks and half the micro-batches a direction: (P/2-1)/(3M+P/2-1). */
static double dualpipe_bubble(int P, int M, int v) { return v_bubble(P / 2, M / 2, v); }

/* The zero-bubble schedules' theoretical bubble with F = B = W, in chunk ops (lab 05 asks for the floor and why). */
static double zb_bubble(int P, int M, int v) { return M >= P ? (double)(P - 1) / (3 * v * M + P - 1) : -1; }


/* The rows' generators, by the row's name (schedules.c's table holds everything else of a row). */
static const pp_canonical canonical[] = {
    {"naive", gpipe_order, gpipe_peak, NULL},
    {"gpipe", gpipe_order, gpipe_peak, classic_bubble},
    {"1f1b", onef1b_order, onef1b_peak, classic_bubble},
    {"interleaved", interleaved_order, interleaved_peak, interleaved_bubble},
    {"loopedbfs", loopedbfs_order, loopedbfs_peak, loopedbfs_bubble},
    {"zbh1", zbh1_order, zbh1_peak, zb_bubble},
    {"zbh2", zbh2_order, zbh2_peak, zb_bubble},
    {"zbinterleaved", zbinterleaved_order, zbinterleaved_peak, zb_bubble},
    {"zbv", zbv_order, zbv_peak, v_bubble},
    {"dualpipev", dualpipev_order, dualpipev_peak, v_bubble},
    {"dualpipe", dualpipe_order, dualpipe_peak, dualpipe_bubble},
    {"dp1f1b", onef1b_order, onef1b_peak, classic_bubble},
    {"dpinterleaved", interleaved_order, interleaved_peak, classic_bubble},
    {"tpblock", onef1b_order, onef1b_peak, classic_bubble},
    {"tpgrid", onef1b_order, onef1b_peak, classic_bubble},
};

const pp_canonical *pp__canonical(const char *name) {
    for (size_t i = 0; name && i < sizeof canonical / sizeof canonical[0]; i++)
        if (!strcmp(name, canonical[i].name)) return &canonical[i];
    return NULL;
}
