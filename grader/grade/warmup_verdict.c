/* warmup_verdict.c: a warm-up check's verdict over a part's cases (warmup_verdict.h). */
#include "warmup_verdict.h"

void pp__warmup_verdict(pp_test_result *out, const pp_warmup_check *pc, int bad, int n, const char *noun,
                        const char *tolerance, const char *first_bad, const char *hint, const char *example) {
    if (bad)
        pp__check_add(out, pc->name, pc->points, 0, "%s (%d of %d %s wrong%s); HINT: %s", first_bad, bad, n, noun,
                      tolerance, hint);
    else if (example && example[0])
        pp__check_add(out, pc->name, pc->points, 1, "%d %s match (e.g. %s)", n, noun, example);
    else
        pp__check_add(out, pc->name, pc->points, 1, "%d %s match", n, noun);
}
