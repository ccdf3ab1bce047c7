/* record_optima.c: lab 09's optima, for `make optima`. For every problem of the default set and the one docs/09-
 * scheduler.md draws, GLPK's integer program (grader/theory/sched_ilp.c) is asked for the optimum within LIMIT
 * seconds; each one it proves is printed as "KEY = MAKESPAN", the line grader/theory/sched_optima.rec holds. A
 * problem it does not prove in time is "KEY = none" and named on stderr: the grader then grades it against the best
 * order it knows, without trying again. With --draw, prints instead the chapter's two timelines (1F1B under the cap, the optimum).
 *   record_optima [LIMIT]   (default 600 s a problem)
 *   record_optima --draw
 *   record_optima --try P M V CAP LATENCY [EDGE]   one problem of even costs (EDGE more on the first and last stage):
 *                                                  whether the solver proves it in 60 s, and the heuristic's makespan */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler_lab.h"
#include "sched_kit.h"
#include "testset.h"
#include "timeline.h"

/* The chapter's problem: three ranks, four micro-batches, even costs, a cap below P. */
static pp_sched_problem chapter_problem(void) {
    pp_sched_problem pb = {.P = 3, .M = 4, .v = 1, .cap = 2};
    for (int s = 0; s < 3; s++) pb.f[s] = pb.i[s] = pb.w[s] = 1;
    return pb;
}

static void draw(const pp_sched_problem *pb, const pp_schedule *s, const char *title) {
    pp_costs k;
    pp__sched_costs(pb, &k);
    pp_trace *tr = calloc((size_t)pb->P, sizeof *tr);
    double end = pp__schedule_trace(s, &k, tr);
    printf("%s: makespan %g\n", title, end);
    pp__timeline_print(stdout, tr, pb->P, pb->v, 0, 200, 0);
    for (int r = 0; r < pb->P; r++) pp__trace_clear(&tr[r]);
    free(tr);
    pp__costs_free(&k);
}

int main(int argc, char **argv) {
    if (!pp__sched_ilp_built) {
        fprintf(stderr, "record_optima: this build has no GLPK: apt-get install libglpk-dev, then make optima\n");
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "--draw")) {
        pp_sched_problem pb = chapter_problem();
        pp_schedule s;
        double end;
        char text[8192];
        if (pp__sched_optimum(&pb, 600, &s, &end) != 1) return 1;
        pp_sched_refs refs;
        if (pp__sched_refs(&pb, 0, &refs, text, sizeof text)) return 1;
        printf("floor (%s): %g, heuristic %g\n", refs.floor_name, refs.floor, refs.greedy);
        pp__sched_csv(&s, text, sizeof text);
        draw(&pb, &s, "the optimum");
        printf("%s", text);
        pp__schedule_free(&s);
        return 0;
    }
    if (argc > 6 && !strcmp(argv[1], "--try")) {
        pp_sched_problem pb = {.P = atoi(argv[2]), .M = atoi(argv[3]), .v = atoi(argv[4]), .cap = atoi(argv[5]),
                               .latency = atof(argv[6])};
        double edge = argc > 7 ? atof(argv[7]) : 0;
        for (int s = 0; s < pb.P * pb.v; s++) {
            double e = s == 0 || s == pb.P * pb.v - 1 ? edge : 0;
            pb.f[s] = pb.i[s] = pb.w[s] = 1 + e;
        }
        pp_schedule s, g;
        double end = -1;
        int proved = pp__sched_optimum(&pb, 60, &s, &end);
        if (end >= 0) pp__schedule_free(&s);
        if (pp__sched_greedy(&pb, &g)) return 2;
        printf("proved %d, optimum %g, heuristic %g\n", proved, end, pp__sched_makespan(&pb, &g));
        pp__schedule_free(&g);
        return 0;
    }
    double limit = argc > 1 ? strtod(argv[1], NULL) : 600;
    int n;
    const pp_test_config *set = pp__testset("scheduler", &n);
    pp_sched_problem pbs[32];
    int np = 0;
    for (int k = 0; k < n && np < 31; k++) {
        pp_test_config tc = set[k];
        snprintf(tc.lab, sizeof tc.lab, "scheduler");
        pp_run_config rc;
        char err[1200];
        if (pp__scheduler_problem(&tc, &pbs[np], &rc, err, sizeof err)) {
            fprintf(stderr, "record_optima: test %d: %s\n", k, err);
            return 1;
        }
        np++;
    }
    pbs[np++] = chapter_problem();
    printf("# sched_optima.rec: lab 09's optima, proved by GLPK's integer program (grader/theory/sched_ilp.c) and\n"
           "# written by `make optima` (tests/record_optima.c); tests/test_sched_record.c holds them to the solver. One\n"
           "# line per problem, KEY = MAKESPAN (or none: not proved), the key as pp__sched_problem_key writes it. Do not\n"
           "# edit: run make optima.\n");
    for (int k = 0; k < np; k++) {
        char key[1024];
        pp__sched_problem_key(&pbs[k], key, sizeof key);
        pp_schedule s;
        double end = -1;
        int proved = pp__sched_optimum(&pbs[k], limit, &s, &end);
        if (end >= 0) pp__schedule_free(&s);
        if (proved == 1) printf("%s = %.17g\n", key, end);
        else printf("%s = none\n", key), fprintf(stderr, "record_optima: %s: not proved within %g s (best found %g)\n",
                                                  key, limit, end);
        fflush(stdout);
    }
    return 0;
}
