/* report_json.c: the grader's JSON report (cJSON): the total score and every test's configuration, checks,
 * figures and captured output, for scripts and CI. */
#include "report.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

int pp__report_add_text(cJSON *obj, const char *key, const char *s, size_t max) {
    char *clean = pp__report_clean(s ? s : "", s ? max : 1);
    if (!clean) return -1;
    cJSON *item = cJSON_AddStringToObject(obj, key, clean);
    free(clean);
    return item ? 0 : -1;
}

/* Adds text made by pp__report_quote or pp__report_error (NULL: memory ran out), and frees it. */
static int add_made(cJSON *obj, const char *key, char *text) {
    int rc = text ? pp__report_add_text(obj, key, text, strlen(text)) : -1;
    free(text);
    return rc;
}


static int add_num(cJSON *obj, const char *key, double x) { return cJSON_AddNumberToObject(obj, key, x) ? 0 : -1; }

static int add_bool(cJSON *obj, const char *key, int b) { return cJSON_AddBoolToObject(obj, key, b != 0) ? 0 : -1; }

static cJSON *config_json(const pp_test_config *c) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    int bad = add_num(o, "P", c->P) | add_num(o, "M", c->M) | add_num(o, "v", c->v) | add_num(o, "steps", c->steps) |
              add_num(o, "seed", c->seed) | add_num(o, "latency", c->latency) |
              add_num(o, "recompute", c->recompute) | add_num(o, "layers", c->layers) | add_num(o, "hidden", c->hidden) |
              add_num(o, "edge_cost", c->edge) | pp__report_add_text(o, "layout", c->layout, sizeof c->layout) |
              add_num(o, "time", c->time_limit_s) | add_bool(o, "from_config_file", c->secret) |
              pp__report_add_text(o, "part", c->part, sizeof c->part) | add_bool(o, "drawn_cases", c->drawn);
    if (c->drawn) {
        /* what regrades a drawn warm-up part: the seed (the secret) and the file whose bytes keyed the draw */
        char hex[2 * sizeof c->file_sha256 + 1];
        for (size_t i = 0; i < sizeof c->file_sha256; i++) snprintf(hex + 2 * i, 3, "%02x", c->file_sha256[i]);
        bad |= add_num(o, "warmup_seed", c->seed) | pp__report_add_text(o, "file_sha256", hex, sizeof hex);
    }
    if (bad) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *check_json(const pp_check *c) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    int bad = pp__report_add_text(o, "name", c->name, sizeof c->name) | add_num(o, "score", c->points) |
              add_num(o, "max_score", c->max) | add_bool(o, "passed", c->passed) |
              add_bool(o, "better_than_canonical", c->better) |
              pp__report_add_text(o, "message", c->msg, sizeof c->msg);
    if (bad) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *test_json(const pp_test_result *r) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    int P = r->cfg.P < 0 ? 0 : r->cfg.P > PP_MAX_RANKS ? PP_MAX_RANKS : r->cfg.P;
    int nchecks = r->nchecks < 0 ? 0 : r->nchecks > PP_MAX_CHECKS ? PP_MAX_CHECKS : r->nchecks;
    int bad = pp__report_add_text(o, "name", r->name, sizeof r->name) | pp__report_add_text(o, "lab", r->cfg.lab, sizeof r->cfg.lab);
    cJSON *cfg = config_json(&r->cfg);
    bad |= !cfg || !cJSON_AddItemToObject(o, "config", cfg);
    bad |= add_num(o, "score", r->score) | add_num(o, "max_score", r->max) |
           pp__report_add_text(o, "status", pp__report_passed(r) ? "passed" : "failed", 8) |
           add_made(o, "error", pp__report_error(r)) | add_bool(o, "timed_out", r->timed_out) |
           add_bool(o, "crashed", r->crashed) | add_num(o, "bubble", r->bubble) | add_num(o, "theory", r->theory);
    cJSON *peaks = cJSON_CreateIntArray(r->peak, P), *bounds = cJSON_CreateIntArray(r->peak_bound, P);
    if (!peaks || !bounds) {
        cJSON_Delete(peaks);
        cJSON_Delete(bounds);
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddItemToObject(o, "peak_stashes", peaks);
    cJSON_AddItemToObject(o, "peak_bound", bounds);
    bad |= add_num(o, "grad_err", r->grad_err) | add_num(o, "seconds", r->seconds);
    bad |= add_num(o, "weight_err", r->weight_err) | add_num(o, "loss_err", r->loss_err);
    cJSON *checks = cJSON_AddArrayToObject(o, "checks");
    bad |= !checks;
    for (int i = 0; checks && i < nchecks; i++) {
        cJSON *c = check_json(&r->checks[i]);
        if (!c) {
            bad = 1;
            break;
        }
        cJSON_AddItemToArray(checks, c);
    }
    bad |= add_made(o, "output", pp__report_quote(r->output_tail, sizeof r->output_tail));
    if (bad) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int pp__report_json(const char *path, const pp_test_result *r, int n, const char *impl, const char *backend) {
    double score = 0, max = 0;
    for (int i = 0; i < n; i++) {
        score += r[i].score;
        max += r[i].max;
    }
    cJSON *root = cJSON_CreateObject();
    int bad = !root;
    cJSON *tests = NULL;
    if (root) {
        bad |= add_num(root, "score", score) | add_num(root, "max_score", max) |
               pp__report_add_text(root, "impl", impl, impl ? strlen(impl) : 0) |
               pp__report_add_text(root, "backend", backend, backend ? strlen(backend) : 0);
        tests = cJSON_AddArrayToObject(root, "tests");
        bad |= !tests;
        pp_leaderboard lb;
        if (!bad && pp__report_leaderboard(r, n, &lb)) {
            cJSON *l = cJSON_AddObjectToObject(root, "leaderboard");
            bad |= !l || add_num(l, "bubble", lb.bubble) | add_num(l, "memory", lb.memory) | add_num(l, "tests", lb.tests) |
                   add_bool(l, "hidden", lb.hidden) | add_num(l, "invalid", lb.invalid);
        }
    }
    for (int i = 0; !bad && i < n; i++) {
        cJSON *t = test_json(&r[i]);
        if (!t)
            bad = 1;
        else
            cJSON_AddItemToArray(tests, t);
    }
    return pp__report_write_json(path, root, !bad, "JSON report");
}

int pp__report_write_json(const char *path, cJSON *root, int built, const char *what) {
    char *text = built && root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text) {
        fprintf(stderr, "pplab: cannot build the %s for '%s': out of memory (free some memory and rerun)\n", what,
                path);
        return -1;
    }
    int rc = pp__report_write(path, text, what);
    cJSON_free(text);
    return rc;
}
