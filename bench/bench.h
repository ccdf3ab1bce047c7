/* bench.h: the shared harness of `pplab bench`: options, timers and medians, and the benchmarks. Each
 * benchmark prints one table in the style of nccl-tests (a `#`-headed block of fixed-width columns, data lines
 * without `#`) and a conclusion line; it measures its own baseline in the same run and asserts nothing. */
#ifndef PP_BENCH_H
#define PP_BENCH_H

#include "cli.h"

#include <stddef.h>

typedef struct pp_bench_opts {
    int quick; /* 1: fewer repetitions and sizes, for smoke runs in CI */
} pp_bench_opts;

/* Seconds of CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID). */
double pp__bench_thread_cpu(void);

/* "64 B", "16 KiB", "4 MiB": a byte count for a table cell; buf must hold 16 bytes. */
const char *pp__bench_size(size_t bytes, char *buf, size_t len);

/* The benchmarks. Each prints its table and conclusion to stdout and returns 0, or prints one line saying why
 * it could not run (to stdout, inside its table, so the other benchmarks still run) and returns -1. */
int pp__bench_attention(const pp_bench_opts *o);
int pp__bench_comm(const pp_bench_opts *o);
int pp__bench_gemm(const pp_bench_opts *o);
int pp__bench_pipeline(const pp_bench_opts *o);
int pp__bench_sandbox(const pp_bench_opts *o);
int pp__bench_reduce(const pp_bench_opts *o);

#endif /* PP_BENCH_H */
