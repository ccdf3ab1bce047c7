/* suite.c: the grading suite: the default set (from the schedule table) and the parser for hidden configuration
 * files. */
#include "suite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl_build.h"
#include "scheduler_lab.h"
#include "schedules.h"
#include "testset.h"

/* 1 when a grade of `lab` (all, a lab's name, or a lab's folder: every lab in it) takes lab `name`. */
static int wants(const char *lab, const char *name) {
    const pp_lab_info *l = pp__lab_find(name);
    return !strcmp(lab, "all") || !strcmp(lab, name) || (l && !strcmp(lab, l->folder));
}

/* The default set: the warm-up's parts, then each schedule's part of the test set, in the schedule table's order,
 * then lab 09's (a GPU run keeps the few marked on_gpu, so that it stays short, and grades no lab of calls). */
int pp__suite_default(const char *lab, int gpu, pp_test_config **out) {
    int cap = pp__warmup_nparts(), n = 0, nsched;
    for (int s = 0; s < pp__nschedules; s++) {
        int k;
        pp__testset(pp__schedules[s].name, &k);
        cap += k;
    }
    const pp_test_config *sched = pp__testset("scheduler", &nsched);
    cap += nsched;
    pp_test_config *v = pp__xcalloc((size_t)cap, sizeof *v);
    if (wants(lab, "warmup") && !gpu)
        for (int i = 0; i < pp__warmup_nparts(); i++) {
            pp_test_config *c = &v[n++];
            snprintf(c->lab, sizeof c->lab, "warmup");
            snprintf(c->part, sizeof c->part, "%s", pp__warmup_part(i));
            c->time_limit_s = 10;
        }
    for (int s = 0; s < pp__nschedules; s++) {
        const pp_schedule_def *d = &pp__schedules[s];
        if (!wants(lab, d->name)) continue;
        int ntests;
        const pp_test_config *tests = pp__testset(d->name, &ntests);
        for (int i = 0; i < ntests; i++) {
            if (gpu && !tests[i].on_gpu) continue;
            pp_test_config *c = &v[n++];
            *c = tests[i];
            snprintf(c->lab, sizeof c->lab, "%s", d->name);
            c->D = c->D > 1 ? c->D : 1, c->alpha = c->beta = -1;
            c->time_limit_s = 10;
        }
    }
    for (int i = 0; wants(lab, "scheduler") && !gpu && i < nsched; i++) {
        pp_test_config *c = &v[n++];
        *c = sched[i];
        snprintf(c->lab, sizeof c->lab, "scheduler");
        c->D = 1, c->alpha = c->beta = -1;
        c->time_limit_s = 10;
    }
    *out = v;
    return n;
}

/* A warmup-seed=N line, tok its only word (the rest of the line in strtok's state): 0 with *seed set, or -1 with
 * the reason in err. seed_line is the line of an earlier seed, 0 for none. */
static int seed_line_read(const char *tok, const char *path, int lineno, int seed_line, unsigned *seed, char *err,
                          size_t errlen) {
    /* a line of its own: it seeds every warm-up test of the run, and the default set's parts have no line */
    const char *val = tok + strlen("warmup-seed=");
    char *end = NULL, *extra = strtok(NULL, " \t\r\n");
    unsigned long x = *val >= '0' && *val <= '9' ? strtoul(val, &end, 10) : 0;
    if (!end || *end || x > 2147483647ul)
        snprintf(err, errlen, "%s:%d: cannot use '%s': write warmup-seed=N with N a whole number "
                 "0..2^31-1 (the seed the warm-up's graded cases are drawn from)", path, lineno, tok);
    else if (extra)
        snprintf(err, errlen, "%s:%d: cannot use '%s' after warmup-seed: the seed's line holds nothing "
                 "else (put the warm-up's parts on lines of their own)", path, lineno, extra);
    else if (seed_line)
        snprintf(err, errlen, "%s:%d: a second warmup-seed (the first is on line %d): give the warm-up "
                 "one seed", path, lineno, seed_line);
    else
        return *seed = (unsigned)x, 0;
    return -1;
}

/* The number keys of a test line into c: 1 when k is one and val (x, whole when an integer) fits it, 0 when k
 * is one but val does not, -1 when k is no number key. */
static int number_read(pp_test_config *c, const char *k, double x, int whole) {
    /* integer keys take whole numbers in range; the time limit stays within ten minutes */
#define INT_KEY(name, field, lo, hi)                                                                           \
    if (!strcmp(k, name)) return whole && x >= (lo) && x <= (hi) ? (field = (int)x, 1) : 0;
    INT_KEY("P", c->P, 1, 64)
    INT_KEY("M", c->M, 1, 1024)
    INT_KEY("v", c->v, 1, 16)
    INT_KEY("steps", c->steps, 1, 1000)
    INT_KEY("recompute", c->recompute, 0, 1)
    INT_KEY("layers", c->layers, 0, 4096)
    INT_KEY("width", c->hidden, 0, 65536)
    INT_KEY("hidden", c->hidden, 0, 65536) /* width's former name: files written for it still load */
    INT_KEY("dp", c->D, 1, 64)
    INT_KEY("tp", c->T, 1, 8)
    INT_KEY("node-size", c->node_size, 1, 256)
    INT_KEY("cap", c->cap, 1, 1024)
#undef INT_KEY
    if (!strcmp(k, "seed")) return whole && x <= 2147483647.0 ? (c->seed = (unsigned)x, 1) : 0;
    if (!strcmp(k, "latency")) return x <= 1e6 ? (c->latency = x, 1) : 0;
    if (!strcmp(k, "edge")) return x <= 1e6 ? (c->edge = x, 1) : 0;
    if (!strcmp(k, "reduce-alpha")) return x <= 1e6 ? (c->alpha = x, 1) : 0;
    if (!strcmp(k, "reduce-beta")) return x <= 1e6 ? (c->beta = x, 1) : 0;
    if (!strcmp(k, "time")) return x > 0 && x <= 600 ? (c->time_limit_s = x, 1) : 0;
    return -1;
}

/* One key=value of a test line (tok, split in place) into c: 0, or -1 with the reason in err. */
static int item_read(char *tok, pp_test_config *c, const char *path, int lineno, char *err, size_t errlen) {
    char item[128], *end = NULL;
    snprintf(item, sizeof item, "%s", tok); /* the whole key=value, for the message */
    char *eq = strchr(tok, '=');
    const char *k = tok, *val = eq ? eq + 1 : "";
    if (eq) *eq = 0;
    if (eq && !strcmp(k, "warmup-seed")) {
        snprintf(err, errlen, "%s:%d: cannot use '%s' here: warmup-seed=N goes on a line of its own (it "
                 "seeds every warm-up part of the run)", path, lineno, item);
        return -1;
    }
    int ok = 0;
    if (!eq) {
    } else if (!strcmp(k, "part")) {
        for (int i = 0; i < pp__warmup_nparts(); i++) ok |= !strcmp(val, pp__warmup_part(i));
        if (ok) snprintf(c->part, sizeof c->part, "%s", val);
    } else if (!strcmp(k, "placement")) { /* checked with the whole configuration later */
        ok = *val && strlen(val) < sizeof c->placement;
        if (ok) snprintf(c->placement, sizeof c->placement, "%s", val);
    } else if (!strcmp(k, "layout")) { /* checked with the whole configuration later */
        ok = *val && strlen(val) < sizeof c->layout;
        if (ok) snprintf(c->layout, sizeof c->layout, "%s", val);
    } else {
        double x = strtod(val, &end);
        if (end != val && !*end && x >= 0 && !strcmp(k, "seed") && !strcmp(c->lab, "warmup")) {
            /* a seed per warm-up line would let two lines of one file grade the same part on other cases */
            snprintf(err, errlen, "%s:%d: cannot use '%s' on a warm-up line: the warm-up's cases are drawn "
                     "from the file's warmup-seed=N line", path, lineno, item);
            return -1;
        }
        /* whole: a cast past long long's range is undefined (either way), and no integer key reaches 2^53 */
        int whole = fabs(x) < 9007199254740992.0 && x == (double)(long long)x;
        ok = end != val && !*end && x >= 0 && number_read(c, k, x, whole) == 1;
    }
    if (ok) return 0;
    snprintf(err, errlen, "%s:%d: cannot use '%s' (keys: P 1..64, M 1..1024, v 1..16, steps 1..1000, "
             "seed 0..2^31-1, latency 0..1e6, recompute 0|1, layers 0..4096, layout first:K,last:K or "
             "K,K,..., edge 0..1e6, width 0..65536, dp 1..64, tp 1..8, node-size 1..256, placement tdp|..., reduce-alpha and "
             "reduce-beta 0..1e6, time over 0 up to 600 s, cap 1..1024 (scheduler), part "
             "bubble|peaks|orders|partition|chunk-orders|idle|uneven|chunks|traffic|memory)", path, lineno, item);
    return -1;
}

/* One test line: its lab in tok, its items after it (in strtok's state), into c, checked as a whole. 0, or -1
 * with the reason in err. */
static int test_line_read(const char *tok, pp_test_config *c, const char *path, int lineno, char *err,
                          size_t errlen) {
    *c = (pp_test_config){.P = 2, .M = 4, .v = 1, .steps = 2, .seed = 1, .time_limit_s = 10, .secret = 1,
                          .D = 1, .alpha = -1, .beta = -1};
    snprintf(c->lab, sizeof c->lab, "%s", tok);
    if (!pp__lab_find(tok) || strchr(tok, '-')) { /* a lab's name, not its folder's */
        char names[300];
        snprintf(err, errlen, "%s:%d: unknown lab '%s' (use %s)", path, lineno, tok,
                 pp__lab_names(names, sizeof names, ", ", " or "));
        return -1;
    }
    const pp_schedule_def *def = pp__schedule_def(tok);
    if (def && def->one_microbatch) c->M = 1;
    c->v = pp__schedule_default_chunks(def); /* two for interleaved and a V, as in pplab run */
    for (char *item; (item = strtok(NULL, " \t\r\n"));)
        if (item_read(item, c, path, lineno, err, errlen)) return -1;
    if (!strcmp(c->lab, "warmup")) {
        c->seed = 0; /* public cases, as in the default set, unless the file has a warmup-seed line */
        return 0;
    }
    pp_run_config rc;
    char why[1200];
    if (!strcmp(c->lab, "scheduler")) {
        pp_sched_problem pb;
        if (!pp__scheduler_problem(c, &pb, &rc, why, sizeof why)) return 0;
        snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
        return -1;
    }
    if (c->cap) {
        snprintf(err, errlen, "%s:%d: cap=%d is lab 09's (scheduler): a %s run holds what its schedule holds", path,
                 lineno, c->cap, c->lab);
        return -1;
    }
    pp__test_to_run(c, "cpu", &rc);
    if (pp__config_check(&rc, why, sizeof why) || pp__config_runnable(&rc, why, sizeof why)) {
        snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
        return -1;
    }
    return 0;
}

int pp__suite_load(const char *path, const char *lab, pp_test_config **out, int *n, char *err, size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open the config file", path);
        return -1;
    }
    char line[512];
    int lineno = 0, seed_line = 0, rc = 0;
    unsigned warmup_seed = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *tok = strtok(line, " \t\r\n");
        if (!tok) continue;
        if (!strncmp(tok, "warmup-seed=", strlen("warmup-seed="))) {
            rc = seed_line_read(tok, path, lineno, seed_line, &warmup_seed, err, errlen);
            seed_line = lineno;
            continue;
        }
        pp_test_config c;
        rc = test_line_read(tok, &c, path, lineno, err, errlen);
        if (rc || !wants(lab, c.lab)) continue;
        *out = pp__xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
        (*out)[(*n)++] = c;
    }
    fclose(f);
    if (rc) return -1;
    /* the default set's warm-up parts, already in *out, are graded on the seed's cases too: else a table of the
     * public answers would keep their points */
    for (int i = 0; seed_line && i < *n; i++)
        if (!strcmp((*out)[i].lab, "warmup")) (*out)[i].drawn = 1, (*out)[i].seed = warmup_seed;
    return 0;
}
