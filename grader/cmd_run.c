/* cmd_run.c: `pplab run`: one schedule, one configuration; prints the bubble and the stash peaks. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crash.h"
#include "impl.h"
#include "plot.h"
#include "schedule.h"
#include "timeline.h"

static const char *usage =
    "usage: pplab run [--impl labs|solutions|DIR] --schedule naive|gpipe|1f1b|interleaved --stages P\n"
    "                 --microbatches M [--chunks v] [--layers L] [--microbatch-size b] [--steps K]\n"
    "                 [--comm-latency X] [--edge-cost X] [--eager] [--recompute] [--seed N]\n"
    "                 [--optimizer sgd|adamw] [--lr X] [--backend cpu|cuda]\n"
    "                 [--timeline [--forward-only]] [--plot FILE.png] [--trace FILE.csv]\n"
    "Runs the schedule on P ranks and prints, for the first step:\n"
    "  bubble: B (theory T)      virtual-clock bubble against the formula or the canonical replay\n"
    "  peak stashes: s0 s1 ...   most activation stashes alive at once on each rank\n";

/* Width for the timeline: $COLUMNS, else 120 when stdout is not a terminal. */
static int term_width(void) {
    const char *c = getenv("COLUMNS");
    int w = c ? atoi(c) : 0;
    return w > 20 ? w : 120;
}

int pp__cmd_run(int argc, char **argv) {
    pp_cli_run o = {.impl = "labs"};
    pp__config_defaults(&o.cfg);
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!pp__cli_run_flag(&o, argc, argv, &i)) pp__cli_fail("run", "unknown flag '%s'", argv[i]);
    }
    if (o.forward_only && !o.timeline) pp__cli_fail("run", "--forward-only only applies with --timeline");
    char err[4096];
    if (pp__config_check(&o.cfg, err, sizeof err)) pp__cli_fail("run", "%s", err);
    const pp_lab_info *lab = pp__lab_for_schedule(o.cfg.schedule);
    pp_step_fn fn = (pp_step_fn)pp__impl_load(o.impl, lab, err, sizeof err);
    if (!fn) {
        fprintf(stderr, "pplab run: %s\n", err);
        return 1;
    }
    pp__crash_install();
    pp_run_result res;
    pp__run(&o.cfg, fn, &res);
    if (res.status != PP_OK) {
        if (res.status == PP_ERR_NODEVICE)
            fprintf(stderr, "%s\n", res.error);
        else
            fprintf(stderr, "pplab run: %s: %s\n", pp__status_str(res.status), res.error);
        pp__result_free(&res);
        return 1;
    }
    int P = o.cfg.P;
    if (o.timeline) {
        int color = isatty(1) && !getenv("NO_COLOR");
        pp__timeline_print(stdout, res.traces, P, o.cfg.v, o.forward_only, term_width(), color);
    }
    int formula;
    double theory = pp__theory_bubble(&o.cfg, &formula);
    printf("bubble: %.4f (theory %.4f)\n", res.bubble, theory);
    printf("peak stashes:");
    for (int r = 0; r < P; r++) printf(" %d", res.peak_stashes[r]);
    printf("\n");
    fflush(stdout);
    int rc = 0;
    if (o.trace && pp__trace_write_csv(res.traces, P, o.trace)) {
        fprintf(stderr, "pplab run: cannot write --trace %s: check the folder exists and is writable\n", o.trace);
        rc = 1;
    }
    if (o.plot) {
        char prefix[1024];
        snprintf(prefix, sizeof prefix, "%s", o.plot);
        char *dot = strrchr(prefix, '.');
        if (dot && !strcmp(dot, ".png")) *dot = 0;
        char title[128];
        snprintf(title, sizeof title, "%s, P=%d, M=%d, v=%d", o.cfg.schedule, P, o.cfg.M, o.cfg.v);
        if (pp__plot_gantt(res.traces, P, title, prefix)) rc = 1;
    }
    pp__result_free(&res);
    return rc;
}
