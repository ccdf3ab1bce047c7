/* cmd_figures.c: `pplab figures [--impl I] [--lab X] OUTDIR`: the sweeps behind the course's plots, or one lab's
 * run beside the canonical one, rendered with gnuplot. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "figures.h"
#include "figures_lab.h"
#include "impl_build.h"
#include "plot.h"
#include "policy.h"

static const char usage[] =
    "usage: pplab figures [flag ...] OUTDIR\n"
    "Runs the sweeps (bubble vs M, bubble vs comm latency, peak stashes, loss curve, Gantt charts) with the\n"
    "implementation's GPipe, 1F1B and interleaved schedules and renders each as OUTDIR/NAME.{dat,gp,png,svg}\n"
    "(gnuplot). A schedule that cannot be loaded or is not solved yet is skipped, and said so.\n"
    "With --lab X (a number such as 05, or a name such as zbh1) it draws that lab's run beside the canonical\n"
    "order instead: its timeline, bubble vs M and vs comm latency, peak stashes per rank, and lab 07's reduce\n"
    "and lab 08's sums, as OUTDIR/SCHEDULE-*.png. A lab not solved yet gets one line and exit status 3.\n"
    "--impl picks whose code runs, as without --lab; make plots LAB=X passes --impl labs, your own.\n";

typedef struct figures_opts {
    const char *impl, *outdir, *lab;
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
        {.name = "--lab", .kind = PP_FLAG_STR, .to = &o->lab, .arg = "X",
         .help = "draw lab X's run (00-09 or its name) beside the canonical order instead of the course's sweeps",
         .dflt = "the course's sweeps"},
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

/* lab's student program, built from --impl and loaded into this process (the grid lab's mapping with it): 0, or
 * -1 after one line. */
static int lab_program(const figures_opts *o, const pp_lab_info *lab, pp_program *prog) {
    char dir[PATH_MAX], err[4096];
    if (pp__impl_dir(o->impl, dir, sizeof dir)) {
        fprintf(stderr, "pplab figures: --impl %s: no such folder (%s)\n", o->impl, pp__impl_choices());
        return -1;
    }
    pp_sandbox sb;
    pp__sandbox_defaults(&sb);
    static pp_impl built;
    if (pp__sandbox_probe(&sb, err, sizeof err) || pp__impl_build(dir, lab, &sb, &built, err, sizeof err) != PP_OK ||
        pp__impl_program(&built, lab, prog, err, sizeof err)) {
        fprintf(stderr, "pplab figures: lab %.2s (%s): %s\n", lab->folder, lab->name, err);
        return -1;
    }
    return 0;
}

/* --lab: one lab's figures. The warm-up runs no code of the student's: its figures are canonical orders. */
static int figures_lab(const figures_opts *o) {
    char err[1024];
    const pp_lab_info *lab = pp__figures_lab_find(o->lab, err, sizeof err);
    if (!lab) pp__cli_fail("figures", "%s", err);
    /* lab 09 writes a scheduler: its orders are the other labs' schedules, drawn under their own names */
    if (!lab->symbol && lab->kind != &pp__warmup_lab)
        pp__cli_fail("figures", "--lab %s: lab %.2s (%s) has no figures of its own: draw the schedule your orders "
                     "are for, e.g. --lab 03", o->lab, lab->folder, lab->name);
    pp_program prog = {.no_params = 1}, *p = NULL;
    if (lab->symbol) {
        if (lab_program(o, lab, &prog)) return 1;
        p = &prog;
    }
    pp_run_config base;
    pp__config_defaults(&base);
    base.layers = 8;
    base.steps = 1;
    base.hidden = o->width;
    /* its own status, so that make plots can tell a lab still to write from a figure that failed */
    int rc = pp__figures_lab(o->outdir, lab, p, &base, o->impl, !pp__impl_have_solutions());
    return rc == 1 ? 3 : rc ? 1 : 0;
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
    if (o.lab) return figures_lab(&o);
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
    return pp__figures_all(o.outdir, fn[0], fn[1], fn[2], &base, o.impl) ? 1 : 0;
}

const pp_cli_command pp__cli_figures = {
    .name = "figures",
    .summary = "run the sweeps behind the plots and render them into a folder",
    .usage = usage,
    .flags = figures_flags,
    .main = figures_main,
};
