/* answers_recorded.c: answers.h as a student handout answers it: from answers.rec, the answers the kit recorded
 * for the handout's public configurations (`make answers` writes it from the kit's own generators; a kit test
 * holds the two together). Nothing here computes an answer: a configuration the record does not hold has none,
 * and its callers say so. */
#include "answers.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The record, compiled in (the Makefile turns answers.rec into a string), so that build/pplab answers wherever it
 * is run from. */
static const char record_text[] =
#include "answers_rec.inc"
    ;

typedef struct entry {
    char *key, *value;
} entry;

static entry *entries;
static size_t nentries;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static int by_key(const void *a, const void *b) { return strcmp(((const entry *)a)->key, ((const entry *)b)->key); }

/* Splits the record into "KEY = VALUE" lines, skipping blank lines and # comments, and sorts them by key. */
static void load(void) {
    size_t cap = 0;
    for (const char *p = record_text; *p; p++) cap += *p == '\n';
    entries = calloc(cap + 1, sizeof *entries);
    char *text = strdup(record_text);
    if (!entries || !text) return;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *eq = strstr(line, " = ");
        if (line[0] == '#' || !eq) continue;
        *eq = 0;
        entries[nentries++] = (entry){line, eq + 3};
    }
    qsort(entries, nentries, sizeof *entries, by_key);
}

const char *pp__answers_record(const char *key) {
    pthread_once(&loaded, load);
    entry want = {(char *)key, NULL}, *e = nentries ? bsearch(&want, entries, nentries, sizeof *entries, by_key) : NULL;
    return e ? e->value : NULL;
}

/* The value of "WHAT NAME P M v[ r]", or NULL. */
static const char *lookup(const char *what, const pp_schedule_def *def, int P, int M, int v, int r) {
    char key[128];
    if (!def) return NULL;
    if (r >= 0) snprintf(key, sizeof key, "%s %s %d %d %d %d", what, def->name, P, M, v, r);
    else snprintf(key, sizeof key, "%s %s %d %d %d", what, def->name, P, M, v);
    return pp__answers_record(key);
}

const char *pp__answers_source(void) { return "recorded"; }

int pp__answers_held(const pp_schedule_def *def, int P, int M, int v) {
    return lookup("messages", def, P, M, v, -1) != NULL;
}

int pp__answers_order(const pp_schedule_def *def, int P, int M, int v, int r, pp_sched_op *ops) {
    const char *val = lookup("order", def, P, M, v, r);
    if (!val) return -1;
    int n = 0, used;
    char kind;
    pp_sched_op op = {0};
    while (n < PP_SCHED_ROOM(M, v) && sscanf(val, " %c%d.%d%n", &kind, &op.mb, &op.chunk, &used) == 3) {
        op.kind = kind;
        ops[n++] = op;
        val += used;
    }
    return n;
}

int pp__answers_peak(const pp_schedule_def *def, int P, int M, int v, int r) {
    const char *val = lookup("peak", def, P, M, v, r);
    return val ? atoi(val) : -1;
}

double pp__answers_bubble(const pp_schedule_def *def, int P, int M, int v) {
    const char *val = lookup("bubble", def, P, M, v, -1);
    return val && strcmp(val, "none") ? strtod(val, NULL) : -1;
}

int pp__answers_messages(const pp_schedule_def *def, int P, int M, int v) {
    const char *val = lookup("messages", def, P, M, v, -1);
    return val ? atoi(val) : -1;
}

int pp__answers_place(const char *order, int T, int D, int P, int w) {
    char key[64];
    snprintf(key, sizeof key, "place %s %d %d %d", order ? order : "", T, D, P);
    const char *val = pp__answers_record(key);
    if (!val || w < 0 || w >= T * D * P) return -1;
    char *end;
    long slot = -1;
    for (int i = 0; i <= w; i++, val = end) {
        slot = strtol(val, &end, 10);
        if (end == val) return -1;
    }
    return (int)slot;
}

/* A handout has no block of its own: writing it is lab 08's tpblock. */
const pp_block_recipe *pp__answers_tp_block(void) { return NULL; }

static int by_shape(const void *a, const void *b) {
    const int *x = a, *y = b;
    return x[0] != y[0] ? x[0] - y[0] : x[1] != y[1] ? x[1] - y[1] : x[2] - y[2];
}

const char *pp__answers_held_list(const pp_schedule_def *def, char *buf, size_t len) {
    pthread_once(&loaded, load);
    char prefix[64];
    size_t plen = (size_t)snprintf(prefix, sizeof prefix, "messages %s ", def ? def->name : ""), n = 0, used = 0;
    int (*shape)[3] = calloc(nentries + 1, sizeof *shape);
    for (size_t i = 0; def && shape && i < nentries; i++)
        if (!strncmp(entries[i].key, prefix, plen) &&
            sscanf(entries[i].key + plen, "%d %d %d", &shape[n][0], &shape[n][1], &shape[n][2]) == 3)
            n++;
    if (n) qsort(shape, n, sizeof *shape, by_shape);
    buf[0] = 0;
    for (size_t i = 0; i < n && used < len; i++) {
        int w = def->chunked ? snprintf(buf + used, len - used, "%sP=%d M=%d v=%d", i ? ", " : "", shape[i][0],
                                        shape[i][1], shape[i][2])
                             : snprintf(buf + used, len - used, "%sP=%d M=%d", i ? ", " : "", shape[i][0], shape[i][1]);
        if (w < 0) break;
        used += (size_t)w;
    }
    free(shape);
    if (!buf[0]) snprintf(buf, len, "none");
    return buf;
}
