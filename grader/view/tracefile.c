/* tracefile.c: CSV and Trace Event Format (JSON, through cJSON) files of a run's trace. */
#include "tracefile.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "tag.h"

/* The clocks, each a group of processes: one per replica (one in all without data parallelism). */
enum { CLOCK_VIRTUAL = 0, CLOCK_WALL = 1 };

/* Where a rank's events go: clock k's process for the rank's replica (pids 1..D virtual, D+1..2D wall; 1 and 2
 * for one pipeline, as ever). */
typedef struct where {
    int clock, D, ranks_per_replica;
} where;

static int pid_of(const where *w, int rank) { return 1 + w->clock * w->D + rank / w->ranks_per_replica; }

static void meta(cJSON *events, const char *what, int pid, int tid, const char *name, int sort) {
    cJSON *e = cJSON_CreateObject(), *args = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", what);
    cJSON_AddStringToObject(e, "ph", "M");
    cJSON_AddNumberToObject(e, "pid", pid);
    if (tid >= 0) cJSON_AddNumberToObject(e, "tid", tid);
    if (name) cJSON_AddStringToObject(args, "name", name);
    else cJSON_AddNumberToObject(args, "sort_index", sort);
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

/* "F mb3", "F mb3.1" (chunk 1), "SEND F mb3 1->2": what a viewer shows on the slice. */
static void op_label(const pp_event *e, int chunked, char *buf, size_t len) {
    char mb[32] = "";
    if (e->mb >= 0) snprintf(mb, sizeof mb, chunked ? " mb%d.%d" : " mb%d", e->mb, e->chunk);
    int dir = -1, tmb = -1, vs = -1;
    if (pp__op_is_compute(e->op))
        snprintf(buf, len, "%s%s", pp__op_name(e->op), mb);
    else if (e->op == PP_OP_REDUCE) /* a chunk's gradients among the replicas: named by the chunk */
        snprintf(buf, len, "%s chunk %d", pp__op_name(e->op), e->chunk);
    else
        snprintf(buf, len, "%s%s%s %d->%d", pp__op_name(e->op),
                 e->tag >= 0 && pp__tag_split(e->tag, &dir, &tmb, &vs) ? dir == PP_FWD ? " F" : " B" : "", mb,
                 e->op == PP_OP_SEND ? e->rank : e->peer, e->op == PP_OP_SEND ? e->peer : e->rank);
}

static cJSON *args_of(const pp_event *e) {
    cJSON *args = cJSON_CreateObject();
    cJSON_AddNumberToObject(args, "microbatch", e->mb);
    cJSON_AddNumberToObject(args, "chunk", e->chunk);
    cJSON_AddNumberToObject(args, "vstage", e->vstage);
    if (!pp__op_is_compute(e->op)) {
        cJSON_AddNumberToObject(args, "peer", e->peer);
        cJSON_AddNumberToObject(args, "bytes", (double)e->bytes);
    }
    if (e->op == PP_OP_B) {
        cJSON_AddBoolToObject(args, "input_half_only", (e->flags & PP_EV_SPLIT) != 0);
        cJSON_AddBoolToObject(args, "rebuilt_stash", (e->flags & PP_EV_RECOMPUTED) != 0);
    }
    if (e->tp_time > 0) { /* --tp: the shards' sums inside the op, and the link their ring took */
        cJSON_AddNumberToObject(args, "shards_sums_virtual_time", e->tp_time);
        cJSON_AddStringToObject(args, "shards_link", e->tp_across ? "between nodes" : "inside a node");
    }
    cJSON_AddNumberToObject(args, "virtual_start", e->vstart);
    cJSON_AddNumberToObject(args, "virtual_end", e->vend);
    cJSON_AddNumberToObject(args, "wall_start_us", e->wall_start * 1e6);
    cJSON_AddNumberToObject(args, "wall_end_us", e->wall_end * 1e6);
    return args;
}

static cJSON *event(const char *name, const char *cat, const char *ph, double ts, int pid, int tid) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", name);
    cJSON_AddStringToObject(x, "cat", cat);
    cJSON_AddStringToObject(x, "ph", ph);
    cJSON_AddNumberToObject(x, "ts", ts);
    cJSON_AddNumberToObject(x, "pid", pid);
    cJSON_AddNumberToObject(x, "tid", tid);
    return x;
}

/* A compute op: a complete event on its rank's thread (one rank's ops never overlap on either clock). */
static cJSON *compute_slice(const pp_event *e, const where *w, int chunked) {
    char name[64];
    op_label(e, chunked, name, sizeof name);
    cJSON *x = event(name, "compute", "X", ts_of(e, w), pid_of(w, e->rank), e->rank);
    cJSON_AddNumberToObject(x, "dur", dur_of(e, w));
    cJSON_AddItemToObject(x, "args", args_of(e));
    return x;
}

/* A send or a receive: an async slice (begin "b", end "e"), since a rank's messages overlap each other and its
 * compute; the viewer lays them out in lanes of their own under the process. */
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
    cJSON *a = event("message", "compute", "s", ts_of(from, w), pid_of(w, from->rank), from->rank),
          *b = event("message", "compute", "f", ts_of(to, w), pid_of(w, to->rank), to->rank);
    cJSON_AddNumberToObject(a, "id", id);
    cJSON_AddNumberToObject(b, "id", id);
    cJSON_AddStringToObject(b, "bp", "e"); /* bind to the receiving op itself, not the slice after it */
    cJSON_AddItemToArray(events, a);
    cJSON_AddItemToArray(events, b);
    return 1;
}

int pp__tracefile_write_json(const pp_trace *traces, int P, int D, const char *path) {
    if (D < 1 || P % D) D = 1;
    int chunked = 0;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < traces[r].n; i++) chunked |= traces[r].ev[i].chunk > 0;
    cJSON *root = cJSON_CreateObject(), *events = cJSON_AddArrayToObject(root, "traceEvents");
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    cJSON *other = cJSON_AddObjectToObject(root, "otherData");
    cJSON_AddStringToObject(other, "generator", "pplab");
    cJSON_AddStringToObject(other, "virtual_clock", "process 1: 1 ms on the ruler = 1 unit of pplab's virtual clock "
                                                    "(one block's forward)");
    cJSON_AddStringToObject(other, "wall_clock", "process 2: measured, from the step's start");
    int id = 0;
    for (int k = 0; k < 2; k++) {
        where w = {k, D, P / D};
        for (int d = 0; d < D; d++) {
            char name[64];
            const char *clock = k == CLOCK_VIRTUAL ? "virtual clock" : "wall clock";
            if (D > 1) snprintf(name, sizeof name, "%s, replica %d", clock, d);
            else snprintf(name, sizeof name, "%s", clock);
            meta(events, "process_name", 1 + k * D + d, -1, name, 0);
            meta(events, "process_sort_index", 1 + k * D + d, -1, NULL, k * D + d);
        }
        for (int r = 0; r < P; r++) {
            char name[48];
            if (D > 1) snprintf(name, sizeof name, "rank %d (replica %d, stage %d)", r, r / (P / D), r % (P / D));
            else snprintf(name, sizeof name, "rank %d", r);
            meta(events, "thread_name", pid_of(&w, r), r, name, 0);
            meta(events, "thread_sort_index", pid_of(&w, r), r, NULL, r);
        }
        for (int r = 0; r < P; r++)
            for (int i = 0; i < traces[r].n; i++) {
                const pp_event *e = &traces[r].ev[i];
                if (pp__op_is_compute(e->op)) cJSON_AddItemToArray(events, compute_slice(e, &w, chunked));
                else message_slices(events, e, &w, chunked, ++id);
            }
        for (int r = 0; r < P; r++)
            for (int i = 0; i < traces[r].n; i++) id += message_flow(events, traces, P, &traces[r].ev[i], &w, id + 1);
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    FILE *f = text ? fopen(path, "w") : NULL;
    int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    if (f && fclose(f)) ok = 0;
    free(text);
    return ok ? 0 : -1;
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
    if (pp__tracefile_format_check(path, err, errlen)) return -1;
    int json = ends_with(path, ".json");
    if ((json ? pp__tracefile_write_json(traces, P, D, path) : pp__trace_write_csv(traces, P, path)) == 0) return 0;
    snprintf(err, errlen, "cannot write --trace %s: check the folder exists and is writable", path);
    return -1;
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
    return pp__tracefile_write(src->traces, src->P * src->D, src->D, path, err, errlen);
}

const char *pp__tracefile_describe_lanes(const pp_lanes_src *src, const char *path, char *buf, size_t len) {
    return pp__tracefile_describe(src->traces, src->P * src->D, path, buf, len);
}
