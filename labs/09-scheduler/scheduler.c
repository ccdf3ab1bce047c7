/* Lab 09: a scheduler. You are given a pipeline (its ranks, its micro-batches, what each operation costs, what a
 * message between two ranks costs, how much memory each rank has) and you write the order each rank runs its
 * operations in. Nothing runs in your function: the grader replays your order on the virtual clock of the other
 * labs and measures it, and the course's autograder also trains the kit's model with it.
 *
 * The pipeline. P ranks (1 <= P <= 8), M micro-batches (1 <= M <= 64) and v chunks per rank (1 or 2), so P * v
 * virtual stages that every micro-batch runs through in order, 0 to P*v - 1:
 *   - v = 1: virtual stage s lives on rank s;
 *   - v = 2: a V (lab 06): rank r holds virtual stages r and 2P-1-r, so data goes down the ranks and comes back
 *     up; stages P-1 and P share rank P-1, and rank 0 holds the first and the last.
 * Each (virtual stage s, micro-batch n) has three operations, run by the rank that holds s:
 *   - F, the forward: costs f[s]; it needs the F of (s-1, n) (none for s = 0);
 *   - I, the backward's input half: costs i[s]; it needs the F of (s, n) and, but for the last stage, the I of
 *     (s+1, n), whose gradient it receives;
 *   - W, the backward's weight half: costs w[s]; it needs the I of (s, n) and nothing else, and nobody waits
 *     for it.
 * (B, a whole backward, is I and W at once: it costs i[s] + w[s] and its gradient is ready only at its end.)
 * f, i and w hold P*v entries, indexed by virtual stage. An input that comes from another rank arrives `latency`
 * after the operation that produced it ended; from the same rank (a V's turn) it is there at once. A rank runs one
 * operation at a time, in your order, each as soon as the rank is free and its input is there.
 *
 * Memory. Each F makes a stash (its activations), which lives until that (stage, micro-batch)'s W (or B) ends. A
 * rank may hold at most `cap` stashes at any time, the new one counted: an F may start only while the rank holds
 * fewer than cap. With v = 2 each chunk's stash counts on its own.
 *
 * The answer. Write the order as CSV text into out (outcap bytes, NUL included): one row per rank, row r for rank
 * r, its operations in order, cells separated by ',' and every row ended by '\n'. A cell is "SkN": the virtual
 * stage S, the kind k (F, I, W or B) and the micro-batch N. For P = 2, M = 2, v = 1 one order is
 *     0F0,0F1,0I0,0W0,0I1,0W1\n
 *     1F0,1I0,1W0,1F1,1I1,1W1\n
 * Return the number of bytes written, without the NUL, or -1 when the text does not fit in outcap.
 *
 * What is graded. The order must be complete (every operation once, on its rank, each after what it needs on its
 * own rank, and able to run to the end) and must hold the cap. Its points then grow with its makespan, the end of
 * the last operation on the virtual clock: from an order no worse than 1F1B's under the same cap up to one within
 * 1% of the optimum. Read docs/09-scheduler.md first. Grade with `build/pplab grade --lab scheduler`. */
#include <stdio.h>
#include <string.h>

#include "pp.h"


int pp_scheduler_order(int P, int M, int v, const double *f, const double *i, const double *w, double latency,
                       int cap, char *out, int outcap) {
    int written = -1;
    /* TODO: find a good order for this pipeline and write it into out as the CSV text above. */
    return written;
}
