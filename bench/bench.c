/* bench.c: `pplab bench [comm|gemm|pipeline|all] [--quick]`: parses the flags, runs the chosen benchmarks in
 * order, and holds the small helpers they share (thread CPU time, medians, size labels). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"

static const char *usage =
    "usage: pplab bench [comm|gemm|pipeline|sandbox|all] [--quick]\n"
    "Prints figures, each against a baseline measured in the same run; asserts nothing.\n"
    "  comm      ping-pong round trip between two thread ranks (rendezvous and eager) vs memcpy bandwidth\n"
    "  gemm      the cpu backend's GEMM slot vs cblas_sgemm called directly, at the model's shapes\n"
    "  pipeline  GPipe on 2 ranks vs the same work on 1 rank: wall time against the bubble, CPU-time overhead\n"
    "  sandbox   one pp.h call's round trip through a sandboxed driver, and grading the solutions sandboxed vs\n"
    "            in-process\n"
    "  all       all four (the default)\n"
    "  --quick   fewer repetitions and sizes (a smoke run for CI, well under a minute)\n"
    "Exit status 0 when every chosen benchmark ran, 1 when one could not run (its table says why).\n";

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

/* pplab bench: see usage above. argv[1] is "bench". */
int pp__cmd_bench(int argc, char **argv) {
    pp_bench_opts o = {0};
    const char *which = NULL;
    const pp_flag flags[] = {{.name = "--quick", .kind = PP_FLAG_SET, .to = &o.quick, .set = 1}};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (pp__cli_flag(flags, 1, argc, argv, &i)) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "comm") || !strcmp(a, "gemm") || !strcmp(a, "pipeline") || !strcmp(a, "sandbox") ||
                   !strcmp(a, "all")) {
            if (which)
                pp__cli_fail("bench", "name one benchmark (got '%s' and '%s'): comm, gemm, pipeline, sandbox or all",
                             which, a);
            which = a;
        } else if (!strncmp(a, "-", 1)) {
            pp__cli_fail("bench", "unknown flag '%s': the only flag is --quick", a);
        } else {
            pp__cli_fail("bench", "unknown benchmark '%s': use comm, gemm, pipeline, sandbox or all", a);
        }
    }
    if (!which) which = "all";
    /* every figure here is a timing: say how busy the machine was, so a reader can judge the noise */
    double load[1] = {-1};
    if (getloadavg(load, 1) < 1) load[0] = -1;
    printf("# pplab %s bench%s: %ld CPUs online, load average %.2f at start\n", pp_version(), o.quick ? " --quick" : "",
           sysconf(_SC_NPROCESSORS_ONLN), load[0]);
    static const struct {
        const char *name;
        int (*fn)(const pp_bench_opts *);
    } benches[] = {{"comm", pp__bench_comm},
                   {"gemm", pp__bench_gemm},
                   {"pipeline", pp__bench_pipeline},
                   {"sandbox", pp__bench_sandbox}};
    int all = !strcmp(which, "all"), failed = 0;
    for (size_t i = 0; i < sizeof benches / sizeof *benches; i++) {
        if (!all && strcmp(which, benches[i].name)) continue;
        printf("\n");
        fflush(stdout);
        failed |= benches[i].fn(&o) != 0;
    }
    fflush(stdout);
    return failed ? 1 : 0;
}
