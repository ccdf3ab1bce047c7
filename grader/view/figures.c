/* figures.c: runs the schedules over the sweeps the course shows (micro-batches, comm latency, memory, loss)
 * and turns the measured numbers, with the theory beside them, into gnuplot figures (plot.h). */
#include "figures.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures_lab.h"
#include "plot.h"
#include "replay.h"

#include "reference.h"

#define FIG_P 4
#define FIG_M 8
#define FIG_V 2

/* A sweep run: base with the sweep's own knobs. layers falls back to one block per virtual stage when base's
 * count does not split into P*v stages. */
static pp_run_config config_for(const pp_run_config *base, const char *schedule, int P, int M, int v, double lat,
                                int steps) {
    pp_run_config c = *base;
    c.schedule = pp__schedule_def(schedule);
    c.P = P;
    c.M = M;
    c.v = v;
    c.comm_latency = lat;
    c.steps = steps;
    c.transport = "threads";
    if (c.layers % (P * v)) c.layers = 0;
    return c;
}

/* Runs c; on failure prints one line naming the run and returns -1 (res is freed then). */
static int run_one(const pp_run_config *c, pp_step_fn fn, pp_run_result *res) {
    if (pp__run(c, fn, res) == PP_OK) return 0;
    const char *nl = strchr(res->error, '\n');
    fprintf(stderr, "pplab figures: the %s run (P=%d M=%d v=%d latency %g) failed: %.*s\n", c->schedule->name, c->P, c->M,
            c->v, c->comm_latency, nl ? (int)(nl - res->error) : (int)strlen(res->error), res->error);
    pp__result_free(res);
    return -1;
}

static void path_in(char *buf, size_t len, const char *outdir, const char *name) {
    snprintf(buf, len, "%s/%s", outdir, name);
}

static int fig_gantts(const char *outdir, pp_step_fn fns[3], const char *const names[3], const pp_run_config *base) {
    int rc = 0;
    for (int s = 0; s < 3; s++) {
        if (!fns[s]) continue;
        int v = s == 2 ? FIG_V : 1;
        pp_run_config c = config_for(base, names[s], FIG_P, FIG_M, v, base->comm_latency, 1);
        pp_run_result res;
        if (run_one(&c, fns[s], &res)) {
            rc = -1;
            continue;
        }
        char title[128], prefix[4096];
        /* the layer count sets the time unit's scale: a stage's forward costs layers / P units */
        int layers = pp__config_layers(&c);
        snprintf(title, sizeof title, "%s, P=%d M=%d%s, %d layers: bubble %.3f", names[s], c.P, c.M, v > 1 ? " v=2" : "",
                 layers, res.bubble);
        snprintf(prefix, sizeof prefix, "%s/gantt-%s", outdir, names[s]);
        if (pp__plot_gantt(res.traces, c.P, title, prefix)) rc = -1;
        pp__result_free(&res);
    }
    return rc;
}

static int fig_bubble_vs_m(const char *outdir, pp_step_fn fns[3], const char *const names[3],
                           const pp_run_config *base) {
    static const int m_flat[] = {1, 2, 4, 6, 8, 12, 16, 24, 32}, m_inter[] = {4, 8, 12, 16, 24, 32};
    enum { NF = sizeof m_flat / sizeof *m_flat, NI = sizeof m_inter / sizeof *m_inter, NT = 32 };
    double mx[3][NF], my[3][NF], tx[NT], t1[NT], t2[NT];
    pp_plot_series ser[5];
    int ns = 0, rc = 0;

    /* theory: the formula, or the canonical schedule's replay when edge costs make it inexact */
    for (int i = 0; i < NT; i++) {
        int formula;
        tx[i] = i + 1;
        pp_run_config c1 = config_for(base, "1f1b", FIG_P, i + 1, 1, 0, 1);
        t1[i] = pp__theory_bubble(&c1, &formula);
    }
    ser[ns++] = (pp_plot_series){"theory, v=1", tx, t1, NT, PP_PLOT_LINES, 1};
    int n2 = 0;
    double tx2[NT];
    for (int M = FIG_P; M <= NT; M += FIG_P) {
        int formula;
        pp_run_config c2 = config_for(base, "interleaved", FIG_P, M, FIG_V, 0, 1);
        tx2[n2] = M;
        t2[n2++] = pp__theory_bubble(&c2, &formula);
    }
    ser[ns++] = (pp_plot_series){"theory, v=2", tx2, t2, n2, PP_PLOT_LINES, 2};

    for (int s = 0; s < 3; s++) {
        if (!fns[s]) continue;
        const int *ms = s == 2 ? m_inter : m_flat;
        int nm = s == 2 ? NI : NF, k = 0;
        for (int i = 0; i < nm; i++) {
            pp_run_config c = config_for(base, names[s], FIG_P, ms[i], s == 2 ? FIG_V : 1, 0, 1);
            pp_run_result res;
            if (run_one(&c, fns[s], &res)) {
                rc = -1;
                continue;
            }
            mx[s][k] = ms[i];
            my[s][k++] = res.bubble;
            pp__result_free(&res);
        }
        static const int color[3] = {1, 3, 2}; /* gpipe on the v=1 theory colour, interleaved on v=2's */
        if (k) ser[ns++] = (pp_plot_series){names[s], mx[s], my[s], k, PP_PLOT_POINTS, color[s]};
    }
    char prefix[4096], title[128];
    path_in(prefix, sizeof prefix, outdir, "bubble-vs-M");
    /* points only where a schedule ran: a handout's untouched labs have none yet, and the theory is the target */
    int measured = ns > 2;
    snprintf(title, sizeof title, "Pipeline bubble vs micro-batches, P=%d (%s)", FIG_P,
             measured ? "measured points, theory lines" : "theory lines; no schedule of yours ran yet");
    if (pp__plot_xy(prefix, title, "micro-batches M", "bubble (idle fraction, virtual time)", ser, ns)) rc = -1;
    return rc;
}

static int fig_bubble_vs_latency(const char *outdir, pp_step_fn fns[3], const pp_run_config *base) {
    static const double lat[] = {0, 0.25, 0.5, 1, 1.5, 2};
    enum { NL = sizeof lat / sizeof *lat, NT = 21 };
    const char *names[2] = {"1f1b", "interleaved"};
    pp_step_fn f[2] = {fns[1], fns[2]};
    double mx[2][NL], my[2][NL], tx[NT], ty[2][NT];
    pp_plot_series ser[4];
    int ns = 0, rc = 0;
    char label[2][2][64];
    for (int s = 0; s < 2; s++) {
        if (!f[s]) continue;
        int v = s ? FIG_V : 1, k = 0;
        for (int i = 0; i < NT; i++) {
            int formula;
            tx[i] = 0.1 * i;
            pp_run_config c = config_for(base, names[s], FIG_P, FIG_M, v, tx[i], 1);
            ty[s][i] = pp__theory_bubble(&c, &formula);
        }
        for (int i = 0; i < NL; i++) {
            pp_run_config c = config_for(base, names[s], FIG_P, FIG_M, v, lat[i], 1);
            pp_run_result res;
            if (run_one(&c, f[s], &res)) {
                rc = -1;
                continue;
            }
            mx[s][k] = lat[i];
            my[s][k++] = res.bubble;
            pp__result_free(&res);
        }
        snprintf(label[s][0], sizeof label[s][0], "%s%s, replayed", names[s], v > 1 ? " v=2" : "");
        snprintf(label[s][1], sizeof label[s][1], "%s%s, measured", names[s], v > 1 ? " v=2" : "");
        ser[ns++] = (pp_plot_series){label[s][0], tx, ty[s], NT, PP_PLOT_LINES, s + 1};
        ser[ns++] = (pp_plot_series){label[s][1], mx[s], my[s], k, PP_PLOT_POINTS, s + 1};
    }
    if (!ns) return 0;
    char prefix[4096], title[128];
    path_in(prefix, sizeof prefix, outdir, "bubble-vs-latency");
    /* interleaving sends more messages per step: the ratio is what makes it pay for latency */
    snprintf(title, sizeof title, "Bubble vs comm latency, P=%d M=%d (interleaved sends %.2fx the messages)", FIG_P,
             FIG_M, (double)(FIG_V * FIG_P - 1) / (FIG_P - 1));
    if (pp__plot_xy(prefix, title, "comm latency per message (units of one layer's forward)",
                    "bubble (idle fraction, virtual time)", ser, ns))
        rc = -1;
    return rc;
}

static int fig_peak_stashes(const char *outdir, pp_step_fn fns[3], const char *const names[3],
                            const pp_run_config *base) {
    double vals[3 * FIG_P];
    const char *sn[3];
    char snbuf[3][64];
    int ns = 0, rc = 0;
    for (int s = 0; s < 3; s++) {
        if (!fns[s]) continue;
        int v = s == 2 ? FIG_V : 1;
        pp_run_config c = config_for(base, names[s], FIG_P, FIG_M, v, 0, 1);
        pp_run_result res;
        if (run_one(&c, fns[s], &res)) {
            rc = -1;
            continue;
        }
        /* an interleaved stash holds 1/v of a stage's layers: count it so, to compare memory across schedules */
        for (int r = 0; r < FIG_P; r++) vals[ns * FIG_P + r] = (double)res.peak_stashes[r] / v;
        snprintf(snbuf[ns], sizeof snbuf[ns], "%s%s", names[s], v > 1 ? " (v=2, chunk stashes / 2)" : "");
        sn[ns] = snbuf[ns];
        ns++;
        pp__result_free(&res);
    }
    if (!ns) return rc;
    const char *groups[FIG_P];
    char gbuf[FIG_P][16];
    for (int r = 0; r < FIG_P; r++) snprintf(gbuf[r], sizeof gbuf[r], "GPU %d", r), groups[r] = gbuf[r];
    char prefix[4096], title[128];
    path_in(prefix, sizeof prefix, outdir, "peak-stashes");
    snprintf(title, sizeof title, "Peak activation memory per rank, P=%d M=%d", FIG_P, FIG_M);
    if (pp__plot_bars(prefix, title, "peak live stashes (in stage-sized stashes)", groups, FIG_P, sn, vals, ns))
        rc = -1;
    return rc;
}

static int fig_loss(const char *outdir, pp_step_fn onef1b, const pp_run_config *base) {
    if (!onef1b) return 0;
    int K = base->steps > 1 ? base->steps : 30;
    pp_run_config c = config_for(base, "1f1b", FIG_P, FIG_M, 1, base->comm_latency, K);
    pp_run_result res;
    if (run_one(&c, onef1b, &res)) return -1;
    double *x = malloc((size_t)K * sizeof *x), *y = malloc((size_t)K * sizeof *y),
           *yr = malloc((size_t)K * sizeof *yr);
    for (int i = 0; i < K; i++) x[i] = i + 1, y[i] = res.loss[i];
    pp__result_free(&res);
    pp_plot_series ser[2] = {{"1F1B pipeline, P=4 M=8", x, y, K, PP_PLOT_POINTS, 1}, {NULL, NULL, NULL, 0, 0, 0}};
    int ns = 1, rc = 0;
    float *ref = malloc((size_t)K * sizeof *ref);
    if (pp__reference_losses(&c, ref) == 0) {
        for (int i = 0; i < K; i++) yr[i] = ref[i];
        ser[ns++] = (pp_plot_series){"full-batch reference", x, yr, K, PP_PLOT_LINES, 2};
    } else {
        fprintf(stderr, "pplab figures: the full-batch reference run failed; the loss curve shows the pipeline only\n");
        rc = -1;
    }
    free(ref);
    char prefix[4096], title[128];
    path_in(prefix, sizeof prefix, outdir, "loss-curve");
    snprintf(title, sizeof title, "Training loss, %d SGD steps (pipeline and full batch see the same samples)", K);
    if (pp__plot_xy(prefix, title, "step", "mean loss over the global batch", ser, ns)) rc = -1;
    free(x);
    free(y);
    free(yr);
    return rc;
}

int pp__figures_all(const char *outdir, pp_step_fn gpipe, pp_step_fn onef1b, pp_step_fn interleaved,
                    const pp_run_config *base, const char *impl) {
    pp_step_fn fns[3] = {gpipe, onef1b, interleaved};
    static const char *const names[3] = {"gpipe", "1f1b", "interleaved"};
    for (int s = 0; s < 3; s++) {
        if (!fns[s]) {
            fprintf(stderr, "pplab figures: no %s step function; its figures are skipped\n", names[s]);
            continue;
        }
        /* an untouched stub runs no op: its charts would be empty, its bubble 0 and its loss flat */
        pp_run_config c = config_for(base, names[s], FIG_P, FIG_M, s == 2 ? FIG_V : 1, 0, 1);
        pp_program prog = {.fn = fns[s], .no_params = 1};
        if (pp__figures_lab_solved(pp__lab_find(names[s]), &c, &prog, impl)) fns[s] = NULL;
    }
    int rc = 0;
    rc |= fig_gantts(outdir, fns, names, base);
    rc |= fig_bubble_vs_m(outdir, fns, names, base);
    rc |= fig_bubble_vs_latency(outdir, fns, base);
    rc |= fig_peak_stashes(outdir, fns, names, base);
    rc |= fig_loss(outdir, fns[1], base);
    return rc ? -1 : 0;
}
