/* Lab 00: warm-up. Pencil-and-paper pipeline facts, written as small C functions that the grader calls.
 *
 * No ranks, no tensors: these functions only compute what a schedule costs. Costs follow the virtual clock of
 * the other labs: every stage's forward costs F = 1, its backward B = 2 (in the zero-bubble schedules each half
 * of a backward costs 1); messages are free unless an exercise gives a latency. Read docs/00-warmup.md first; it
 * says which learning goal each exercise checks. Grade with `make grade LAB=warmup`. */
#include <stdio.h>
#include <string.h>

#include "pp.h"


/* Exercise 1. The bubble fraction 1 - (busy time of all ranks) / (P * length of the step) of `schedule`
 * ("naive", "gpipe", "1f1b", "interleaved", "zbh1", "zbh2") on P ranks with M micro-batches and v chunks per
 * rank. naive pushes the whole batch through at once (M is ignored: one micro-batch); v only matters for
 * interleaved. For the zero-bubble schedules take M >= P. */
double pp_warmup_bubble(const char *schedule, int P, int M, int v) {
    double bubble = 0;
    /* TODO: draw the timeline of a small case (P = 4, M = 6) and count the idle slots on each rank; then write
     * the fraction as a formula. What changes for interleaved, whose chunk ops are shorter, and for the
     * zero-bubble schedules, whose backward comes in two halves? (docs/00-warmup.md section 1) */
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
    return peak;
}


/* Exercise 3. The order of the compute ops rank `rank` runs in one step of "gpipe" or "1f1b", written into
 * out (cap bytes, NUL included) as space-separated tokens: F<mb> for the forward of micro-batch mb, B<mb> for
 * its backward, e.g. "F0 F1 B0 ...". Returns the number of ops, or -1 when they do not fit in cap bytes (or the
 * schedule is unknown). GPipe runs its backwards in micro-batch order. */
int pp_warmup_order(const char *schedule, int P, int M, int rank, char *out, int cap) {
    int n = -1;
    /* TODO: read the order off the timelines in docs/00-warmup.md section 3 and say it as a rule that holds for
     * every P, M and rank (mind M < P); write the tokens with snprintf(out + used, cap - used, ...). */
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
    return count;
}

/* Exercise 7. GPipe's bubble when the stages are not equally fast: stage s's forward costs f[s] (its backward
 * twice that), P stages, M micro-batches. */
double pp_warmup_uneven_bubble(int P, int M, const double *f) {
    double bubble = 0;
    /* TODO: which stage sets the pace of the steady state, and what do the others do meanwhile? What happens to
     * the bubble when only the first stage gets faster? (docs/00-warmup.md section 4) */
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
    return best;
}

/* Exercise 9. The bytes a step sends between ranks: every boundary message of `schedule` ("naive", "gpipe",
 * "1f1b", "interleaved", "zbh1", "zbh2", "zbv") with micro-batches of b sequences of s tokens, hidden size h,
 * fp32. */
double pp_warmup_traffic(const char *schedule, int P, int M, int v, int b, int s, int h) {
    double bytes = 0;
    /* TODO: what crosses a boundary per micro-batch, how big is it, and how many boundaries join two different
     * ranks? (docs/00-warmup.md section 5; a V, zbv, turns on one rank: docs/06-vshape.md) */
    return bytes;
}

/* Exercise 10. Recomputation's memory: with pp_stash_checkpoint every stash keeps only its input, one activation of
 * b sequences x s tokens x h hidden values in fp32. The bytes of those inputs rank `rank` holds at its peak in one
 * step of "gpipe", "1f1b" or "interleaved" (the one stash being rebuilt aside). */
double pp_warmup_checkpoint_bytes(const char *schedule, int P, int M, int v, int rank, int b, int s, int h) {
    double bytes = 0;
    /* TODO: how many stashes are alive at the peak (exercise 2), and how wide is a chunk's input compared with a
     * stage's? (docs/00-warmup.md section 2) */
    return bytes;
}

/* Exercise 11. The grid: T-way tensor parallelism inside each stage, P pipeline stages, D data-parallel replicas
 * of that pipeline. The number of GPUs the grid takes, one rank per GPU. */
int pp_warmup_grid_gpus(int T, int P, int D) {
    int gpus = 0;
    /* TODO: what does one stage take, one replica, the whole grid? (docs/07-hybrid.md) */
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
    return bytes;
}

/* Exercise 13. The bytes one step of the grid sends over data-parallel links: each of the T x P x D ranks holds
 * the gradients of params / (T x P) of the model's parameters, elem bytes each, and all-reduces them with the
 * D - 1 other ranks holding the same slice of the same stage, in a ring. */
double pp_warmup_grid_dp_bytes(int T, int P, int D, double params, int elem) {
    double bytes = 0;
    /* TODO: how many bytes does one rank send in a ring all-reduce over D ranks (a reduce-scatter, then an
     * all-gather)? (docs/07-hybrid.md) */
    return bytes;
}

/* Exercise 14. Which links a kind of traffic ("tp", "pp" or "dp") uses when servers hold G GPUs each and rank
 * t + T x (p + P x d) (tensor-parallel index t, stage p, replica d) sits in server rank / G: 1 when all of it
 * stays within servers, 2 when all of it goes between servers, 3 when some does each, 0 when there is none (a
 * group of one rank). */
int pp_warmup_grid_link(const char *traffic, int G, int T, int P, int D) {
    int links = 0;
    /* TODO: which ranks talk for each kind of traffic, and do they sit in one server? (docs/07-hybrid.md) */
    return links;
}
