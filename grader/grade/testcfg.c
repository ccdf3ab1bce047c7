/* testcfg.c: one test's configuration as the rest of the kit sees it: its name, its knobs, and the run it asks
 * for. Below the suite, the runner and the labs' kinds alike, so each reads a test the same way. */
#include "testcfg.h"
#include "schedules.h"

#include <stdio.h>
#include <string.h>

void pp__test_name(const pp_test_config *c, char *buf, size_t len) {
    if (!strcmp(c->lab, "warmup")) {
        /* named by its part alone: a drawn part's seed stays in the hidden configuration and the instructor's JSON */
        snprintf(buf, len, "%swarmup %s", c->secret ? "hidden: " : "", c->part);
        return;
    }
    /* an instructor's configurations are told from the visible set in every report */
    char knobs[128];
    pp__test_knobs(c, knobs, sizeof knobs);
    int n = snprintf(buf, len, "%s%s P=%d M=%d", c->secret ? "hidden: " : "", c->lab, c->P, c->M);
    if (c->D > 1 && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, " D=%d", c->D);
    if (c->T > 1 && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, " T=%d", c->T);
    if (c->v > 1 && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, " v=%d", c->v);
    if (n >= 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, "%s seed=%u", knobs, c->seed);
}

void pp__test_knobs(const pp_test_config *c, char *buf, size_t len) {
    int n = 0;
    buf[0] = 0;
#define KNOB(cond, ...)                                                                                        \
    if ((cond) && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, __VA_ARGS__)
    KNOB(c->cap > 0, " cap=%d", c->cap);
    KNOB(c->latency > 0, " latency=%g", c->latency);
    KNOB(c->D > 1 && c->alpha >= 0, " reduce-alpha=%g", c->alpha);
    KNOB(c->D > 1 && c->beta >= 0, " reduce-beta=%g", c->beta);
    KNOB(c->recompute, " recompute");
    KNOB(c->layers, " layers=%d", c->layers);
    KNOB(c->layout[0], " layout=%s", c->layout);
    KNOB(c->node_size > 0, " node-size=%d", c->node_size);
    KNOB(c->placement[0], " placement=%s", c->placement);
    KNOB(c->edge > 0, " edge=%g", c->edge);
    KNOB(c->hidden, " width=%d", c->hidden);
    KNOB(c->steps && c->steps != 2, " steps=%d", c->steps);
#undef KNOB
}

void pp__test_to_run(const pp_test_config *t, const char *backend, pp_run_config *rc) {
    pp__config_defaults(rc);
    rc->schedule = pp__schedule_def(t->lab);
    rc->P = t->P, rc->M = t->M, rc->v = t->v ? t->v : 1, rc->steps = t->steps ? t->steps : 1;
    rc->seed = t->seed, rc->comm_latency = t->latency, rc->recompute = t->recompute, rc->layers = t->layers;
    if (t->hidden) rc->hidden = t->hidden;
    rc->layout = t->layout[0] ? t->layout : NULL;
    rc->edge_cost = t->edge;
    rc->D = t->D > 1 ? t->D : 1;
    rc->T = t->T > 1 ? t->T : 1;
    rc->node_size = t->node_size;
    rc->placement = t->placement[0] ? t->placement : NULL;
    if (t->D > 1 && t->alpha >= 0) rc->reduce_alpha = t->alpha;
    if (t->D > 1 && t->beta >= 0) rc->reduce_beta = t->beta;
    rc->backend = backend;
}

double pp__test_limit_s(const pp_test_config *t) { return t->time_limit_s > 0 ? t->time_limit_s : 10; }
