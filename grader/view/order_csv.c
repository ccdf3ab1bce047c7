/* order_csv.c: a run's order in PyTorch's compute-only CSV (order_csv.h). */
#include "order_csv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "placement.h"

int pp__order_csv_name_check(const char *path, char *err, size_t errlen) {
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

int pp__order_csv_write(const pp_trace *traces, int P, const char *path, char *err, size_t errlen) {
    if (pp__order_csv_name_check(path, err, errlen)) return -1;
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

/* ---- reading ------------------------------------------------------------------------------------------ */

enum { ORDER_MAX_ROWS = 64, ORDER_MAX_STAGE = 64 * 16, ORDER_MAX_MB = 1024, ORDER_MAX_BYTES = 1 << 24 };

typedef struct cell_op {
    int stage, mb;
    char kind; /* F, I, W, B */
} cell_op;

typedef struct order_rows {
    cell_op *ops[ORDER_MAX_ROWS];
    int n[ORDER_MAX_ROWS], cap[ORDER_MAX_ROWS], rows;
} order_rows;

static void rows_free(order_rows *o) {
    for (int r = 0; r < o->rows; r++) free(o->ops[r]);
}

/* A cell as a message shows it: its first 40 bytes, each outside printable ASCII as '?', "..." after a longer one. */
static const char *shown(const char *t, size_t len, char *out, size_t cap) {
    size_t n = 0;
    for (size_t i = 0; i < len && i < 40 && n + 1 < cap; i++)
        out[n++] = t[i] >= 0x20 && t[i] < 0x7f ? t[i] : '?';
    if (len > 40 && n + 4 < cap) memcpy(out + n, "...", 3), n += 3;
    out[n] = 0;
    return out;
}

/* One action "SkN" from text[0..len), into op. Returns 0, or -1 with what is wrong in why. */
static int parse_action(const char *t, size_t len, cell_op *op, char *why, size_t wlen) {
    size_t i = 0;
    long stage = 0, mb = 0;
    /* every digit is read, the value held at its limit: a long number is out of range, not another action */
    for (; i < len && t[i] >= '0' && t[i] <= '9'; i++)
        stage = stage > ORDER_MAX_STAGE ? stage : stage * 10 + (t[i] - '0');
    char cell[48];
    if (i == 0 || i == len) {
        snprintf(why, wlen, "'%s' is not an action: write stage, kind and micro-batch, as 0F3",
                 shown(t, len, cell, sizeof cell));
        return -1;
    }
    char kind = t[i++];
    size_t at = i;
    for (; i < len && t[i] >= '0' && t[i] <= '9'; i++) mb = mb > ORDER_MAX_MB ? mb : mb * 10 + (t[i] - '0');
    if (!strchr("FIWB", kind) || i == at || i != len) {
        snprintf(why, wlen, "'%s' is not a compute action (F, I, W or B with its micro-batch, as 0F3): write the "
                 "compute-only format (_dump_csv(..., format=\"compute_only\"))", shown(t, len, cell, sizeof cell));
        return -1;
    }
    if (stage >= ORDER_MAX_STAGE || mb >= ORDER_MAX_MB) {
        snprintf(why, wlen, "'%s' is out of range: stages below %d and micro-batches below %d",
                 shown(t, len, cell, sizeof cell), ORDER_MAX_STAGE, ORDER_MAX_MB);
        return -1;
    }
    *op = (cell_op){(int)stage, (int)mb, kind};
    return 0;
}

static void rows_push(order_rows *o, int r, cell_op op) {
    if (o->n[r] == o->cap[r]) {
        o->cap[r] = o->cap[r] ? 2 * o->cap[r] : 64;
        o->ops[r] = pp__xrealloc(o->ops[r], (size_t)o->cap[r] * sizeof *o->ops[r]);
    }
    o->ops[r][o->n[r]++] = op;
}

/* One cell: empty, one action, or "(a;b;...)KIND" whose actions are taken in order. */
static int parse_cell(order_rows *o, int r, const char *t, size_t len, char *why, size_t wlen) {
    while (len && (*t == ' ' || *t == '"')) t++, len--;
    while (len && (t[len - 1] == ' ' || t[len - 1] == '"')) len--;
    if (!len) return 0;
    if (*t == '(') {
        const char *close = memchr(t, ')', len);
        static const char pair[] = "OVERLAP_F_B";
        size_t rest = close ? len - (size_t)(close + 1 - t) : 0;
        if (!close || rest != sizeof pair - 1 || memcmp(close + 1, pair, rest)) {
            char cell[48];
            snprintf(why, wlen, "'%s' is not an overlapped pair: write it as torch does, (0F3;3B1)OVERLAP_F_B",
                     shown(t, len, cell, sizeof cell));
            return -1;
        }
        for (const char *a = t + 1; a < close;) {
            const char *end = memchr(a, ';', (size_t)(close - a));
            if (!end) end = close;
            if (parse_cell(o, r, a, (size_t)(end - a), why, wlen)) return -1;
            a = end + 1;
        }
        return 0;
    }
    cell_op op;
    if (parse_action(t, len, &op, why, wlen)) return -1;
    rows_push(o, r, op);
    return 0;
}

/* The rows of text[0..len): lines ended by "\n" or "\r\n", cells split at commas outside a group's parentheses. */
static int parse_rows(const char *name, const char *text, size_t len, order_rows *o, char *err, size_t errlen) {
    int rc = 0;
    for (size_t at = 0; at < len && !rc;) {
        size_t end = at;
        while (end < len && text[end] != '\n') end++;
        size_t stop = end > at && text[end - 1] == '\r' ? end - 1 : end;
        if (o->rows == ORDER_MAX_ROWS) {
            snprintf(err, errlen, "--order %s: more than %d rows: one row per rank, at most %d ranks", name,
                     ORDER_MAX_ROWS, ORDER_MAX_ROWS);
            return -1;
        }
        int r = o->rows++, cellno = 1;
        for (size_t c = at; c <= stop && !rc; cellno++) {
            size_t e = c;
            int depth = 0;
            while (e < stop && (text[e] != ',' || depth)) depth += text[e] == '(' ? 1 : text[e] == ')' ? -1 : 0, e++;
            char why[256];
            if (memchr(text + c, 0, e - c)) {
                snprintf(why, sizeof why, "a NUL byte: the file is not text");
                rc = -1;
            } else {
                rc = parse_cell(o, r, text + c, e - c, why, sizeof why);
            }
            if (rc) snprintf(err, errlen, "--order %s:%d:%d: %s", name, r + 1, cellno, why);
            c = e + 1;
        }
        at = end + 1;
    }
    return rc;
}

/* The placement that puts every stage of o where its row is: 0 looped, 1 a V, prefer first where both do (one
 * rank, or one chunk per rank); -1 with the reason in err. */
static int placement_of(const order_rows *o, int S, int prefer, const char *path, char *err, size_t errlen) {
    int P = o->rows;
    for (int k = 0; k <= 1; k++) {
        int vshape = k ? !prefer : prefer;
        if (vshape && S != 2 * P) continue;
        int ok = 1;
        for (int r = 0; r < P && ok; r++)
            for (int i = 0; i < o->n[r] && ok; i++) ok = pp__place_rank(P, vshape, o->ops[r][i].stage) == r;
        if (ok) return vshape;
    }
    for (int r = 0; r < P; r++)
        for (int i = 0; i < o->n[r]; i++)
            if (pp__place_rank(P, 0, o->ops[r][i].stage) != r) {
                snprintf(err, errlen, "--order %s: row %d, action %d: stage %d on rank %d: the kit places stage s "
                         "on rank s mod P (looped) or stages r and 2P-1-r on rank r (a V), and this file follows "
                         "neither", path, r + 1, i + 1, o->ops[r][i].stage, r);
                return -1;
            }
    snprintf(err, errlen, "--order %s: its stages fit no placement of the kit", path);
    return -1;
}

int pp__order_csv_parse(const char *name, const char *text, size_t len, int prefer_vshape, pp_schedule *s, char *err,
                        size_t errlen) {
    memset(s, 0, sizeof *s);
    order_rows *o = pp__xcalloc(1, sizeof *o);
    int rc = parse_rows(name, text, len, o, err, errlen);
    /* a file that ends in a newline has no row after it */
    while (!rc && o->rows > 0 && o->n[o->rows - 1] == 0) o->rows--;
    int S = 0, M = 0;
    for (int r = 0; r < o->rows; r++)
        for (int i = 0; i < o->n[r]; i++) {
            if (o->ops[r][i].stage >= S) S = o->ops[r][i].stage + 1;
            if (o->ops[r][i].mb >= M) M = o->ops[r][i].mb + 1;
        }
    if (!rc && (o->rows == 0 || S == 0)) {
        snprintf(err, errlen, "--order %s: no action in it: one row per rank, one cell per action, as 0F3", name);
        rc = -1;
    }
    int P = o->rows, v = P ? (S + P - 1) / P : 0;
    if (!rc && v > 16) {
        snprintf(err, errlen, "--order %s: %d stages on %d ranks is more than 16 chunks per rank", name, S, P);
        rc = -1;
    }
    int vshape = rc ? -1 : placement_of(o, P * v, prefer_vshape != 0, name, err, errlen);
    if (vshape < 0) {
        rows_free(o);
        free(o);
        return -1;
    }
    s->P = P, s->M = M, s->v = v, s->vshape = vshape;
    s->ops = pp__xcalloc((size_t)P, sizeof *s->ops);
    s->n = pp__xcalloc((size_t)P, sizeof *s->n);
    for (int r = 0; r < P; r++) {
        s->ops[r] = pp__xcalloc((size_t)(o->n[r] ? o->n[r] : 1), sizeof **s->ops);
        for (int i = 0; i < o->n[r]; i++) {
            const cell_op *c = &o->ops[r][i];
            s->ops[r][i] = (pp_sched_op){.kind = c->kind == 'I' ? 'B' : c->kind, .mb = c->mb,
                                         .chunk = pp__place_chunk(P, vshape, c->stage), .split = c->kind == 'I'};
        }
        s->n[r] = o->n[r];
    }
    rows_free(o);
    free(o);
    return 0;
}

int pp__order_csv_read(const char *path, int prefer_vshape, pp_schedule *s, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "--order %s: %s", path, strerror(errno));
        return -1;
    }
    char *text = pp__xmalloc(ORDER_MAX_BYTES + 1);
    size_t len = fread(text, 1, ORDER_MAX_BYTES + 1, f);
    fclose(f);
    int rc = -1;
    if (len > ORDER_MAX_BYTES)
        snprintf(err, errlen, "--order %s: larger than %d MiB: an order of at most 64 ranks and 1024 micro-batches "
                 "is far smaller", path, ORDER_MAX_BYTES >> 20);
    else
        rc = pp__order_csv_parse(path, text, len, prefer_vshape, s, err, errlen);
    free(text);
    return rc;
}
