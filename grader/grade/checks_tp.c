/* checks_tp.c: the tensor-parallel block lab's checks (checks_tp.h): the shards' all-reduces held to Megatron-LM's
 * count and size for its block (attention and the MLP), the activation memory per shard, and the diagnosis of a
 * wrong block from the notes the library kept (rank.h: the first call given a tensor of the wrong kind, or a block
 * or a half left without a call or its residual); then the grid lab's step on its topology. */
#include "checks_tp.h"

#include <stdio.h>
#include <string.h>

#include "checks_dp.h"
#include "config.h"
#include "exposed.h"
#include "model.h"
#include "replay.h"
#include "schedules.h"

/* The grid lab runs blocks of its own too, part 1's: its points are the grid's, and its blocks' notes still name a
 * wrong one when the gradients are off. */
int pp__checks_tp_applies(const pp_run_config *c) {
    const pp_schedule_def *d = c->schedule;
    return d->own_blocks && !d->grid && c->T > 1;
}

static const char *kind_said(int code) {
    return code == PP_TPN_SUM_SPLIT ? "split" : code == PP_TPN_SUM_WHOLE ? "whole" : "partial";
}

static const char *half_said(int half) { return half == PP_HALF_ATTN ? "attention" : "MLP"; }
/* The half's last linear, cut by rows, whose output is each shard's partial product. */
static const char *out_linear(int half) { return half == PP_HALF_ATTN ? "Wo" : "W2"; }

/* An all-reduce of a split tensor: whose columns the shards hold. */
static void say_sum_split(const pp_tp_note *n, const char *where, char *msg, size_t len) {
    const char *why = n->half == PP_HALF_ATTN
        ? (n->backward ? "the gradients of pp_block_attention's output and of the queries, keys and values are each "
                         "shard's own heads' columns" : "after pp_block_qkv (and pp_block_attention) each shard holds "
                         "its own heads' columns")
        : (n->backward ? "the gradients of GELU's output and of W1's are each shard's own columns"
                       : "after W1 (and GELU) each shard holds its own columns");
    snprintf(msg, len, "an all-reduce of a split tensor in %s: %s, not parts of a sum, so adding them up mixes "
             "different %s", where, why, n->half == PP_HALF_ATTN ? "heads" : "columns");
}

/* A call that reads a whole tensor got a partial one: which sum did not run before it. */
static void say_read_partial(const pp_tp_note *n, const char *api, const char *where, char *msg, size_t len) {
    const char *added = n->other ? " (its bias and the residual went onto the partial products on every shard)" : "";
    char whose[64];
    switch (n->api) {
    case PP_BAPI_LN2_BACKWARD:
    case PP_BAPI_LN1_BACKWARD:
        snprintf(msg, len, "%s read a partial gradient in %s: every shard's %s read the same %s output, so its "
                 "gradient is the sum of the shards' parts (f's conjugate), which must be summed first", api, where,
                 n->api == PP_BAPI_LN1_BACKWARD ? "Wq, Wk and Wv" : "W1",
                 n->api == PP_BAPI_LN1_BACKWARD ? "LN1" : "LN2");
        return;
    case PP_BAPI_LN2:
    case PP_BAPI_LN1:
    case PP_BAPI_FORWARD_END:
        if (n->api == PP_BAPI_LN1 && n->block < 1) break;
        if (n->api == PP_BAPI_LN2)
            snprintf(whose, sizeof whose, "the Wo output of block %d's attention half", n->block);
        else if (n->api == PP_BAPI_LN1)
            snprintf(whose, sizeof whose, "the W2 output of block %d's MLP half", n->block - 1);
        else
            snprintf(whose, sizeof whose, "the W2 output of the last block's MLP half");
        snprintf(msg, len, "%s read a partial tensor in %s: no shards' sum ran on %s%s, so what each shard passes on "
                 "differs from the sum of the shards' partial outputs", api, where, whose, added);
        return;
    default:
        break;
    }
    snprintf(msg, len, "%s read a partial tensor in %s: a shards' sum is missing before it", api, where);
}

/* The notes of a block's structure, which name no tensor's kind. */
static void say_structure(const pp_run_config *c, const pp_tp_note *n, const char *where, char *msg, size_t len) {
    const char *pass = n->backward ? "backward" : "forward";
    int p = n->rank % c->P;
    switch (n->code) {
    case PP_TPN_BLOCK_SKIPPED:
        snprintf(msg, len, "the %s of micro-batch %d on rank %d, shard %d ended with no call on block %d of its %d: "
                 "that block's layers never ran in it", pass, n->mb, p, n->shard, n->block,
                 pp__config_blocks(c, pp__config_vstage(c, p, n->chunk)));
        break;
    case PP_TPN_BLOCK_ORDER:
        snprintf(msg, len, "the %s of micro-batch %d on rank %d, shard %d ran block %d where the stage's order runs "
                 "block %d: each block reads the previous one's output, in the stage's order on every shard", pass,
                 n->mb, p, n->shard, n->block, n->other);
        break;
    case PP_TPN_HALF_SKIPPED:
        snprintf(msg, len, "the %s of micro-batch %d on rank %d, shard %d made no call of block %d's %s half (%s): "
                 "its layers never ran in it, and a block is both halves, attention's and then the MLP's", pass,
                 n->mb, p, n->shard, n->block, half_said(n->half), n->half == PP_HALF_ATTN
                 ? "pp_block_ln1 .. pp_block_proj_bias, or their backwards" : "pp_block_ln2 .. pp_block_bias2, or "
                 "their backwards");
        break;
    case PP_TPN_NO_RESIDUAL:
        snprintf(msg, len, "block %d's %s of micro-batch %d on rank %d made no pp_block_residual in its %s half on "
                 "any shard: the %s it returns lacks the part that skips the half", n->block, pass, n->mb, p,
                 half_said(n->half), n->backward ? "input gradient" : "output");
        break;
    default: /* PP_TPN_RESIDUAL_INTO */
        snprintf(msg, len, "pp_block_residual wrote into the %s that the %s half was given in %s: the half's %s is "
                 "left without it, and the tensor it was given changed", n->backward ? "gradient" : "input",
                 half_said(n->half), where, n->backward ? "input gradient" : "output");
        break;
    }
}

int pp__checks_tp_diagnose(const pp_run_config *c, const pp_run_result *res, char *msg, size_t len) {
    const pp_tp_note *n = &res->tp_note;
    if (n->code == PP_TPN_NONE) return 0;
    const char *api = pp__block_api(n->api), *pass = n->backward ? "backward" : "forward";
    char where[160];
    int p = n->rank % c->P;
    if (n->block >= 0)
        snprintf(where, sizeof where, "block %d's %s of micro-batch %d on rank %d%s, shard %d", n->block, pass, n->mb,
                 p, c->D > 1 ? " of a replica" : "", n->shard);
    else
        snprintf(where, sizeof where, "the %s of micro-batch %d on rank %d, shard %d", pass, n->mb, p, n->shard);
    switch (n->code) {
    case PP_TPN_SUM_SPLIT:
        say_sum_split(n, where, msg, len);
        break;
    case PP_TPN_SUM_WHOLE:
        snprintf(msg, len, "an all-reduce of a whole tensor in %s: every shard already holds the same values, so the "
                 "sum is %d times them", where, c->T);
        break;
    case PP_TPN_ADD_PARTIAL:
        snprintf(msg, len, "%s added on %d of the %d shards to %s's partial output, before the sum (%s): the sum "
                 "then holds it %d times; add it once, after the sum (or on one shard only)",
                 n->api == PP_BAPI_BIAS2 ? "b2" : n->api == PP_BAPI_PROJ_BIAS ? "bo" : "the residual", n->shards, c->T,
                 out_linear(n->half), where, n->shards);
        break;
    case PP_TPN_READ_PARTIAL:
        say_read_partial(n, api, where, msg, len);
        break;
    case PP_TPN_BLOCK_SKIPPED:
    case PP_TPN_BLOCK_ORDER:
    case PP_TPN_HALF_SKIPPED:
    case PP_TPN_NO_RESIDUAL:
    case PP_TPN_RESIDUAL_INTO:
        say_structure(c, n, where, msg, len);
        break;
    case PP_TPN_READ_SPLIT:
        snprintf(msg, len, "%s read a split tensor (each shard's own columns) in %s, where it needs the whole one",
                 api, where);
        break;
    default:
        snprintf(msg, len, "%s read a %s tensor in %s, where it takes this shard's columns (split)", api,
                 kind_said(n->code), where);
        break;
    }
    return 1;
}

void pp__checks_tp_gated(const pp_run_config *c, pp_test_result *out, const char *why) {
    if (!pp__checks_tp_applies(c)) return;
    pp__check_add(out, "shards' all-reduces", PP_PTS_TP_SUMS, 0, "not graded: %s", why);
    pp__check_add(out, "activation memory per shard", PP_PTS_TP_MEMORY, 0, "not graded: %s", why);
}

/* Megatron's count: two sums per block (one per half) in each forward and each backward, every micro-batch. */
static int megatron_sums(const pp_run_config *c, int p) {
    int n = 0;
    for (int ch = 0; ch < c->v; ch++)
        n += 2 * PP_TP_SUMS_PER_BLOCK * c->M * pp__config_blocks(c, pp__config_vstage(c, p, ch));
    return n;
}

static void check_sums(const pp_run_config *c, const pp_run_result *res, pp_test_result *out) {
    double floats = (double)c->mb_size * c->seq * c->hidden;
    int bad = -1, total = 0;
    for (int i = 0; i < res->P; i++) {
        int want = megatron_sums(c, i % c->P);
        total += res->tp_sums[i];
        if (bad < 0 && (res->tp_sums[i] != want || res->tp_bytes[i] != want * floats * sizeof(float))) bad = i;
    }
    char why[600];
    if (bad < 0) {
        pp__check_add(out, "shards' all-reduces", PP_PTS_TP_SUMS, 1, "%d all-reduces of %.0f values over shard 0's "
                      "ranks, as Megatron's blocks make them: two per block in each forward (g, after Wo and after W2) "
                      "and two in each backward (f's conjugate, before the input gradients of Wq/Wk/Wv and of W1 "
                      "leave)", total, floats);
        return;
    }
    int p = bad % c->P, want = megatron_sums(c, p);
    if (!pp__checks_tp_diagnose(c, res, why, sizeof why)) why[0] = 0;
    pp__check_add(out, "shards' all-reduces", PP_PTS_TP_SUMS, 0, "%s%srank %d's shards summed %d times, %.0f bytes in "
                  "step 1; Megatron's blocks sum %d times, %.0f bytes: one activation (%.0f values) per half of each "
                  "block in each forward and each backward", why, why[0] ? "; so " : "", p, res->tp_sums[bad], res->tp_bytes[bad],
                  want, want * floats * sizeof(float), floats);
}

static void check_memory(const pp_run_config *c, const pp_run_result *res, pp_test_result *out) {
    pp_model_dims d;
    pp__config_model_dims(c, &d);
    int rows = c->mb_size * c->seq, bad = -1;
    size_t limit = 0, whole = 0;
    for (int i = 0; i < res->P && bad < 0; i++) {
        int vs = pp__config_vstage(c, i % c->P, 0), nb = pp__config_blocks(c, vs);
        int first = pp__config_prev(c, vs) < 0, last = pp__config_next(c, vs) < 0;
        limit = pp__model_layered_bytes(&d, nb, first, last, c->T, rows);
        whole = pp__model_layered_bytes(&d, nb, first, last, 1, rows);
        if (res->peak_single[i] > limit) bad = i;
    }
    if (bad < 0) {
        pp__check_add(out, "activation memory per shard", PP_PTS_TP_MEMORY, 1, "every stash within what its layers "
                      "keep once each, attention's and the FFN's activations cut %d ways: rank %d's largest %zu bytes, against %zu "
                      "for the whole stage", c->T, res->P - 1, res->peak_single[res->P - 1], whole);
        return;
    }
    pp__check_add(out, "activation memory per shard", PP_PTS_TP_MEMORY, 0, "rank %d's largest stash held %zu bytes, "
                  "more than the %zu its layers keep when each runs once per block (the whole stage's would be %zu): "
                  "a layer called twice in one forward keeps both outputs", bad % c->P, res->peak_single[bad], limit,
                  whole);
}

void pp__checks_tp(const pp_run_config *c, const pp_run_result *res, pp_test_result *out) {
    if (!pp__checks_tp_applies(c)) return;
    check_sums(c, res, out);
    check_memory(c, res, out);
}

/* ---- the grid (tpgrid) ---------------------------------------------------------------------------------- */

static int grid_applies(const pp_run_config *c) { return c->schedule->grid; }

void pp__checks_grid_gated(const pp_run_config *c, pp_test_result *out, const char *why) {
    if (grid_applies(c)) pp__check_add(out, "step on the topology", PP_PTS_GRID_STEP, 0, "not graded: %s", why);
}

/* The canonical order's step, reduces included, on c's costs and links. */
static double canonical_step(const pp_run_config *c) {
    double step = pp__theory_step(c);
    if (pp__checks_dp_applies(c)) pp__theory_exposed_replay(c, &step, NULL);
    return step;
}

/* Why a placement's step is longer, into msg: a tensor-parallel group across nodes first (its sums are on every
 * op's critical path), then pipeline neighbours apart where the canonical placement keeps them together. */
static void placement_cause(const pp_run_config *c, const pp_run_config *canon, char *msg, size_t len) {
    msg[0] = 0;
    int T = c->T > 1 ? c->T : 1;
    for (int d = 0; d < c->D; d++)
        for (int p = 0; p < c->P; p++) {
            int w0 = pp__config_rank_of(c, 0, d, p);
            if (!pp__config_tp_crosses(c, w0) || pp__config_tp_crosses(canon, w0)) continue;
            int a = pp__config_node(c, w0), b = a;
            for (int t = 1; t < T && b == a; t++) b = pp__config_node(c, pp__config_rank_of(c, t, d, p));
            int L = pp__config_blocks(c, pp__config_vstage(c, p, 0));
            char rep[32] = "";
            if (c->D > 1) snprintf(rep, sizeof rep, " in replica %d", d);
            snprintf(msg, len, "the tensor-parallel group of stage %d%s spans nodes %d and %d: its %d x %d all-reduces "
                     "per micro-batch (%d per block each way) cross the network (--reduce-alpha, --reduce-beta) "
                     "instead of the node's link (--tp-alpha, --tp-beta), inside every op", p, rep, a, b,
                     2 * PP_TP_SUMS_PER_BLOCK, L, PP_TP_SUMS_PER_BLOCK);
            return;
        }
    for (int d = 0; d < c->D; d++)
        for (int p = 0; p + 1 < c->P; p++) {
            int x = pp__config_rank_of(c, 0, d, p), y = pp__config_rank_of(c, 0, d, p + 1);
            int apart = pp__config_node(c, x) != pp__config_node(c, y);
            if (!apart || pp__config_node(canon, x) != pp__config_node(canon, y)) continue;
            snprintf(msg, len, "stages %d and %d sit on nodes %d and %d, where the canonical placement keeps them in "
                     "one: each boundary message crosses the network", p, p + 1, pp__config_node(c, x),
                     pp__config_node(c, y));
            return;
        }
}

void pp__checks_grid(const pp_run_config *c, const pp_run_result *res, pp_test_result *out) {
    if (!grid_applies(c)) return;
    pp_run_config canon = *c;
    canon.place = NULL, canon.placement = NULL;
    double want = canonical_step(&canon), got = res->step_time;
    if (got <= want + 1e-9) {
        pp__check_add(out, "step on the topology", PP_PTS_GRID_STEP, 1, "%.4f on %d ranks per node, the canonical "
                      "placement's %.4f (a stage's shards in one node, the pipeline across nodes)%s", got,
                      c->node_size, want, got < want - 1e-9 ? ": shorter" : "");
        return;
    }
    char why[600], own[160] = "";
    placement_cause(c, &canon, why, sizeof why);
    /* the placement's share and the order's: the canonical order on this same placement is what the mapping
     * alone costs, and whatever the run takes beyond it the schedule does */
    double here = canonical_step(c);
    if (here >= 0 && got > here + 1e-9)
        snprintf(own, sizeof own, "; on this placement the canonical order's step is %.4f, so the schedule adds "
                 "%.4f of its own", here, got - here);
    pp__check_add(out, "step on the topology", PP_PTS_GRID_STEP, 0, "%s%sthe step takes %.4f on %d ranks per node, "
                  "the canonical placement's %.4f (a stage's shards in one node, the pipeline across nodes)%s", why,
                  why[0] ? "; so " : "", got, c->node_size, want, own);
}
