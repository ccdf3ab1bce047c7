/* answers_generated.c: answers.h as the kit answers it, computing every answer: the schedules' from canonical.c's
 * generators, the messages and placements from the rules of placement.h, and the library's own tensor-parallel
 * block. A student handout has no copy of this file; it builds answers_recorded.c instead. */
#include "answers.h"

#include <stdio.h>
#include <string.h>

#include "canonical.h"
#include "placement.h"

const char *pp__answers_source(void) { return "generated"; }

static const pp_canonical *generators(const pp_schedule_def *def) { return def ? pp__canonical(def->name) : NULL; }

int pp__answers_held(const pp_schedule_def *def, int P, int M, int v) { return generators(def) != NULL; }

int pp__answers_order(const pp_schedule_def *def, int P, int M, int v, int r, pp_sched_op *ops) {
    const pp_canonical *g = generators(def);
    return g ? g->order(P, M, v, r, ops) : -1;
}

int pp__answers_peak(const pp_schedule_def *def, int P, int M, int v, int r) {
    const pp_canonical *g = generators(def);
    return g ? g->peak(P, M, v, r) : -1;
}

double pp__answers_bubble(const pp_schedule_def *def, int P, int M, int v) {
    const pp_canonical *g = generators(def);
    return g && g->bubble ? g->bubble(P, M, v) : -1;
}

/* A micro-batch crosses the boundaries of its own path: every one of them, or one pipeline's of DualPipe's two. */
int pp__answers_messages(const pp_schedule_def *def, int P, int M, int v) {
    if (!generators(def)) return -1;
    int S = P * v, n = 0;
    for (int s = 0; s < S; s++) {
        int next = pp__place_next(P, v, def->dual, s);
        n += next >= 0 && pp__place_rank(P, def->vshape, s) != pp__place_rank(P, def->vshape, next);
    }
    return 2 * (def->dual ? M / 2 : M) * n;
}

/* A mixed-radix number: the axes of `order` are its digits, the first the fastest. */
int pp__answers_place(const char *order, int T, int D, int P, int w) {
    if (!order || strlen(order) != 3 || T < 1 || D < 1 || P < 1 || w < 0 || w >= T * D * P) return -1;
    int coord[3] = {w / (D * P), w / P % D, w % P}, size[3] = {T, D, P}, seen = 0, pos = 0, stride = 1;
    for (const char *a = order; *a; a++) {
        int k = *a == 't' ? 0 : *a == 'd' ? 1 : *a == 'p' ? 2 : -1;
        if (k < 0 || seen & 1 << k) return -1;
        seen |= 1 << k;
        pos += coord[k] * stride, stride *= size[k];
    }
    return pos;
}

/* Megatron-LM's split (Shoeybi et al., 2019), the same for attention and the MLP: the last linear's row shards make
 * partial products, summed before the residual and the bias are added once; in the backward, the first linear's
 * column shards each give a part of LayerNorm's output gradient, summed before LayerNorm's backward reads it. So a
 * block sums twice each way, and attention's heads never meet another shard's. */
static const pp_block_recipe megatron = {
    .nfwd = 7,
    .fwd = {PP_BLOCK_LN, PP_BLOCK_IN, PP_BLOCK_ACT, PP_BLOCK_OUT, PP_BLOCK_SUM, PP_BLOCK_RESIDUAL, PP_BLOCK_BIAS},
    .nbwd = 6,
    .bwd = {PP_BLOCK_OUT, PP_BLOCK_ACT, PP_BLOCK_IN, PP_BLOCK_SUM, PP_BLOCK_LN, PP_BLOCK_RESIDUAL},
};

const pp_block_recipe *pp__answers_tp_block(void) { return &megatron; }

const char *pp__answers_record(const char *key) { return NULL; }

const char *pp__answers_held_list(const pp_schedule_def *def, char *buf, size_t len) {
    snprintf(buf, len, "every configuration its rules admit");
    return buf;
}
