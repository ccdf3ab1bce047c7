/* tracefile.c: CSV and Trace Event Format (JSON, through cJSON) files of a run's trace. */
#include "tracefile.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "tag.h"

/* The clocks, each a group of processes: one per replica (one in all without data parallelism). */
enum { CLOCK_VIRTUAL = 0, CLOCK_WALL = 1 };

/* Where a run's events go: clock k's process for a rank's replica (pids 1..D virtual, D+1..2D wall; 1 and 2 for one
 * pipeline, as ever), the rank's thread its world rank, g = (shard*D + replica)*P + stage. */
typedef struct where {
    int clock, D, P;
} where;

static int pid_of(const where *w, int g) { return 1 + w->clock * w->D + (g / w->P) % w->D; }

/* Adds the number v to o as the shortest text that reads back as v exactly: cJSON's own printing may round a value to
 * 15 digits, which can put a nested slice's end a last bit past its parent's. */
static void add_num(cJSON *o, const char *key, double v) {
    if (!isfinite(v)) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    char buf[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    cJSON_AddRawToObject(o, key, buf);
}

static void meta(cJSON *events, const char *what, int pid, int tid, const char *name, int sort) {
    cJSON *e = cJSON_CreateObject(), *args = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", what);
    cJSON_AddStringToObject(e, "ph", "M");
    add_num(e, "pid", pid);
    if (tid >= 0) add_num(e, "tid", tid);
    if (name) cJSON_AddStringToObject(args, "name", name);
    else add_num(args, "sort_index", sort);
    cJSON_AddItemToObject(e, "args", args);
    cJSON_AddItemToArray(events, e);
}

static double ts_of(const pp_event *e, const where *w) {
    return w->clock == CLOCK_VIRTUAL ? e->vstart * PP_TRACE_JSON_US_PER_UNIT : e->wall_start * 1e6;
}

static double dur_of(const pp_event *e, const where *w) {
    double d = w->clock == CLOCK_VIRTUAL ? (e->vend - e->vstart) * PP_TRACE_JSON_US_PER_UNIT
                                  : (e->wall_end - e->wall_start) * 1e6;
    return d > 0 ? d : 0;
}

/* The cell kind a compute op is drawn as: F, W, a whole B, or I for the input half of a split one. */
static pp_cell_kind kind_of(const pp_event *e) {
    return e->op == PP_OP_F ? PP_CELL_F : e->op == PP_OP_W ? PP_CELL_W : (e->flags & PP_EV_SPLIT) ? PP_CELL_I : PP_CELL_B;
}

/* A slice's category: the cell kind's name, as the Gantt chart's legend starts ("recompute" for R, "sum" for S). */
static const char *cat_of(pp_cell_kind k) {
    return k == PP_CELL_RECOMPUTE ? "recompute" : k == PP_CELL_SUM ? "sum" : k == PP_CELL_REDUCE ? "reduce"
                                                                                                  : pp__cell_letter(k);
}

/* "F mb3", "I mb3.1" (chunk 1), "SEND F mb3 1->2": what a viewer shows on the slice. */
static void op_label(const pp_event *e, int chunked, char *buf, size_t len) {
    char mb[32] = "";
    if (e->mb >= 0) snprintf(mb, sizeof mb, chunked ? " mb%d.%d" : " mb%d", e->mb, e->chunk);
    int dir = -1, tmb = -1, vs = -1;
    if (pp__op_is_compute(e->op))
        snprintf(buf, len, "%s%s", pp__cell_letter(kind_of(e)), mb);
    else if (e->op == PP_OP_REDUCE) /* a chunk's gradients among the replicas: named by the chunk */
        snprintf(buf, len, "%s chunk %d", pp__op_name(e->op), e->chunk);
    else
        snprintf(buf, len, "%s%s%s %d->%d", pp__op_name(e->op),
                 e->tag >= 0 && pp__tag_split(e->tag, &dir, &tmb, &vs) ? dir == PP_FWD ? " F" : " B" : "", mb,
                 e->op == PP_OP_SEND ? e->rank : e->peer, e->op == PP_OP_SEND ? e->peer : e->rank);
}

static cJSON *args_of(const pp_event *e) {
    cJSON *args = cJSON_CreateObject();
    add_num(args, "microbatch", e->mb);
    add_num(args, "chunk", e->chunk);
    add_num(args, "vstage", e->vstage);
    if (!pp__op_is_compute(e->op)) {
        add_num(args, "peer", e->peer);
        add_num(args, "bytes", (double)e->bytes);
    }
    if (e->op == PP_OP_B) {
        cJSON_AddBoolToObject(args, "input_half_only", (e->flags & PP_EV_SPLIT) != 0);
        cJSON_AddBoolToObject(args, "rebuilt_stash", (e->flags & PP_EV_RECOMPUTED) != 0);
    }
    if (e->tp_time > 0) { /* --tp: the shards' sums inside the op, and the link their ring took */
        add_num(args, "shards_sums_virtual_time", e->tp_time);
        cJSON_AddStringToObject(args, "shards_link", e->tp_across ? "between nodes" : "inside a node");
    }
    add_num(args, "virtual_start", e->vstart);
    add_num(args, "virtual_end", e->vend);
    add_num(args, "wall_start_us", e->wall_start * 1e6);
    add_num(args, "wall_end_us", e->wall_end * 1e6);
    return args;
}

static cJSON *event(const char *name, const char *cat, const char *ph, double ts, int pid, int tid) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", name);
    cJSON_AddStringToObject(x, "cat", cat);
    cJSON_AddStringToObject(x, "ph", ph);
    add_num(x, "ts", ts);
    add_num(x, "pid", pid);
    add_num(x, "tid", tid);
    return x;
}

/* A compute op on world rank g: a complete event on its thread (one rank's ops never overlap on either clock). */
static cJSON *compute_slice(const pp_event *e, const where *w, int g, int chunked) {
    char name[64];
    op_label(e, chunked, name, sizeof name);
    cJSON *x = event(name, cat_of(kind_of(e)), "X", ts_of(e, w), pid_of(w, g), g);
    add_num(x, "dur", dur_of(e, w));
    cJSON_AddItemToObject(x, "args", args_of(e));
    return x;
}

/* A cell inside its op's slice (a rebuilt forward, a pass's sums) as a complete event nested in it: its own times
 * scaled, then its end pulled in by the last bits the scaling may add, so that ts + dur never passes the parent's
 * end in the doubles a viewer adds (a child that sticks out would be drawn beside its op, not in it). */
static void child_slice(cJSON *events, const pp_cell *c, const pp_event *op, const where *w, int g, int chunked) {
    double pts = ts_of(op, w), pend = pts + dur_of(op, w);
    double ts = fmax(c->s * PP_TRACE_JSON_US_PER_UNIT, pts), dur = fmin(c->e * PP_TRACE_JSON_US_PER_UNIT, pend) - ts;
    while (dur > 0 && ts + dur > pend) dur = nextafter(dur, 0);
    if (dur < 0) dur = 0;
    char name[64], of[64], mb[32] = "";
    op_label(op, chunked, of, sizeof of);
    if (op->mb >= 0) snprintf(mb, sizeof mb, chunked ? " mb%d.%d" : " mb%d", op->mb, op->chunk);
    snprintf(name, sizeof name, "%s%s", c->kind == PP_CELL_SUM ? "S" : "recompute", mb);
    cJSON *x = event(name, cat_of(c->kind), "X", ts, pid_of(w, g), g), *args = cJSON_CreateObject();
    add_num(x, "dur", dur);
    cJSON_AddStringToObject(args, "op", of);
    if (c->kind == PP_CELL_SUM) cJSON_AddStringToObject(args, "link", c->across == 1 ? "between nodes" : "inside a node");
    add_num(args, "virtual_start", c->s);
    add_num(args, "virtual_end", c->e);
    cJSON_AddItemToObject(x, "args", args);
    cJSON_AddItemToArray(events, x);
}

/* A compute lane on the virtual clock: each op a slice, its rebuilt forward and sums slices nested in it. */
static void lane_slices(cJSON *events, const pp_lane *l, const pp_trace *tr, const where *w, int chunked) {
    int last = -1;
    for (int j = 0; j < l->n; j++) {
        const pp_cell *c = &l->cells[j];
        const pp_event *op = &tr->ev[c->event];
        /* an op's cells lie side by side in start order: its slice goes out with the first of them */
        if (c->event != last) cJSON_AddItemToArray(events, compute_slice(op, w, l->rank, chunked));
        last = c->event;
        if (c->kind == PP_CELL_SUM || c->kind == PP_CELL_RECOMPUTE) child_slice(events, c, op, w, l->rank, chunked);
    }
}

/* A send, a receive or a reduce: an async slice (begin "b", end "e"), since a rank's messages overlap each other
 * and its compute; the viewer lays them out in lanes of their own under the process. */
static void message_slices(cJSON *events, const pp_event *e, const where *w, int chunked, int id) {
    char name[64], ids[32];
    op_label(e, chunked, name, sizeof name);
    snprintf(ids, sizeof ids, "0x%x", (unsigned)id);
    int pid = pid_of(w, e->rank);
    /* a gradient reduce runs on the rank's reduce lane: a category of its own, so it gets a track of its own */
    const char *cat = e->op == PP_OP_REDUCE ? "reduce" : "comm";
    cJSON *b = event(name, cat, "b", ts_of(e, w), pid, e->rank), *x = event(name, cat, "e",
                                                                          ts_of(e, w) + dur_of(e, w), pid, e->rank);
    cJSON_AddStringToObject(b, "id", ids);
    cJSON_AddStringToObject(x, "id", ids);
    cJSON_AddItemToObject(b, "args", args_of(e));
    cJSON_AddItemToArray(events, b);
    cJSON_AddItemToArray(events, x);
}

/* The compute op on rank r of kind op for (micro-batch, virtual stage), or NULL. */
static const pp_event *compute_op(const pp_trace *traces, int P, int r, pp_op_kind op, int mb, int vstage) {
    if (r < 0 || r >= P) return NULL;
    for (int i = 0; i < traces[r].n; i++) {
        const pp_event *e = &traces[r].ev[i];
        if (e->op == op && e->mb == mb && e->vstage == vstage) return e;
    }
    return NULL;
}

/* A flow arrow for send s: from the op that made its tensor (the sender's forward of the previous virtual stage,
 * or backward of the next) to the op that used it on the receiver. 0 when the trace lacks either (a failed
 * run). */
static int message_flow(cJSON *events, const pp_trace *traces, int P, const pp_event *s, const where *w, int id) {
    int dir, mb, vs;
    if (s->op != PP_OP_SEND || s->tag < 0 || !pp__tag_split(s->tag, &dir, &mb, &vs)) return 0;
    pp_op_kind op = dir == PP_FWD ? PP_OP_F : PP_OP_B;
    const pp_event *from = compute_op(traces, P, s->rank, op, mb, dir == PP_FWD ? vs - 1 : vs + 1),
                   *to = compute_op(traces, P, s->peer, op, mb, vs);
    if (!from || !to) return 0;
    /* the category and time of the ops themselves: what chrome://tracing binds a flow by */
    cJSON *a = event("message", cat_of(kind_of(from)), "s", ts_of(from, w), pid_of(w, from->rank), from->rank),
          *b = event("message", cat_of(kind_of(to)), "f", ts_of(to, w), pid_of(w, to->rank), to->rank);
    add_num(a, "id", id);
    add_num(b, "id", id);
    cJSON_AddStringToObject(b, "bp", "e"); /* bind to the receiving op itself, not the slice after it */
    cJSON_AddItemToArray(events, a);
    cJSON_AddItemToArray(events, b);
    return 1;
}

/* The trace of world rank g: shard 0's in src->traces, the other shards' in src->shards. */
static const pp_trace *trace_of(const pp_lanes_src *src, const pp_lanes *L, int g) {
    int R = L->P * L->D;
    return g < R ? &src->traces[g] : &src->shards[g - R];
}

/* What the file's categories mean and the colours the Gantt chart and the docs draw them in: Trace Event Format has
 * no colour of our choosing (cname takes only the viewer's reserved names), so they are written down instead. */
static void other_data(cJSON *root) {
    cJSON *other = cJSON_AddObjectToObject(root, "otherData");
    cJSON_AddStringToObject(other, "generator", "pplab");
    cJSON_AddStringToObject(other, "virtual_clock", "the first processes: 1 ms on the ruler = 1 unit of pplab's "
                                                    "virtual clock (one block's forward)");
    cJSON_AddStringToObject(other, "wall_clock", "the last processes: measured, from the step's start");
    cJSON *cats = cJSON_AddObjectToObject(other, "categories");
    for (int k = 0; k < PP_CELL_KINDS; k++) {
        char what[160];
        snprintf(what, sizeof what, "%s; drawn %s", pp__cell_legend((pp_cell_kind)k), pp__cell_color((pp_cell_kind)k));
        cJSON_AddStringToObject(cats, cat_of((pp_cell_kind)k), what);
    }
    cJSON_AddStringToObject(cats, "comm", "a send or a receive, from its post to its completion");
}

/* Process and thread names: a process per clock and replica, a thread per world rank, shards under their stage. */
static void names(cJSON *events, const pp_lanes *L, int k) {
    int D = L->D, P = L->P, W = P * D * L->T;
    where w = {k, D, P};
    for (int d = 0; d < D; d++) {
        char name[64];
        const char *clock = k == CLOCK_VIRTUAL ? "virtual clock" : "wall clock";
        if (D > 1) snprintf(name, sizeof name, "%s, replica %d", clock, d);
        else snprintf(name, sizeof name, "%s", clock);
        meta(events, "process_name", 1 + k * D + d, -1, name, 0);
        meta(events, "process_sort_index", 1 + k * D + d, -1, NULL, k * D + d);
    }
    for (int g = 0; g < W; g++) {
        int t = g / (P * D), d = (g / P) % D, p = g % P;
        char name[64];
        if (L->T > 1 && D > 1) snprintf(name, sizeof name, "rank %d (replica %d, stage %d, shard %d)", g, d, p, t);
        else if (L->T > 1) snprintf(name, sizeof name, "rank %d (stage %d, shard %d)", g, p, t);
        else if (D > 1) snprintf(name, sizeof name, "rank %d (replica %d, stage %d)", g, d, p);
        else snprintf(name, sizeof name, "rank %d", g);
        meta(events, "thread_name", pid_of(&w, g), g, name, 0);
        meta(events, "thread_sort_index", pid_of(&w, g), g, NULL, (d * P + p) * L->T + t);
    }
}

/* One clock's events: compute (from the lanes on the virtual clock, from every shard's trace on the wall clock),
 * then shard 0's messages and reduces, then its arrows. Returns the last id used. */
static int clock_events(cJSON *events, const pp_lanes_src *src, const pp_lanes *L, int k, int id) {
    int R = L->P * L->D, W = R * L->T, chunked = L->v > 1;
    where w = {k, L->D, L->P};
    names(events, L, k);
    if (k == CLOCK_VIRTUAL) {
        for (int i = 0; i < L->n; i++)
            if (L->lane[i].kind == PP_LANE_COMPUTE)
                lane_slices(events, &L->lane[i], trace_of(src, L, L->lane[i].rank), &w, chunked);
    } else {
        for (int g = 0; g < W; g++) {
            const pp_trace *tr = trace_of(src, L, g);
            for (int i = 0; i < tr->n; i++)
                if (pp__op_is_compute(tr->ev[i].op)) cJSON_AddItemToArray(events, compute_slice(&tr->ev[i], &w, g, chunked));
        }
    }
    for (int r = 0; r < R; r++)
        for (int i = 0; i < src->traces[r].n; i++)
            if (!pp__op_is_compute(src->traces[r].ev[i].op)) message_slices(events, &src->traces[r].ev[i], &w, chunked, ++id);
    for (int r = 0; r < R; r++)
        for (int i = 0; i < src->traces[r].n; i++) id += message_flow(events, src->traces, R, &src->traces[r].ev[i], &w, id + 1);
    return id;
}

static int write_json_lanes(const pp_lanes_src *src, const char *path) {
    pp_lanes L;
    pp__lanes_build(&L, src);
    cJSON *root = cJSON_CreateObject(), *events = cJSON_AddArrayToObject(root, "traceEvents");
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    other_data(root);
    int id = 0;
    for (int k = 0; k < 2; k++) id = clock_events(events, src, &L, k, id);
    pp__lanes_free(&L);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    FILE *f = text ? fopen(path, "w") : NULL;
    int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    if (f && fclose(f)) ok = 0;
    free(text);
    return ok ? 0 : -1;
}

int pp__tracefile_write_json(const pp_trace *traces, int P, int D, const char *path) {
    if (D < 1 || P % D) D = 1;
    pp_lanes_src src = {.traces = traces, .P = P / D, .D = D};
    return write_json_lanes(&src, path);
}

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

int pp__tracefile_format_check(const char *path, char *err, size_t errlen) {
    if (ends_with(path, ".json") || ends_with(path, ".csv")) return 0;
    snprintf(err, errlen, "--trace %s: name the file .csv (one row per op) or .json (Trace Event Format, for "
             "ui.perfetto.dev or chrome://tracing)", path);
    return -1;
}

int pp__tracefile_write(const pp_trace *traces, int P, int D, const char *path, char *err, size_t errlen) {
    if (D < 1 || P % D) D = 1;
    pp_lanes_src src = {.traces = traces, .P = P / D, .D = D};
    return pp__tracefile_write_lanes(&src, path, err, errlen);
}

const char *pp__tracefile_describe(const pp_trace *traces, int P, const char *path, char *buf, size_t len) {
    int compute = 0, messages = 0, arrows = 0;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < traces[r].n; i++) {
            const pp_event *e = &traces[r].ev[i];
            if (pp__op_is_compute(e->op)) {
                compute++;
                continue;
            }
            messages++;
            int dir, mb, vs;
            if (e->op != PP_OP_SEND || e->tag < 0 || !pp__tag_split(e->tag, &dir, &mb, &vs)) continue;
            pp_op_kind op = dir == PP_FWD ? PP_OP_F : PP_OP_B;
            arrows += compute_op(traces, P, e->rank, op, mb, dir == PP_FWD ? vs - 1 : vs + 1) &&
                      compute_op(traces, P, e->peer, op, mb, vs);
        }
    const char *only = messages ? "" : "; compute ops only: the canonical schedule is replayed, no message is sent";
    if (ends_with(path, ".json"))
        snprintf(buf, len, "%d compute slices, %d message slices and %d arrows on each of the two clocks%s", compute,
                 messages, arrows, only);
    else
        snprintf(buf, len, "%d rows: %d compute ops, %d message ends%s", compute + messages, compute, messages, only);
    return buf;
}

int pp__tracefile_write_lanes(const pp_lanes_src *src, const char *path, char *err, size_t errlen) {
    if (pp__tracefile_format_check(path, err, errlen)) return -1;
    int json = ends_with(path, ".json");
    if ((json ? write_json_lanes(src, path) : pp__trace_write_csv(src->traces, src->P * src->D, path)) == 0) return 0;
    snprintf(err, errlen, "cannot write --trace %s: check the folder exists and is writable", path);
    return -1;
}

const char *pp__tracefile_describe_lanes(const pp_lanes_src *src, const char *path, char *buf, size_t len) {
    pp__tracefile_describe(src->traces, src->P * src->D, path, buf, len);
    if (!ends_with(path, ".json") || !src->shards || src->T < 2) return buf;
    /* under --tp the other shards' threads and every shard's sums, which the counts of shard 0's ops leave out */
    pp_lanes L;
    pp__lanes_build(&L, src);
    int sums = 0, n = (int)strlen(buf);
    for (int i = 0; i < L.n; i++)
        for (int j = 0; j < L.lane[i].n; j++) sums += L.lane[i].cells[j].kind == PP_CELL_SUM;
    snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0, "; a thread for each of the %d shards of a rank, %d "
             "slices of shards' sums nested in their ops", L.T, sums);
    pp__lanes_free(&L);
    return buf;
}
