/* bench.c: `pplab bench [comm|gemm|attention|pipeline|sandbox|reduce|all] [--quick]`: parses the flags, runs the
 * chosen benchmarks in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"

static const char usage[] =
    "usage: pplab bench [comm|gemm|attention|pipeline|sandbox|reduce|all] [flag ...]\n"
    "Prints figures, each against a baseline measured in the same run; asserts nothing.\n"
    "  comm      ping-pong round trip between two thread ranks (rendezvous and eager) vs memcpy bandwidth\n"
    "  gemm      the cpu backend's GEMM slot vs cblas_sgemm called directly, at the model's shapes\n"
    "  attention the cpu backend's causal attention, forward + backward, at a small GPT's shapes (compare.sh sets\n"
    "            PyTorch's scaled_dot_product_attention beside it)\n"
    "  pipeline  GPipe on 2 ranks vs the same work on 1 rank: wall time against the bubble, CPU-time overhead\n"
    "  sandbox   one pp.h call's round trip through a sandboxed driver, and grading the solutions sandboxed vs\n"
    "            in-process\n"
    "  reduce    pp_grad_reduce between 2 and 4 thread replicas vs memcpy bandwidth, beside the virtual cost\n"
    "  all       all six (the default)\n";

static const char notes[] = "Exit status 0 when every chosen benchmark ran, 1 when one could not run (its table says "
                           "why).\n";

static int bench_table(pp_bench_opts *o, pp_flag *out) {
    const pp_flag f[] = {{.name = "--quick", .kind = PP_FLAG_SET, .to = &o->quick, .set = 1,
                          .help = "fewer repetitions and sizes (a smoke run for CI, well under a minute)"}};
    memcpy(out, f, sizeof f);
    return (int)(sizeof f / sizeof f[0]);
}

static int bench_flags(pp_flag *out) {
    static pp_bench_opts defaults;
    return bench_table(&defaults, out);
}

/* The one benchmark named, or all. */
static void which_operand(void *ctx, const char *a) {
    const char **which = ctx;
    if (strcmp(a, "comm") && strcmp(a, "gemm") && strcmp(a, "attention") && strcmp(a, "pipeline") &&
        strcmp(a, "sandbox") && strcmp(a, "reduce") && strcmp(a, "all"))
        pp__cli_fail("bench", "unknown benchmark '%s': use comm, gemm, attention, pipeline, sandbox, reduce or all",
                     a);
    if (*which)
        pp__cli_fail("bench",
                     "name one benchmark (got '%s' and '%s'): comm, gemm, attention, pipeline, sandbox, reduce or all",
                     *which, a);
    *which = a;
}

/* pplab bench: see usage above. argv[1] is "bench". */
static int bench_main(int argc, char **argv) {
    pp_bench_opts o = {0};
    const char *which = NULL;
    pp_flag flags[PP_CLI_MAX_FLAGS];
    pp__cli_parse(&pp__cli_bench, flags, bench_table(&o, flags), argc, argv, which_operand, &which);
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
                   {"attention", pp__bench_attention},
                   {"pipeline", pp__bench_pipeline},
                   {"sandbox", pp__bench_sandbox},
                   {"reduce", pp__bench_reduce}};
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

const pp_cli_command pp__cli_bench = {
    .name = "bench",
    .summary = "communication, GEMM, attention, pipeline-overhead and sandbox benchmarks",
    .usage = usage,
    .notes = notes,
    .flags = bench_flags,
    .main = bench_main,
};
