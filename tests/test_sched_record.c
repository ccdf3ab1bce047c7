/* test_sched_record.c: lab 09's recorded optima (grader/theory/sched_optima.rec, which make optima writes) are what
 * GLPK's integer program proves now, line by line: a change to the problem's costs, to the solver or to the record
 * that moves an optimum fails here. Each line's key is parsed back into its problem, solved again, and its order
 * checked as the grader checks a student's. In make check-long: the default set's problems take about 40 s. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_kit.h"
#include "testutil.h"

/* "P=4 M=8 v=1 cap=4 latency=0 f=1,1,1,1 i=... w=..." back into pb; 0, or -1 when it is not a key. */
static int key_parse(const char *key, pp_sched_problem *pb) {
    memset(pb, 0, sizeof *pb);
    int at = 0;
    if (sscanf(key, "P=%d M=%d v=%d cap=%d latency=%lf%n", &pb->P, &pb->M, &pb->v, &pb->cap, &pb->latency, &at) != 5)
        return -1;
    double *lists[3] = {pb->f, pb->i, pb->w};
    const char *names[3] = {" f=", " i=", " w="};
    const char *p = key + at;
    for (int k = 0; k < 3; k++) {
        if (strncmp(p, names[k], 3)) return -1;
        p += 3;
        for (int s = 0; s < pb->P * pb->v; s++) {
            char *end;
            lists[k][s] = strtod(p, &end);
            if (end == p) return -1;
            p = *end == ',' ? end + 1 : end;
        }
    }
    char again[1024];
    pp__sched_problem_key(pb, again, sizeof again);
    return strcmp(again, key) ? -1 : 0;
}

Test(sched_record, every_recorded_optimum_is_proved_again, .timeout = 600) {
    if (!pp__sched_ilp_built) test_skip("this build has no GLPK: apt-get install libglpk-dev");
    FILE *f = fopen("grader/theory/sched_optima.rec", "r");
    cr_assert(f, "no grader/theory/sched_optima.rec: run make optima");
    char line[2048];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strchr(line, '=')) continue;
        line[strcspn(line, "\n")] = 0;
        char *eq = strstr(line, " = ");
        cr_assert(eq, "%s", line);
        *eq = 0;
        pp_sched_problem pb;
        cr_assert_eq(key_parse(line, &pb), 0, "not a problem's key: %s", line);
        pp_schedule s;
        double end = -1;
        int proved = pp__sched_optimum(&pb, 300, &s, &end);
        if (!strcmp(eq + 3, "none")) {
            cr_expect_neq(proved, 1, "%s: recorded as not proved, and proved now (%g): run make optima", line, end);
        } else {
            cr_expect_eq(proved, 1, "%s: recorded %s, not proved now", line, eq + 3);
            cr_expect_float_eq(end, strtod(eq + 3, NULL), 1e-9, "%s: recorded %s, proved %g", line, eq + 3, end);
            char err[1024] = "";
            cr_expect_eq(pp__sched_verify(&pb, &s, NULL, err, sizeof err), 0, "%s: %s", line, err);
        }
        if (end >= 0) pp__schedule_free(&s);
        n++;
    }
    fclose(f);
    cr_expect_gt(n, 5);
}
