/* The schedule behind `pplab bench sandbox`: it times pp.h calls that do next to nothing on the runtime's side,
 * so what it measures is the way to the runtime: pp_group_start of an empty group (a call that cannot wait, which
 * a sandboxed driver posts and does not wait for) and the pp_group_end after it (a call the driver waits on,
 * which also finds the post before it served). In-process both are function calls. It prints one line that the
 * benchmark reads back from its output. */
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

/* p10, median and p90 of n samples, sorted in place, into one line's worth of text */
static void quantiles(double *t, int n, const char *name, char *out, size_t len) {
    qsort(t, (size_t)n, sizeof *t, by_value);
    snprintf(out, len, " %s_p10_ns=%.0f %s_median_ns=%.0f %s_p90_ns=%.0f", name, t[n / 10], name, t[n / 2], name,
             t[n * 9 / 10]);
}

void pp_naive_step(pp_rank *r) {
    static double post[CALLS], call[CALLS];
    for (int i = 0; i < CALLS; i++) {
        double a = ns_now();
        pp_group_start(r);
        double b = ns_now();
        pp_group_end(r);
        post[i] = b - a;
        call[i] = ns_now() - b;
    }
    char p[160], c[160];
    quantiles(post, CALLS, "post", p, sizeof p);
    quantiles(call, CALLS, "call", c, sizeof c);
    printf("pplab-bench-rpc calls=%d%s%s\n", CALLS, p, c);
    fflush(stdout);
}
