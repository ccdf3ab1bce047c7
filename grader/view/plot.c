/* plot.c: writes figure data and gnuplot scripts and renders them headless by running gnuplot in the figure's
 * folder (the .gp names its files without a folder, so it can be re-run from there). */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

/* Box colours, light enough for black labels: F green, B blue, W yellow (as in the terminal timeline). */
/* F, B, W, and a gradient reduce on its rank's lane */
static const char *const kind_color[4] = {"#8fd18f", "#86aee6", "#f2d16b", "#c99ad6"};
static const char *const kind_name[4] = {"F (forward)", "B (backward)", "W (weight gradient)",
                                         "reduce (a chunk's gradients, over its stage's copies)"};
/* Pixels of the plot area of a Gantt panel, used to decide whether labels fit inside one-unit boxes. */
#define GANTT_W 1200
#define GANTT_PLOT_W 1050

int pp__plot_available(void) {
    const char *path = getenv("PATH");
    if (!path) return 0;
    char *copy = strdup(path), *save = NULL;
    int found = 0;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s/gnuplot", *d ? d : ".");
        found = access(buf, X_OK) == 0;
    }
    free(copy);
    return found;
}

/* Splits "dir/name" into its folder ("." when none) and base name; caller frees both. */
static void split_prefix(const char *prefix, char **dir, char **base) {
    const char *slash = strrchr(prefix, '/');
    if (!slash) {
        *dir = strdup(".");
        *base = strdup(prefix);
    } else {
        *dir = strndup(prefix, (size_t)(slash - prefix) + (slash == prefix));
        *base = strdup(slash + 1);
    }
}

static FILE *open_out(const char *prefix, const char *ext) {
    char path[4096];
    snprintf(path, sizeof path, "%s%s", prefix, ext);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "pplab: cannot write %s: %s; check that its folder exists and is writable\n", path,
                    strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *prefix, const char *ext) {
    if (fclose(f) == 0) return 0;
    fprintf(stderr, "pplab: cannot finish writing %s%s: %s\n", prefix, ext, strerror(errno));
    return -1;
}

/* Prints s as a gnuplot double-quoted string. */
static void gp_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* Writes prefix.gp: a header, then body once for the PNG and once for the SVG (multiplot cannot be replotted),
 * then runs gnuplot on it. body names files by base name only. */
static int gp_write_and_render(const char *prefix, const char *body, int w, int h) {
    char *dir, *base;
    split_prefix(prefix, &dir, &base);
    FILE *f = open_out(prefix, ".gp");
    int rc = -1;
    if (!f) goto out;
    fprintf(f, "# %s.gp: renders %s.dat into %s.png and %s.svg. Re-run here with: gnuplot %s.gp\n", base, base, base,
            base, base);
    fprintf(f, "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
               "    set terminal pngcairo size %d,%d font \"sans,10\" noenhanced\n"
               "} else {\n"
               "    set terminal png size %d,%d noenhanced\n"
               "}\n"
               "set output '%s.png'\n%s"
               "unset output\n\n"
               "set terminal svg size %d,%d font \"sans,10\" noenhanced\n"
               "set output '%s.svg'\n%s"
               "unset output\n",
            w, h, w, h, base, body, w, h, base, body);
    if (close_out(f, prefix, ".gp")) goto out;

    if (!pp__plot_available()) {
        fprintf(stderr, "pplab: cannot render %s.png: gnuplot is not on PATH; install it (apt-get install gnuplot) "
                        "and run 'gnuplot %s.gp' in %s\n", prefix, base, dir);
        goto out;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "pplab: cannot start gnuplot for %s.gp: %s\n", prefix, strerror(errno));
        goto out;
    }
    if (pid == 0) {
        char gp[4096];
        snprintf(gp, sizeof gp, "%s.gp", base);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, STDOUT_FILENO); /* results go to files; keep pplab's stdout clean */
        if (chdir(dir) != 0) _exit(126);
        execlp("gnuplot", "gnuplot", gp, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "pplab: gnuplot failed on %s.gp (%s %d); its message is above\n", prefix,
                WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        goto out;
    }
    rc = 0;
out:
    free(dir);
    free(base);
    return rc;
}

/* ---- Gantt ---------------------------------------------------------------------------------------------- */

/* The bar colour of an op: F, B and W in their own (PP_OP_F..W are 0..2), a reduce 3, messages none. */
static int kind_of(pp_op_kind op) { return pp__op_is_compute(op) ? (int)op : op == PP_OP_REDUCE ? 3 : -1; }

static int traces_chunks(const pp_trace *t, int P) {
    int v = 1;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < t[r].n; i++)
            if (t[r].ev[i].chunk + 1 > v) v = t[r].ev[i].chunk + 1;
    return v;
}

/* Facts about a trace set a panel needs: span (to the last op's end, a reduce's too), smallest compute op, longest
 * label, which kinds occur. */
typedef struct {
    double span, unit;
    int maxlab;
    int has[4];
} gantt_info;

static void gantt_scan(const pp_trace *t, int P, int v, gantt_info *gi) {
    for (int r = 0; r < P; r++)
        for (int i = 0; i < t[r].n; i++) {
            const pp_event *e = &t[r].ev[i];
            int k = kind_of(e->op);
            if (k < 0) continue;
            gi->has[k] = 1;
            if (e->vend > gi->span) gi->span = e->vend;
            if (k == 3) continue;
            if (e->vend - e->vstart > 1e-12 && e->vend - e->vstart < gi->unit) gi->unit = e->vend - e->vstart;
            char lab[32];
            int n = v > 1 ? snprintf(lab, sizeof lab, "%d.%d", e->mb, e->chunk) : snprintf(lab, sizeof lab, "%d", e->mb);
            if (n > gi->maxlab) gi->maxlab = n;
        }
}

/* The row of rank r's compute, and of its reduce lane under it when the chart has lanes. */
static int row_of(int r, int lanes) { return lanes ? 2 * r : r; }

static void gantt_dat_block(FILE *f, const pp_trace *t, int P, int v, int lanes) {
    for (int r = 0; r < P; r++)
        for (int i = 0; i < t[r].n; i++) {
            const pp_event *e = &t[r].ev[i];
            int k = kind_of(e->op);
            if (k < 0 || (k == 3 && !lanes)) continue;
            char lab[32];
            if (k == 3) snprintf(lab, sizeof lab, "c%d", e->chunk);
            else if (v > 1) snprintf(lab, sizeof lab, "%d.%d", e->mb, e->chunk);
            else snprintf(lab, sizeof lab, "%d", e->mb);
            fprintf(f, "%d %.9g %d %.9g %s %d \"%s\" %.9g %.9g %d %d\n", r, 0.5 * (e->vstart + e->vend),
                    row_of(r, lanes) + (k == 3), 0.5 * (e->vend - e->vstart), k == 3 ? "0.25" : "0.4", k, lab,
                    e->vstart, e->vend, e->mb, e->chunk);
        }
}

/* A row far outside the plot: keeps a block non-empty when a run produced no ops (gnuplot fails on an empty
 * index) and draws nothing. */
static void gantt_dat_placeholder(FILE *f) { fprintf(f, "-1 -1000 -1000 0 0 0 \"\" 0 0 -1 0\n"); }

static void gantt_dat_header(FILE *f, const char *what) {
    fprintf(f, "# %s: one row per compute op, one block per panel (gnuplot index 0, 1, ...)\n"
               "# columns: 1 rank, 2 x = midpoint (virtual time), 3 y = row, 4 x half-width, 5 y half-height,\n"
               "#          6 kind (0 F, 1 B, 2 W, 3 reduce), 7 label (micro-batch, micro-batch.chunk, or cCHUNK for a\n"
               "#          reduce, on the lane under its rank's row), 8 virtual start,\n"
               "#          9 virtual end, 10 micro-batch, 11 local chunk\n"
               "# (a row with rank -1 lies outside the plot and only keeps the block non-empty)\n", what);
}

/* One panel's set-up and plot command, reading index idx of dat: rows for the P ranks of each of D replicas
 * (trace d*P + p is rank p of replica d), each with its reduce lane under it when lanes is set. */
static void gantt_panel(FILE *b, const char *dat, int idx, int P, int D, int lanes, double span,
                        const gantt_info *gi, const char *title, const int *node) {
    if (title) {
        fprintf(b, "set title ");
        gp_str(b, title);
        fputc('\n', b);
    } else {
        fprintf(b, "unset title\n");
    }
    int rows = row_of(P * D, lanes);
    fprintf(b, "set xrange [0:%.9g]\nset yrange [%g:-0.5]\nset ytics (", span, rows - 0.5);
    char on[32] = "";
    for (int r = 0; r < P * D; r++) {
        if (node) snprintf(on, sizeof on, ", node %d", node[r]);
        if (D > 1) fprintf(b, "%s\"replica %d, GPU %d%s\" %d", r ? ", " : "", r / P, r % P, on, row_of(r, lanes));
        else fprintf(b, "%s\"GPU %d%s\" %d", r ? ", " : "", r, on, row_of(r, lanes));
        if (lanes) fprintf(b, ", \"reduce\" %d", row_of(r, lanes) + 1);
    }
    fprintf(b, ")\n");
    /* the grid by node: a line between rows whose ranks sit on different nodes */
    fprintf(b, "unset arrow\n");
    for (int r = 1; node && r < P * D; r++)
        if (node[r] != node[r - 1])
            fprintf(b, "set arrow from 0,%g to %.9g,%g nohead dt 2 lc rgb \"#555555\" front\n",
                    row_of(r, lanes) - 0.5, span, row_of(r, lanes) - 0.5);
    /* A label fits when a one-unit box is wider than the text: ~6 px per character at 8 pt. */
    double px = GANTT_PLOT_W * (gi->unit > 0 && isfinite(gi->unit) ? gi->unit : 1) / span;
    int font = px >= 6.5 * gi->maxlab + 4 ? 8 : px >= 5.0 * gi->maxlab + 2 ? 6 : 0;
    fprintf(b, "plot '%s' index %d using 2:3:4:5:($6+101) with boxxyerror lc variable notitle", dat, idx);
    if (font) fprintf(b, ", \\\n     '' index %d using 2:3:7 with labels font \",%d\" notitle", idx, font);
    for (int k = 0; k < 4; k++)
        if (gi->has[k] && (k < 3 || lanes))
            fprintf(b, ", \\\n     keyentry with boxes lc %d title \"%s\"", 101 + k, kind_name[k]);
    fprintf(b, "\n");
    if (!font) fprintf(b, "# boxes are too narrow for micro-batch labels at this size; see column 7 of the data\n");
}

static void gantt_style(FILE *b) {
    for (int k = 0; k < 4; k++) fprintf(b, "set linetype %d lc rgb \"%s\"\n", 101 + k, kind_color[k]);
    fprintf(b, "set style fill solid 1.0 border lc rgb \"#333333\"\n"
               "set xlabel \"virtual time (units of one layer's forward)\"\n"
               "set grid xtics\nset key outside bottom center horizontal\nset mxtics\n");
}

/* Opens the gnuplot script of a Gantt chart (a memory stream in *body) with the style set, and names its data file,
 * out_prefix.dat as the script in out_prefix's folder sees it, in dat. */
static FILE *gantt_script_open(const char *out_prefix, char **body, size_t *len, char *dat, size_t datlen) {
    char *dir, *base;
    split_prefix(out_prefix, &dir, &base);
    snprintf(dat, datlen, "%s.dat", base);
    free(dir);
    free(base);
    FILE *b = open_memstream(body, len);
    gantt_style(b);
    return b;
}

int pp__plot_gantt(const pp_trace *traces, int P, const char *title, const char *out_prefix) {
    return pp__plot_gantt_replicas(traces, P, 1, title, out_prefix, NULL);
}

int *pp__plot_nodes(const pp_run_config *c, int ranks) {
    if (c->node_size <= 0) return NULL;
    int *node = pp__xcalloc((size_t)ranks + 1, sizeof *node);
    for (int i = 0; i < ranks; i++) node[i] = pp__config_node(c, pp__config_rank_of(c, 0, i / c->P, i % c->P));
    return node;
}

int pp__plot_gantt_replicas(const pp_trace *traces, int P, int D, const char *title, const char *out_prefix,
                            const int *node) {
    int R = P * D, v = traces_chunks(traces, R);
    gantt_info gi = {0, INFINITY, 1, {0}};
    gantt_scan(traces, R, v, &gi);
    double span = gi.span > 0 ? gi.span : 1;
    int lanes = gi.has[3]; /* a reduce lane under every rank, once any rank reduced */

    FILE *f = open_out(out_prefix, ".dat");
    if (!f) return -1;
    gantt_dat_header(f, "Gantt chart of one step");
    gantt_dat_block(f, traces, R, v, lanes);
    gantt_dat_placeholder(f);
    if (close_out(f, out_prefix, ".dat")) return -1;

    char *body = NULL, dat[4096];
    size_t len = 0;
    FILE *b = gantt_script_open(out_prefix, &body, &len, dat, sizeof dat);
    gantt_panel(b, dat, 0, P, D, lanes, span, &gi, title, node);
    fclose(b);
    int rc = gp_write_and_render(out_prefix, body, GANTT_W, 150 + (lanes ? 30 : 45) * row_of(R, lanes));
    free(body);
    return rc;
}

int pp__plot_gantt_pair(const pp_trace *student, const pp_trace *reference, int P, const char *out_prefix,
                        const int *node) {
    int vs = traces_chunks(student, P), vr = traces_chunks(reference, P);
    gantt_info gs = {0, INFINITY, 1, {0}}, gr = {0, INFINITY, 1, {0}};
    gantt_scan(student, P, vs, &gs);
    gantt_scan(reference, P, vr, &gr);
    double span = gs.span > gr.span ? gs.span : gr.span;
    if (span <= 0) span = 1;

    FILE *f = open_out(out_prefix, ".dat");
    if (!f) return -1;
    gantt_dat_header(f, "your run (index 0) above the reference schedule (index 1)");
    fprintf(f, "# index 0: your run\n");
    gantt_dat_block(f, student, P, vs, 0);
    gantt_dat_placeholder(f);
    fprintf(f, "\n\n# index 1: reference\n");
    gantt_dat_block(f, reference, P, vr, 0);
    gantt_dat_placeholder(f);
    if (close_out(f, out_prefix, ".dat")) return -1;

    char *body = NULL, dat[4096];
    size_t len = 0;
    FILE *b = gantt_script_open(out_prefix, &body, &len, dat, sizeof dat);
    fprintf(b, "set multiplot layout 2,1\n");
    gantt_panel(b, dat, 0, P, 1, 0, span, &gs, "your run", node);
    gantt_panel(b, dat, 1, P, 1, 0, span, &gr, "reference schedule", node);
    fprintf(b, "unset multiplot\n");
    fclose(b);
    int rc = gp_write_and_render(out_prefix, body, GANTT_W, 2 * (150 + 45 * P));
    free(body);
    return rc;
}

/* ---- curves and bars ------------------------------------------------------------------------------------ */

static void gp_labels(FILE *b, const char *title, const char *xlabel, const char *ylabel) {
    const char *what[3] = {"title", "xlabel", "ylabel"}, *val[3] = {title, xlabel, ylabel};
    for (int i = 0; i < 3; i++) {
        if (!val[i]) continue;
        fprintf(b, "set %s ", what[i]);
        gp_str(b, val[i]);
        fputc('\n', b);
    }
}

int pp__plot_xy(const char *out_prefix, const char *title, const char *xlabel, const char *ylabel,
                const pp_plot_series *series, int nseries) {
    FILE *f = open_out(out_prefix, ".dat");
    if (!f) return -1;
    fprintf(f, "# %s\n# columns: 1 x, 2 y; one block per series (gnuplot index 0, 1, ...):\n",
            title ? title : "x/y data");
    int idx = 0;
    for (int s = 0; s < nseries; s++)
        if (series[s].n > 0) fprintf(f, "#   index %d: %s\n", idx++, series[s].name ? series[s].name : "");
    idx = 0;
    for (int s = 0; s < nseries; s++) {
        if (series[s].n <= 0) continue;
        fprintf(f, "%s# %s\n", idx++ ? "\n\n" : "", series[s].name ? series[s].name : "");
        for (int i = 0; i < series[s].n; i++) fprintf(f, "%.9g %.9g\n", series[s].x[i], series[s].y[i]);
    }
    if (close_out(f, out_prefix, ".dat")) return -1;
    if (idx == 0) {
        fprintf(stderr, "pplab: nothing to plot in %s: every series is empty\n", out_prefix);
        return -1;
    }

    char *dir, *base, *body = NULL;
    size_t len = 0;
    split_prefix(out_prefix, &dir, &base);
    FILE *b = open_memstream(&body, &len);
    gp_labels(b, title, xlabel, ylabel);
    fprintf(b, "set grid\nset key top right\nplot ");
    idx = 0;
    int npoints = 0, maxcolor = 0;
    for (int s = 0; s < nseries; s++)
        if (series[s].color > maxcolor) maxcolor = series[s].color;
    for (int s = 0; s < nseries; s++) {
        if (series[s].n <= 0) continue;
        int st = series[s].style >= 0 && series[s].style <= 2 ? series[s].style : 0;
        /* series without a colour take the ones after every requested colour, so none collide */
        int lc = series[s].color > 0 ? series[s].color : ++maxcolor;
        fprintf(b, "%s'%s.dat' index %d using 1:2 with ", idx ? ", \\\n     " : "", base, idx);
        if (st == PP_PLOT_LINES) {
            fprintf(b, "lines lw 2");
        } else {
            /* each point series gets its own marker, each smaller than the last, so equal values stay visible */
            static const int pt[] = {7, 5, 9, 11, 13};
            double ps = 1.8 - 0.35 * (npoints % 4);
            fprintf(b, "%s pt %d ps %.2f", st == PP_PLOT_POINTS ? "points" : "linespoints lw 2", pt[npoints % 5], ps);
            npoints++;
        }
        fprintf(b, " lc %d title ", lc);
        gp_str(b, series[s].name ? series[s].name : "");
        idx++;
    }
    fprintf(b, "\n");
    fclose(b);
    int rc = gp_write_and_render(out_prefix, body, 900, 600);
    free(body);
    free(dir);
    free(base);
    return rc;
}

int pp__plot_bars(const char *out_prefix, const char *title, const char *ylabel, const char *const *groups,
                  int ngroups, const char *const *names, const double *values, int nseries) {
    if (ngroups <= 0 || nseries <= 0) {
        fprintf(stderr, "pplab: nothing to plot in %s: no groups or no series\n", out_prefix);
        return -1;
    }
    FILE *f = open_out(out_prefix, ".dat");
    if (!f) return -1;
    fprintf(f, "# %s\n# columns: 1 group", title ? title : "clustered bars");
    for (int s = 0; s < nseries; s++) fprintf(f, ", %d %s", s + 2, names[s]);
    fprintf(f, "\n");
    for (int g = 0; g < ngroups; g++) {
        gp_str(f, groups[g]);
        for (int s = 0; s < nseries; s++) fprintf(f, " %.9g", values[(size_t)s * ngroups + g]);
        fprintf(f, "\n");
    }
    if (close_out(f, out_prefix, ".dat")) return -1;

    char *dir, *base, *body = NULL;
    size_t len = 0;
    split_prefix(out_prefix, &dir, &base);
    FILE *b = open_memstream(&body, &len);
    gp_labels(b, title, NULL, ylabel);
    fprintf(b, "set style data histograms\nset style histogram clustered gap 1\n"
               "set style fill solid 0.85 border lc rgb \"#333333\"\nset boxwidth 0.9\n"
               "set grid ytics\nset key outside top center horizontal\n");
    double top = 0;
    for (int i = 0; i < ngroups * nseries; i++)
        if (values[i] > top) top = values[i];
    /* headroom so the tallest bar does not touch the frame */
    if (top > 0) fprintf(b, "set yrange [0:%.9g]\n", top * 1.1);
    else fprintf(b, "set yrange [0:*]\n");
    fprintf(b, "plot ");
    for (int s = 0; s < nseries; s++) {
        fprintf(b, "%s'%s.dat' using %d%s lc %d title ", s ? ", \\\n     " : "", base, s + 2, s ? "" : ":xtic(1)",
                s + 1);
        gp_str(b, names[s]);
    }
    fprintf(b, "\n");
    fclose(b);
    int rc = gp_write_and_render(out_prefix, body, 900, 600);
    free(body);
    free(dir);
    free(base);
    return rc;
}

int pp__plot_gantt_lanes(const pp_lanes_src *src, const char *title, const char *out_prefix) {
    return pp__plot_gantt_replicas(src->traces, src->P, src->D, title, out_prefix, src->node);
}
