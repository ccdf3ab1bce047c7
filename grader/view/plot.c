/* plot.c: writes figure data and gnuplot scripts and renders them headless by running gnuplot in the figure's
 * folder (the .gp names its files without a folder, so it can be re-run from there); curves and bars here, the
 * Gantt charts in plot_gantt.c. */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "plot_gp.h"

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
void pp__plot_split_prefix(const char *prefix, char **dir, char **base) {
    const char *slash = strrchr(prefix, '/');
    if (!slash) {
        *dir = strdup(".");
        *base = strdup(prefix);
    } else {
        *dir = strndup(prefix, (size_t)(slash - prefix) + (slash == prefix));
        *base = strdup(slash + 1);
    }
}

FILE *pp__plot_open_out(const char *prefix, const char *ext) {
    char path[4096];
    snprintf(path, sizeof path, "%s%s", prefix, ext);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "pplab: cannot write %s: %s; check that its folder exists and is writable\n", path,
                    strerror(errno));
    return f;
}

int pp__plot_close_out(FILE *f, const char *prefix, const char *ext) {
    if (fclose(f) == 0) return 0;
    fprintf(stderr, "pplab: cannot finish writing %s%s: %s\n", prefix, ext, strerror(errno));
    return -1;
}

/* Prints s as a gnuplot double-quoted string. */
void pp__plot_gp_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* Writes prefix.gp: a header, then body once for the PNG and once for the SVG (multiplot cannot be replotted),
 * then runs gnuplot on it. body names files by base name only. */
int pp__plot_render(const char *prefix, const char *body, int w, int h) {
    char *dir, *base;
    pp__plot_split_prefix(prefix, &dir, &base);
    FILE *f = pp__plot_open_out(prefix, ".gp");
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
    if (pp__plot_close_out(f, prefix, ".gp")) goto out;

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

/* ---- curves and bars ------------------------------------------------------------------------------------ */

static void gp_labels(FILE *b, const char *title, const char *xlabel, const char *ylabel) {
    const char *what[3] = {"title", "xlabel", "ylabel"}, *val[3] = {title, xlabel, ylabel};
    for (int i = 0; i < 3; i++) {
        if (!val[i]) continue;
        fprintf(b, "set %s ", what[i]);
        pp__plot_gp_str(b, val[i]);
        fputc('\n', b);
    }
}

int pp__plot_xy(const char *out_prefix, const char *title, const char *xlabel, const char *ylabel,
                const pp_plot_series *series, int nseries) {
    FILE *f = pp__plot_open_out(out_prefix, ".dat");
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
    if (pp__plot_close_out(f, out_prefix, ".dat")) return -1;
    if (idx == 0) {
        fprintf(stderr, "pplab: nothing to plot in %s: every series is empty\n", out_prefix);
        return -1;
    }

    char *dir, *base, *body = NULL;
    size_t len = 0;
    pp__plot_split_prefix(out_prefix, &dir, &base);
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
        pp__plot_gp_str(b, series[s].name ? series[s].name : "");
        idx++;
    }
    fprintf(b, "\n");
    fclose(b);
    int rc = pp__plot_render(out_prefix, body, 900, 600);
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
    FILE *f = pp__plot_open_out(out_prefix, ".dat");
    if (!f) return -1;
    fprintf(f, "# %s\n# columns: 1 group", title ? title : "clustered bars");
    for (int s = 0; s < nseries; s++) fprintf(f, ", %d %s", s + 2, names[s]);
    fprintf(f, "\n");
    for (int g = 0; g < ngroups; g++) {
        pp__plot_gp_str(f, groups[g]);
        for (int s = 0; s < nseries; s++) fprintf(f, " %.9g", values[(size_t)s * ngroups + g]);
        fprintf(f, "\n");
    }
    if (pp__plot_close_out(f, out_prefix, ".dat")) return -1;

    char *dir, *base, *body = NULL;
    size_t len = 0;
    pp__plot_split_prefix(out_prefix, &dir, &base);
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
        pp__plot_gp_str(b, names[s]);
    }
    fprintf(b, "\n");
    fclose(b);
    int rc = pp__plot_render(out_prefix, body, 900, 600);
    free(body);
    free(dir);
    free(base);
    return rc;
}
