/* figures_lab.c: one lab's figures: its schedule run with the student's code over the sweeps its docs use, each
 * measured number drawn beside the canonical order's replay (the same theory `pplab run --canonical` prints). */
#include "figures_lab.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "exposed.h"
#include "plot.h"
#include "replay.h"
#include "schedules.h"

/* A handout's canonical side exists at its recorded configurations only: every title says so there. */
#define RECORDED_NOTE " (canonical: recorded configurations only)"

/* The lab's number, "05", from its folder. */
static void lab_number(const pp_lab_info *lab, char num[3]) {
    num[0] = lab->folder[0], num[1] = lab->folder[1], num[2] = 0;
}

const pp_lab_info *pp__figures_lab_find(const char *arg, char *err, size_t len) {
    const pp_lab_info *lab = pp__lab_find(arg);
    if (lab) return lab;
    /* a number picks its folder's first row: the lab's main schedule */
    char *end;
    long n = strtol(arg, &end, 10);
    if (*arg && isdigit((unsigned char)*arg) && !*end && n >= 0 && n < 100) {
        char num[3];
        snprintf(num, sizeof num, "%02ld", n);
        for (int i = 0; i < pp__nlabs; i++)
            if (!strncmp(pp__labs[i].folder, num, 2)) return &pp__labs[i];
    }
    char names[512];
    snprintf(err, len, "--lab %s: no such lab: use a number 00-%.2s or a name (%s)", arg,
             pp__labs[pp__nlabs - 1].folder, pp__lab_names(names, sizeof names, ", ", " or "));
    return NULL;
}

/* The operations a run's ranks ran, all replicas'. */
static int run_ops(const pp_run_result *res) {
    int ops = 0;
    for (int r = 0; res->traces && r < res->P; r++) ops += res->traces[r].n; /* a run refused early has none */
    return ops;
}

/* The first line of a run's error. */
static int first_line(const char *s) {
    const char *nl = strchr(s, '\n');
    return nl ? (int)(nl - s) : (int)strlen(s);
}

/* The pplab run flags of c's shape, to rerun it by hand. */
static const char *run_flags(const pp_run_config *c, char *buf, size_t len) {
    int n = snprintf(buf, len, "--schedule %s --stages %d --microbatches %d", c->schedule->name, c->P, c->M);
    if (c->v > 1) n += snprintf(buf + n, len - (size_t)n, " --chunks %d", c->v);
    if (c->D > 1) n += snprintf(buf + n, len - (size_t)n, " --dp %d", c->D);
    if (c->T > 1) n += snprintf(buf + n, len - (size_t)n, " --tp %d", c->T);
    if (c->node_size > 0) snprintf(buf + n, len - (size_t)n, " --node-size %d", c->node_size);
    return buf;
}

/* Runs c with prog: 0 with *res filled when the run ended well and some rank ran an operation; else -1 after the
 * line pp__figures_lab_solved promises (res freed). */
static int lab_run(const pp_lab_info *lab, const pp_run_config *c, const pp_program *prog, const char *impl,
                   pp_run_result *res_out) {
    char num[3], err[512], flags[256];
    lab_number(lab, num);
    /* the runtime trusts its configuration: a bad one is said before anything runs */
    if (pp__config_check(c, err, sizeof err)) {
        fprintf(stderr, "pplab figures: lab %s (%s): %s\n", num, lab->name, err);
        return -1;
    }
    pp_run_result res;
    pp_status st = pp__run_program(c, prog, &res);
    int ops = run_ops(&res);
    if (st == PP_OK && ops) {
        *res_out = res;
        return 0;
    }
    /* make plots LAB=05 draws the folder's main schedule: its other parts go by their names */
    const pp_lab_info *main_row = pp__lab_find(lab->folder);
    const char *again = main_row == lab ? num : lab->name;
    if (!ops && st == PP_OK)
        fprintf(stderr, "pplab figures: lab %s (%s) is not solved yet: no rank ran any operation; write %s/%s/%s.c, "
                "then make plots LAB=%s\n", num, lab->name, impl, lab->folder, lab->file, again);
    else
        fprintf(stderr, "pplab figures: lab %s (%s) is not solved yet: %.*s; fix %s/%s/%s.c (pplab run %s --timeline "
                "shows where), then make plots LAB=%s\n", num, lab->name, first_line(res.error), res.error, impl,
                lab->folder, lab->file, run_flags(c, flags, sizeof flags), again);
    pp__result_free(&res);
    return -1;
}

int pp__figures_lab_solved(const pp_lab_info *lab, const pp_run_config *c, const pp_program *prog,
                           const char *impl) {
    pp_run_result res;
    if (lab_run(lab, c, prog, impl, &res)) return -1;
    pp__result_free(&res);
    return 0;
}

/* The configuration a lab's figures start from, as its docs run it: P=4, M=8 (naive's one) and the row's default
 * chunks; a reduce's row on 2 replicas (lab 07), a row that cuts blocks on 2 shards of 2 stages (lab 08), the grid
 * on nodes of 2. The layers fall back to one block per virtual stage where base's do not split evenly. */
static pp_run_config lab_config(const pp_run_config *base, const pp_schedule_def *d) {
    pp_run_config c = *base;
    c.schedule = d;
    c.P = 4, c.M = 8, c.v = pp__schedule_default_chunks(d);
    c.steps = 1;
    c.comm_latency = 0;
    c.transport = "threads";
    if (d->one_microbatch) c.M = 1;
    if (d->reduce != PP_REDUCE_NONE) c.D = 2;
    if (d->own_blocks) c.T = 2, c.P = 2, c.M = 4;
    if (d->grid) c.node_size = 2;
    if (c.layers % (c.P * c.v)) c.layers = 0;
    return c;
}

/* c's layers again after a knob changed the stages. */
static int sweep_ok(pp_run_config *c) {
    char err[512];
    if (c->layers % (c->P * c->v)) c->layers = 0;
    return pp__config_check(c, err, sizeof err) == 0;
}

/* One sweep point: 0 with res filled, or -1 after one line (res freed). */
static int run_point(const pp_run_config *c, const pp_program *prog, pp_run_result *res) {
    if (pp__run_program(c, prog, res) == PP_OK && run_ops(res)) return 0;
    fprintf(stderr, "pplab figures: the %s run (P=%d M=%d v=%d D=%d T=%d latency %g) failed: %.*s\n",
            c->schedule->name, c->P, c->M, c->v, c->D, c->T, c->comm_latency, first_line(res->error), res->error);
    pp__result_free(res);
    return -1;
}

static void prefix_of(char *buf, size_t len, const char *outdir, const char *name, const char *what) {
    snprintf(buf, len, "%s/%s-%s", outdir, name, what);
}

static void traces_free(pp_trace *tr, int n) {
    if (!tr) return;
    for (int r = 0; r < n; r++) pp__trace_clear(&tr[r]);
    free(tr);
}

/* The canonical order replayed on c's grid (every replica), into D x P fresh traces; NULL where c is not held. */
static pp_trace *canonical_traces(const pp_run_config *c) {
    if (!pp__theory_held(c)) return NULL;
    int n = c->P * (c->D > 1 ? c->D : 1);
    pp_trace *tr = pp__xcalloc((size_t)n, sizeof *tr);
    if (pp__theory_grid(c, NULL, NULL, tr, NULL, NULL) < 0) {
        traces_free(tr, n);
        return NULL;
    }
    return tr;
}

/* The Gantt pair (the run above the canonical replay) and the peak stashes, both from the lab's one step. */
static int fig_step(const char *outdir, const pp_run_config *c, const pp_run_result *res, const char *note) {
    const char *name = c->schedule->name;
    int rc = 0, n = res->P;
    char prefix[4096];
    pp_trace *canon = canonical_traces(c);
    pp_lanes_src run;
    pp__lanes_src_of(&run, res, c); /* every shard's lane and every replica's reduce lane */
    prefix_of(prefix, sizeof prefix, outdir, name, "gantt");
    if (canon) {
        pp_lanes_src ref = run;
        ref.traces = canon, ref.shards = NULL, ref.T = 1; /* the replay prices shard 0's ranks */
        if (pp__plot_gantt_pair_lanes(&run, &ref, prefix)) rc = -1;
    } else {
        char title[160];
        snprintf(title, sizeof title, "%s, your run, P=%d M=%d: no canonical order here", name, c->P, c->M);
        if (pp__plot_gantt_lanes(&run, title, prefix)) rc = -1;
    }
    pp__lanes_src_free(&run);
    traces_free(canon, n);

    /* replica 0's ranks: every replica holds the same stages */
    double vals[2 * 64];
    int P = c->P < 64 ? c->P : 64, held = pp__theory_held(c);
    for (int r = 0; r < P; r++) {
        vals[r] = res->peak_stashes[r];
        vals[P + r] = held ? pp__theory_peak(c, r) : 0;
    }
    const char *groups[64], *names[2] = {"your run", "canonical order"};
    char gbuf[64][16], title[192];
    for (int r = 0; r < P; r++) snprintf(gbuf[r], sizeof gbuf[r], "GPU %d", r), groups[r] = gbuf[r];
    prefix_of(prefix, sizeof prefix, outdir, name, "peak-stashes");
    snprintf(title, sizeof title, "%s: peak activation stashes per rank, P=%d M=%d v=%d%s", name, c->P, c->M, c->v,
             held ? note : ", no canonical order here");
    if (pp__plot_bars(prefix, title, "peak live stashes (chunk stashes)", groups, P, names, vals, held ? 2 : 1))
        rc = -1;
    return rc;
}

/* What a sweep measures of a run and of the canonical order. */
typedef enum { SWEEP_BUBBLE, SWEEP_EXPOSED, SWEEP_STEP } sweep_what;

static double canonical_value(const pp_run_config *c, sweep_what what) {
    int formula;
    double step;
    switch (what) {
    case SWEEP_BUBBLE: return pp__theory_bubble(c, &formula);
    case SWEEP_EXPOSED: return pp__theory_exposed(c, &formula);
    case SWEEP_STEP:
        /* a run's step ends after its reduces: so does the canonical one's */
        if (c->schedule->reduce != PP_REDUCE_NONE && c->D > 1 && pp__theory_exposed_replay(c, &step, NULL) >= 0)
            return step;
        return pp__theory_step(c);
    }
    return -1;
}

static double measured_value(const pp_run_config *c, const pp_run_result *res, sweep_what what) {
    switch (what) {
    case SWEEP_BUBBLE: return res->bubble;
    case SWEEP_EXPOSED: return res->step_time - pp__run_free_span(c, res->traces);
    case SWEEP_STEP: return res->step_time;
    }
    return 0;
}

/* The knob a sweep turns. */
typedef enum { KNOB_M, KNOB_LATENCY, KNOB_D, KNOB_T } sweep_knob;

typedef struct sweep {
    const char *what, *title, *xlabel, *ylabel;
    const char *knob_name; /* for the line that skips a sweep */
    sweep_knob knob;
    sweep_what y;
    const double *xs;
    int nx;
} sweep;

/* One sweep: the run's measured points and the canonical order's line, at every x the configuration check
 * accepts (the canonical one where this build holds it). */
static int fig_sweep(const char *outdir, const pp_run_config *base, const pp_program *prog, const sweep *s,
                     const char *note) {
    double mx[16], my[16], cx[16], cy[16];
    int nm = 0, nc = 0, rc = 0, fits = 0;
    pp_run_config at[16];
    for (int i = 0; i < s->nx && i < 16; i++) {
        pp_run_config c = *base;
        switch (s->knob) {
        case KNOB_M: c.M = (int)s->xs[i]; break;
        case KNOB_LATENCY: c.comm_latency = s->xs[i]; break;
        case KNOB_D: c.D = (int)s->xs[i]; break;
        case KNOB_T: c.T = (int)s->xs[i]; break;
        }
        at[i] = c;
        fits += sweep_ok(&at[i]);
    }
    /* one point is no curve (the grid's links price every message, so it takes no latency of its own) */
    if (fits < 2) {
        fprintf(stderr, "pplab figures: no %s-%s figure: only %d value of its %s fits this configuration\n",
                base->schedule->name, s->what, fits, s->knob_name);
        return 0;
    }
    for (int i = 0; i < s->nx && i < 16; i++) {
        pp_run_config c = at[i];
        if (!sweep_ok(&c)) continue;
        pp_run_result res;
        if (run_point(&c, prog, &res)) {
            rc = -1;
            continue;
        }
        mx[nm] = s->xs[i], my[nm++] = measured_value(&c, &res, s->y);
        pp__result_free(&res);
        double canon = pp__theory_held(&c) ? canonical_value(&c, s->y) : -1;
        if (canon >= 0) cx[nc] = s->xs[i], cy[nc++] = canon;
    }
    if (!nm) return rc;
    pp_plot_series ser[2] = {{"canonical order (replay)", cx, cy, nc, PP_PLOT_LINESPOINTS, 1},
                             {"your run (measured)", mx, my, nm, PP_PLOT_POINTS, 2}};
    char prefix[4096], title[256];
    prefix_of(prefix, sizeof prefix, outdir, base->schedule->name, s->what);
    snprintf(title, sizeof title, "%s: %s%s", base->schedule->name, s->title, nc ? note : ", no canonical order here");
    if (pp__plot_xy(prefix, title, s->xlabel, s->ylabel, ser, 2)) rc = -1;
    return rc;
}

/* The warm-up runs no schedule: its figures are the canonical orders it asks about. */
static int figures_warmup(const char *outdir, const pp_run_config *base, const char *note) {
    static const char *const names[] = {"gpipe", "1f1b", "interleaved"};
    static const double ms[] = {1, 2, 4, 6, 8, 12, 16, 24, 32};
    enum { NS = 3, NM = sizeof ms / sizeof *ms };
    double x[NS][NM], y[NS][NM];
    pp_plot_series ser[NS];
    int rc = 0;
    char prefix[4096], title[256];
    for (int s = 0; s < NS; s++) {
        pp_run_config c = lab_config(base, pp__schedule_def(names[s]));
        pp_trace *tr = canonical_traces(&c);
        if (tr) {
            snprintf(title, sizeof title, "%s, P=%d M=%d v=%d: the canonical order the warm-up asks about", names[s],
                     c.P, c.M, c.v);
            snprintf(prefix, sizeof prefix, "%s/warmup-gantt-%s", outdir, names[s]);
            if (pp__plot_gantt_replicas(tr, c.P, 1, title, prefix, NULL)) rc = -1;
            traces_free(tr, c.P);
        }
        int n = 0;
        for (int i = 0; i < NM; i++) {
            c.M = (int)ms[i];
            int formula;
            if (!sweep_ok(&c) || !pp__theory_held(&c)) continue;
            x[s][n] = ms[i], y[s][n++] = pp__theory_bubble(&c, &formula);
        }
        ser[s] = (pp_plot_series){names[s], x[s], y[s], n, PP_PLOT_LINESPOINTS, s + 1};
    }
    snprintf(prefix, sizeof prefix, "%s/warmup-bubble-vs-M", outdir);
    snprintf(title, sizeof title, "The warm-up's schedules: canonical bubble vs micro-batches, P=4 (interleaved v=2)%s",
             note);
    if (pp__plot_xy(prefix, title, "micro-batches M", "bubble (idle fraction, virtual time)", ser, NS)) rc = -1;
    return rc;
}

/* A handout's canonical side exists where it recorded the answers: the console says so once, the titles each. */
static void handout_say(int handout) {
    if (handout)
        fprintf(stderr, "pplab figures: this handout records the canonical answers of its public configurations "
                        "only: the canonical side is drawn at those alone\n");
}

/* c's shape for a title, "P=4 M=8 v=2 D=2", without the knob the sweep turns and the knobs left at one. */
static const char *shape_of(const pp_run_config *c, sweep_knob knob, char *buf, size_t len) {
    int n = snprintf(buf, len, "P=%d", c->P);
    if (knob != KNOB_M) n += snprintf(buf + n, len - (size_t)n, " M=%d", c->M);
    if (c->v > 1) n += snprintf(buf + n, len - (size_t)n, " v=%d", c->v);
    if (knob != KNOB_D && c->D > 1) n += snprintf(buf + n, len - (size_t)n, " D=%d", c->D);
    if (knob != KNOB_T && c->T > 1) snprintf(buf + n, len - (size_t)n, " T=%d", c->T);
    return buf;
}

int pp__figures_lab(const char *outdir, const pp_lab_info *lab, const pp_program *prog, const pp_run_config *base,
                    const char *impl, int handout) {
    char num[3];
    lab_number(lab, num);
    const char *note = handout ? RECORDED_NOTE : "";
    if (lab->kind == &pp__warmup_lab) {
        handout_say(handout);
        int rc = figures_warmup(outdir, base, note);
        printf("lab 00 (warmup): the canonical orders it asks about in %s/warmup-*.png\n", outdir);
        return rc ? -1 : 0;
    }
    const pp_schedule_def *d = pp__schedule_def(lab->name);
    if (!d || !prog) {
        fprintf(stderr, "pplab figures: lab %s (%s) has no figures of its own: its orders run as the schedules of "
                        "labs 01-08; pick one of those (make plots LAB=03)\n", num, lab->name);
        return 1;
    }
    pp_run_config c = lab_config(base, d);
    pp_run_result res;
    /* the run that shows the lab solved is the one its step figures draw */
    if (lab_run(lab, &c, prog, impl, &res)) return 1;
    handout_say(handout);
    int rc = 0;
    rc |= fig_step(outdir, &c, &res, note);
    pp__result_free(&res);

    static const double ms[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32}, lat[] = {0, 0.25, 0.5, 1, 1.5, 2},
                        ds[] = {1, 2, 3, 4}, ts[] = {1, 2, 4};
    const sweep sweeps[] = {
        {"bubble-vs-M", "bubble vs micro-batches", "micro-batches M", "bubble (idle fraction, virtual time)", "M",
         KNOB_M, SWEEP_BUBBLE, ms, sizeof ms / sizeof *ms},
        {"bubble-vs-latency", "bubble vs comm latency", "comm latency per message (units of one layer's forward)",
         "bubble (idle fraction, virtual time)", "--comm-latency", KNOB_LATENCY, SWEEP_BUBBLE, lat,
         sizeof lat / sizeof *lat},
        {"reduce", "exposed gradient reduce vs replicas", "data-parallel replicas D",
         "exposed communication (virtual time)", "--dp", KNOB_D, SWEEP_EXPOSED, ds, sizeof ds / sizeof *ds},
        {"sums", "the shards' sums: virtual step vs shards", "tensor-parallel shards T", "virtual step", "--tp",
         KNOB_T, SWEEP_STEP, ts, sizeof ts / sizeof *ts},
    };
    for (size_t i = 0; i < sizeof sweeps / sizeof *sweeps; i++) {
        /* the reduce only where the row reduces, the sums only where it cuts blocks over shards */
        if (sweeps[i].knob == KNOB_D && d->reduce == PP_REDUCE_NONE) continue;
        if (sweeps[i].knob == KNOB_T && !d->own_blocks) continue;
        char title[160], shape[64];
        snprintf(title, sizeof title, "%s, %s", sweeps[i].title, shape_of(&c, sweeps[i].knob, shape, sizeof shape));
        sweep s = sweeps[i];
        s.title = title;
        rc |= fig_sweep(outdir, &c, prog, &s, note);
    }
    printf("lab %s (%s): your run beside the canonical order in %s/%s-*.png\n", num, lab->name, outdir, lab->name);
    return rc ? -1 : 0;
}
