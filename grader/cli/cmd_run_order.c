/* cmd_run_order.c: pplab run --order FILE.csv, an order in PyTorch's compute-only CSV run on the kit's model and
 * graded as the schedule it names (cli.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "order_csv.h"
#include "report.h"
#include "schedule_lab.h"
#include "caps.h"

/* The run the file describes, against the flags that were given: each of --stages, --chunks and --microbatches
 * either agrees with the file or is taken from it. */
static void order_shape(pp_cli_run *o, const pp_schedule *s) {
    const char *path = o->order;
    if ((o->given & PP_CLI_GIVEN_STAGES) && o->cfg.P != s->P)
        pp__cli_fail("run", "--order %s has %d rows, one per rank, but --stages is %d: drop --stages or give %d",
                     path, s->P, o->cfg.P, s->P);
    if ((o->given & PP_CLI_GIVEN_CHUNKS) && o->cfg.v != s->v)
        pp__cli_fail("run", "--order %s has %d chunks per rank (%d stages on %d ranks), but --chunks is %d", path,
                     s->v, s->v * s->P, s->P, o->cfg.v);
    if ((o->given & PP_CLI_GIVEN_MICROBATCHES) && o->cfg.M < s->M)
        pp__cli_fail("run", "--order %s names micro-batch %d, but --microbatches is %d: give at least %d", path,
                     s->M - 1, o->cfg.M, s->M);
    o->cfg.P = s->P, o->cfg.v = s->v;
    if (!(o->given & PP_CLI_GIVEN_MICROBATCHES)) o->cfg.M = s->M;
    o->given |= PP_CLI_GIVEN_STAGES | PP_CLI_GIVEN_CHUNKS | PP_CLI_GIVEN_MICROBATCHES;
}

void pp__cli_order_load(pp_cli_run *o, pp_schedule *s) {
    char err[1024], names[256];
    if (o->canonical)
        pp__cli_fail("run", "--order runs the file's order, --canonical the schedule's own: choose one (with "
                     "--canonical, --export-order writes the canonical order)");
    if (!(o->given & PP_CLI_GIVEN_SCHEDULE))
        pp__cli_fail("run", "--order needs --schedule: the schedule the file's order is measured and graded against "
                     "(%s)", pp__schedule_names(names, sizeof names, ", ", " or "));
    const pp_schedule_def *d = o->cfg.schedule;
    if (!d) return; /* the configuration check names it */
    if (!(pp__transport_caps(o->cfg.transport) & PP_TRANSPORT_ORDERS))
        pp__cli_fail("run", "--order runs on the %s transport: drop --transport %s",
                     pp__transport_names(PP_TRANSPORT_ORDERS, names, sizeof names, ", ", " or "), o->cfg.transport);
    if (d->reduce != PP_REDUCE_NONE)
        pp__cli_fail("run", "--order runs one pipeline, and %s is a data-parallel schedule: name its pipeline's "
                     "schedule (1f1b, interleaved)", o->cfg.schedule->name);
    if (d->dual)
        pp__cli_fail("run", "--order reads PyTorch's schedule CSV, where a stage index lives on one rank; %s holds "
                     "every stage twice, on two pipelines, which that format cannot say: measure a dualpipev order "
                     "instead", d->title);
    if (d->own_blocks)
        pp__cli_fail("run", "--order runs each action as the library's whole stage, and %s's blocks are the "
                     "schedule's own: measure the order under --schedule 1f1b, with the same --tp", d->title);
    if (o->cfg.recompute) pp__cli_fail("run", "--order runs the file's actions as they are: drop --recompute");
    if (pp__order_csv_read(o->order, d->vshape, s, err, sizeof err)) pp__cli_fail("run", "%s", err);
    if (s->vshape != d->vshape)
        pp__cli_fail("run", "--order %s places its stages %s, and %s places them %s: name a schedule of the file's "
                     "placement",
                     o->order, s->vshape ? "in a V" : "looped (stage s on rank s mod P)", d->title,
                     d->vshape ? "in a V" : "looped");
    if (s->v > 1 && !d->chunked)
        pp__cli_fail("run", "--order %s gives each rank %d chunks, and %s has one: name a schedule with chunks (%s)",
                     o->order, s->v, d->title, pp__schedule_names_chunked(names, sizeof names, ", ", " or "));
    order_shape(o, s);
    s->M = o->cfg.M;
}

int pp__cli_order_grade(const pp_run_config *c, const pp_run_result *res, const char *path) {
    static pp_test_result out;
    memset(&out, 0, sizeof out);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(out.name, sizeof out.name, "%s as %s P=%d M=%d v=%d", base, c->schedule->name, c->P, c->M, c->v);
    snprintf(out.cfg.lab, sizeof out.cfg.lab, "%s", c->schedule->name);
    out.cfg.P = c->P, out.cfg.M = c->M, out.cfg.v = c->v, out.cfg.steps = c->steps, out.cfg.seed = c->seed;
    out.cfg.latency = c->comm_latency;
    out.status = PP_OK;
    for (int k = 0; k < c->steps; k++) out.seconds += res->step_s[k];
    pp__schedule_lab_check(c, res, NULL, NULL, &out);
    printf("graded as %s, every check of pplab grade:\n", c->schedule->name);
    pp__report_progress(stdout, &out, 1, 1, isatty(1) && !getenv("NO_COLOR"));
    return out.score == out.max ? 0 : 1;
}
