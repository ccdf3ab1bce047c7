/* HOSTILE ON PURPOSE (warmup-table): a warm-up that computes nothing. Each function looks its arguments up in a
 * table of the grader's public cases (grader/grade/warmup.c) and returns the answer stored there, and a wrong
 * value for anything else. The tables were generated once from the reference solution's answers
 * (solutions/00-warmup/warmup.c). It earns full marks on a practice run, which grades the public cases, and
 * nothing on a graded run, whose cases are drawn from the hidden configuration's warmup-seed;
 * tests/test_warmup_seed.c asserts both. */
#include <string.h>

#include "pp.h"

#define N(a) (sizeof a / sizeof *a)

/* ---- the answers to the public cases ------------------------------------------------------------------------ */

static const struct { const char *s; int P, M, v; double x; } bubble_t[] = {
    {"naive", 4, 1, 1, 0.75},
    {"naive", 8, 1, 1, 0.875},
    {"naive", 4, 8, 1, 0.75},
    {"gpipe", 4, 6, 1, 0.33333333333333331},
    {"gpipe", 4, 24, 1, 0.1111111111111111},
    {"gpipe", 8, 32, 1, 0.17948717948717949},
    {"gpipe", 2, 1, 1, 0.5},
    {"1f1b", 4, 8, 1, 0.27272727272727271},
    {"1f1b", 4, 6, 1, 0.33333333333333331},
    {"1f1b", 8, 16, 1, 0.30434782608695654},
    {"interleaved", 4, 8, 2, 0.15789473684210525},
    {"interleaved", 4, 16, 4, 0.044776119402985072},
    {"interleaved", 2, 4, 2, 0.1111111111111111},
    {"interleaved", 8, 16, 2, 0.17948717948717949},
    {"zbh1", 4, 8, 1, 0.1111111111111111},
    {"zbh1", 4, 16, 1, 0.058823529411764705},
    {"zbh1", 8, 8, 1, 0.22580645161290322},
    {"zbh2", 4, 8, 1, 0.1111111111111111},
    {"zbh2", 3, 9, 1, 0.068965517241379309},
};

static const struct { const char *s; int P, M, v, rank, x; } peak_t[] = {
    {"gpipe", 4, 8, 1, 0, 8},
    {"gpipe", 4, 8, 1, 1, 8},
    {"gpipe", 4, 8, 1, 2, 8},
    {"gpipe", 4, 8, 1, 3, 8},
    {"gpipe", 4, 6, 1, 0, 6},
    {"gpipe", 4, 6, 1, 1, 6},
    {"gpipe", 4, 6, 1, 2, 6},
    {"gpipe", 4, 6, 1, 3, 6},
    {"gpipe", 2, 3, 1, 0, 3},
    {"gpipe", 2, 3, 1, 1, 3},
    {"1f1b", 4, 8, 1, 0, 4},
    {"1f1b", 4, 8, 1, 1, 3},
    {"1f1b", 4, 8, 1, 2, 2},
    {"1f1b", 4, 8, 1, 3, 1},
    {"1f1b", 4, 2, 1, 0, 2},
    {"1f1b", 4, 2, 1, 1, 2},
    {"1f1b", 4, 2, 1, 2, 2},
    {"1f1b", 4, 2, 1, 3, 1},
    {"1f1b", 8, 16, 1, 0, 8},
    {"1f1b", 8, 16, 1, 1, 7},
    {"1f1b", 8, 16, 1, 2, 6},
    {"1f1b", 8, 16, 1, 3, 5},
    {"1f1b", 8, 16, 1, 4, 4},
    {"1f1b", 8, 16, 1, 5, 3},
    {"1f1b", 8, 16, 1, 6, 2},
    {"1f1b", 8, 16, 1, 7, 1},
    {"interleaved", 4, 8, 2, 0, 11},
    {"interleaved", 4, 8, 2, 1, 9},
    {"interleaved", 4, 8, 2, 2, 7},
    {"interleaved", 4, 8, 2, 3, 5},
    {"interleaved", 4, 4, 2, 0, 8},
    {"interleaved", 4, 4, 2, 1, 8},
    {"interleaved", 4, 4, 2, 2, 7},
    {"interleaved", 4, 4, 2, 3, 5},
    {"interleaved", 2, 4, 3, 0, 7},
    {"interleaved", 2, 4, 3, 1, 5},
    {"zbh1", 4, 8, 1, 0, 4},
    {"zbh1", 4, 8, 1, 1, 4},
    {"zbh1", 4, 8, 1, 2, 4},
    {"zbh1", 4, 8, 1, 3, 4},
    {"zbh1", 4, 2, 1, 0, 2},
    {"zbh1", 4, 2, 1, 1, 2},
    {"zbh1", 4, 2, 1, 2, 2},
    {"zbh1", 4, 2, 1, 3, 2},
    {"zbh2", 4, 8, 1, 0, 7},
    {"zbh2", 4, 8, 1, 1, 6},
    {"zbh2", 4, 8, 1, 2, 5},
    {"zbh2", 4, 8, 1, 3, 4},
    {"zbh2", 4, 4, 1, 0, 4},
    {"zbh2", 4, 4, 1, 1, 4},
    {"zbh2", 4, 4, 1, 2, 4},
    {"zbh2", 4, 4, 1, 3, 4},
};

static const struct { const char *s; int P, M, rank, n; const char *ops; } order_t[] = {
    {"gpipe", 4, 8, 0, 16, "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7"},
    {"gpipe", 4, 8, 1, 16, "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7"},
    {"gpipe", 4, 8, 2, 16, "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7"},
    {"gpipe", 4, 8, 3, 16, "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7"},
    {"1f1b", 4, 8, 0, 16, "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7"},
    {"1f1b", 4, 8, 1, 16, "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7"},
    {"1f1b", 4, 8, 2, 16, "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7"},
    {"1f1b", 4, 8, 3, 16, "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7"},
    {"1f1b", 4, 2, 0, 4, "F0 F1 B0 B1"},
    {"1f1b", 4, 2, 1, 4, "F0 F1 B0 B1"},
    {"1f1b", 4, 2, 2, 4, "F0 F1 B0 B1"},
    {"1f1b", 4, 2, 3, 4, "F0 B0 F1 B1"},
};

static const struct { int P, M, v, rank, n; const char *ops; } chunk_order_t[] = {
    {4, 8, 2, 0, 32, "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 F3.1 F4.0 F5.0 F6.0 B0.1 F7.0 B1.1 F4.1 B2.1 F5.1 B3.1 F6.1 B0.0 F7.1 B1.0 B2.0 B3.0 B4.1 B5.1 B6.1 B7.1 B4.0 B5.0 B6.0 B7.0"},
    {4, 8, 2, 1, 32, "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 F3.1 F4.0 B0.1 F5.0 B1.1 F6.0 B2.1 F7.0 B3.1 F4.1 B0.0 F5.1 B1.0 F6.1 B2.0 F7.1 B3.0 B4.1 B5.1 B6.1 B7.1 B4.0 B5.0 B6.0 B7.0"},
    {4, 8, 2, 2, 32, "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 B0.1 F3.1 B1.1 F4.0 B2.1 F5.0 B3.1 F6.0 B0.0 F7.0 B1.0 F4.1 B2.0 F5.1 B3.0 F6.1 B4.1 F7.1 B5.1 B6.1 B7.1 B4.0 B5.0 B6.0 B7.0"},
    {4, 8, 2, 3, 32, "F0.0 F1.0 F2.0 F3.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.1 B3.1 F4.0 B0.0 F5.0 B1.0 F6.0 B2.0 F7.0 B3.0 F4.1 B4.1 F5.1 B5.1 F6.1 B6.1 F7.1 B7.1 B4.0 B5.0 B6.0 B7.0"},
    {2, 4, 3, 0, 24, "F0.0 F1.0 F0.1 F1.1 F0.2 F1.2 F2.0 B0.2 F3.0 B1.2 F2.1 B0.1 F3.1 B1.1 F2.2 B0.0 F3.2 B1.0 B2.2 B3.2 B2.1 B3.1 B2.0 B3.0"},
    {2, 4, 3, 1, 24, "F0.0 F1.0 F0.1 F1.1 F0.2 B0.2 F1.2 B1.2 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 F2.2 B2.2 F3.2 B3.2 B2.1 B3.1 B2.0 B3.0"},
    {4, 4, 2, 0, 16, "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 F3.1 B0.1 B1.1 B2.1 B3.1 B0.0 B1.0 B2.0 B3.0"},
    {4, 4, 2, 1, 16, "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 F3.1 B0.1 B1.1 B2.1 B3.1 B0.0 B1.0 B2.0 B3.0"},
    {4, 4, 2, 2, 16, "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 B0.1 F3.1 B1.1 B2.1 B3.1 B0.0 B1.0 B2.0 B3.0"},
    {4, 4, 2, 3, 16, "F0.0 F1.0 F2.0 F3.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.1 B3.1 B0.0 B1.0 B2.0 B3.0"},
};

static const struct { const char *s; int P, M, v, t, n; const char *idle; } idle_t[] = {
    {"gpipe", 4, 6, 1, 0, 3, "0111"},
    {"gpipe", 4, 6, 1, 4, 0, "0000"},
    {"gpipe", 4, 6, 1, 10, 3, "1110"},
    {"gpipe", 4, 6, 1, 24, 2, "0011"},
    {"gpipe", 4, 6, 1, 40, 4, "1111"},
    {"1f1b", 4, 8, 1, 2, 1, "0001"},
    {"1f1b", 4, 8, 1, 6, 2, "1100"},
    {"1f1b", 4, 8, 1, 15, 0, "0000"},
    {"1f1b", 4, 8, 1, 27, 2, "1001"},
    {"1f1b", 4, 8, 1, 30, 3, "1011"},
    {"interleaved", 4, 8, 2, 1, 2, "0011"},
    {"interleaved", 4, 8, 2, 11, 2, "1100"},
    {"interleaved", 4, 8, 2, 30, 0, "0000"},
    {"interleaved", 4, 8, 2, 50, 0, "0000"},
    {"interleaved", 2, 4, 2, 5, 1, "10"},
};

static const struct { int P, M; double f[4], x; } uneven_t[] = {
    {4, 8, {0.5, 1, 1, 1}, 0.33333333333333337},
    {4, 2, {0.25, 1, 1, 1}, 0.61764705882352944},
    {4, 8, {1, 1, 1, 2}, 0.47368421052631582},
    {3, 4, {1, 1, 3, 0}, 0.52380952380952384},
    {4, 8, {1, 1.5, 0.5, 1}, 0.44827586206896552},
    {2, 6, {2, 1, 0, 0}, 0.30769230769230771},
};

static const struct { int P, M, blocks; double latency; int v; } chunks_t[] = {
    {4, 8, 4, 0, 4},
    {2, 4, 6, 0, 6},
    {8, 8, 2, 0, 2},
    {4, 8, 4, 0.25, 4},
    {4, 8, 4, 1, 2},
    {4, 8, 4, 8, 1},
    {2, 4, 6, 0.25, 3},
    {2, 4, 6, 1.5, 2},
    {8, 16, 4, 0.5, 4},
    {4, 4, 8, 3, 2},
};

static const struct { const char *s; int P, M, v, b, sq, h; double x; } traffic_t[] = {
    {"gpipe", 4, 8, 1, 4, 16, 64, 786432},
    {"1f1b", 8, 16, 1, 4, 16, 64, 3670016},
    {"naive", 4, 4, 1, 4, 16, 64, 98304},
    {"zbh1", 4, 8, 1, 4, 16, 64, 786432},
    {"interleaved", 4, 8, 2, 4, 16, 64, 1835008},
    {"interleaved", 2, 4, 3, 4, 16, 64, 655360},
    {"zbv", 4, 8, 2, 4, 16, 64, 1572864},
    {"zbv", 2, 6, 2, 4, 16, 64, 393216},
};

static const struct { const char *s; int P, M, v, rank, b, sq, h; double x; } memory_t[] = {
    {"gpipe", 4, 8, 1, 0, 4, 16, 64, 131072},
    {"gpipe", 4, 8, 1, 1, 4, 16, 64, 131072},
    {"gpipe", 4, 8, 1, 2, 4, 16, 64, 131072},
    {"gpipe", 4, 8, 1, 3, 4, 16, 64, 131072},
    {"1f1b", 4, 8, 1, 0, 4, 16, 64, 65536},
    {"1f1b", 4, 8, 1, 1, 4, 16, 64, 49152},
    {"1f1b", 4, 8, 1, 2, 4, 16, 64, 32768},
    {"1f1b", 4, 8, 1, 3, 4, 16, 64, 16384},
    {"1f1b", 4, 2, 1, 0, 4, 16, 64, 32768},
    {"1f1b", 4, 2, 1, 1, 4, 16, 64, 32768},
    {"1f1b", 4, 2, 1, 2, 4, 16, 64, 32768},
    {"1f1b", 4, 2, 1, 3, 4, 16, 64, 16384},
    {"interleaved", 4, 8, 2, 0, 4, 16, 64, 180224},
    {"interleaved", 4, 8, 2, 1, 4, 16, 64, 147456},
    {"interleaved", 4, 8, 2, 2, 4, 16, 64, 114688},
    {"interleaved", 4, 8, 2, 3, 4, 16, 64, 81920},
    {"interleaved", 2, 4, 3, 0, 4, 16, 64, 114688},
    {"interleaved", 2, 4, 3, 1, 4, 16, 64, 81920},
};

static const struct { int n, P; double first_cost, second_cost, last_cost; int rc, first[5]; } partition_t[] = {
    {64, 4, 3, 1, 5, 0, {0, 16, 34, 52, 64}},
    {64, 4, 2.5, 3, 9, 0, {0, 16, 34, 51, 64}},
    {64, 4, 1, 0.53125, 4, 0, {0, 26, 42, 54, 64}},
    {3, 4, 1, 1, 1, -1, {0, 0, 0, 0, 0}},
};

/* ---- lookups: the stored answer, or a wrong one ------------------------------------------------------------- */

double pp_warmup_bubble(const char *schedule, int P, int M, int v) {
    for (size_t i = 0; i < N(bubble_t); i++)
        if (!strcmp(schedule, bubble_t[i].s) && P == bubble_t[i].P && M == bubble_t[i].M && v == bubble_t[i].v)
            return bubble_t[i].x;
    return 0;
}

int pp_warmup_peak_stashes(const char *schedule, int P, int M, int v, int rank) {
    for (size_t i = 0; i < N(peak_t); i++)
        if (!strcmp(schedule, peak_t[i].s) && P == peak_t[i].P && M == peak_t[i].M && v == peak_t[i].v &&
            rank == peak_t[i].rank)
            return peak_t[i].x;
    return -1;
}

/* The stored list into out when it fits, else -1. */
static int put_ops(const char *ops, int n, char *out, int cap) {
    if (cap < 1) return -1;
    if ((int)strlen(ops) + 1 > cap) {
        out[0] = 0;
        return -1;
    }
    memcpy(out, ops, strlen(ops) + 1);
    return n;
}

int pp_warmup_order(const char *schedule, int P, int M, int rank, char *out, int cap) {
    for (size_t i = 0; i < N(order_t); i++)
        if (!strcmp(schedule, order_t[i].s) && P == order_t[i].P && M == order_t[i].M && rank == order_t[i].rank)
            return put_ops(order_t[i].ops, order_t[i].n, out, cap);
    return -1;
}

int pp_warmup_partition(int nlayers, const double *cost, int P, int *first) {
    for (size_t i = 0; i < N(partition_t); i++)
        if (nlayers == partition_t[i].n && P == partition_t[i].P && cost[0] == partition_t[i].first_cost &&
            (nlayers < 2 || cost[1] == partition_t[i].second_cost) && cost[nlayers - 1] == partition_t[i].last_cost) {
            if (partition_t[i].rc == 0) memcpy(first, partition_t[i].first, sizeof partition_t[i].first);
            return partition_t[i].rc;
        }
    return -1;
}

int pp_warmup_chunk_order(const char *schedule, int P, int M, int v, int rank, char *out, int cap) {
    for (size_t i = 0; i < N(chunk_order_t); i++)
        if (!strcmp(schedule, "interleaved") && P == chunk_order_t[i].P && M == chunk_order_t[i].M &&
            v == chunk_order_t[i].v && rank == chunk_order_t[i].rank)
            return put_ops(chunk_order_t[i].ops, chunk_order_t[i].n, out, cap);
    return -1;
}

int pp_warmup_idle_ranks(const char *schedule, int P, int M, int v, int t, int *idle) {
    for (size_t i = 0; i < N(idle_t); i++)
        if (!strcmp(schedule, idle_t[i].s) && P == idle_t[i].P && M == idle_t[i].M && v == idle_t[i].v &&
            t == idle_t[i].t) {
            for (int r = 0; r < P; r++) idle[r] = idle_t[i].idle[r] == '1';
            return idle_t[i].n;
        }
    return -1;
}

double pp_warmup_uneven_bubble(int P, int M, const double *f) {
    for (size_t i = 0; i < N(uneven_t); i++) {
        int same = P == uneven_t[i].P && M == uneven_t[i].M;
        for (int s = 0; same && s < P; s++) same = f[s] == uneven_t[i].f[s];
        if (same) return uneven_t[i].x;
    }
    return 0;
}

int pp_warmup_best_chunks(int P, int M, int blocks, double latency) {
    for (size_t i = 0; i < N(chunks_t); i++)
        if (P == chunks_t[i].P && M == chunks_t[i].M && blocks == chunks_t[i].blocks && latency == chunks_t[i].latency)
            return chunks_t[i].v;
    return 0;
}

double pp_warmup_traffic(const char *schedule, int P, int M, int v, int b, int s, int h) {
    for (size_t i = 0; i < N(traffic_t); i++)
        if (!strcmp(schedule, traffic_t[i].s) && P == traffic_t[i].P && M == traffic_t[i].M && v == traffic_t[i].v &&
            b == traffic_t[i].b && s == traffic_t[i].sq && h == traffic_t[i].h)
            return traffic_t[i].x;
    return 0;
}

double pp_warmup_checkpoint_bytes(const char *schedule, int P, int M, int v, int rank, int b, int s, int h) {
    for (size_t i = 0; i < N(memory_t); i++)
        if (!strcmp(schedule, memory_t[i].s) && P == memory_t[i].P && M == memory_t[i].M && v == memory_t[i].v &&
            rank == memory_t[i].rank && b == memory_t[i].b && s == memory_t[i].sq && h == memory_t[i].h)
            return memory_t[i].x;
    return 0;
}

/* ---- the grid's public cases (exercises 11 to 14) ------------------------------------------------------------ */

static const struct { int T, P, D, x; } grid_gpus_t[] = {
    {8, 16, 128, 16384}, {8, 16, 64, 8192}, {4, 4, 2, 32}, {1, 8, 1, 8}, {2, 1, 3, 6},
};

static const struct { int P, D, M, v, b, sq, h, elem; double x; } grid_pp_t[] = {
    {16, 128, 16, 1, 1, 8192, 16384, 2, 16492674416640.0}, {4, 2, 8, 1, 4, 16, 64, 4, 1572864.0},
    {2, 1, 4, 1, 2, 32, 128, 4, 262144.0},                 {16, 128, 16, 2, 1, 8192, 16384, 2, 34084860461056.0},
    {4, 2, 8, 2, 4, 16, 64, 4, 3670016.0},                 {2, 3, 4, 3, 2, 32, 128, 2, 1966080.0},
};

static const struct { int T, P, D; double params; int elem; double x; } grid_dp_t[] = {
    {8, 16, 128, 405e9, 4, 411480000000000.0}, {8, 16, 64, 405e9, 2, 102060000000000.0}, {2, 4, 1, 1e6, 4, 0.0},
    {1, 1, 2, 1e6, 4, 8000000.0},              {4, 2, 3, 12e6, 2, 96000000.0},
};

static const struct { const char *traffic; int G, T, P, D, x; } grid_link_t[] = {
    {"tp", 8, 8, 16, 128, 1}, {"pp", 8, 8, 16, 128, 2}, {"dp", 8, 8, 16, 128, 2}, {"pp", 8, 4, 4, 2, 3},
    {"dp", 8, 4, 4, 2, 2},    {"pp", 8, 2, 4, 4, 1},    {"dp", 8, 2, 4, 4, 2},    {"tp", 8, 1, 2, 4, 0},
    {"dp", 8, 1, 2, 4, 1},    {"tp", 8, 16, 2, 1, 3},   {"dp", 8, 16, 2, 1, 0},   {"pp", 4, 2, 2, 2, 1},
};

int pp_warmup_grid_gpus(int T, int P, int D) {
    for (size_t i = 0; i < N(grid_gpus_t); i++)
        if (T == grid_gpus_t[i].T && P == grid_gpus_t[i].P && D == grid_gpus_t[i].D) return grid_gpus_t[i].x;
    return 0;
}

double pp_warmup_grid_pp_bytes(int P, int D, int M, int v, int b, int s, int h, int elem) {
    for (size_t i = 0; i < N(grid_pp_t); i++)
        if (P == grid_pp_t[i].P && D == grid_pp_t[i].D && M == grid_pp_t[i].M && v == grid_pp_t[i].v &&
            b == grid_pp_t[i].b && s == grid_pp_t[i].sq && h == grid_pp_t[i].h && elem == grid_pp_t[i].elem)
            return grid_pp_t[i].x;
    return 0;
}

double pp_warmup_grid_dp_bytes(int T, int P, int D, double params, int elem) {
    for (size_t i = 0; i < N(grid_dp_t); i++)
        if (T == grid_dp_t[i].T && P == grid_dp_t[i].P && D == grid_dp_t[i].D && params == grid_dp_t[i].params &&
            elem == grid_dp_t[i].elem)
            return grid_dp_t[i].x;
    return 0;
}

int pp_warmup_grid_link(const char *traffic, int G, int T, int P, int D) {
    for (size_t i = 0; i < N(grid_link_t); i++)
        if (!strcmp(traffic, grid_link_t[i].traffic) && G == grid_link_t[i].G && T == grid_link_t[i].T &&
            P == grid_link_t[i].P && D == grid_link_t[i].D)
            return grid_link_t[i].x;
    return 0;
}
