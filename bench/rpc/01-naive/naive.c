/* The schedule behind `pplab bench sandbox`: it times pp.h calls that do next to nothing on the runtime's side
 * (pp_group_start of an empty group), so what it measures is the way to the runtime and back: a function call
 * in-process, a round trip over the driver's channel when sandboxed. It prints one line that the benchmark
 * reads back from its output. Run on one rank (P = 1). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pp.h"

#define CALLS 20000

static double ns_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void pp_naive_step(pp_rank *r) {
    static double t[CALLS];
    for (int i = 0; i < CALLS; i++) {
        double a = ns_now();
        pp_group_start(r);
        t[i] = ns_now() - a;
        pp_group_end(r);
    }
    qsort(t, CALLS, sizeof *t, by_value);
    printf("pplab-bench-rpc calls=%d p10_ns=%.0f median_ns=%.0f p90_ns=%.0f\n", CALLS, t[CALLS / 10], t[CALLS / 2],
           t[CALLS * 9 / 10]);
    fflush(stdout);
}
