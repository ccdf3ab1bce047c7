/* cmd_figures.c: `pplab figures [--impl I] OUTDIR`: the sweeps behind the course's plots, rendered with gnuplot. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "figures.h"
#include "impl_build.h"
#include "plot.h"

static const char usage[] =
    "usage: pplab figures [flag ...] OUTDIR\n"
    "Runs the sweeps (bubble vs M, bubble vs comm latency, peak stashes, loss curve, Gantt charts) with the\n"
    "implementation's GPipe, 1F1B and interleaved schedules and renders each as OUTDIR/NAME.{dat,gp,png,svg}\n"
    "(gnuplot). A schedule that cannot be loaded is skipped, and said so.\n";

typedef struct figures_opts {
    const char *impl, *outdir;
    int steps, width;
} figures_opts;

static void figures_opts_init(figures_opts *o) {
    pp_run_config c;
    pp__config_defaults(&c);
    *o = (figures_opts){.impl = pp__impl_have_solutions() ? "solutions" : "labs", .steps = 30, .width = c.hidden};
}

static int figures_table(figures_opts *o, pp_flag *out) {
    const pp_flag f[] = {
        {.name = "--impl", .kind = PP_FLAG_STR, .to = &o->impl, .arg = "I",
         .help = pp__impl_choices()},
        {.name = "--steps", .kind = PP_FLAG_INT, .to = &o->steps, .lo = 2, .hi = 10000, .arg = "K",
         .help = "length of the loss curve"},
        {.name = "--width", .kind = PP_FLAG_INT, .to = &o->width, .lo = 1, .hi = 65536, .arg = "H",
         .help = "the model's hidden size", .old = "--hidden"},
    };
    memcpy(out, f, sizeof f);
    return (int)(sizeof f / sizeof f[0]);
}

static int figures_flags(pp_flag *out) {
    static figures_opts defaults;
    figures_opts_init(&defaults);
    return figures_table(&defaults, out);
}

static void outdir_operand(void *ctx, const char *arg) {
    figures_opts *o = ctx;
    if (o->outdir) pp__cli_fail("figures", "one output folder only (got '%s' and '%s')", o->outdir, arg);
    o->outdir = arg;
}

static int figures_main(int argc, char **argv) {
    figures_opts o;
    pp_flag flags[PP_CLI_MAX_FLAGS];
    figures_opts_init(&o);
    pp__cli_parse(&pp__cli_figures, flags, figures_table(&o, flags), argc, argv, outdir_operand, &o);
    if (!o.outdir) pp__cli_fail("figures", "name the output folder, e.g. pplab figures out");
    if (!pp__plot_available()) {
        fprintf(stderr, "pplab figures: gnuplot is not installed: apt-get install gnuplot-nox (or make deps)\n");
        return 1;
    }
    mkdir(o.outdir, 0755);
    char err[4096];
    pp_step_fn fn[3];
    const char *labs[3] = {"gpipe", "1f1b", "interleaved"};
    for (int i = 0; i < 3; i++) {
        fn[i] = (pp_step_fn)pp__impl_load(o.impl, pp__lab_find(labs[i]), err, sizeof err);
        if (!fn[i]) fprintf(stderr, "pplab figures: skipping the %s figures: %s\n", labs[i], err);
    }
    pp_run_config base;
    pp__config_defaults(&base);
    /* one model for every schedule: a 1F1B stage is two blocks, an interleaved chunk one, so the latency sweep
     * compares the schedules at equal compute */
    base.layers = 8;
    base.steps = o.steps;
    base.hidden = o.width;
    return pp__figures_all(o.outdir, fn[0], fn[1], fn[2], &base) ? 1 : 0;
}

const pp_cli_command pp__cli_figures = {
    .name = "figures",
    .summary = "run the sweeps behind the plots and render them into a folder",
    .usage = usage,
    .flags = figures_flags,
    .main = figures_main,
};
