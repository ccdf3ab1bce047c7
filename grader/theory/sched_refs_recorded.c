/* sched_refs_recorded.c: a handout's lab 09 references (sched_problem.h's pp__sched_refs): the figures the kit recorded for
 * the handout's public configurations (answers.rec, "scheduler KEY = ..."), read back. Nothing here finds an order:
 * the heuristic, the integer program and the canonical orders stay in the kit. */
#include "sched_problem.h"

#include <stdio.h>

#include "answers.h"

int pp__sched_refs(const pp_sched_problem *pb, int solve, pp_sched_refs *r, char *err, size_t len) {
    (void)solve;
    if (pp__sched_problem_check(pb, err, len)) return -1;
    char key[1100], pk[1024];
    pp__sched_problem_key(pb, pk, sizeof pk);
    snprintf(key, sizeof key, "scheduler %s", pk);
    const char *val = pp__answers_record(key);
    if (!val || pp__sched_refs_parse(val, r)) {
        snprintf(err, len, "this handout records the references of its public lab 09 configurations only (%s is not "
                 "one); the course's autograder grades any", pk);
        return -1;
    }
    return 0;
}
