/* config.c: run configuration defaults and validation, with one-line reasons a user can act on. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "answers.h"
#include "data.h"
#include "error.h"
#include "placement.h"
#include "schedules.h"
#include "caps.h"

void pp__config_defaults(pp_run_config *c) {
    memset(c, 0, sizeof *c);
    c->schedule = pp__schedule_def("gpipe");
    c->P = 2;
    c->M = 4;
    c->v = 1;
    c->T = 1;
    c->D = 1;
    c->reduce_alpha = PP_REDUCE_ALPHA_DEFAULT;
    c->reduce_beta = PP_REDUCE_BETA_DEFAULT;
    c->tp_alpha = PP_TP_ALPHA_DEFAULT;
    c->tp_beta = PP_TP_BETA_DEFAULT;
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
    d->heads = pp__config_heads(c);
    d->seq = c->seq;
    d->layers = pp__config_layers(c);
    d->seed = c->seed;
}

int pp__config_heads(const pp_run_config *c) {
    int T = c->T > 1 ? c->T : 1;
    if (c->heads) return c->heads;
    for (int k = T; k <= c->hidden; k += T) /* four heads as GPT-2's small sizes have at least, when they fit */
        if (k >= 4 && c->hidden % k == 0) return k;
    for (int k = (c->hidden / T) * T; k >= T; k -= T)
        if (c->hidden % k == 0) return k;
    return 0;
}

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -1)

/* A count in a layout: digits only, 1 or more. */
static int layout_count(const char *s, const char **end) {
    long v = 0;
    const char *p = s;
    while (*p >= '0' && *p <= '9' && v < 100000) v = v * 10 + (*p++ - '0');
    *end = p;
    return p == s ? -1 : (int)v;
}

int pp__config_layout(const pp_run_config *c, int *blocks, char *err, size_t errlen) {
    int S = pp__config_model_stages(c), named = 0, placed = 0;
    for (int s = 0; s < S; s++) blocks[s] = -1;
    const char *l = c->layout && *c->layout ? c->layout : NULL;
    if (l && strlen(l) >= PP_LAYOUT_MAX) return BAD("--layout is longer than %d characters: name the first and last "
                                                   "stages (first:K,last:K) and let --layers fill the others",
                                                   PP_LAYOUT_MAX - 1);
    if (l && (!strncmp(l, "first:", 6) || !strncmp(l, "last:", 5))) {
        for (const char *p = l; *p;) {
            int first = !strncmp(p, "first:", 6), at = first ? 0 : S - 1;
            if (!first && strncmp(p, "last:", 5))
                return BAD("--layout %s: expected first:K or last:K at '%s' (K = blocks on that virtual stage)", l, p);
            const char *end;
            int k = layout_count(p + (first ? 6 : 5), &end);
            if (k < 1) return BAD("--layout %s: the %s stage needs a count of 1 or more blocks", l, first ? "first" : "last");
            if (blocks[at] >= 0)
                return BAD("--layout %s: the %s virtual stage is named twice%s", l, first ? "first" : "last",
                           S == 1 ? " (with one virtual stage, first and last are the same)" : "");
            blocks[at] = k, placed += k, named++;
            if (*end == ',') end++;
            else if (*end) return BAD("--layout %s: unexpected '%s' (separate the parts with a comma)", l, end);
            p = end;
        }
    } else if (l) {
        int n = 0;
        for (const char *p = l;; n++) {
            const char *end;
            int k = layout_count(p, &end);
            if (k < 1) return BAD("--layout %s: expected a block count of 1 or more at '%s' (first:K,last:K, or one "
                                  "count per virtual stage, comma-separated)", l, p);
            if (n < S) blocks[n] = k;
            placed += k;
            if (*end == 0) {
                n++;
                break;
            }
            if (*end != ',') return BAD("--layout %s: unexpected '%s' (separate the counts with a comma)", l, end);
            p = end + 1;
        }
        if (n != S) return BAD("--layout %s names %d virtual stages; this run has %d (%s): give one count per "
                               "virtual stage", l, n, S, pp__config_dual(c) ? "one per stage: both pipelines hold "
                               "the same model" : "stages x chunks");
        named = S;
    }
    int L = c->layers ? c->layers : named == S ? placed : S - named + placed, rest = L - placed, free_ = S - named;
    if (named == S && L != placed)
        return BAD("--layout %s places %d blocks but --layers is %d: make them agree, or drop --layers", l, placed, L);
    if (!l && L < S)
        return BAD("--layers %d is fewer than the %d virtual stages (stages x chunks): each needs a block", L, S);
    if (rest < 0)
        return BAD("--layout %s places %d blocks, more than the %d of --layers: raise --layers or lower the counts", l,
                   placed, L);
    if (free_ > 0 && rest < free_)
        return BAD("--layout %s with %d layers leaves %d block%s for the %d other virtual stage%s, each of which needs "
                   "one: raise --layers to at least %d", l, L, rest, rest == 1 ? "" : "s", free_,
                   free_ == 1 ? "" : "s", placed + free_);
    for (int s = 0, k = 0; s < S; s++)
        if (blocks[s] < 0) blocks[s] = rest / free_ + (k++ < rest % free_);
    return 0;
}

/* The layout of a configuration that passed the check (a fixed buffer: S <= 64 * 16). */
static const int *layout_of(const pp_run_config *c, int *buf) {
    char err[8];
    if (pp__config_layout(c, buf, err, sizeof err))
        for (int s = 0; s < pp__config_model_stages(c); s++) buf[s] = 1;
    return buf;
}

int pp__config_blocks(const pp_run_config *c, int vstage) {
    int buf[64 * 16];
    return layout_of(c, buf)[pp__config_stage(c, vstage)];
}

int pp__config_first_block(const pp_run_config *c, int vstage) {
    int buf[64 * 16], first = 0;
    const int *b = layout_of(c, buf);
    for (int s = 0; s < pp__config_stage(c, vstage); s++) first += b[s];
    return first;
}

int pp__config_layers(const pp_run_config *c) {
    int buf[64 * 16], layers = 0;
    const int *b = layout_of(c, buf);
    for (int s = 0; s < pp__config_model_stages(c); s++) layers += b[s];
    return layers;
}

int pp__config_even(const pp_run_config *c) {
    int buf[64 * 16];
    const int *b = layout_of(c, buf);
    for (int s = 1; s < pp__config_model_stages(c); s++)
        if (b[s] != b[0]) return 0;
    return 1;
}

int pp__config_vshape(const pp_run_config *c) {
    const pp_schedule_def *d = c->schedule;
    return d && d->vshape;
}

int pp__config_dual(const pp_run_config *c) {
    const pp_schedule_def *d = c->schedule;
    return d && d->dual;
}

int pp__config_model_stages(const pp_run_config *c) { return pp__config_dual(c) ? c->P : c->P * c->v; }

int pp__config_stage(const pp_run_config *c, int vs) { return pp__place_stage(c->P, pp__config_dual(c), vs); }

int pp__config_prev(const pp_run_config *c, int vs) { return pp__place_prev(c->P, pp__config_dual(c), vs); }

int pp__config_next(const pp_run_config *c, int vs) { return pp__place_next(c->P, c->v, pp__config_dual(c), vs); }

int pp__config_carries(const pp_run_config *c, int vs, int mb) {
    return pp__place_carries(c->P, c->M, pp__config_dual(c), vs, mb);
}

int pp__config_vstage(const pp_run_config *c, int rank, int chunk) {
    return pp__place_vstage(c->P, pp__config_vshape(c), rank, chunk);
}

int pp__config_vstage_rank(const pp_run_config *c, int vs) { return pp__place_rank(c->P, pp__config_vshape(c), vs); }

int pp__config_vstage_chunk(const pp_run_config *c, int vs) { return pp__place_chunk(c->P, pp__config_vshape(c), vs); }

/* ---- topology ---- */

const char *pp__config_placement(const pp_run_config *c) {
    return c->placement && *c->placement ? c->placement : "tdp";
}

/* The slot of world rank `rank`: the grid lab's submission says it, else the placement's rule (an answer:
 * pp__config_check refuses a topology whose placement this build does not hold). */
int pp__config_node(const pp_run_config *c, int rank) {
    if (c->node_size <= 0) return 0;
    if (c->place) return c->place[rank] / c->node_size;
    int slot = pp__answers_place(pp__config_placement(c), c->T > 1 ? c->T : 1, c->D, c->P, rank);
    PP_ASSERT(slot >= 0);
    return slot / c->node_size;
}

/* The link between world ranks a and b: 1 between nodes, 0 inside one. */
static int crosses(const pp_run_config *c, int a, int b) { return pp__config_node(c, a) != pp__config_node(c, b); }

double pp__config_message_cost(const pp_run_config *c, int a, int b, double bytes) {
    if (a == b) return 0;
    if (c->node_size <= 0) return c->comm_latency;
    return crosses(c, a, b) ? c->reduce_alpha + bytes * c->reduce_beta : c->tp_alpha + bytes * c->tp_beta;
}

/* A ring all-reduce over n members: 2(n-1) steps of alpha, and 2(n-1)/n of the bytes at beta. */
static double ring(double alpha, double beta, int n, double bytes) {
    return n <= 1 ? 0 : 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes * beta;
}

/* 1 when a ring through members[0..n) crosses nodes. */
static int ring_crosses(const pp_run_config *c, const int *members, int n) {
    int across = 0;
    for (int i = 0; i < n && !across; i++) across = crosses(c, members[i], members[(i + 1) % n]);
    return across;
}

double pp__config_ring_cost(const pp_run_config *c, const int *members, int n, double bytes) {
    int across = c->node_size <= 0 || ring_crosses(c, members, n);
    return ring(across ? c->reduce_alpha : c->tp_alpha, across ? c->reduce_beta : c->tp_beta, n, bytes);
}

/* The world ranks of rank's stage shards, in shard order (T of them, at most 8). */
static int shards_of(const pp_run_config *c, int rank, int *out) {
    int T = c->T > 1 ? c->T : 1;
    for (int t = 0; t < T && t < 8; t++)
        out[t] = pp__config_rank_of(c, t, pp__config_rank_replica(c, rank), pp__config_rank_pipe(c, rank));
    return T;
}

double pp__config_tp_sum_cost_bytes(const pp_run_config *c, int rank, double bytes) {
    if (c->T <= 1) return 0;
    if (c->node_size <= 0) return ring(c->tp_alpha, c->tp_beta, c->T, bytes);
    int shards[8], T = shards_of(c, rank, shards);
    return pp__config_ring_cost(c, shards, T, bytes);
}

double pp__config_tp_sum_cost_of(const pp_run_config *c, int rank) {
    return pp__config_tp_sum_cost_bytes(c, rank, (double)c->mb_size * c->seq * c->hidden * sizeof(float));
}

double pp__config_tp_sum_cost(const pp_run_config *c) { return pp__config_tp_sum_cost_of(c, 0); }

double pp__config_tp_sums_cost_of(const pp_run_config *c, int rank, int vstage) {
    return PP_TP_SUMS_PER_BLOCK * pp__config_blocks(c, vstage) * pp__config_tp_sum_cost_of(c, rank);
}

int pp__config_tp_crosses(const pp_run_config *c, int rank) {
    int shards[8], T = shards_of(c, rank, shards);
    return c->node_size > 0 && T > 1 && ring_crosses(c, shards, T);
}

double pp__config_compute_cost(const pp_run_config *c, int vstage) {
    return pp__config_blocks(c, vstage) +
           c->edge_cost * ((pp__config_prev(c, vstage) < 0) + (pp__config_next(c, vstage) < 0));
}

double pp__config_forward_cost_of(const pp_run_config *c, int rank, int vstage) {
    return pp__config_compute_cost(c, vstage) + pp__config_tp_sums_cost_of(c, rank, vstage);
}

double pp__config_backward_cost_of(const pp_run_config *c, int rank, int vstage, pp_bwd_part part, int rebuilt) {
    double f = pp__config_compute_cost(c, vstage), sums = pp__config_tp_sums_cost_of(c, rank, vstage);
    double cost = part == PP_BWD_WHOLE ? 2 * f + sums : part == PP_BWD_INPUT ? f + sums : f;
    return cost + (rebuilt ? pp__config_forward_cost_of(c, rank, vstage) : 0);
}

/* Replica 0's stages in shard 0: the ranks a replay prices. */
double pp__config_forward_cost(const pp_run_config *c, int vstage) {
    return pp__config_forward_cost_of(c, pp__config_vstage_rank(c, vstage), vstage);
}

double pp__config_backward_cost(const pp_run_config *c, int vstage, pp_bwd_part part, int rebuilt) {
    return pp__config_backward_cost_of(c, pp__config_vstage_rank(c, vstage), vstage, part, rebuilt);
}

int pp__config_world(const pp_run_config *c) { return (c->T > 1 ? c->T : 1) * c->D * c->P; }

int pp__config_rank_of(const pp_run_config *c, int t, int d, int p) { return (t * c->D + d) * c->P + p; }

int pp__config_rank_tp(const pp_run_config *c, int rank) { return rank / (c->D * c->P); }

int pp__config_rank_replica(const pp_run_config *c, int rank) { return rank / c->P % c->D; }

int pp__config_rank_pipe(const pp_run_config *c, int rank) { return rank % c->P; }

int pp__config_reduce_members(const pp_run_config *c) { return (c->D > 1 ? c->D : 1) * (pp__config_dual(c) ? 2 : 1); }

double pp__config_reduce_cost(const pp_run_config *c, double bytes) {
    return ring(c->reduce_alpha, c->reduce_beta, pp__config_reduce_members(c), bytes);
}

double pp__config_grad_bytes(const pp_run_config *c, int vstage) {
    pp_model_dims d;
    pp__config_model_dims(c, &d);
    /* a shard reduces its own slice of the cut parameters: its heads' and its FFN columns' */
    return (double)pp__model_param_count(&d, pp__config_blocks(c, vstage), pp__config_prev(c, vstage) < 0,
                                         pp__config_next(c, vstage) < 0, c->T) * sizeof(float);
}

int pp__config_runnable(const pp_run_config *c, char *err, size_t errlen) {
    const pp_schedule_def *def = c->schedule;
    if (def && c->T > 1 && !def->own_blocks && !pp__answers_tp_block())
        return BAD("--tp %d on %s cuts each stage with the library's own tensor-parallel block, which this handout "
                   "leaves to you: run --schedule tpblock (lab 08), whose blocks are yours, or add --canonical, which "
                   "runs no block", c->T, c->schedule->name);
    return 0;
}

/* The counts of the run: stages, micro-batches, chunks, replicas and shards within their ranges. */
static int check_counts(const pp_run_config *c, char *err, size_t errlen) {
    if (c->P < 1 || c->P > 64) return BAD("--stages %d is out of range: use 1..64", c->P);
    if (c->M < 1 || c->M > 1024) return BAD("--microbatches %d is out of range: use 1..1024", c->M);
    if (c->v < 1 || c->v > 16) return BAD("--chunks %d is out of range: use 1..16", c->v);
    if (c->D < 1 || c->D > 64) return BAD("--dp %d is out of range: use 1..64", c->D);
    if (c->D * c->P > 256) return BAD("--dp %d x --stages %d = %d ranks: use at most 256", c->D, c->P, c->D * c->P);
    if (c->T < 1 || c->T > 8) return BAD("--tp %d is out of range: use 1..8 (a tensor-parallel group stays in a node)",
                                         c->T);
    if (c->T * c->D * c->P > 256)
        return BAD("--tp %d x --dp %d x --stages %d = %d ranks: use at most 256", c->T, c->D, c->P, c->T * c->D * c->P);
    return 0;
}

/* The shards and the replicas: a transport that can sum the shards (in memory with threads, by MPI's collectives
 * on a communicator per stage's shards) and reduce the replicas, a schedule that has replicas, costs >= 0. */
static int check_parallel(const pp_run_config *c, const pp_schedule_def *def, char *err, size_t errlen) {
    char names[128];
    unsigned caps = pp__transport_caps(c->transport);
    if (c->T > 1 && !(caps & PP_TRANSPORT_TP_SUMS))
        return BAD("--tp %d runs on the %s transports, not on %s", c->T,
                   pp__transport_names(PP_TRANSPORT_TP_SUMS, names, sizeof names, ", ", " and "), c->transport);
    int heads = pp__config_heads(c);
    if (c->heads && (c->heads < 1 || c->hidden % c->heads))
        return BAD("--heads %d must divide --width %d: each head takes width / heads columns", c->heads, c->hidden);
    if (heads < 1 || heads % (c->T > 1 ? c->T : 1))
        return BAD("--tp %d cuts each block's attention by whole heads: use --heads H with H a multiple of it that "
                   "divides --width %d", c->T, c->hidden);
    if (c->T > 1 && (4 * c->hidden) % c->T)
        return BAD("--tp %d cuts each block's FFN (4 x --width = %d columns) into equal shards: use a --tp that divides "
                   "it", c->T, 4 * c->hidden);
    if (c->D > 1 && def->reduce == PP_REDUCE_NONE)
        return BAD("--dp %d needs a data-parallel schedule (dp1f1b or dpinterleaved): the %s schedule is one "
                   "pipeline", c->D, def->title);
    if (c->D > 1 && !(caps & PP_TRANSPORT_DP_REDUCES))
        return BAD("--dp %d runs on the %s transports, not on %s", c->D,
                   pp__transport_names(PP_TRANSPORT_DP_REDUCES, names, sizeof names, ", ", " and "), c->transport);
    if (c->tp_alpha < 0 || c->tp_beta < 0)
        return BAD("--tp-alpha %g and --tp-beta %g must be >= 0", c->tp_alpha, c->tp_beta);
    if (c->reduce_alpha < 0 || c->reduce_beta < 0)
        return BAD("--reduce-alpha %g and --reduce-beta %g must be >= 0", c->reduce_alpha, c->reduce_beta);
    return 0;
}

/* What the schedule's row asks of chunks and micro-batches. */
static int check_shape(const pp_run_config *c, const pp_schedule_def *def, char *err, size_t errlen) {
    char names[256];
    if (c->v > 1 && !def->chunked)
        return BAD("--chunks %d needs --schedule %s (the %s schedule has one chunk per rank)", c->v,
                   pp__schedule_names_chunked(names, sizeof names, ", ", " or "), c->schedule->name);
    if (def->one_microbatch && c->M != 1)
        return BAD("the %s schedule runs the whole batch at once: use --microbatches 1 (got %d)", def->title, c->M);
    if (def->vshape && c->v != 2)
        return BAD("%s places two chunks per rank in a V: use --chunks 2 (got %d)", def->title, c->v);
    if (def->dual && (c->P % 2 || c->M % 2 || c->M < 2 * c->P))
        return BAD("%s feeds its two pipelines from both ends, half the micro-batches each, and pairs rank r with "
                   "rank P-1-r: use an even --stages and an even --microbatches of at least 2P (got P = %d, M = %d)",
                   def->title, c->P, c->M);
    if (def->microbatches_2v && c->M < 2 * c->P)
        return BAD("%s needs at least as many micro-batches as virtual stages (2P = %d): got --microbatches %d",
                   def->title, 2 * c->P, c->M);
    if (def->microbatches_per_rank && c->M % c->P)
        return BAD("%s needs the micro-batch count to be a multiple of the stage count: %d %% %d = %d", def->title,
                   c->M, c->P, c->M % c->P);
    int rounds = pp__schedule_rounds(c->P, c->M);
    if (def->microbatches_rounds && c->M % rounds)
        return BAD("%s runs the micro-batches in max(1, M div P) equal rounds: %d micro-batches make %d rounds, "
                   "which do not divide them; use a multiple of the stage count (%d) or fewer than %d micro-batches",
                   def->title, c->M, rounds, c->P, 2 * c->P);
    return 0;
}

/* What the schedule's row rules out: the grid lab off a transport that places it, or beyond 64 ranks; recomputation
 * with blocks of its own or deferred weight halves. */
static int check_schedule_options(const pp_run_config *c, const pp_schedule_def *def, char *err, size_t errlen) {
    char names[128];
    /* its placement is read from the submission before the run, and every rank runs where it says */
    if (def->grid && !(pp__transport_caps(c->transport) & PP_TRANSPORT_GRID))
        return BAD("%s runs on the %s transports, not on %s: its placement is read from the submission "
                   "before the run", def->title,
                   pp__transport_names(PP_TRANSPORT_GRID, names, sizeof names, ", ", " and "), c->transport);
    if (def->grid && pp__config_world(c) > 64)
        return BAD("%s runs at most 64 ranks: --tp %d x --stages %d x --dp %d is %d", def->title, c->T, c->P, c->D,
                   pp__config_world(c));
    if (def->own_blocks && c->recompute)
        return BAD("--recompute is not offered with %s: its blocks are the schedule's own calls, which a recomputed "
                   "forward would have to run again inside the backward; drop --recompute", def->title);
    if (def->weight_halves && c->recompute)
        return BAD("--recompute is not offered with %s: its deferred weight halves keep each rebuilt stash whole "
                   "until they run, which the recomputation memory bound does not cover; drop --recompute",
                   def->title);
    return 0;
}

/* The model: its layers' layout, its shape, and tensors whose element counts fit the kernels' ints. */
/* A corpus's tokens are its bytes: a vocabulary of 256, and a file that opens with a window in each part. */
static int check_corpus(const pp_run_config *c, char *err, size_t errlen) {
    if (!c->corpus) return 0;
    if (c->vocab != PP_CORPUS_VOCAB)
        return BAD("a corpus's tokens are its bytes: the vocabulary must be %d, not %d (drop --vocab)",
                   PP_CORPUS_VOCAB, c->vocab);
    return pp__corpus_open(c->corpus, c->seq, err, errlen) ? 0 : -1;
}

static int check_model(const pp_run_config *c, char *err, size_t errlen) {
    if (c->layers < 0) return BAD("--layers %d must be positive", c->layers);
    int blocks[64 * 16];
    if (pp__config_layout(c, blocks, err, errlen)) return -1;
    if (c->mb_size < 1 || c->mb_size > 4096) return BAD("--microbatch-size %d is out of range: use 1..4096", c->mb_size);
    if (c->seq < 1 || c->hidden < 1 || c->vocab < 2)
        return BAD("model shape --seq %d --width %d --vocab %d is invalid: use seq >= 1, width >= 1, vocab >= 2",
                   c->seq, c->hidden, c->vocab);
    /* element counts are ints in the kernels: the widest tensors are the FFN activations and the logits */
    long long rows = (long long)c->mb_size * c->seq, widest = 4LL * c->hidden > c->vocab ? 4LL * c->hidden : c->vocab;
    if (rows * widest > 2147483647LL || (long long)c->vocab * c->hidden > 2147483647LL)
        return BAD("a tensor of this model would exceed 2^31 elements (micro-batch %lld tokens x %lld): lower "
                   "--microbatch-size, --seq, --width or --vocab", rows, widest);
    /* the attention kernels index its probabilities with ints; a benchmark that never runs a forward (uncapped: the
     * ping-pong of long messages) may ask for a sequence whose attention could not run */
    long long probs = (long long)c->mb_size * pp__config_heads(c) * c->seq * c->seq;
    if (!c->uncapped && probs > 2147483647LL)
        return BAD("attention's probabilities (micro-batch x heads x seq x seq = %lld) would exceed 2^31 elements: "
                   "lower --seq, --heads or --microbatch-size", probs);
    if (c->steps < 1 || c->steps > 100000) return BAD("--steps %d is out of range: use 1..100000", c->steps);
    return check_corpus(c, err, errlen);
}

/* What prices a message: a latency, or a topology whose placement names each axis once. */
static int check_links(const pp_run_config *c, const pp_schedule_def *def, char *err, size_t errlen) {
    if (c->comm_latency < 0) return BAD("--comm-latency %g must be >= 0", c->comm_latency);
    if (c->node_size < 0 || c->node_size > 256) return BAD("--node-size %d is out of range: use 1..256", c->node_size);
    if (c->node_size > 0 && c->comm_latency > 0)
        return BAD("--comm-latency %g and --node-size %d both price a message: with a topology each one costs its "
                   "link (--tp-alpha/--tp-beta inside a node, --reduce-alpha/--reduce-beta between nodes); drop "
                   "--comm-latency", c->comm_latency, c->node_size);
    const char *order = pp__config_placement(c);
    if (strlen(order) != 3 || !strchr(order, 't') || !strchr(order, 'd') || !strchr(order, 'p'))
        return BAD("--placement %s: name the axes t (shard), d (replica) and p (stage) once each, fastest first "
                   "(tdp: a stage's shards side by side in a node, then its replicas, then the stages)", order);
    /* a grid lab's run is placed by its submission; every other topology by the placement's rule */
    if (c->node_size > 0 && !def->grid && pp__answers_place(order, c->T > 1 ? c->T : 1, c->D, c->P, 0) < 0)
        return BAD("--node-size %d places the ranks by --placement %s, whose rule this handout records for its public "
                   "grids only (--tp x --dp x --stages = %d x %d x %d is not one): drop --node-size, or run tpgrid "
                   "(lab 08), which places them by your own mapping", c->node_size, order, c->T > 1 ? c->T : 1, c->D,
                   c->P);
    if (c->edge_cost < 0) return BAD("--edge-cost %g must be >= 0", c->edge_cost);
    return 0;
}

int pp__config_schedule(pp_run_config *c, const char *name, char *err, size_t errlen) {
    char names[256];
    const pp_schedule_def *def = pp__schedule_def(name);
    if (!def)
        return BAD("unknown schedule '%s': use %s", name ? name : "(none)",
                   pp__schedule_names(names, sizeof names, ", ", " or "));
    c->schedule = def;
    return 0;
}

int pp__config_check(const pp_run_config *c, char *err, size_t errlen) {
    const pp_schedule_def *def = c->schedule;
    char names[256];
    if (!def)
        return BAD("no schedule: use %s", pp__schedule_names(names, sizeof names, ", ", " or "));
    if (check_counts(c, err, errlen) || check_parallel(c, def, err, errlen) || check_shape(c, def, err, errlen) ||
        check_schedule_options(c, def, err, errlen) || check_model(c, err, errlen) || check_links(c, def, err, errlen))
        return -1;
    return 0;
}
