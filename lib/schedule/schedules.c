/* schedules.c: the rows of the schedule table: each schedule's name, lab and rules. Its canonical order, peaks
 * and bubble are answers (answers.h), which only the kit computes. */
#include "schedules.h"

#include <stdio.h>
#include <string.h>

const pp_schedule_def pp__schedules[] = {
    {.name = "naive", .title = "naive", .folder = "01-naive", .file = "naive", .symbol = "pp_naive_step",
     .one_microbatch = 1, .free_phases = 1},
    {.name = "gpipe", .title = "GPipe", .folder = "02-gpipe", .file = "gpipe", .symbol = "pp_gpipe_step",
     .free_phases = 1},
    {.name = "1f1b", .title = "1F1B", .folder = "03-1f1b", .file = "onef1b", .symbol = "pp_1f1b_step",
     .peak_hint = "run only the warm-up forwards it takes for the first gradient to come back, and free each stash "
                  "right after its backward"},
    {.name = "interleaved", .title = "interleaved 1F1B", .folder = "04-interleaved", .file = "interleaved",
     .symbol = "pp_interleaved_step", .chunked = 1, .microbatches_rounds = 1,
     .peak_hint = "run only the warm-up chunk-forwards the depth-first order needs before its first chunk-backward, "
                  "and free each stash right after its backward"},
    {.name = "loopedbfs", .title = "looped BFS", .folder = "04-interleaved", .file = "loopedbfs",
     .symbol = "pp_loopedbfs_step", .chunked = 1},
    {.name = "zbh1", .title = "ZB-H1", .folder = "05-zerobubble", .file = "zbh1", .symbol = "pp_zbh1_step",
     .weight_halves = 1,
     .peak_hint = "hold a weight half back only while it fills time the rank would otherwise wait, keep the warm-up "
                  "no longer than the first gradient needs, and free each stash right after its weight half"},
    {.name = "zbh2", .title = "ZB-H2", .folder = "05-zerobubble", .file = "zbh2", .symbol = "pp_zbh2_step",
     .weight_halves = 1,
     .peak_hint = "run no more warm-up forwards than hiding the messages needs, hold a weight half back only while "
                  "it fills a wait, and free each stash right after its weight half"},
    {.name = "zbinterleaved", .title = "interleaved zero bubble", .folder = "05-zerobubble", .file = "zbinterleaved",
     .symbol = "pp_zbinterleaved_step", .chunked = 1, .microbatches_rounds = 1, .weight_halves = 1},
    {.name = "zbv", .title = "ZBV", .folder = "06-vshape", .file = "zbv", .symbol = "pp_zbv_step", .chunked = 1,
     .weight_halves = 1, .vshape = 1,
     .peak_hint = "free each stash right after its weight half, and compare your warm-up with the canonical "
                  "timeline (pplab run --canonical ... --timeline)"},
    {.name = "dualpipev", .title = "DualPipeV", .folder = "06-vshape", .file = "dualpipev",
     .symbol = "pp_dualpipev_step", .chunked = 1, .weight_halves = 1, .vshape = 1, .microbatches_2v = 1,
     .peak_hint = "free each stash right after its last backward op, and compare your warm-up with the canonical "
                  "timeline (pplab run --canonical ... --timeline)"},
    {.name = "dualpipe", .title = "DualPipe", .folder = "06-vshape", .file = "dualpipe", .symbol = "pp_dualpipe_step",
     .chunked = 1, .weight_halves = 1, .vshape = 1, .dual = 1,
     .peak_hint = "free each stash right after its last backward op, and compare your warm-up with the canonical "
                  "timeline (pplab run --canonical ... --timeline)"},
    {.name = "dp1f1b", .title = "1F1B x data parallel", .folder = "07-hybrid", .file = "dp1f1b",
     .symbol = "pp_dp1f1b_step", .reduce = PP_REDUCE_AT_END,
     .peak_hint = "keep lab 03's warm-up: only as many forwards as the first gradient needs, and free each stash "
                  "right after its backward"},
    {.name = "dpinterleaved", .title = "interleaved 1F1B x data parallel", .folder = "07-hybrid",
     .file = "dpinterleaved", .symbol = "pp_dpinterleaved_step", .chunked = 1, .microbatches_per_rank = 1,
     .reduce = PP_REDUCE_OVERLAP,
     .peak_hint = "keep lab 04's warm-up, and free each stash right after its backward"},
    {.name = "tpblock", .title = "1F1B with tensor-parallel blocks", .folder = "08-tensor", .file = "tpblock",
     .symbol = "pp_tpblock_step", .own_blocks = 1,
     .peak_hint = "keep lab 03's warm-up: only as many forwards as the first gradient needs, and free each stash "
                  "right after its backward"},
    {.name = "tpgrid", .title = "1F1B on a TP x PP x DP grid", .folder = "08-tensor", .file = "tpgrid",
     .symbol = "pp_tpgrid_step", .own_blocks = 1, .grid = 1, .reduce = PP_REDUCE_AT_END,
     .peak_hint = "keep lab 03's warm-up: only as many forwards as the first gradient needs, and free each stash "
                  "right after its backward"},
};
const int pp__nschedules = (int)(sizeof pp__schedules / sizeof pp__schedules[0]);

int pp__schedule_rounds(int P, int M) { return M / P > 1 ? M / P : 1; }

const pp_schedule_def *pp__schedule_def(const char *name) {
    for (int i = 0; name && i < pp__nschedules; i++)
        if (!strcmp(name, pp__schedules[i].name)) return &pp__schedules[i];
    return NULL;
}

/* A chunked row at v = 1 is its unchunked schedule (interleaved at v = 1 is 1F1B): two, the least that is not. */
int pp__schedule_default_chunks(const pp_schedule_def *d) { return d && d->chunked ? 2 : 1; }

/* The names of the rows that `keep` accepts (all when NULL), joined with sep, and last before the final one. */
static const char *names_of(char *buf, size_t len, const char *sep, const char *last,
                            int (*keep)(const pp_schedule_def *)) {
    int total = 0, k = 0;
    for (int i = 0; i < pp__nschedules; i++) total += !keep || keep(&pp__schedules[i]);
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < pp__nschedules && used < len; i++) {
        if (keep && !keep(&pp__schedules[i])) continue;
        const char *join = k == 0 ? "" : k == total - 1 ? last : sep;
        int w = snprintf(buf + used, len - used, "%s%s", join, pp__schedules[i].name);
        if (w < 0) break;
        used += (size_t)w;
        k++;
    }
    return buf;
}

const char *pp__schedule_names(char *buf, size_t len, const char *sep, const char *last) {
    return names_of(buf, len, sep, last, NULL);
}

static int is_chunked(const pp_schedule_def *d) { return d->chunked; }

const char *pp__schedule_names_chunked(char *buf, size_t len, const char *sep, const char *last) {
    return names_of(buf, len, sep, last, is_chunked);
}
