/* sched_refs.c: what lab 09 grades an order against, computed (sched_problem.h's pp__sched_refs): the kit's canonical orders
 * that hold the problem's cap, the reference heuristic, and the integer program's optimum, recorded
 * (sched_optima.rec, which `make optima` writes and tests/test_sched_record.c holds to the solver) or, for a small
 * problem the record lacks, solved here. A handout has none of this: it reads its public configurations' figures
 * from its record (sched_refs_recorded.c). */
#include "sched_kit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "placement.h"
#include "schedules.h"

/* The optima recorded, one "KEY = MAKESPAN" line each (pp__sched_problem_key), or "KEY = none" for a problem the
 * solver did not prove within make optima's limit (so that no grade tries again), compiled in. */
static const char optima_text[] =
#include "sched_optima_rec.inc"
    "";

/* A problem of at most this many ops per rank is solved while grading when the record lacks it, for as long as
 * SOLVE_LIMIT_S: GLPK proves one stage per rank at P = 4, M = 4 in 0.03 s here, and what it has not proved by then it
 * rarely proves in a minute. */
#define SOLVE_OPS 24
#define SOLVE_LIMIT_S 3.0

/* The recorded optimum of the problem keyed key; -1 where the record has no line for it, -2 where its line says
 * the solver proved none. */
static double optimum_recorded(const char *key) {
    size_t k = strlen(key);
    for (const char *line = optima_text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        if ((size_t)(end - line) > k + 3 && !strncmp(line, key, k) && !strncmp(line + k, " = ", 3))
            return strncmp(line + k + 3, "none", 4) ? strtod(line + k + 3, NULL) : -2;
        line = *end ? end + 1 : end;
    }
    return -1;
}

/* 1F1B under the cap (one stage per rank): rank r runs min(P - r, cap, M) forwards before its first backward, then
 * a backward (its input half and at once its weight half, as 1F1B's whole backward) and a forward in turn. The
 * warm-ups never grow down the pipeline, so every rank's next backward is one the rank after it runs. */
static void capped_1f1b(const pp_sched_problem *pb, pp_schedule *s) {
    int P = pb->P, M = pb->M;
    pp__sched_alloc(pb, s);
    for (int r = 0; r < P; r++) {
        pp_sched_op *o = s->ops[r];
        int warm = P - r < pb->cap ? P - r : pb->cap, f = 0, b = 0, n = 0;
        if (warm > M) warm = M;
        while (f < warm) o[n++] = (pp_sched_op){.kind = 'F', .mb = f++};
        while (b < M) {
            o[n++] = (pp_sched_op){.kind = 'B', .mb = b, .split = 1};
            o[n++] = (pp_sched_op){.kind = 'W', .mb = b++};
            if (f < M) o[n++] = (pp_sched_op){.kind = 'F', .mb = f++};
        }
        s->n[r] = n;
    }
}

/* The makespan of s when it holds pb's cap on every rank, else -1. */
static double fits(const pp_sched_problem *pb, const pp_schedule *s) {
    for (int r = 0; r < s->P; r++)
        if (pp__schedule_peak(s, r) > pb->cap) return -1;
    return pp__sched_makespan(pb, s);
}

int pp__sched_refs(const pp_sched_problem *pb, int solve, pp_sched_refs *r, char *err, size_t len) {
    if (pp__sched_problem_check(pb, err, len)) return -1;
    memset(r, 0, sizeof *r);
    /* the canonical orders of the problem's placement: one stage per rank, or two in a V */
    static const char *const looped[] = {"1f1b", "zbh1", "zbh2", NULL}, *const vee[] = {"zbv", "dualpipev", NULL};
    const char *const *names = pb->v == 2 ? vee : looped;
    r->floor = -1;
    for (int k = 0; names[k]; k++) {
        pp_schedule s;
        if (pp__schedule_build(&s, names[k], pb->P, pb->M, pb->v)) continue; /* a row whose rules pb breaks */
        double end = fits(pb, &s);
        pp__schedule_free(&s);
        if (end < 0) continue;
        snprintf(r->name[r->n], sizeof r->name[r->n], "%s", pp__schedule_def(names[k])->title);
        r->makespan[r->n++] = end;
        if (k == 0) snprintf(r->floor_name, sizeof r->floor_name, "%s", pp__schedule_def(names[k])->title), r->floor = end;
    }
    if (r->floor < 0 && pb->v == 1) {
        pp_schedule s;
        capped_1f1b(pb, &s);
        r->floor = fits(pb, &s);
        snprintf(r->floor_name, sizeof r->floor_name, "1F1B under the cap");
        pp__schedule_free(&s);
    }
    if (r->floor < 0) {
        pp_schedule s;
        pp__sched_serial(pb, &s);
        r->floor = pp__sched_makespan(pb, &s);
        snprintf(r->floor_name, sizeof r->floor_name, "serial");
        pp__schedule_free(&s);
    }
    pp_schedule g;
    r->greedy = -1;
    if (!pp__sched_greedy(pb, &g)) {
        r->greedy = fits(pb, &g);
        pp__schedule_free(&g);
    }
    char key[1024];
    pp__sched_problem_key(pb, key, sizeof key);
    r->optimum = optimum_recorded(key);
    if (r->optimum == -1 && solve && pp__sched_ilp_built && 3 * pb->v * pb->M <= SOLVE_OPS) {
        pp_schedule o;
        double end = -1;
        if (pp__sched_optimum(pb, SOLVE_LIMIT_S, &o, &end) == 1) r->optimum = end;
        if (end >= 0) pp__schedule_free(&o);
    }
    if (r->optimum < 0) r->optimum = -1;
    r->best = r->optimum > 0 ? r->optimum : r->floor;
    if (r->optimum <= 0) {
        if (r->greedy > 0 && r->greedy < r->best) r->best = r->greedy;
        for (int k = 0; k < r->n; k++)
            if (r->makespan[k] < r->best) r->best = r->makespan[k];
    }
    return 0;
}
