/* main.c: pplab's command line: run, grade, info, bench, figures. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cpu/cpu_kernels.h"

static const char *usage =
    "usage: pplab <command> [flags]\n"
    "  run       run one schedule and print its bubble and stash peaks   (pplab run --help)\n"
    "  grade     grade a lab implementation                               (pplab grade --help)\n"
    "  info      backends and transports compiled in, and usable here\n"
    "  bench     communication, GEMM and pipeline-overhead benchmarks\n"
    "  figures   run the sweeps behind the plots and render them into a folder\n";

int main(int argc, char **argv) {
    pp__cpu_blas_settle(argv);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    pp__cli_set_command(cmd);
    if (!strcmp(cmd, "run")) return pp__cmd_run(argc, argv);
    if (!strcmp(cmd, "grade")) return pp__cmd_grade(argc, argv);
    if (!strcmp(cmd, "grade-one")) return pp__cmd_grade_one(argc, argv); /* hidden: pplab grade --transport mpi */
    if (!strcmp(cmd, "info")) return pp__cmd_info(argc, argv);
    if (!strcmp(cmd, "bench")) return pp__cmd_bench(argc, argv);
    if (!strcmp(cmd, "figures")) return pp__cmd_figures(argc, argv);
    fprintf(stderr, "pplab: unknown command '%s': use run, grade, info, bench or figures (pplab --help)\n", cmd);
    return 2;
}
