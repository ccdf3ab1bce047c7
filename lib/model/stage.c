/* stage.c: pp.h's compute calls. Each checks its arguments against what the schedule can legally do, runs the
 * model through the rank's backend, charges virtual time (F = 1 per block, B = 2, or B = 1 + W = 1 when split;
 * embedding and head cost the run's edge cost), counts stash memory, and records the op in the trace. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "data.h"
#include "rank.h"
#include "reduce.h"
#include "schedules.h"
#include "text.h"

/* ---- who am I ------------------------------------------------------------------------------------------ */

int pp_rank_id(const pp_rank *r) { return r->pipe; }
int pp_rank_replica(const pp_rank *r) { return r->replica; }
int pp_rank_replicas(const pp_rank *r) { return r->cfg->D; }
int pp_rank_stages(const pp_rank *r) { return r->cfg->P; }
int pp_rank_microbatches(const pp_rank *r) { return r->cfg->M; }
int pp_rank_chunks(const pp_rank *r) { return r->cfg->v; }
int pp_rank_recompute(const pp_rank *r) { return r->cfg->recompute; }
int pp_virtual_stages(const pp_rank *r) { return r->cfg->P * r->cfg->v; }

static void check_chunk(pp_rank *r, const char *api, int chunk) {
    pp__rank_check(r);
    if (chunk < 0 || chunk >= r->cfg->v)
        pp__rank_abort(r, PP_ERR_USAGE, "chunks are numbered 0..v-1 on every rank",
                       "%s: chunk %d does not exist (v = %d)", api, chunk, r->cfg->v);
}

int pp_rank_shard(const pp_rank *r) { return r->tp; }
int pp_rank_shards(const pp_rank *r) { return r->cfg->T > 1 ? r->cfg->T : 1; }

int pp_stage_blocks(const pp_rank *r, int chunk) {
    /* a question, asked inside an open op too (the loop over its blocks): only the chunk is checked */
    if (chunk < 0 || chunk >= r->cfg->v)
        pp__rank_abort((pp_rank *)r, PP_ERR_USAGE, "chunks are numbered 0..v-1 on every rank",
                       "pp_stage_blocks: chunk %d does not exist (v = %d)", chunk, r->cfg->v);
    return r->chunks[chunk].nblocks;
}

int pp_virtual_stage(const pp_rank *r, int chunk) {
    check_chunk((pp_rank *)r, "pp_virtual_stage", chunk);
    return pp__config_vstage(r->cfg, r->pipe, chunk);
}

void pp_fail(pp_rank *r, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* the schedule's words, every line of them marked as its own: none can pass for the grader's */
    char *said = pp__text_quote(msg, sizeof msg), shown[2 * sizeof msg];
    snprintf(shown, sizeof shown, "%s", said ? said : "| (out of memory)");
    free(said);
    pp__rank_abort(r, PP_ERR_STUDENT, NULL, "the schedule stopped the run with pp_fail, saying:\n%s", shown);
}

/* ---- accounting ---------------------------------------------------------------------------------------- */

static double wall(const pp_rank *r) { return pp__now() - r->wall0; }

typedef struct op_timer {
    double wall_start;
    int handle;
} op_timer;

static op_timer op_begin(pp_rank *r) {
    op_timer t = {wall(r), -1};
    if (r->be->ops->timer_begin) t.handle = r->be->ops->timer_begin(r->be->ctx);
    return t;
}

/* Charges cost to the rank's virtual clock from `ready` on, records the event, returns its virtual end. */
static double op_end(pp_rank *r, op_timer t, pp_op_kind op, int chunk, int mb, double ready, double cost,
                     int flags, double tp) {
    if (t.handle >= 0) r->be->ops->timer_end(r->be->ctx, t.handle);
    double start = r->clock > ready ? r->clock : ready;
    pp_event e = {.rank = r->id,
                  .op = op,
                  .mb = mb,
                  .chunk = chunk,
                  .vstage = pp__config_vstage(r->cfg, r->pipe, chunk),
                  .peer = -1,
                  .tag = -1,
                  .timer = t.handle,
                  .flags = flags | (r->opt_calls > 0 ? PP_EV_AFTER_STEP : 0),
                  .wall_start = t.wall_start,
                  .wall_end = wall(r),
                  .vstart = start,
                  .vend = start + cost,
                  .tp_time = tp,
                  .tp_across = tp > 0 && pp__config_tp_crosses(r->cfg, r->id)};
    pp__trace_add(&r->trace, &e);
    r->clock = start + cost;
    return r->clock;
}


/* The virtual time of the shards' sums in an op that runs `passes` forward-like passes over vstage's blocks (a
 * forward, an input half, and once more for a rebuilt stash): two sums per block and pass, one per half. */
static double tp_sums(const pp_rank *r, int vstage, int passes) {
    return passes * pp__config_tp_sums_cost_of(r->cfg, r->id, vstage);
}

static void stash_account(pp_rank *r, pp_stash *s) {
    size_t now = s->state == PP__STASH_FREED ? 0 : pp__stash_bytes(s->ms);
    r->live_bytes = r->live_bytes - s->bytes + now;
    s->bytes = now;
    if (r->live_bytes > r->peak_bytes) r->peak_bytes = r->live_bytes;
    if (now > r->peak_single_bytes) r->peak_single_bytes = now;
    if (r->live_stashes > r->peak_stashes) r->peak_stashes = r->live_stashes;
}

static int rows(const pp_rank *r) { return r->cfg->mb_size * r->cfg->seq; }

static pp_tensor *data_tensor(pp_rank *r, const int *host) {
    pp_tensor *t = pp__tensor_new(r->be, &r->arena, rows(r), 1, PP_I32, r->id);
    pp__tensor_from_host(t, host);
    return t;
}

static void check_input(pp_rank *r, const char *api, pp_tensor *x, int cols, const char *what) {
    char b1[48];
    char why[160];
    if (pp__tensor_released_why(x, why, sizeof why))
        pp__rank_abort(r, PP_ERR_USAGE, "a received tensor serves one forward or backward, a sent one is the "
                       "receiver's; receive the tensor this op needs", "%s: %s was released %s", api, what, why);
    if (x->pending)
        pp__rank_abort(r, PP_ERR_USAGE, "call pp_wait (or pp_group_end) before using a received tensor",
                       "%s: %s comes from a receive that has not completed yet", api, what);
    if (x->owner != r->id)
        pp__rank_abort(r, PP_ERR_USAGE, "tensors move between ranks only through pp_send/pp_recv",
                       "%s: %s belongs to rank %d", api, what, x->owner);
    int want_rows = cols == 1 ? 1 : rows(r);
    if (x->rows != want_rows || x->cols != cols || x->dtype != PP_F32)
        pp__rank_abort(r, PP_ERR_SHAPE, "pass the tensor the neighbouring stage produced", "%s: %s is %s, expected %dx%d f32",
                       api, what, pp__tensor_describe(x, b1, sizeof b1), want_rows, cols);
}

/* ---- forward ------------------------------------------------------------------------------------------- */

/* The checks every forward makes (api: the call that runs it); then the data of the stage's edges, made. */
static pp_stage_model *forward_checks(pp_rank *r, const char *api, int chunk, int mb, pp_tensor *x, pp_stash **stash,
                                      pp_tensor **tokens, pp_tensor **targets) {
    check_chunk(r, api, chunk);
    const pp_run_config *c = r->cfg;
    int vs = pp__config_vstage(c, r->pipe, chunk);
    if (mb < 0 || mb >= c->M)
        pp__rank_abort(r, PP_ERR_USAGE, "micro-batches are numbered 0..M-1",
                       "%s: micro-batch %d does not exist (M = %d)", api, mb, c->M);
    if (!stash)
        pp__rank_abort(r, PP_ERR_USAGE, "pass &stash and keep it for the backward", "%s: stash is NULL", api);
    if (!pp__config_carries(c, vs, mb))
        pp__rank_abort(r, PP_ERR_USAGE, "DualPipe's chunk 0 carries micro-batches 0..M/2-1 (fed at rank 0), chunk 1 "
                       "carries M/2..M-1 (fed at rank P-1)", "%s: micro-batch %d travels the other pipeline, not "
                       "virtual stage %d (chunk %d)", api, mb, vs, chunk);
    int prev = pp__config_prev(c, vs);
    if (prev < 0 && x)
        pp__rank_abort(r, PP_ERR_USAGE, "pass x = NULL where a micro-batch enters its pipeline",
                       "%s: virtual stage %d reads its tokens itself, but an input tensor was passed", api, vs);
    if (prev >= 0 && !x) {
        int from = pp__config_vstage_rank(c, prev);
        char hint[160];
        if (from == r->pipe)
            snprintf(hint, sizeof hint, "virtual stage %d is on this rank too: pass the output of its forward "
                     "straight in, no message", prev);
        else
            snprintf(hint, sizeof hint, "receive it with pp_recv(r, %d, pp_tag(PP_FWD, %d, %d))", from, mb, vs);
        pp__rank_abort(r, PP_ERR_USAGE, hint, "%s: virtual stage %d needs the activation of micro-batch %d from "
                       "virtual stage %d (rank %d)", api, vs, mb, prev, from);
    }
    if (x) check_input(r, api, x, c->hidden, "x");
    pp__rank_charge(r, PP_CHARGE_FORWARD, api);
    pp_stage_model *m = &r->chunks[chunk];
    *tokens = *targets = NULL;
    if (m->has_embed || m->has_head) {
        int *tok = pp__xmalloc((size_t)rows(r) * sizeof(int)), *tgt = pp__xmalloc((size_t)rows(r) * sizeof(int));
        /* replica d's micro-batch mb is micro-batch d*M + mb of the global batch */
        pp__data_fill(c->corpus, &m->d, c->mb_size, r->step, r->replica * c->M + mb, tok, tgt);
        if (m->has_embed) *tokens = data_tensor(r, tok);
        if (m->has_head) *targets = data_tensor(r, tgt);
        free(tok);
        free(tgt);
    }
    return m;
}

/* The stash of a forward of (chunk, mb) on input x, holding the model's stash ms, in `state`. */
static pp_stash *stash_new(pp_rank *r, int chunk, int mb, pp_tensor *x, pp_model_stash *ms, int state) {
    pp_stash *s = pp__xcalloc(1, sizeof *s);
    s->chunk = chunk;
    s->mb = mb;
    if (x) x->uses++, s->x = x;
    s->state = state;
    s->ms = ms;
    s->timer = -1;
    s->next = r->stashes;
    r->stashes = s;
    r->live_stashes++;
    return s;
}

/* A forward's output out: the loss, where it is one, counted for the step's report. */
static void forward_done(pp_rank *r, int vs, pp_tensor *out) {
    if (pp__config_next(r->cfg, vs) >= 0) return;
    float loss;
    pp__tensor_to_host(out, &loss);
    r->last_loss_sum += loss;
    r->loss_count++;
}

/* Refuses a whole-stage call in a lab whose schedule runs the blocks itself, and the layer-by-layer calls
 * everywhere else. */
static void check_layered(pp_rank *r, const char *api, int layered) {
    int own = r->cfg->schedule->own_blocks;
    if (own && !layered)
        pp__rank_abort(r, PP_ERR_USAGE, "run a forward as pp_stage_forward_begin, your blocks, pp_stage_forward_end, "
                       "and a backward as pp_stage_backward_begin, your blocks backwards, pp_stage_backward_end",
                       "%s: in the %s lab the stage's blocks are the schedule's own", api, r->cfg->schedule->name);
    if (!own && layered)
        pp__rank_abort(r, PP_ERR_USAGE, "use pp_stage_forward and pp_stage_backward", "%s: only the tpblock lab runs "
                       "a stage's blocks itself; the %s schedule runs whole stages", api, r->cfg->schedule->name);
}

pp_tensor *pp_stage_forward(pp_rank *r, int chunk, int mb, pp_tensor *x, pp_stash **stash) {
    pp__rank_check(r);
    check_layered(r, "pp_stage_forward", 0);
    pp_tensor *tokens, *targets;
    pp_stage_model *m = forward_checks(r, "pp_stage_forward", chunk, mb, x, stash, &tokens, &targets);
    const pp_run_config *c = r->cfg;
    int vs = pp__config_vstage(c, r->pipe, chunk);
    op_timer t = op_begin(r);
    r->tp_api = "pp_stage_forward";
    pp_tensor *out = pp__model_forward(m, &r->arena, rows(r), x, tokens, targets, &r->forming);
    pp_model_stash *ms = r->forming;
    r->forming = NULL;
    out->owner = r->id;
    out->handed = 1;
    out->ready = op_end(r, t, PP_OP_F, chunk, mb, x ? x->ready : 0, pp__config_forward_cost_of(c, r->id, vs), 0,
                        tp_sums(r, vs, 1));
    pp_stash *s = stash_new(r, chunk, mb, x, ms, PP__STASH_LIVE);
    stash_account(r, s);
    forward_done(r, vs, out);
    *stash = s;
    return out;
}

pp_tensor *pp_stage_forward_begin(pp_rank *r, int chunk, int mb, pp_tensor *x, pp_stash **stash) {
    pp__rank_check(r);
    check_layered(r, "pp_stage_forward_begin", 1);
    pp_tensor *tokens, *targets;
    pp_stage_model *m = forward_checks(r, "pp_stage_forward_begin", chunk, mb, x, stash, &tokens, &targets);
    op_timer t = op_begin(r);
    pp_model_stash *ms;
    pp_tensor *in = pp__model_open(m, &r->arena, rows(r), x, tokens, targets, &ms);
    pp_stash *s = stash_new(r, chunk, mb, x, ms, PP__STASH_FWD_OPEN);
    s->timer = t.handle, s->wall_start = t.wall_start, s->ready = x ? x->ready : 0, s->tp_before = r->tp_time;
    s->nblocks = m->nblocks, s->blocks_seen = 0;
    s->blocks = pp__xcalloc((size_t)(m->nblocks ? m->nblocks : 1), sizeof *s->blocks);
    for (int i = 0; i < m->nblocks; i++) s->blocks[i] = (pp_block){.r = r, .s = s, .i = i};
    in->owner = r->id;
    r->open_op = s;
    *stash = s;
    return in;
}

/* The stash of an open op of this rank (state), and its argument t checked as the op's n x h tensor. */
static void check_open(pp_rank *r, const char *api, pp_stash *s, int state, pp_tensor *t, const char *what) {
    pp__rank_alive(r);
    if (!s || r->open_op != s || s->state != state)
        pp__rank_abort(r, PP_ERR_USAGE, state == PP__STASH_FWD_OPEN ? "end the forward that pp_stage_forward_begin "
                       "opened, on its stash" : "end the backward that pp_stage_backward_begin opened, on its stash",
                       "%s: no %s is open on this stash", api, state == PP__STASH_FWD_OPEN ? "forward" : "backward");
    if (!t)
        pp__rank_abort(r, PP_ERR_USAGE, "pass the last block's result", "%s: %s is NULL", api, what);
    check_input(r, api, t, r->cfg->hidden, what);
}

/* The virtual time the open op's shards' sums took so far. */
static double sums_since(const pp_rank *r, const pp_stash *s) { return r->tp_time - s->tp_before; }

pp_tensor *pp_stage_forward_end(pp_rank *r, pp_stash *s, pp_tensor *x) {
    check_open(r, "pp_stage_forward_end", s, PP__STASH_FWD_OPEN, x, "x");
    pp__block_note_whole(r, s, -1, PP_BAPI_FORWARD_END, x);
    pp__block_op_end(r, s);
    const pp_run_config *c = r->cfg;
    int vs = pp__config_vstage(c, r->pipe, s->chunk);
    pp_tensor *out = pp__model_close(&r->chunks[s->chunk], &r->arena, s->ms, x);
    out->owner = r->id;
    out->handed = 1;
    double tp = sums_since(r, s);
    out->ready = op_end(r, (op_timer){s->wall_start, s->timer}, PP_OP_F, s->chunk, s->mb, s->ready,
                        pp__config_compute_cost(c, vs) + tp, 0, tp);
    s->state = PP__STASH_LIVE;
    r->open_op = NULL;
    stash_account(r, s);
    forward_done(r, vs, out);
    return out;
}

/* ---- backward ------------------------------------------------------------------------------------------ */

/* The backward of s is over (both halves): its x and dy go, unless another stash still holds them. */
static void stash_inputs_done(pp_stash *s) {
    if (s->x) pp__tensor_drop_use(s->x, s);
    if (s->dy) pp__tensor_drop_use(s->dy, s);
    s->x = s->dy = NULL;
}

static pp_stash *check_stash(pp_rank *r, const char *api, pp_stash *s) {
    pp__rank_check(r);
    if (!s)
        pp__rank_abort(r, PP_ERR_USAGE, "pass the stash pp_stage_forward gave you; did that forward run yet?",
                       "%s: stash is NULL", api);
    pp_stash *it = r->stashes;
    while (it && it != s) it = it->next;
    if (!it)
        pp__rank_abort(r, PP_ERR_USAGE, "pass the stash pp_stage_forward gave you, on the same rank and step",
                       "%s: not a stash of this rank", api);
    if (s->state == PP__STASH_FREED)
        pp__rank_abort(r, PP_ERR_USAGE, "free each stash once, after its backward (both halves when split); it cannot "
                       "be used afterwards", "%s: the stash of micro-batch %d, chunk %d was already released by "
                       "pp_stash_free", api, s->mb, s->chunk);
    return s;
}

/* The virtual stage holding the loss of vs's path. */
static int path_last(const pp_run_config *c, int vs) {
    for (int next; (next = pp__config_next(c, vs)) >= 0;) vs = next;
    return vs;
}

static void check_dy(pp_rank *r, const char *api, pp_stash *s, pp_tensor *dy) {
    int vs = pp__config_vstage(r->cfg, r->pipe, s->chunk), next = pp__config_next(r->cfg, vs);
    if (next < 0) {
        if (!dy || dy->rows != 1 || dy->cols != 1)
            pp__rank_abort(r, PP_ERR_USAGE, "pass dy = pp_loss_grad(r, 1.0f / M) where the loss is",
                           "%s: virtual stage %d holds the loss: its backward starts from the loss gradient", api, vs);
    } else if (!dy) {
        int from = pp__config_vstage_rank(r->cfg, next);
        char hint[160];
        if (from == r->pipe)
            snprintf(hint, sizeof hint, "virtual stage %d is on this rank too (the turn of a V): pass the dx its input "
                     "half returned straight in, no message", next);
        else
            snprintf(hint, sizeof hint, "receive it with pp_recv(r, %d, pp_tag(PP_BWD, %d, %d))", from, s->mb, vs);
        pp__rank_abort(r, PP_ERR_USAGE, hint, "%s: virtual stage %d needs the gradient of micro-batch %d from virtual "
                       "stage %d (rank %d)", api, vs, s->mb, next, from);
    } else if (dy->rows == 1 && dy->cols == 1 && !dy->received) {
        int last = path_last(r->cfg, vs);
        pp__rank_abort(r, PP_ERR_USAGE, "only the virtual stage with the loss starts its backward from pp_loss_grad; "
                       "every other one receives dy from the virtual stage after it",
                       "%s: dy is 1x1 (a loss or a loss gradient), but virtual stage %d does not hold the loss: "
                       "virtual stage %d does (rank %d)", api, vs, last, pp__config_vstage_rank(r->cfg, last));
    }
    check_input(r, api, dy, next < 0 ? 1 : r->cfg->hidden, "dy");
}

/* A backward's dx (NULL on virtual stage 0), handed to the schedule: this rank's, ready at the op's end `end`. */
static pp_tensor *handed(pp_rank *r, pp_tensor *dx, double end) {
    if (dx) {
        dx->owner = r->id;
        dx->handed = 1;
        dx->ready = end;
    }
    return dx;
}

/* The input half, and the weight half too when `whole` (one B op in the trace that costs both halves). A half
 * costs one forward of the stage; a stash dropped to its input first pays one more forward to rebuild it. */
/* The checks every backward makes on its stash and dy, which the stash then holds. */
static void backward_checks(pp_rank *r, const char *api, pp_stash *s, pp_tensor *dy) {
    check_stash(r, api, s);
    if (s->state != PP__STASH_LIVE)
        pp__rank_abort(r, PP_ERR_USAGE, "run one backward per forward",
                       "%s: the backward of micro-batch %d, chunk %d already ran", api, s->mb, s->chunk);
    check_dy(r, api, s, dy);
    dy->uses++, s->dy = dy;
    r->backwards++;
}

static pp_tensor *backward_input(pp_rank *r, const char *api, pp_stash *s, pp_tensor *dy, int whole) {
    pp__rank_check(r);
    check_layered(r, api, 0);
    backward_checks(r, api, s, dy);
    pp_stage_model *m = &r->chunks[s->chunk];
    int rebuilt = pp__stash_needs_recompute(s->ms);
    double cost = pp__config_backward_cost_of(r->cfg, r->id, pp__config_vstage(r->cfg, r->pipe, s->chunk),
                                              whole ? PP_BWD_WHOLE : PP_BWD_INPUT, rebuilt);
    op_timer t = op_begin(r);
    r->tp_api = api;
    pp_tensor *dx = pp__model_backward_input(m, &r->arena, s->ms, dy);
    if (whole) {
        pp__model_backward_weight(m, s->ms);
        pp__stash_drop(s->ms); /* like autograd, the activations go as soon as the backward consumed them */
        stash_inputs_done(s);
    }
    double end = op_end(r, t, PP_OP_B, s->chunk, s->mb, dy->ready, cost,
                        (whole ? 0 : PP_EV_SPLIT) | (rebuilt ? PP_EV_RECOMPUTED : 0),
                        tp_sums(r, pp__config_vstage(r->cfg, r->pipe, s->chunk), 1 + rebuilt));
    s->state = whole ? PP__STASH_DONE : PP__STASH_INPUT_DONE;
    stash_account(r, s);
    return handed(r, dx, end);
}

pp_tensor *pp_stage_backward(pp_rank *r, pp_stash *stash, pp_tensor *dy) {
    return backward_input(r, "pp_stage_backward", stash, dy, 1);
}

pp_tensor *pp_stage_backward_input(pp_rank *r, pp_stash *stash, pp_tensor *dy) {
    return backward_input(r, "pp_stage_backward_input", stash, dy, 0);
}

pp_tensor *pp_stage_backward_begin(pp_rank *r, pp_stash *s, pp_tensor *dy) {
    pp__rank_check(r);
    check_layered(r, "pp_stage_backward_begin", 1);
    backward_checks(r, "pp_stage_backward_begin", s, dy);
    op_timer t = op_begin(r);
    pp_tensor *g = pp__model_back_open(&r->chunks[s->chunk], &r->arena, s->ms, dy);
    s->timer = t.handle, s->wall_start = t.wall_start, s->ready = dy->ready, s->tp_before = r->tp_time;
    s->state = PP__STASH_BWD_OPEN;
    s->block_calls = 0;
    pp__block_op_begin(s);
    g->owner = r->id;
    r->open_op = s;
    return g;
}

pp_tensor *pp_stage_backward_end(pp_rank *r, pp_stash *s, pp_tensor *dy) {
    check_open(r, "pp_stage_backward_end", s, PP__STASH_BWD_OPEN, dy, "dy");
    pp__block_note_whole(r, s, -1, PP_BAPI_BACKWARD_END, dy);
    pp__block_op_end(r, s);
    const pp_run_config *c = r->cfg;
    int vs = pp__config_vstage(c, r->pipe, s->chunk);
    pp_tensor *dx = pp__model_back_close(&r->chunks[s->chunk], &r->arena, s->ms, dy);
    pp__stash_drop(s->ms);
    stash_inputs_done(s);
    double tp = sums_since(r, s);
    double end = op_end(r, (op_timer){s->wall_start, s->timer}, PP_OP_B, s->chunk, s->mb, s->ready,
                        2 * pp__config_compute_cost(c, vs) + tp, 0, tp);
    s->state = PP__STASH_DONE;
    r->open_op = NULL;
    stash_account(r, s);
    return handed(r, dx, end);
}

void pp_stage_backward_weight(pp_rank *r, pp_stash *s) {
    pp__rank_check(r);
    check_layered(r, "pp_stage_backward_weight", 0);
    check_stash(r, "pp_stage_backward_weight", s);
    if (s->state != PP__STASH_INPUT_DONE)
        pp__rank_abort(r, PP_ERR_USAGE, "run pp_stage_backward_input on this stash first, and W once",
                       "pp_stage_backward_weight: micro-batch %d, chunk %d is not waiting for its weight half", s->mb,
                       s->chunk);
    pp_stage_model *m = &r->chunks[s->chunk];
    op_timer t = op_begin(r);
    pp__model_backward_weight(m, s->ms);
    pp__stash_drop(s->ms);
    stash_inputs_done(s);
    op_end(r, t, PP_OP_W, s->chunk, s->mb, 0, pp__config_backward_cost_of(r->cfg, r->id, pp__config_vstage(r->cfg, r->pipe, s->chunk), PP_BWD_WEIGHT, 0), 0, 0);
    s->state = PP__STASH_DONE;
    stash_account(r, s);
}

pp_tensor *pp_loss_grad(pp_rank *r, float scale) {
    pp__rank_check(r);
    const pp_run_config *c = r->cfg;
    int holds = 0, S = c->P * c->v;
    for (int ch = 0; ch < c->v; ch++) holds |= pp__config_next(c, pp__config_vstage(c, r->pipe, ch)) < 0;
    const char *hint = "call pp_loss_grad on the rank that holds the loss; every other one receives its dy from the "
                       "virtual stage after it";
    if (!holds && pp__config_dual(c))
        pp__rank_abort(r, PP_ERR_USAGE, hint, "pp_loss_grad: rank %d holds no chunk with a loss: DualPipe's two are on "
                       "virtual stages %d (rank %d) and %d (rank %d)", r->pipe, c->P - 1,
                       pp__config_vstage_rank(c, c->P - 1), S - 1, pp__config_vstage_rank(c, S - 1));
    if (!holds)
        pp__rank_abort(r, PP_ERR_USAGE, hint, "pp_loss_grad: rank %d holds no chunk of virtual stage %d, the one with "
                       "the loss (rank %d holds it)", r->pipe, S - 1, pp__config_vstage_rank(c, S - 1));
    pp__rank_charge(r, PP_CHARGE_LOSS_GRAD, "pp_loss_grad");
    r->zero_scales += scale == 0;
    pp_tensor *t = pp__tensor_new(r->be, &r->arena, 1, 1, PP_F32, r->id);
    pp__tensor_from_host(t, &scale);
    r->dloss_calls++;
    return t;
}

/* ---- stashes ------------------------------------------------------------------------------------------- */

void pp_stash_checkpoint(pp_rank *r, pp_stash *s) {
    pp__rank_check(r);
    check_layered(r, "pp_stash_checkpoint", 0);
    check_stash(r, "pp_stash_checkpoint", s);
    if (s->state != PP__STASH_LIVE)
        pp__rank_abort(r, PP_ERR_USAGE, "checkpoint a stash right after its forward",
                       "pp_stash_checkpoint: the backward of micro-batch %d, chunk %d already started", s->mb, s->chunk);
    pp__stash_checkpoint(s->ms);
    s->checkpointed = 1;
    stash_account(r, s);
}

void pp_stash_free(pp_rank *r, pp_stash *s) {
    check_stash(r, "pp_stash_free", s);
    if (s->state != PP__STASH_DONE)
        pp__rank_abort(r, PP_ERR_USAGE, "free a stash only after its backward (pp_stage_backward, or both halves)",
                       "pp_stash_free: the stash of micro-batch %d, chunk %d is freed before its %s", s->mb, s->chunk,
                       s->state == PP__STASH_LIVE ? "backward ran" : "weight half (pp_stage_backward_weight) ran");
    pp__stash_release(s->ms);
    s->ms = NULL;
    s->state = PP__STASH_FREED;
    r->live_stashes--;
    r->live_bytes -= s->bytes;
    s->bytes = 0;
}

/* ---- optimizer ----------------------------------------------------------------------------------------- */

void pp_grad_zero(pp_rank *r) {
    pp__rank_check(r);
    r->late_grad_zero += r->backwards > 0;
    for (int ch = 0; ch < r->cfg->v; ch++) pp__model_zero_grad(&r->chunks[ch]);
}

void pp_optimizer_step(pp_rank *r) {
    pp__rank_check(r);
    const pp_request *q = pp__reduce_in_flight(r, -1);
    if (q)
        pp__rank_abort(r, PP_ERR_USAGE, "pp_wait (or pp_waitall) every pp_grad_ireduce before the optimizer step: "
                       "it steps from the summed gradients", "pp_optimizer_step: the reduce of chunk %d is still in "
                       "flight", q->red.chunk);
    pp__rank_snapshot_grads(r);
    r->opt_calls++;
    r->opt_t++;
    const pp_run_config *c = r->cfg;
    for (int ch = 0; ch < c->v; ch++)
        pp__model_update(&r->chunks[ch], c->optimizer == PP_OPT_ADAMW, c->lr, c->weight_decay, r->opt_t);
}
