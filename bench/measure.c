/* measure.c: the small helpers every benchmark shares (bench.h): the thread's CPU time, size labels. */
#include <stdio.h>
#include <time.h>

#include "bench.h"

double pp__bench_thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *pp__bench_size(size_t bytes, char *buf, size_t len) {
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, len, "%zu KiB", bytes >> 10);
    else
        snprintf(buf, len, "%zu B", bytes);
    return buf;
}
