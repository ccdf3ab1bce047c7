/* warmup_verdict.h: a warm-up check and its verdict over a part's cases, in the words every part uses. */
#ifndef PP_WARMUP_VERDICT_H
#define PP_WARMUP_VERDICT_H

#include "grade.h"

/* A check of a part, declared up front so that a part whose function is missing still reports its full max. */
typedef struct pp_warmup_check {
    const char *name;
    double points;
} pp_warmup_check;

/* A check's verdict over its n cases: the first wrong one, how many were, and the hint at the idea behind them
 * (tolerance: a note after the count, "" for exact answers); or how many matched, with an example when given
 * (never for drawn cases: the example is the answer key's). */
void pp__warmup_verdict(pp_test_result *out, const pp_warmup_check *pc, int bad, int n, const char *noun,
                        const char *tolerance, const char *first_bad, const char *hint, const char *example);

#endif /* PP_WARMUP_VERDICT_H */
