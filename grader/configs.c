/* configs.c: the default grading set and the parser for hidden configuration files. */
#include "configs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"
#include "schedules.h"

/* lab, P, M, v, steps, seed, latency, recompute. About fifty runs covering P 2..8, M 1..4P, v 2..4, several
 * seeds, M < P, M = P, a comm-latency case and recomputation, chosen so the whole set grades in seconds. */
static const struct {
    const char *lab;
    int P, M, v, steps;
    unsigned seed;
    double latency;
    int recompute;
} defaults[] = {
    {"naive", 2, 1, 1, 2, 1, 0, 0},      {"naive", 3, 1, 1, 2, 2, 0, 0},      {"naive", 4, 1, 1, 3, 3, 0, 0},
    {"naive", 8, 1, 1, 2, 4, 0, 0},      {"naive", 4, 1, 1, 2, 5, 0.5, 0},    {"naive", 6, 1, 1, 2, 6, 0, 0},
    {"gpipe", 2, 1, 1, 2, 11, 0, 0},     {"gpipe", 2, 4, 1, 2, 12, 0, 0},     {"gpipe", 3, 5, 1, 2, 13, 0, 0},
    {"gpipe", 4, 4, 1, 2, 14, 0, 0},     {"gpipe", 4, 6, 1, 3, 15, 0, 0},     {"gpipe", 4, 16, 1, 2, 16, 0, 0},
    {"gpipe", 8, 8, 1, 2, 17, 0, 0},     {"gpipe", 8, 32, 1, 2, 18, 0, 0},    {"gpipe", 4, 8, 1, 2, 19, 1.0, 0},
    {"gpipe", 4, 8, 1, 2, 20, 0, 1},     {"gpipe", 2, 3, 1, 2, 21, 0, 1},     {"gpipe", 6, 12, 1, 2, 22, 0, 0},
    {"1f1b", 2, 2, 1, 2, 31, 0, 0},      {"1f1b", 2, 8, 1, 2, 32, 0, 0},      {"1f1b", 4, 2, 1, 2, 33, 0, 0},
    {"1f1b", 4, 4, 1, 2, 34, 0, 0},      {"1f1b", 4, 8, 1, 3, 35, 0, 0},      {"1f1b", 4, 16, 1, 2, 36, 0, 0},
    {"1f1b", 3, 7, 1, 2, 37, 0, 0},      {"1f1b", 8, 8, 1, 2, 38, 0, 0},      {"1f1b", 8, 32, 1, 2, 39, 0, 0},
    {"1f1b", 4, 8, 1, 2, 40, 0.5, 0},    {"1f1b", 8, 3, 1, 2, 41, 0, 0},      {"1f1b", 1, 4, 1, 2, 42, 0, 0},
    {"1f1b", 6, 6, 1, 2, 43, 0, 0},
    {"interleaved", 2, 2, 2, 2, 51, 0, 0},  {"interleaved", 2, 4, 2, 2, 52, 0, 0},
    {"interleaved", 4, 4, 2, 2, 53, 0, 0},  {"interleaved", 4, 8, 2, 3, 54, 0, 0},
    {"interleaved", 4, 16, 2, 2, 55, 0, 0}, {"interleaved", 4, 8, 3, 2, 56, 0, 0},
    {"interleaved", 2, 4, 4, 2, 57, 0, 0},  {"interleaved", 8, 8, 2, 2, 58, 0, 0},
    {"interleaved", 8, 16, 2, 2, 59, 0, 0}, {"interleaved", 4, 8, 2, 2, 60, 1.0, 0},
    {"interleaved", 3, 6, 2, 2, 61, 0, 0},  {"interleaved", 4, 12, 4, 2, 62, 0, 0},
    {"interleaved", 2, 4, 3, 2, 63, 0.5, 0}, {"interleaved", 6, 12, 2, 2, 64, 0, 0},
};

static const char *const warmup_parts[] = {"bubble", "peaks", "orders", "partition"};

/* On a GPU the set is smaller: every lab once or twice, so a CUDA grading run stays short. */
static int gpu_pick(int i) {
    static const int picks[] = {2, 8, 14, 20, 24, 31, 36};
    for (size_t k = 0; k < sizeof picks / sizeof *picks; k++)
        if (picks[k] == i) return 1;
    return 0;
}

static int wants(const char *lab, const char *name) { return !strcmp(lab, "all") || !strcmp(lab, name); }

int pp__configs_default(const char *lab, int gpu, pp_test_config **out) {
    int cap = (int)(sizeof defaults / sizeof *defaults) + 4, n = 0;
    pp_test_config *v = pp__xcalloc((size_t)cap, sizeof *v);
    if (wants(lab, "warmup") && !gpu)
        for (int i = 0; i < 4; i++) {
            pp_test_config *c = &v[n++];
            snprintf(c->lab, sizeof c->lab, "warmup");
            snprintf(c->part, sizeof c->part, "%s", warmup_parts[i]);
            c->time_limit_s = 10;
        }
    static const char *const order[] = {"naive", "gpipe", "1f1b", "interleaved"};
    for (int o = 0; o < 4; o++) {
        if (!wants(lab, order[o])) continue;
        for (int i = 0; i < (int)(sizeof defaults / sizeof *defaults); i++) {
            if (strcmp(defaults[i].lab, order[o]) || (gpu && !gpu_pick(i))) continue;
            pp_test_config *c = &v[n++];
            snprintf(c->lab, sizeof c->lab, "%s", defaults[i].lab);
            c->P = defaults[i].P, c->M = defaults[i].M, c->v = defaults[i].v, c->steps = defaults[i].steps;
            c->seed = defaults[i].seed, c->latency = defaults[i].latency, c->recompute = defaults[i].recompute;
            c->time_limit_s = 10;
        }
    }
    *out = v;
    return n;
}

void pp__config_name(const pp_test_config *c, char *buf, size_t len) {
    if (!strcmp(c->lab, "warmup")) {
        snprintf(buf, len, "%swarmup %s", c->secret ? "hidden: " : "", c->part);
        return;
    }
    /* an instructor's configurations are told from the visible set in every report */
    char knobs[128];
    pp__config_knobs(c, knobs, sizeof knobs);
    int n = snprintf(buf, len, "%s%s P=%d M=%d", c->secret ? "hidden: " : "", c->lab, c->P, c->M);
    if (c->v > 1 && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, " v=%d", c->v);
    if (n >= 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, "%s seed=%u", knobs, c->seed);
}

void pp__config_knobs(const pp_test_config *c, char *buf, size_t len) {
    int n = 0;
    buf[0] = 0;
#define KNOB(cond, ...)                                                                                        \
    if ((cond) && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, __VA_ARGS__)
    KNOB(c->latency > 0, " latency=%g", c->latency);
    KNOB(c->recompute, " recompute");
    KNOB(c->layers, " layers=%d", c->layers);
    KNOB(c->hidden, " hidden=%d", c->hidden);
    KNOB(c->steps && c->steps != 2, " steps=%d", c->steps);
#undef KNOB
}

void pp__config_to_run(const pp_test_config *t, const char *backend, pp_run_config *rc) {
    pp__config_defaults(rc);
    rc->schedule = t->lab;
    rc->P = t->P, rc->M = t->M, rc->v = t->v ? t->v : 1, rc->steps = t->steps ? t->steps : 1;
    rc->seed = t->seed, rc->comm_latency = t->latency, rc->recompute = t->recompute, rc->layers = t->layers;
    if (t->hidden) rc->hidden = t->hidden;
    rc->backend = backend;
}

int pp__configs_load(const char *path, const char *lab, pp_test_config **out, int *n, char *err, size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open the config file", path);
        return -1;
    }
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *tok = strtok(line, " \t\r\n");
        if (!tok) continue;
        pp_test_config c = {.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 1, .time_limit_s = 10, .secret = 1};
        snprintf(c.lab, sizeof c.lab, "%s", tok);
        if (!pp__lab_find(tok) || strchr(tok, '-')) { /* a lab's name, not its folder's */
            char names[300];
            snprintf(err, errlen, "%s:%d: unknown lab '%s' (use %s)", path, lineno, tok,
                     pp__lab_names(names, sizeof names, ", ", " or "));
            fclose(f);
            return -1;
        }
        const pp_schedule_def *def = pp__schedule_def(tok);
        if (def && def->one_microbatch) c.M = 1;
        while ((tok = strtok(NULL, " \t\r\n"))) {
            char item[128], *end = NULL;
            snprintf(item, sizeof item, "%s", tok); /* the whole key=value, for the message */
            char *eq = strchr(tok, '=');
            if (!eq) goto bad;
            *eq = 0;
            const char *k = tok, *val = eq + 1;
            if (!strcmp(k, "part")) {
                static const char *const parts[] = {"bubble", "peaks", "orders", "partition"};
                int known = 0;
                for (int i = 0; i < 4; i++) known |= !strcmp(val, parts[i]);
                if (!known) goto bad;
                snprintf(c.part, sizeof c.part, "%s", val);
                continue;
            }
            double x = strtod(val, &end);
            int whole = x == (double)(long long)x;
            if (end == val || *end || !(x >= 0)) goto bad;
            /* integer keys take whole numbers in range; the time limit stays within ten minutes */
#define INT_KEY(name, field, lo, hi)                                                                           \
    else if (!strcmp(k, name)) {                                                                               \
        if (!whole || x < (lo) || x > (hi)) goto bad;                                                          \
        field = (int)x;                                                                                        \
    }
            if (0) {
            }
            INT_KEY("P", c.P, 1, 64)
            INT_KEY("M", c.M, 1, 1024)
            INT_KEY("v", c.v, 1, 16)
            INT_KEY("steps", c.steps, 1, 1000)
            INT_KEY("recompute", c.recompute, 0, 1)
            INT_KEY("layers", c.layers, 0, 4096)
            INT_KEY("hidden", c.hidden, 0, 65536)
#undef INT_KEY
            else if (!strcmp(k, "seed") && whole && x <= 2147483647.0) c.seed = (unsigned)x;
            else if (!strcmp(k, "latency") && x <= 1e6) c.latency = x;
            else if (!strcmp(k, "time") && x > 0 && x <= 600) c.time_limit_s = x;
            else goto bad;
            continue;
        bad:
            snprintf(err, errlen, "%s:%d: cannot use '%s' (keys: P 1..64, M 1..1024, v 1..16, steps 1..1000, "
                     "seed 0..2^31-1, latency 0..1e6, recompute 0|1, layers 0..4096, hidden 0..65536, time over 0 "
                     "up to 600 s, part bubble|peaks|orders|partition)", path, lineno, item);
            fclose(f);
            return -1;
        }
        if (strcmp(c.lab, "warmup")) {
            pp_run_config rc;
            pp__config_to_run(&c, "cpu", &rc);
            char why[300];
            if (pp__config_check(&rc, why, sizeof why)) {
                snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
                fclose(f);
                return -1;
            }
        }
        if (!wants(lab, c.lab)) continue;
        *out = pp__xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
        (*out)[(*n)++] = c;
    }
    fclose(f);
    return 0;
}
