/* trace.c: per-rank event lists, the bubble computed from them, and their CSV form. */
#include "trace.h"

#include "error.h"

void pp__trace_add(pp_trace *t, const pp_event *e) {
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->ev = pp__xrealloc(t->ev, (size_t)t->cap * sizeof *t->ev);
    }
    t->ev[t->n++] = *e;
}

void pp__trace_clear(pp_trace *t) {
    free(t->ev);
    t->ev = NULL;
    t->n = t->cap = 0;
}

const char *pp__op_name(pp_op_kind op) {
    static const char *const names[PP_OP_COUNT] = {"F", "B", "W", "SEND", "RECV", "REDUCE"};
    return (op >= 0 && op < PP_OP_COUNT) ? names[op] : "?";
}


double pp__trace_busy(const pp_trace *t) {
    double busy = 0;
    for (int i = 0; i < t->n; i++)
        if (pp__op_is_compute(t->ev[i].op)) busy += t->ev[i].vend - t->ev[i].vstart;
    return busy;
}

double pp__trace_makespan(const pp_trace *traces, int P) {
    double end = 0;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < traces[r].n; i++)
            if (pp__op_is_compute(traces[r].ev[i].op) && traces[r].ev[i].vend > end) end = traces[r].ev[i].vend;
    return end;
}

double pp__trace_step_time(const pp_trace *traces, int P) {
    double end = 0;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < traces[r].n; i++) {
            const pp_event *e = &traces[r].ev[i];
            if ((pp__op_is_compute(e->op) || e->op == PP_OP_REDUCE) && e->vend > end) end = e->vend;
        }
    return end;
}

double pp__trace_bubble(const pp_trace *traces, int P) {
    double span = pp__trace_makespan(traces, P), busy = 0;
    if (span <= 0) return 0;
    for (int r = 0; r < P; r++) busy += pp__trace_busy(&traces[r]);
    return 1.0 - busy / (P * span);
}

double pp__trace_rank_bubble(const pp_trace *traces, int P, int r) {
    double span = pp__trace_makespan(traces, P);
    return span > 0 ? 1.0 - pp__trace_busy(&traces[r]) / span : 0;
}

int pp__trace_write_csv(const pp_trace *traces, int P, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "rank,op,microbatch,chunk,vstage,peer,bytes,virtual_start,virtual_end,wall_start,wall_end\n");
    for (int r = 0; r < P; r++)
        for (int i = 0; i < traces[r].n; i++) {
            const pp_event *e = &traces[r].ev[i];
            fprintf(f, "%d,%s,%d,%d,%d,%d,%zu,%.6f,%.6f,%.9f,%.9f\n", e->rank, pp__op_name(e->op), e->mb, e->chunk,
                    e->vstage, e->peer, e->bytes, e->vstart, e->vend, e->wall_start, e->wall_end);
        }
    return fclose(f) == 0 ? 0 : -1;
}
