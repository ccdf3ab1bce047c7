/* record_answers.c: writes lib/schedule/answers.rec, the answers a student handout grades with (make answers). It
 * asks the kit's own generators (answers.h, warmup_keys.h) for every public configuration and nothing else:
 *   - each schedule's default test set (grader/grade/testset.c), and the placement each topology test is
 *     measured against;
 *   - every configuration a handout shows: the `pplab run` commands of its docs, in blocks and inline (read from
 *     stdin: `bash scripts/doccheck.sh --list` prints them; a table's `--schedule S` stands for each schedule
 *     its rules take there), and of its scripts and figures (`shown` below);
 *   - the warm-up's public cases, whose keys are whatever grading them asks for; they are graded here on the
 *     reference answers, so that every case's every key is asked (a wrong answer stops a check early).
 * The record is sorted, one "KEY = VALUE" line each (answers_recorded.c reads it); tests/test_answers.c holds it
 * to what this program writes now, so that it cannot drift from the generators. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers.h"
#include "grade.h"
#include "scheduler_lab.h"
#include "testset.h"
#include "warmup_call.h"
#include "wire.h"

/* What a handout shows besides its docs: make demo's canonical timelines and theory table (scripts/demo.sh), make
 * plots' Gantt charts and sweeps (scripts/plots.sh, grader/view/figures.c: bubble against M for 1F1B and
 * interleaved, against latency at P = 4, M = 8), the self-check's canonical GPipe (scripts/selfcheck.sh). */
static const char *const shown[] = {
    "pplab run --schedule naive --stages 4 --microbatches 1",
    "pplab run --schedule gpipe --stages 4 --microbatches 6",
    "pplab run --schedule gpipe --stages 4 --microbatches 8",
    "pplab run --schedule gpipe --stages 4 --microbatches 32",
    "pplab run --schedule 1f1b --stages 4 --microbatches 8",
    "pplab run --schedule 1f1b --stages 4 --microbatches 32",
    "pplab run --schedule interleaved --stages 4 --microbatches 8 --chunks 2",
    "pplab run --schedule interleaved --stages 4 --microbatches 8 --chunks 4",
    "pplab run --schedule loopedbfs --stages 4 --microbatches 8 --chunks 2",
    "pplab run --schedule zbh1 --stages 4 --microbatches 8",
    "pplab run --schedule zbh2 --stages 4 --microbatches 8",
    "pplab run --schedule zbinterleaved --stages 4 --microbatches 8 --chunks 2",
    "pplab run --schedule zbv --stages 2 --microbatches 4 --chunks 2",
    "pplab run --schedule zbv --stages 4 --microbatches 8 --chunks 2",
    "pplab run --schedule dualpipev --stages 2 --microbatches 4 --chunks 2",
    "pplab run --schedule dualpipev --stages 4 --microbatches 8 --chunks 2",
    "pplab run --schedule dualpipe --stages 4 --microbatches 8 --chunks 2",
};

/* The figures' sweeps: 1F1B at M = 1..32 and interleaved (v = 2) at every M = 4k up to 32, on P = 4. */
#define FIG_P 4
#define FIG_MAX_M 32

typedef struct shape {
    const pp_schedule_def *def;
    int P, M, v;
} shape;

static shape shapes[4096];
static int nshapes;

typedef struct grid {
    char order[4];
    int T, D, P;
} grid;

static grid grids[256];
static int ngrids;

static char **lines;
static size_t nlines, caplines;

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) abort();
    va_end(ap);
    if (nlines == caplines) {
        caplines = caplines ? 2 * caplines : 1024;
        lines = realloc(lines, caplines * sizeof *lines);
        if (!lines) abort();
    }
    lines[nlines++] = s;
}

/* A shape of row def, held once; refused (silently) where the row's rules refuse it. */
static void add_shape(const pp_schedule_def *def, int P, int M, int v) {
    pp_run_config c;
    char err[512];
    if (!def) return;
    if (def->one_microbatch) M = 1;
    if (!def->chunked) v = 1;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def(def->name), c.P = P, c.M = M, c.v = v;
    if (pp__config_check(&c, err, sizeof err)) return;
    for (int i = 0; i < nshapes; i++)
        if (shapes[i].def == def && shapes[i].P == P && shapes[i].M == M && shapes[i].v == v) return;
    if (nshapes == (int)(sizeof shapes / sizeof *shapes)) abort();
    shapes[nshapes++] = (shape){def, P, M, v};
}

static void add_grid(const char *order, int T, int D, int P) {
    if (T < 1) T = 1;
    for (int i = 0; i < ngrids; i++)
        if (!strcmp(grids[i].order, order) && grids[i].T == T && grids[i].D == D && grids[i].P == P) return;
    if (ngrids == (int)(sizeof grids / sizeof *grids) || strlen(order) != 3) abort();
    grids[ngrids] = (grid){"", T, D, P};
    memcpy(grids[ngrids++].order, order, 4);
}

/* An integer flag value, or -1 when the text is not one (a doc's placeholder: S, L, ...). */
static int number(const char *s) {
    char *end;
    long x = strtol(s, &end, 10);
    return *s && !*end && x >= 0 && x < 100000 ? (int)x : -1;
}

/* One `pplab run` command line: its schedule, shape and placement, where every value it needs is a number. */
static void add_command(const char *line) {
    const char *at = strstr(line, "pplab run ");
    if (!at) return;
    char buf[2048], *save = NULL;
    snprintf(buf, sizeof buf, "%s", at + strlen("pplab run "));
    char sched[32] = "", placement[8] = "tdp";
    int P = -1, M = -1, v = 0, T = 1, D = 1, node = 0, bad = 0;
    for (char *tok = strtok_r(buf, " \t", &save); tok && !bad; tok = strtok_r(NULL, " \t", &save)) {
        if (tok[0] == '#') break;
        char *val = strchr(tok, '=');
        if (val) *val++ = 0;
        else if (!strncmp(tok, "--", 2)) val = NULL;
        static const char *const valued[] = {"--schedule", "--stages", "--microbatches", "--chunks", "--tp", "--dp",
                                             "--node-size", "--placement"};
        int which = -1;
        for (int k = 0; k < 8; k++)
            if (!strcmp(tok, valued[k])) which = k;
        if (which < 0) continue;
        if (!val) val = strtok_r(NULL, " \t", &save);
        if (!val) return;
        int n = number(val);
        switch (which) {
        case 0: snprintf(sched, sizeof sched, "%s", val); break;
        case 1: bad |= (P = n) < 1; break;
        case 2: bad |= (M = n) < 1; break;
        case 3: bad |= (v = n) < 1; break;
        case 4: bad |= (T = n) < 1; break;
        case 5: bad |= (D = n) < 1; break;
        case 6: bad |= (node = n) < 0; break;
        case 7: snprintf(placement, sizeof placement, "%s", val); break;
        }
    }
    if (bad || !sched[0] || P < 1 || M < 1) return;
    /* "--schedule S": the docs' tables run one command for each schedule of their rows; every row its rules take */
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *def = &pp__schedules[i];
        if (strcmp(sched, def->name) && strcmp(sched, "S")) continue;
        add_shape(def, P, M, v ? v : pp__schedule_default_chunks(def));
        if (node > 0 && !def->grid) add_grid(placement, T, D, P);
    }
}

static void record_schedules(void) {
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *def = &pp__schedules[i];
        int n;
        const pp_test_config *t = pp__testset(def->name, &n);
        for (int k = 0; k < n; k++) {
            add_shape(def, t[k].P, t[k].M, t[k].v);
            if (t[k].node_size > 0) add_grid("tdp", t[k].T, t[k].D > 0 ? t[k].D : 1, t[k].P);
        }
    }
    for (size_t i = 0; i < sizeof shown / sizeof *shown; i++) add_command(shown[i]);
    for (int M = 1; M <= FIG_MAX_M; M++) add_shape(pp__schedule_def("1f1b"), FIG_P, M, 1);
    for (int M = FIG_P; M <= FIG_MAX_M; M += FIG_P) add_shape(pp__schedule_def("interleaved"), FIG_P, M, 2);
    static pp_sched_op ops[3 * 1024 * 16];
    for (int i = 0; i < nshapes; i++) {
        const shape *s = &shapes[i];
        const char *name = s->def->name;
        emit("messages %s %d %d %d = %d", name, s->P, s->M, s->v, pp__answers_messages(s->def, s->P, s->M, s->v));
        double b = pp__answers_bubble(s->def, s->P, s->M, s->v);
        if (b >= 0) emit("bubble %s %d %d %d = %.17g", name, s->P, s->M, s->v, b);
        else emit("bubble %s %d %d %d = none", name, s->P, s->M, s->v);
        for (int r = 0; r < s->P; r++) {
            emit("peak %s %d %d %d %d = %d", name, s->P, s->M, s->v, r, pp__answers_peak(s->def, s->P, s->M, s->v, r));
            int n = pp__answers_order(s->def, s->P, s->M, s->v, r, ops);
            size_t cap = 16 * (size_t)(n + 1), used = 0;
            char *text = calloc(cap, 1);
            for (int k = 0; k < n; k++)
                used += (size_t)snprintf(text + used, cap - used, "%s%c%d.%d", k ? " " : "", ops[k].kind, ops[k].mb,
                                         ops[k].chunk);
            emit("order %s %d %d %d %d = %s", name, s->P, s->M, s->v, r, text);
            free(text);
        }
    }
    for (int i = 0; i < ngrids; i++) {
        const grid *g = &grids[i];
        int W = g->T * g->D * g->P;
        size_t cap = 12 * (size_t)W + 1, used = 0;
        char *text = calloc(cap, 1);
        for (int w = 0; w < W; w++)
            used += (size_t)snprintf(text + used, cap - used, "%s%d", w ? " " : "",
                                     pp__answers_place(g->order, g->T, g->D, g->P, w));
        emit("place %s %d %d %d = %s", g->order, g->T, g->D, g->P, text);
        free(text);
    }
}

/* The reference answers of the warm-up (solutions/00-warmup/warmup.c, linked in); weak, since the list holds lab
 * 09's scheduler too, which the warm-up never calls and this program does not link. */
#define PP_WU_DECL(field, symbol, type) type symbol __attribute__((weak));
PP_WARMUP_FUNCTIONS(PP_WU_DECL)
#undef PP_WU_DECL

static void record_warmup(void) {
    const pp_warmup_fns fns = {
#define PP_WU_INIT(field, symbol, type) .field = symbol,
        PP_WARMUP_FUNCTIONS(PP_WU_INIT)
#undef PP_WU_INIT
    };
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) abort();
    pp__warmup_keys_log(f);
    for (int i = 0; i < pp__warmup_nparts(); i++) {
        pp_test_config cfg = {.lab = "warmup"};
        snprintf(cfg.part, sizeof cfg.part, "%s", pp__warmup_part(i));
        pp_wire rec;
        pp__wire_init(&rec);
        char err[512];
        if (pp__warmup_record(&cfg, NULL, &fns, &rec, err, sizeof err) != PP_OK) {
            fprintf(stderr, "record_answers: the warm-up's %s part failed on the reference answers: %s\n", cfg.part,
                    err);
            exit(1);
        }
        pp__wire_free(&rec);
    }
    pp__warmup_keys_log(NULL);
    fclose(f);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        emit("%s", line);
    free(text);
}

/* Lab 09's references of its default set, which a handout grades its public problems against: the figures alone
 * ("scheduler KEY = floor=... greedy=... optimum=... canon=..."), never an order. */
static void record_scheduler(void) {
    int n;
    const pp_test_config *t = pp__testset("scheduler", &n);
    for (int k = 0; k < n; k++) {
        pp_test_config tc = t[k];
        snprintf(tc.lab, sizeof tc.lab, "scheduler");
        pp_sched_problem pb;
        pp_run_config rc;
        pp_sched_refs refs;
        char err[1200], key[1024], val[1024];
        if (pp__scheduler_problem(&tc, &pb, &rc, err, sizeof err) || pp__sched_refs(&pb, 1, &refs, err, sizeof err)) {
            fprintf(stderr, "record_answers: lab 09's test %d: %s\n", k, err);
            exit(1);
        }
        pp__sched_problem_key(&pb, key, sizeof key);
        pp__sched_refs_format(&refs, val, sizeof val);
        emit("scheduler %s = %s", key, val);
    }
}

static int by_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void) {
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        add_command(line);
    }
    record_schedules();
    record_warmup();
    record_scheduler();
    qsort(lines, nlines, sizeof *lines, by_text);
    printf("# answers.rec: what a student handout grades its public configurations with, recorded from the kit's own\n"
           "# generators by `make answers` (tests/record_answers.c), which tests/test_answers.c holds them to. Data\n"
           "# only, one KEY = VALUE a line, read by lib/schedule/answers_recorded.c. Do not edit: run make answers.\n");
    for (size_t i = 0; i < nlines; i++)
        if (i == 0 || strcmp(lines[i], lines[i - 1])) printf("%s\n", lines[i]);
    for (size_t i = 0; i < nlines; i++) free(lines[i]);
    free(lines);
    return 0;
}
