/* cmd_figures.c: `pplab figures [--impl I] OUTDIR`: the sweeps behind the course's plots, rendered with gnuplot. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "figures.h"
#include "impl.h"
#include "plot.h"

int pp__cmd_figures(int argc, char **argv) {
    const char *impl = "solutions", *outdir = NULL;
    int steps = 30, hidden = 0;
    const pp_flag flags[] = {
        {.name = "--impl", .kind = PP_FLAG_STR, .to = &impl},
        {.name = "--steps", .kind = PP_FLAG_INT, .to = &steps, .lo = 2, .hi = 10000},
        {.name = "--hidden", .kind = PP_FLAG_INT, .to = &hidden, .lo = 1, .hi = 65536},
    };
    for (int i = 2; i < argc; i++) {
        if (pp__cli_flag(flags, (int)(sizeof flags / sizeof flags[0]), argc, argv, &i)) continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: pplab figures [--impl labs|solutions|DIR] [--steps K] [--hidden H] OUTDIR\n"
                   "Runs the sweeps (bubble vs M, bubble vs comm latency, peak stashes, loss curve, Gantt charts)\n"
                   "with the implementation's schedules and renders each as OUTDIR/NAME.{dat,gp,png,svg}.\n"
                   "--steps K: length of the loss curve (default 30); --hidden H: model width (default 64).\n");
            return 0;
        } else if (argv[i][0] == '-') pp__cli_fail("figures", "unknown flag '%s'", argv[i]);
        else if (outdir) pp__cli_fail("figures", "one output folder only (got '%s' and '%s')", outdir, argv[i]);
        else outdir = argv[i];
    }
    if (!outdir) pp__cli_fail("figures", "name the output folder, e.g. pplab figures out");
    if (!pp__plot_available()) {
        fprintf(stderr, "pplab figures: gnuplot is not installed: apt-get install gnuplot-nox (or make deps)\n");
        return 1;
    }
    mkdir(outdir, 0755);
    char err[4096];
    pp_step_fn fn[3];
    const char *labs[3] = {"gpipe", "1f1b", "interleaved"};
    for (int i = 0; i < 3; i++) {
        fn[i] = (pp_step_fn)pp__impl_load(impl, pp__lab_find(labs[i]), err, sizeof err);
        if (!fn[i]) fprintf(stderr, "pplab figures: skipping the %s figures: %s\n", labs[i], err);
    }
    pp_run_config base;
    pp__config_defaults(&base);
    /* one model for every schedule: a 1F1B stage is two blocks, an interleaved chunk one, so the latency sweep
     * compares the schedules at equal compute */
    base.layers = 8;
    base.steps = steps;
    if (hidden) base.hidden = hidden;
    return pp__figures_all(outdir, fn[0], fn[1], fn[2], &base) ? 1 : 0;
}
