/* test_answers.c: the answers a student handout grades with are the kit's own. lib/schedule/answers.rec is what
 * tests/record_answers.c writes from the generators now, byte for byte; and read back by the handout's reader
 * (lib/schedule/answers_recorded.c, compiled in here under other names), every recorded answer is the one the
 * kit's generators give: each order op by op, peak, bubble, message count, placement and warm-up key. What the
 * record does not hold, the reader does not answer. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers.h"
#include "replay.h"
#include "testutil.h"
#include "warmup_keys.h"

/* The handout's reader, beside the kit's generators in one binary: its functions under names of their own. */
#define pp__answers_source rec_source
#define pp__answers_held rec_held
#define pp__answers_order rec_order
#define pp__answers_peak rec_peak
#define pp__answers_bubble rec_bubble
#define pp__answers_messages rec_messages
#define pp__answers_place rec_place
#define pp__answers_tp_block rec_tp_block
#define pp__answers_record rec_record
#define pp__answers_held_list rec_held_list
#include "../lib/schedule/answers_recorded.c"
#undef pp__answers_source
#undef pp__answers_held
#undef pp__answers_order
#undef pp__answers_peak
#undef pp__answers_bubble
#undef pp__answers_messages
#undef pp__answers_place
#undef pp__answers_tp_block
#undef pp__answers_record
#undef pp__answers_held_list

static char *slurp(const char *cmd, size_t *len) {
    FILE *p = popen(cmd, "r");
    cr_assert(p, "%s", cmd);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    for (size_t k; (k = fread(buf + n, 1, cap - n - 1, p)) > 0;) {
        n += k;
        if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    buf[n] = 0;
    cr_assert_eq(pclose(p), 0, "%s failed", cmd);
    *len = n;
    return buf;
}

Test(answers, the_record_is_what_the_generators_answer_now, .timeout = 120) {
    char build[PATH_MAX], cmd[PATH_MAX + 128];
    test_build_dir(build, sizeof build);
    snprintf(cmd, sizeof cmd, "bash scripts/doccheck.sh --list | '%s/tests/record_answers'", build);
    size_t nnow, nrec;
    char *now = slurp(cmd, &nnow), *rec = slurp("cat lib/schedule/answers.rec", &nrec);
    size_t i = 0, line = 1, start = 0;
    while (i < nnow && i < nrec && now[i] == rec[i]) {
        if (now[i] == '\n') line++, start = i + 1;
        i++;
    }
    cr_expect(i == nnow && i == nrec, "lib/schedule/answers.rec is out of date with the generators: run make answers "
              "(line %zu differs: the generators now say \"%.160s\")", line, now + start);
    free(now);
    free(rec);
}

/* Every schedule answer of the record, read back by the handout's reader, against the generators. */
Test(answers, every_recorded_schedule_answer_is_the_generators) {
    rec_record(""); /* loads the record */
    cr_expect_str_eq(rec_source(), "recorded");
    cr_expect_str_eq(pp__answers_source(), "generated");
    int configs = 0, places = 0;
    static pp_sched_op want[3 * 1024 * 16], got[3 * 1024 * 16];
    for (size_t e = 0; e < nentries; e++) {
        char name[32], order[8];
        int P, M, v, T, D;
        if (sscanf(entries[e].key, "messages %31s %d %d %d", name, &P, &M, &v) == 4) {
            const pp_schedule_def *d = pp__schedule_def(name);
            cr_assert(d, "the record names no row: %s", entries[e].key);
            configs++;
            cr_expect(rec_held(d, P, M, v) && pp__answers_held(d, P, M, v), "%s", entries[e].key);
            cr_expect_eq(rec_messages(d, P, M, v), pp__answers_messages(d, P, M, v), "%s", entries[e].key);
            cr_expect_eq(rec_bubble(d, P, M, v), pp__answers_bubble(d, P, M, v), "bubble %s P=%d M=%d v=%d", name, P,
                         M, v);
            for (int r = 0; r < P; r++) {
                cr_expect_eq(rec_peak(d, P, M, v, r), pp__answers_peak(d, P, M, v, r), "peak %s P=%d M=%d v=%d rank "
                             "%d", name, P, M, v, r);
                int n = pp__answers_order(d, P, M, v, r, want), m = rec_order(d, P, M, v, r, got);
                cr_expect_eq(m, n, "order %s P=%d M=%d v=%d rank %d: %d ops recorded, %d generated", name, P, M, v, r,
                             m, n);
                for (int k = 0; k < n && k < m; k++)
                    cr_expect(got[k].kind == want[k].kind && got[k].mb == want[k].mb && got[k].chunk == want[k].chunk &&
                                  got[k].cost == 0 && got[k].split == 0,
                              "order %s P=%d M=%d v=%d rank %d op %d: recorded %c%d.%d, generated %c%d.%d", name, P, M,
                              v, r, k, got[k].kind, got[k].mb, got[k].chunk, want[k].kind, want[k].mb, want[k].chunk);
            }
        } else if (sscanf(entries[e].key, "place %7s %d %d %d", order, &T, &D, &P) == 4) {
            places++;
            for (int w = 0; w < T * D * P; w++)
                cr_expect_eq(rec_place(order, T, D, P, w), pp__answers_place(order, T, D, P, w), "%s rank %d",
                             entries[e].key, w);
            cr_expect_eq(rec_place(order, T, D, P, T * D * P), -1, "%s: a rank past the grid", entries[e].key);
        }
    }
    cr_expect_gt(configs, 100, "the record holds %d configurations", configs);
    cr_expect_gt(places, 0, "the record holds no placement");
    /* what it does not record, it does not answer */
    const pp_schedule_def *gpipe = pp__schedule_def("gpipe");
    cr_expect(!rec_held(gpipe, 7, 13, 1) && rec_order(gpipe, 7, 13, 1, 0, got) == -1 && rec_peak(gpipe, 7, 13, 1, 0) == -1 &&
              rec_bubble(gpipe, 7, 13, 1) == -1 && rec_messages(gpipe, 7, 13, 1) == -1);
    cr_expect_eq(rec_place("tdp", 3, 3, 3, 0), -1);
    cr_expect_null(rec_tp_block(), "a handout has a tensor-parallel block of its own");
    cr_expect_not_null(pp__answers_tp_block());
    char list[4096];
    rec_held_list(gpipe, list, sizeof list);
    cr_expect(strstr(list, "P=4 M=6") && !strstr(list, "P=7 M=13"), "%s", list);
}

/* Every warm-up key of the record is the one the kit computes for its case. */
Test(answers, every_recorded_warmup_key_is_the_kits) {
    rec_record("");
    int keys = 0;
    for (size_t e = 0; e < nentries; e++) {
        if (strncmp(entries[e].key, "warmup ", 7)) continue;
        static char val[16384];
        keys++;
        cr_assert_eq(pp__warmup_key(entries[e].key + 7, val, sizeof val), 0, "the kit has no key for %s",
                     entries[e].key);
        cr_expect_str_eq(entries[e].value, val, "%s", entries[e].key);
    }
    cr_expect_gt(keys, 100, "the record holds %d warm-up keys", keys);
}
