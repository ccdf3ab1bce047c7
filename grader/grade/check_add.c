/* check_add.c: a test result's checks, added one at a time by every lab's checks (grade.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "grade.h"

pp_check *pp__check_add(pp_test_result *r, const char *name, double max, int passed, const char *fmt, ...) {
    PP_ASSERT(r->nchecks < PP_MAX_CHECKS);
    pp_check *c = &r->checks[r->nchecks++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->max = max;
    c->passed = passed;
    c->points = passed ? max : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    r->score += c->points;
    r->max += max;
    return c;
}
