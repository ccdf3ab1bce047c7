/* Lab 00: warm-up. Pencil-and-paper pipeline facts, written as four small C functions that the grader calls.
 *
 * No ranks, no tensors: these functions only compute what a schedule costs. Costs follow the virtual clock of
 * the other labs: every stage's forward costs F = 1, its backward B = 2, messages are free. Read
 * docs/00-warmup.md first; grade with `make grade LAB=warmup` (or `build/pplab grade --lab warmup`). */
#include <stdio.h>
#include <string.h>

#include "pp.h"

/* Exercise 1. The bubble fraction 1 - (busy time of all ranks) / (P * length of the step) of `schedule`
 * ("naive", "gpipe", "1f1b", "interleaved") on P ranks with M micro-batches and v chunks per rank.
 * naive pushes the whole batch through at once (M is ignored: one micro-batch); v only matters for
 * interleaved. */
double pp_warmup_bubble(const char *schedule, int P, int M, int v) {
    double bubble = 0;
    /* TODO: draw the timeline of a small case (P = 4, M = 6) and count the idle slots on each rank; then
     * write the fraction as a formula in P, M (and v for interleaved, where each rank's chunk is 1/v of a
     * stage: what does that do to the ramp at the start and the end?). */
    //>> solution
    if (!strcmp(schedule, "naive")) M = 1;
    if (strcmp(schedule, "interleaved")) v = 1;
    bubble = (double)(P - 1) / (double)(v * M + P - 1);
    //<< solution
    return bubble;
}

/* Exercise 2. The largest number of activation stashes rank `rank` holds at once during one step (for
 * interleaved, chunk stashes: each is the activation of one chunk on one micro-batch). A stash is made by a
 * forward and released by the matching backward. Schedules: "naive", "gpipe", "1f1b", "interleaved". */
int pp_warmup_peak_stashes(const char *schedule, int P, int M, int v, int rank) {
    int peak = 0;
    /* TODO: count the forwards a rank runs before its first backward in each schedule. 1F1B: rank r runs
     * min(P-r-1, M) warm-up forwards, then alternates F, B. Interleaved (Megatron-LM): rank r runs
     * min(2(P-r-1) + (v-1)P, vM) warm-up chunk-forwards, then alternates. */
    //>> solution
    if (!strcmp(schedule, "naive")) {
        peak = 1;
    } else if (!strcmp(schedule, "gpipe")) {
        peak = M;
    } else if (!strcmp(schedule, "1f1b")) {
        peak = P - rank < M ? P - rank : M;
    } else if (!strcmp(schedule, "interleaved")) {
        int w = 2 * (P - rank - 1) + (v - 1) * P + 1;
        peak = w < v * M ? w : v * M;
    }
    //<< solution
    return peak;
}

//>> solution
/* Appends the token "F3" (with a space before it unless it is the first) to out, which holds cap bytes and
 * already *len characters. Returns -1, leaving out a valid string, when the token does not fit. */
static int order_put(char *out, int cap, int *len, char kind, int mb) {
    int w = snprintf(out + *len, (size_t)(cap - *len), "%s%c%d", *len ? " " : "", kind, mb);
    if (w < 0 || w >= cap - *len) {
        out[*len] = 0;
        return -1;
    }
    *len += w;
    return 0;
}
//<< solution

/* Exercise 3. The order of the compute ops rank `rank` runs in one step of "gpipe" or "1f1b", written into
 * out (cap bytes, NUL included) as space-separated tokens: F<mb> for the forward of micro-batch mb, B<mb> for
 * its backward, e.g. "F0 F1 F2 B0 F3 B1 ...". Returns the number of ops, or -1 when they do not fit in cap
 * bytes (or the schedule is unknown). GPipe runs its backwards in micro-batch order 0..M-1; 1F1B is
 * Megatron-LM's: min(P-r-1, M) warm-up forwards, then pairs (F, B), then the remaining backwards. */
int pp_warmup_order(const char *schedule, int P, int M, int rank, char *out, int cap) {
    int n = -1;
    /* TODO: write the tokens with snprintf(out + used, cap - used, ...) and count them. */
    //>> solution
    if (cap < 1 || (strcmp(schedule, "gpipe") && strcmp(schedule, "1f1b"))) return -1;
    out[0] = 0;
    /* GPipe is 1F1B whose warm-up is every forward. */
    int warm = !strcmp(schedule, "gpipe") ? M : (P - rank - 1 < M ? P - rank - 1 : M);
    int len = 0, f = 0, b = 0;
    n = 0;
    while (f < warm) {
        if (order_put(out, cap, &len, 'F', f++)) return -1;
        n++;
    }
    while (f < M) {
        if (order_put(out, cap, &len, 'F', f++) || order_put(out, cap, &len, 'B', b++)) return -1;
        n += 2;
    }
    while (b < M) {
        if (order_put(out, cap, &len, 'B', b++)) return -1;
        n++;
    }
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
    /* TODO: the pipeline runs at the pace of its slowest stage. An exact method: dynamic programming over
     * (stages used, layers covered), or a search over the candidate stage costs with a greedy check. */
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
