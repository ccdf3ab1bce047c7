/* report_leaderboard.c: lab 09's class leaderboard, the same figures for Gradescope's results.json and the JSON
 * report: how idle the student's orders leave the pipeline and how much memory they hold, over the instructor's
 * hidden configurations (the public ones when a run has none, as a student's own grade does). */
#include "report.h"

#include <string.h>

/* The check of r named name, or NULL. */
static const pp_check *check_named(const pp_test_result *r, const char *name) {
    for (int i = 0; i < r->nchecks && i < PP_MAX_CHECKS; i++)
        if (!strcmp(r->checks[i].name, name)) return &r->checks[i];
    return NULL;
}

int pp__report_leaderboard(const pp_test_result *r, int n, pp_leaderboard *lb) {
    memset(lb, 0, sizeof *lb);
    int hidden = 0;
    for (int i = 0; i < n; i++) hidden |= !strcmp(r[i].cfg.lab, "scheduler") && r[i].cfg.secret;
    lb->hidden = hidden;
    for (int i = 0; i < n; i++) {
        if (strcmp(r[i].cfg.lab, "scheduler") || (hidden && !r[i].cfg.secret)) continue;
        const pp_check *valid = check_named(&r[i], "valid order"), *cap = check_named(&r[i], "memory cap");
        int ok = valid && valid->passed && cap && cap->passed;
        /* an order that is not valid, or breaks its cap, ranks as the emptiest pipeline and the fullest memory */
        double peak = 0;
        for (int k = 0; ok && k < r[i].cfg.P && k < PP_MAX_RANKS; k++)
            if (r[i].peak_bound[k] > 0 && (double)r[i].peak[k] / r[i].peak_bound[k] > peak)
                peak = (double)r[i].peak[k] / r[i].peak_bound[k];
        lb->bubble += ok ? r[i].bubble : 1;
        lb->memory += ok ? peak : 1;
        lb->invalid += !ok;
        lb->tests++;
    }
    if (lb->tests) lb->bubble /= lb->tests, lb->memory /= lb->tests;
    return lb->tests;
}
