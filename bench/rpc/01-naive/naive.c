/* The schedule behind `pplab bench sandbox`: it times what the way to the runtime costs a schedule, with calls
 * that do next to nothing on the runtime's side.
 *   - a call: pp_group_start and pp_group_end of an empty group, 20000 times in its first step. In-process each
 *     is a function call; a sandboxed driver posts it and goes on, so it costs the writing of a request.
 *   - a step's round trip: the time from one step's return to the next step's start, over the run's other
 *     steps. A sandboxed driver waits there for the runtime to serve the step's posts and send the next
 *     command; in-process it is the runtime's own work between two steps.
 * It prints one line, at its last step, that the benchmark reads back from its output. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pp.h"

#define CALLS 20000
#define STEPS 1000 /* the gaps between steps; the benchmark runs STEPS + 1 steps */

static double ns_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* p10, median and p90 of n samples, sorted in place, as one line's worth of text */
static void quantiles(double *t, int n, const char *name, char *out, size_t len) {
    qsort(t, (size_t)n, sizeof *t, by_value);
    snprintf(out, len, " %s_p10_ns=%.0f %s_median_ns=%.0f %s_p90_ns=%.0f", name, t[n / 10], name, t[n / 2], name,
             t[n * 9 / 10]);
}

void pp_naive_step(pp_rank *r) {
    static double call[2 * CALLS], gap[STEPS], returned;
    static int step;
    double now = ns_now();
    if (step > 0) gap[step - 1] = now - returned;
    if (step == 0) {
        for (int i = 0; i < CALLS; i++) {
            double a = ns_now();
            pp_group_start(r);
            double b = ns_now();
            pp_group_end(r);
            call[2 * i] = b - a;
            call[2 * i + 1] = ns_now() - b;
        }
    }
    if (step == STEPS) {
        char c[160], g[160];
        quantiles(call, 2 * CALLS, "call", c, sizeof c);
        quantiles(gap, STEPS, "step", g, sizeof g);
        printf("pplab-bench-rpc calls=%d steps=%d%s%s\n", 2 * CALLS, STEPS, c, g);
        fflush(stdout);
    }
    step++;
    returned = ns_now();
}
