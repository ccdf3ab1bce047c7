/* plot_gp.h: the gnuplot plumbing plot.c's figures and plot_gantt.c's charts share (inside the view room only). */
#ifndef PP_PLOT_GP_H
#define PP_PLOT_GP_H

#include <stdio.h>

/* Splits "dir/name" into its folder ("." when none) and base name; the caller frees both. */
void pp__plot_split_prefix(const char *prefix, char **dir, char **base);

/* Opens prefix+ext for writing; NULL after one line on stderr saying why. */
FILE *pp__plot_open_out(const char *prefix, const char *ext);
/* Closes f; 0, or -1 after one line on stderr (a write that failed late, a full disk). */
int pp__plot_close_out(FILE *f, const char *prefix, const char *ext);

/* Prints s as a gnuplot double-quoted string. */
void pp__plot_gp_str(FILE *f, const char *s);

/* Writes prefix.gp: a header, then body once for a w x h PNG and once for the SVG (multiplot cannot be replotted),
 * then runs gnuplot on it in prefix's folder. body names files by base name only. 0, or -1 after a line on stderr. */
int pp__plot_render(const char *prefix, const char *body, int w, int h);

#endif /* PP_PLOT_GP_H */
