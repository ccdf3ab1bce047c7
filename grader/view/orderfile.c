/* orderfile.c: a run's order in PyTorch's compute-only CSV (orderfile.h). */
#include "orderfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int pp__orderfile_name_check(const char *path, char *err, size_t errlen) {
    size_t n = path ? strlen(path) : 0;
    if (n > 4 && !strcmp(path + n - 4, ".csv")) return 0;
    snprintf(err, errlen, "--export-order %s: name the file .csv (PyTorch's compute-only order CSV)",
             path ? path : "(none)");
    return -1;
}

/* The cell of one compute op: a B is an input half when the run split it (its W is a cell of its own). */
static void cell(const pp_event *e, char *buf, size_t len) {
    char kind = e->op == PP_OP_F ? 'F' : e->op == PP_OP_W ? 'W' : e->flags & PP_EV_SPLIT ? 'I' : 'B';
    snprintf(buf, len, "%d%c%d", e->vstage, kind, e->mb);
}

int pp__orderfile_write(const pp_trace *traces, int P, const char *path, char *err, size_t errlen) {
    if (pp__orderfile_name_check(path, err, errlen)) return -1;
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "--export-order %s: %s: check the folder exists and is writable", path, strerror(errno));
        return -1;
    }
    for (int r = 0; r < P; r++) {
        int cells = 0;
        for (int i = 0; i < traces[r].n; i++) {
            const pp_event *e = &traces[r].ev[i];
            if (!pp__op_is_compute(e->op)) continue;
            char c[48];
            cell(e, c, sizeof c);
            fprintf(f, "%s%s", cells++ ? "," : "", c);
        }
        fputs("\r\n", f);
    }
    if (ferror(f) | fclose(f)) {
        snprintf(err, errlen, "--export-order %s: the write failed: check the disk has room", path);
        return -1;
    }
    return 0;
}
