/* Lab 00: warm-up. Pencil-and-paper pipeline facts, written as small C functions that the grader calls.
 *
 * No ranks, no tensors: these functions only compute what a schedule costs. Costs follow the virtual clock of
 * the other labs: every stage's forward costs F = 1, its backward B = 2 (in the zero-bubble schedules each half
 * of a backward costs 1); messages are free unless an exercise gives a latency. Read docs/00-warmup.md first; it
 * says which learning goal each exercise checks. Grade with `make grade LAB=warmup`. */
#include <stdio.h>
#include <string.h>

#include "pp.h"

//>> solution
static int min_i(int a, int b) { return a < b ? a : b; }

/* ---- a small virtual clock, shared by the exercises that need a timeline --------------------------------- */

#define WU_MAX_OPS 4096
#define WU_MAX_RANKS 16

typedef struct wu_op {
    char kind; /* 'F' or 'B' */
    int mb, chunk;
    double start, end;
} wu_op;

typedef struct wu_timeline {
    int P, M, v, n[WU_MAX_RANKS];
    wu_op ops[WU_MAX_RANKS][WU_MAX_OPS / WU_MAX_RANKS];
} wu_timeline;

/* Rank r's op list of gpipe, 1f1b or interleaved (chunked: Megatron-LM's depth-first order). Returns the count,
 * or -1 for another schedule. */
static int wu_order_of(const char *schedule, int P, int M, int v, int r, wu_op *ops) {
    int n = 0;
    if (!strcmp(schedule, "gpipe") || !strcmp(schedule, "1f1b")) {
        /* GPipe is 1F1B whose warm-up is every forward */
        int warm = !strcmp(schedule, "gpipe") ? M : min_i(P - r - 1, M), f = 0, b = 0;
        while (f < warm) ops[n++] = (wu_op){'F', f++, 0, 0, 0};
        while (f < M) ops[n++] = (wu_op){'F', f++, 0, 0, 0}, ops[n++] = (wu_op){'B', b++, 0, 0, 0};
        while (b < M) ops[n++] = (wu_op){'B', b++, 0, 0, 0};
        return n;
    }
    if (strcmp(schedule, "interleaved")) return -1;
    /* the k-th chunk-forward: P micro-batches through one chunk, then the next chunk; backwards mirror it */
    int total = v * M, warm = min_i(2 * (P - r - 1) + (v - 1) * P, total), f = 0, b = 0;
#define FWD(k) ((wu_op){'F', ((k) / (P * v)) * P + (k) % P, ((k) % (P * v)) / P, 0, 0})
#define BWD(k) ((wu_op){'B', ((k) / (P * v)) * P + (k) % P, v - 1 - ((k) % (P * v)) / P, 0, 0})
    while (f < warm) ops[n++] = FWD(f), f++;
    while (f < total) ops[n++] = FWD(f), f++, ops[n++] = BWD(b), b++;
    while (b < total) ops[n++] = BWD(b), b++;
#undef FWD
#undef BWD
    return n;
}

/* Replays each rank's list: an op starts when its rank is free and its input exists (the forward of the
 * previous virtual stage, the backward of the next one), plus `latency` when that input crossed between two
 * ranks. A chunk's forward costs f, its backward 2f. Returns the step's length, or -1 when it cannot finish. */
static double wu_replay(wu_timeline *tl, const char *schedule, int P, int M, int v, double f, double latency) {
    if (P > WU_MAX_RANKS || 2 * v * M > WU_MAX_OPS / WU_MAX_RANKS) return -1;
    int S = P * v, next[WU_MAX_RANKS] = {0};
    double clock[WU_MAX_RANKS] = {0}, fdone[64][64], bdone[64][64], span = 0;
    if (S > 64 || M > 64) return -1;
    tl->P = P, tl->M = M, tl->v = v;
    for (int r = 0; r < P; r++)
        if ((tl->n[r] = wu_order_of(schedule, P, M, v, r, tl->ops[r])) < 0) return -1;
    for (int s = 0; s < S; s++)
        for (int m = 0; m < M; m++) fdone[s][m] = bdone[s][m] = -1;
    for (int moved = 1; moved;) {
        moved = 0;
        for (int r = 0; r < P; r++)
            while (next[r] < tl->n[r]) {
                wu_op *o = &tl->ops[r][next[r]];
                int s = o->chunk * P + r;
                double ready = 0;
                if (o->kind == 'F' && s > 0) {
                    if (fdone[s - 1][o->mb] < 0) break;
                    ready = fdone[s - 1][o->mb] + ((s - 1) % P != r ? latency : 0);
                } else if (o->kind == 'B') {
                    if (fdone[s][o->mb] < 0 || (s < S - 1 && bdone[s + 1][o->mb] < 0)) break;
                    ready = fdone[s][o->mb];
                    if (s < S - 1 && bdone[s + 1][o->mb] + ((s + 1) % P != r ? latency : 0) > ready)
                        ready = bdone[s + 1][o->mb] + ((s + 1) % P != r ? latency : 0);
                }
                o->start = clock[r] > ready ? clock[r] : ready;
                o->end = clock[r] = o->start + (o->kind == 'F' ? f : 2 * f);
                (o->kind == 'F' ? fdone : bdone)[s][o->mb] = o->end;
                span = o->end > span ? o->end : span;
                next[r]++;
                moved = 1;
            }
    }
    for (int r = 0; r < P; r++)
        if (next[r] < tl->n[r]) return -1;
    return span;
}

static wu_timeline tl_scratch;
//<< solution

/* Exercise 1. The bubble fraction 1 - (busy time of all ranks) / (P * length of the step) of `schedule`
 * ("naive", "gpipe", "1f1b", "interleaved", "zbh1", "zbh2") on P ranks with M micro-batches and v chunks per
 * rank. naive pushes the whole batch through at once (M is ignored: one micro-batch); v only matters for
 * interleaved. For the zero-bubble schedules take M >= P. */
double pp_warmup_bubble(const char *schedule, int P, int M, int v) {
    double bubble = 0;
    /* TODO: draw the timeline of a small case (P = 4, M = 6) and count the idle slots on each rank; then write
     * the fraction as a formula. What changes for interleaved, whose chunk ops are shorter, and for the
     * zero-bubble schedules, whose backward comes in two halves? (docs/00-warmup.md section 1) */
    //>> solution
    if (!strcmp(schedule, "zbh1") || !strcmp(schedule, "zbh2")) {
        /* the last rank starts P-1 units late and then has 3M units of work back to back */
        return (double)(P - 1) / (double)(3 * M + P - 1);
    }
    if (!strcmp(schedule, "naive")) M = 1;
    if (strcmp(schedule, "interleaved")) v = 1;
    bubble = (double)(P - 1) / (double)(v * M + P - 1);
    //<< solution
    return bubble;
}

/* Exercise 2. The largest number of activation stashes rank `rank` holds at once during one step (for
 * interleaved, chunk stashes: each is the activation of one chunk on one micro-batch). A stash is made by a
 * forward and released by the matching backward (in the zero-bubble schedules, by its weight half). Schedules:
 * "naive", "gpipe", "1f1b", "interleaved", "zbh1", "zbh2". */
int pp_warmup_peak_stashes(const char *schedule, int P, int M, int v, int rank) {
    int peak = 0;
    /* TODO: walk the rank's op list and count forwards minus the ops that free a stash; then say it as a
     * formula in P, M, v and rank (docs/00-warmup.md section 2; docs/05-zerobubble.md for the zero-bubble
     * schedules). */
    //>> solution
    if (!strcmp(schedule, "naive")) {
        peak = 1;
    } else if (!strcmp(schedule, "gpipe")) {
        peak = M;
    } else if (!strcmp(schedule, "1f1b")) {
        peak = min_i(P - rank, M);
    } else if (!strcmp(schedule, "interleaved")) {
        peak = min_i(2 * (P - rank - 1) + (v - 1) * P + 1, v * M);
    } else if (!strcmp(schedule, "zbh1") || !strcmp(schedule, "zbh2")) {
        /* the warm-up, the forward before the first input half, and the rank's held-back weight halves */
        int warm = !strcmp(schedule, "zbh1") ? P - rank - 1 : 2 * (P - rank - 1);
        peak = min_i(min_i(warm, M) + 1 + rank, M);
    }
    //<< solution
    return peak;
}

//>> solution
/* Appends the token "F3" or "F3.1" (with a space before it unless it is the first) to out, which holds cap bytes
 * and already *len characters. Returns -1, leaving out a valid string, when the token does not fit. */
static int order_put(char *out, int cap, int *len, const wu_op *o, int chunked) {
    int w = chunked ? snprintf(out + *len, (size_t)(cap - *len), "%s%c%d.%d", *len ? " " : "", o->kind, o->mb, o->chunk)
                    : snprintf(out + *len, (size_t)(cap - *len), "%s%c%d", *len ? " " : "", o->kind, o->mb);
    if (w < 0 || w >= cap - *len) {
        out[*len] = 0;
        return -1;
    }
    *len += w;
    return 0;
}

static int write_order(const char *schedule, int P, int M, int v, int rank, char *out, int cap, int chunked) {
    static wu_op ops[WU_MAX_OPS];
    if (cap < 1 || 2 * v * M > WU_MAX_OPS) return -1;
    int n = wu_order_of(schedule, P, M, v, rank, ops), len = 0;
    if (n < 0) return -1;
    out[0] = 0;
    for (int i = 0; i < n; i++)
        if (order_put(out, cap, &len, &ops[i], chunked)) return -1;
    return n;
}
//<< solution

/* Exercise 3. The order of the compute ops rank `rank` runs in one step of "gpipe" or "1f1b", written into
 * out (cap bytes, NUL included) as space-separated tokens: F<mb> for the forward of micro-batch mb, B<mb> for
 * its backward, e.g. "F0 F1 B0 ...". Returns the number of ops, or -1 when they do not fit in cap bytes (or the
 * schedule is unknown). GPipe runs its backwards in micro-batch order. */
int pp_warmup_order(const char *schedule, int P, int M, int rank, char *out, int cap) {
    int n = -1;
    /* TODO: read the order off the timelines in docs/00-warmup.md section 3 and say it as a rule that holds for
     * every P, M and rank (mind M < P); write the tokens with snprintf(out + used, cap - used, ...). */
    //>> solution
    if (strcmp(schedule, "gpipe") && strcmp(schedule, "1f1b")) return -1;
    n = write_order(schedule, P, M, 1, rank, out, cap, 0);
    //<< solution
    return n;
}

/* Exercise 4. Cuts nlayers consecutive layers into P stages, stage s holding layers first[s]..first[s+1]-1,
 * so that the slowest stage (the largest sum of cost[i] over its layers) is as fast as possible. Every stage
 * must hold at least one layer: first[0] = 0 < first[1] < ... < first[P] = nlayers. Layer 0 is the
 * embedding and layer nlayers-1 the LM head; both carry their own cost. Returns 0, or -1 when no such
 * partition exists. */
int pp_warmup_partition(int nlayers, const double *cost, int P, int *first) {
    int rc = -1;
    /* TODO: the pipeline runs at the pace of its slowest stage. Find an exact method (docs/00-warmup.md
     * section 4 names two ideas); equal layer counts are not it. */
    //>> solution
    if (P < 1 || nlayers < P) return -1;
    /* pre[i] = cost of layers 0..i-1, so a stage j..i-1 costs pre[i] - pre[j] */
    double pre[nlayers + 1], best[nlayers + 1], next[nlayers + 1];
    pre[0] = 0;
    for (int i = 0; i < nlayers; i++) pre[i + 1] = pre[i] + cost[i];
    /* best[i]: the slowest stage of the best cut of layers 0..i-1 into k stages */
    for (int i = 0; i <= nlayers; i++) best[i] = pre[i];
    for (int k = 2; k <= P; k++) {
        for (int i = 0; i <= nlayers; i++) {
            next[i] = -1;
            for (int j = k - 1; j < i; j++) {
                double m = best[j] > pre[i] - pre[j] ? best[j] : pre[i] - pre[j];
                if (next[i] < 0 || m < next[i]) next[i] = m;
            }
        }
        memcpy(best, next, sizeof best);
    }
    double target = best[nlayers];
    /* Rebuild a cut reaching the target: each stage takes as many layers as fit under it while leaving one
     * layer for every later stage; packing greedily never leaves the last stage over the target. */
    first[0] = 0;
    for (int s = 0; s < P - 1; s++) {
        int end = first[s] + 1;
        while (end < nlayers - (P - s - 1) && pre[end + 1] - pre[first[s]] <= target) end++;
        first[s + 1] = end;
    }
    first[P] = nlayers;
    rc = 0;
    //<< solution
    return rc;
}

/* Exercise 5. Interleaved 1F1B's timeline: rank `rank`'s compute ops of one step of "interleaved" with v chunks
 * per rank, as tokens F<mb>.<chunk> and B<mb>.<chunk> ("F0.0 F1.0 ... F0.1 ..."), into out as in exercise 3.
 * Returns the number of ops, or -1 when they do not fit (or the schedule is another). M is a multiple of P. */
int pp_warmup_chunk_order(const char *schedule, int P, int M, int v, int rank, char *out, int cap) {
    int n = -1;
    /* TODO: which (micro-batch, chunk) is a rank's k-th chunk-forward, and how long is its warm-up? Read
     * docs/04-interleaved.md's timeline and derive both; `build/pplab run --canonical --schedule interleaved`
     * draws the public cases to check yourself against (it names them when you ask for another). */
    //>> solution
    if (strcmp(schedule, "interleaved")) return -1;
    n = write_order(schedule, P, M, v, rank, out, cap, 1);
    //<< solution
    return n;
}

/* Exercise 6. Where the bubble is: which of the P ranks are idle during the time unit from t to t + 1 of one
 * step of "gpipe", "1f1b" or "interleaved" (each chunk's forward costs 1, its backward 2: one block per chunk, as
 * --canonical draws it). Sets idle[r] to 1 for an idle rank, 0 for a busy one, and returns how many are idle
 * (all P after the step has ended). */
int pp_warmup_idle_ranks(const char *schedule, int P, int M, int v, int t, int *idle) {
    int count = 0;
    /* TODO: a rank idles when its next op waits for an input another rank has not produced yet. Lay the step
     * out on the clock (docs/00-warmup.md section 3) and look at instant t. */
    //>> solution
    if (wu_replay(&tl_scratch, schedule, P, M, v, 1, 0) < 0) return -1;
    for (int r = 0; r < P; r++) {
        int busy = 0;
        for (int i = 0; i < tl_scratch.n[r]; i++)
            busy |= tl_scratch.ops[r][i].start < t + 1 && tl_scratch.ops[r][i].end > t;
        idle[r] = !busy;
        count += !busy;
    }
    //<< solution
    return count;
}

/* Exercise 7. GPipe's bubble when the stages are not equally fast: stage s's forward costs f[s] (its backward
 * twice that), P stages, M micro-batches. */
double pp_warmup_uneven_bubble(int P, int M, const double *f) {
    double bubble = 0;
    /* TODO: which stage sets the pace of the steady state, and what do the others do meanwhile? What happens to
     * the bubble when only the first stage gets faster? (docs/00-warmup.md section 4) */
    //>> solution
    /* the forward phase is a flow shop of identical jobs: it ends after sum f + (M-1) max f, and the backward
     * phase, twice as long per stage, mirrors it */
    double sum = 0, max = 0;
    for (int s = 0; s < P; s++) sum += f[s], max = f[s] > max ? f[s] : max;
    bubble = 1 - (double)M * sum / (P * (sum + (M - 1) * max));
    //<< solution
    return bubble;
}

/* Exercise 8. Interleaving against its messages: the number of chunks v per rank (v divides `blocks`, the blocks
 * each rank holds; v = 1 is plain 1F1B) that makes the step of interleaved 1F1B shortest on P ranks with M
 * micro-batches (a multiple of P), when every message between two ranks costs `latency` (a block's forward
 * costs 1). On a tie, the smaller v. */
int pp_warmup_best_chunks(int P, int M, int blocks, double latency) {
    int best = 1;
    /* TODO: more chunks shorten the fill and the drain, and multiply the boundaries a micro-batch crosses; each
     * crossing costs the latency. Which wins where? (docs/00-warmup.md section 5) */
    //>> solution
    double shortest = -1;
    for (int v = 1; v <= blocks; v++) {
        if (blocks % v) continue;
        double span = wu_replay(&tl_scratch, v == 1 ? "1f1b" : "interleaved", P, M, v, (double)blocks / v, latency);
        if (span >= 0 && (shortest < 0 || span < shortest - 1e-9)) shortest = span, best = v;
    }
    //<< solution
    return best;
}

/* Exercise 9. The bytes a step sends between ranks: every boundary message of `schedule` ("naive", "gpipe",
 * "1f1b", "interleaved", "zbh1", "zbh2", "zbv") with micro-batches of b sequences of s tokens, hidden size h,
 * fp32. */
double pp_warmup_traffic(const char *schedule, int P, int M, int v, int b, int s, int h) {
    double bytes = 0;
    /* TODO: what crosses a boundary per micro-batch, how big is it, and how many boundaries join two different
     * ranks? (docs/00-warmup.md section 5; a V, zbv, turns on one rank: docs/06-vshape.md) */
    //>> solution
    int S = !strcmp(schedule, "interleaved") || !strcmp(schedule, "zbv") ? P * v : P;
    int crossings = !strcmp(schedule, "zbv") ? S - 2 : S - 1; /* the V's turn stays on rank P-1 */
    if (!strcmp(schedule, "naive")) M = 1;
    bytes = 2.0 * M * crossings * b * s * h * 4;
    //<< solution
    return bytes;
}

/* Exercise 10. Recomputation's memory: with pp_stash_checkpoint every stash keeps only its input, one activation of
 * b sequences x s tokens x h hidden values in fp32. The bytes of those inputs rank `rank` holds at its peak in one
 * step of "gpipe", "1f1b" or "interleaved" (the one stash being rebuilt aside). */
double pp_warmup_checkpoint_bytes(const char *schedule, int P, int M, int v, int rank, int b, int s, int h) {
    double bytes = 0;
    /* TODO: how many stashes are alive at the peak (exercise 2), and how wide is a chunk's input compared with a
     * stage's? (docs/00-warmup.md section 2) */
    //>> solution
    bytes = (double)pp_warmup_peak_stashes(schedule, P, M, v, rank) * b * s * h * 4;
    //<< solution
    return bytes;
}

/* Exercise 11. The grid: T-way tensor parallelism inside each stage, P pipeline stages, D data-parallel replicas
 * of that pipeline. The number of GPUs the grid takes, one rank per GPU. */
int pp_warmup_grid_gpus(int T, int P, int D) {
    int gpus = 0;
    /* TODO: what does one stage take, one replica, the whole grid? (docs/07-hybrid.md) */
    //>> solution
    gpus = T * P * D;
    //<< solution
    return gpus;
}

/* Exercise 12. The bytes one step of the grid sends over pipeline links: D replicas, each a pipeline of P stages
 * with v chunks per rank (v = 1: 1F1B; v > 1: interleaved, M a multiple of P) running M micro-batches of b
 * sequences of s tokens, hidden size h, elem bytes a value. The T tensor-parallel ranks of a stage each send
 * their 1/T slice of a boundary tensor to their peer in the next stage: together, one tensor. */
double pp_warmup_grid_pp_bytes(int P, int D, int M, int v, int b, int s, int h, int elem) {
    double bytes = 0;
    /* TODO: what crosses a boundary per micro-batch, and how many boundaries join two different ranks? Exercise
     * 9 answers this for one pipeline of fp32 values. */
    //>> solution
    int crossings = P > 1 ? P * v - 1 : 0; /* interleaved: every virtual boundary joins two ranks */
    bytes = 2.0 * D * M * crossings * b * s * h * elem;
    //<< solution
    return bytes;
}

/* Exercise 13. The bytes one step of the grid sends over data-parallel links: each of the T x P x D ranks holds
 * the gradients of params / (T x P) of the model's parameters, elem bytes each, and all-reduces them with the
 * D - 1 other ranks holding the same slice of the same stage, in a ring. */
double pp_warmup_grid_dp_bytes(int T, int P, int D, double params, int elem) {
    double bytes = 0;
    /* TODO: how many bytes does one rank send in a ring all-reduce over D ranks (a reduce-scatter, then an
     * all-gather)? (docs/07-hybrid.md) */
    //>> solution
    double per_rank = params / ((double)T * P) * elem;
    bytes = (double)T * P * D * 2.0 * (D - 1) / D * per_rank;
    //<< solution
    return bytes;
}

/* Exercise 14. Which links a kind of traffic ("tp", "pp" or "dp") uses when servers hold G GPUs each and rank
 * t + T x (p + P x d) (tensor-parallel index t, stage p, replica d) sits in server rank / G: 1 when all of it
 * stays within servers, 2 when all of it goes between servers, 3 when some does each, 0 when there is none (a
 * group of one rank). */
int pp_warmup_grid_link(const char *traffic, int G, int T, int P, int D) {
    int links = 0;
    /* TODO: which ranks talk for each kind of traffic, and do they sit in one server? (docs/07-hybrid.md) */
    //>> solution
    int tp = !strcmp(traffic, "tp"), pp = !strcmp(traffic, "pp");
    for (int d = 0; d < D; d++)
        for (int p = 0; p < P; p++)
            for (int t = 0; t < T; t++) {
                /* the next member of this rank's group, if it has one: it talks to this rank */
                int nt = t + tp, np = p + pp, nd = d + (!tp && !pp);
                if (nt == T || np == P || nd == D) continue;
                int here = (t + T * (p + P * d)) / G, there = (nt + T * (np + P * nd)) / G;
                links |= here == there ? 1 : 2;
            }
    //<< solution
    return links;
}
