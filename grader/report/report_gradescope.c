/* report_gradescope.c: the grader's Gradescope results.json (score, execution_time, output and its formats,
 * tests[] with per-test points, feedback and visibility), so an autograder wrapper only has to copy the file. */
#include "report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* The summary the terminal shows, without colour, preceded by what was graded. */
static char *summary_text(const pp_test_result *r, int n, const char *impl, const char *backend) {
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return NULL;
    fprintf(m, "pplab grade: implementation %s, backend %s\n", impl && *impl ? impl : "-",
            backend && *backend ? backend : "-");
    pp__report_summary(m, r, n, 0);
    int bad = ferror(m);
    if (fclose(m) != 0 || bad) {
        free(text);
        return NULL;
    }
    return text;
}

static cJSON *test_json(const pp_test_result *r, int number) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    int passed = pp__report_passed(r);
    const char *verdict = pp__report_run_verdict(r);
    char text[8192];
    if (passed) {
        int nchecks = r->nchecks < 0 ? 0 : r->nchecks > PP_MAX_CHECKS ? PP_MAX_CHECKS : r->nchecks;
        snprintf(text, sizeof text, "all %d check%s passed", nchecks, nchecks == 1 ? "" : "s");
    } else {
        /* a student sees "failed" either way: say first whether the schedule ran at all */
        int k = verdict ? snprintf(text, sizeof text, "%s: the run did not complete\n", verdict) : 0;
        pp__report_failure_text(r, 1, text + k, sizeof text - (size_t)k);
    }
    char num[16];
    snprintf(num, sizeof num, "%d", number);
    int bad = pp__report_add_text(o, "name", r->name, sizeof r->name) | pp__report_add_text(o, "number", num, sizeof num) |
              !cJSON_AddNumberToObject(o, "score", r->score) |
              !cJSON_AddNumberToObject(o, "max_score", r->max) |
              pp__report_add_text(o, "status", passed ? "passed" : "failed", 8) | pp__report_add_text(o, "output", text, sizeof text) |
              /* an instructor's hidden configurations show their results only once grades are published */
              pp__report_add_text(o, "visibility", r->cfg.secret ? "after_published" : "visible", 16);
    if (bad) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Gradescope's leaderboard: entries of name, value and order ("asc": lower ranks higher), as its autograder
 * specification gives them. */
static int leaderboard_json(cJSON *root, const pp_leaderboard *lb) {
    cJSON *board = cJSON_AddArrayToObject(root, "leaderboard");
    if (!board) return 1;
    const struct {
        const char *name;
        double value;
    } rows[] = {{"lab 09 bubble", lb->bubble}, {"lab 09 memory (peak / cap)", lb->memory}};
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        cJSON *e = cJSON_CreateObject();
        if (!e) return 1;
        cJSON_AddItemToArray(board, e);
        if (!cJSON_AddStringToObject(e, "name", rows[k].name) ||
            !cJSON_AddNumberToObject(e, "value", round(rows[k].value * 1e4) / 1e4) ||
            !cJSON_AddStringToObject(e, "order", "asc"))
            return 1;
    }
    return 0;
}

int pp__report_gradescope(const char *path, const pp_test_result *r, int n, const char *impl,
                          const char *backend) {
    double score = 0, seconds = 0;
    for (int i = 0; i < n; i++) {
        score += r[i].score;
        if (r[i].seconds > 0) seconds += r[i].seconds;
    }
    char *summary = summary_text(r, n, impl, backend);
    cJSON *root = cJSON_CreateObject();
    int bad = !root || !summary;
    cJSON *tests = NULL;
    if (!bad) {
        bad |= !cJSON_AddNumberToObject(root, "score", score) |
               !cJSON_AddNumberToObject(root, "execution_time", ceil(seconds)) |
               pp__report_add_text(root, "output", summary, strlen(summary)) |
               /* plain text everywhere: a student's output must not become markup */
               pp__report_add_text(root, "output_format", "text", 4) |
               pp__report_add_text(root, "test_output_format", "text", 4) |
               pp__report_add_text(root, "test_name_format", "text", 4) | pp__report_add_text(root, "visibility", "visible", 8) |
               pp__report_add_text(root, "stdout_visibility", "hidden", 7);
        tests = cJSON_AddArrayToObject(root, "tests");
        bad |= !tests;
        pp_leaderboard lb;
        if (!bad && pp__report_leaderboard(r, n, &lb)) bad |= leaderboard_json(root, &lb);
    }
    for (int i = 0; !bad && i < n; i++) {
        cJSON *t = test_json(&r[i], i + 1);
        if (!t)
            bad = 1;
        else
            cJSON_AddItemToArray(tests, t);
    }
    free(summary);
    return pp__report_write_json(path, root, !bad, "Gradescope report");
}
