/* config.c: run configuration defaults and validation, with one-line reasons a user can act on. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "schedules.h"

void pp__config_defaults(pp_run_config *c) {
    memset(c, 0, sizeof *c);
    c->schedule = "gpipe";
    c->P = 2;
    c->M = 4;
    c->v = 1;
    c->layers = 0; /* 0: one block per virtual stage */
    c->mb_size = 4;
    c->seq = 16;
    c->hidden = 64;
    c->vocab = 64;
    c->steps = 1;
    c->seed = 1234;
    c->backend = "cpu";
    c->transport = "threads";
    c->optimizer = PP_OPT_SGD;
    c->lr = 0.1f;
    c->weight_decay = 0.0f;
    c->deadline_s = 10.0;
}

void pp__config_model_dims(const pp_run_config *c, pp_model_dims *d) {
    d->vocab = c->vocab;
    d->hidden = c->hidden;
    d->ffn = 4 * c->hidden;
    d->seq = c->seq;
    d->layers = c->layers ? c->layers : c->P * c->v;
    d->seed = c->seed;
}

int pp__config_blocks_per_vstage(const pp_run_config *c) {
    int layers = c->layers ? c->layers : c->P * c->v;
    return layers / (c->P * c->v);
}

double pp__config_forward_cost(const pp_run_config *c, int vstage) {
    int S = c->P * c->v;
    return pp__config_blocks_per_vstage(c) + c->edge_cost * ((vstage == 0) + (vstage == S - 1));
}

double pp__config_backward_cost(const pp_run_config *c, int vstage, int halves, int rebuilt) {
    double f = pp__config_forward_cost(c, vstage);
    return halves * f + (rebuilt ? f : 0);
}

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -1)

int pp__config_check(const pp_run_config *c, char *err, size_t errlen) {
    const pp_schedule_def *def = pp__schedule_def(c->schedule);
    char names[256];
    if (!def)
        return BAD("unknown schedule '%s': use %s", c->schedule ? c->schedule : "(none)",
                   pp__schedule_names(names, sizeof names, ", ", " or "));
    if (c->P < 1 || c->P > 64) return BAD("--stages %d is out of range: use 1..64", c->P);
    if (c->M < 1 || c->M > 1024) return BAD("--microbatches %d is out of range: use 1..1024", c->M);
    if (c->v < 1 || c->v > 16) return BAD("--chunks %d is out of range: use 1..16", c->v);
    if (c->v > 1 && !def->chunked)
        return BAD("--chunks %d needs --schedule %s (the %s schedule has one chunk per rank)", c->v,
                   pp__schedule_names_chunked(names, sizeof names, ", ", " or "), c->schedule);
    if (def->one_microbatch && c->M != 1)
        return BAD("the %s schedule runs the whole batch at once: use --microbatches 1 (got %d)", def->title, c->M);
    if (def->microbatches_per_rank && c->M % c->P)
        return BAD("%s needs the micro-batch count to be a multiple of the stage count: %d %% %d = %d", def->title,
                   c->M, c->P, c->M % c->P);
    if (def->weight_halves && c->recompute)
        return BAD("--recompute is not offered with %s: its deferred weight halves keep each rebuilt stash whole "
                   "until they run, which the recomputation memory bound does not cover; drop --recompute",
                   def->title);
    if (def->weight_halves && c->recompute)
        return BAD("--recompute is not offered with %s: its deferred weight halves keep each rebuilt stash whole "
                   "until they run, which the recomputation memory bound does not cover; drop --recompute",
                   def->title);
    int layers = c->layers ? c->layers : c->P * c->v;
    if (c->layers < 0 || layers % (c->P * c->v))
        return BAD("--layers %d must be a positive multiple of stages x chunks = %d so every virtual stage gets "
                   "the same number of blocks", c->layers, c->P * c->v);
    if (c->mb_size < 1 || c->mb_size > 4096) return BAD("--microbatch-size %d is out of range: use 1..4096", c->mb_size);
    if (c->seq < 1 || c->hidden < 1 || c->vocab < 2)
        return BAD("model shape seq=%d hidden=%d vocab=%d is invalid: use seq >= 1, hidden >= 1, vocab >= 2", c->seq,
                   c->hidden, c->vocab);
    /* element counts are ints in the kernels: the widest tensors are the FFN activations and the logits */
    long long rows = (long long)c->mb_size * c->seq, widest = 4LL * c->hidden > c->vocab ? 4LL * c->hidden : c->vocab;
    if (rows * widest > 2147483647LL || (long long)c->vocab * c->hidden > 2147483647LL)
        return BAD("a tensor of this model would exceed 2^31 elements (micro-batch %lld tokens x %lld): lower "
                   "--microbatch-size, --seq, --hidden or --vocab", rows, widest);
    if (c->steps < 1 || c->steps > 100000) return BAD("--steps %d is out of range: use 1..100000", c->steps);
    if (c->comm_latency < 0) return BAD("--comm-latency %g must be >= 0", c->comm_latency);
    if (c->edge_cost < 0) return BAD("--edge-cost %g must be >= 0", c->edge_cost);
    return 0;
}
