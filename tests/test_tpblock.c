/* test_tpblock.c: lab 08, part 1 (tpblock): a schedule that writes its own tensor-parallel blocks, attention half
 * and MLP half, from pp.h's block calls. The reference gets full marks on every default configuration; each broken
 * submission loses the points its mistake costs, with the diagnosis naming the call and the half (an all-reduce
 * after W1 or of the heads' outputs, b2 or bo before the sum, a half's forward or backward sum missing, a whole
 * tensor summed, a block run twice, a block kept past its op, a shard whose gradient differs); a bias and the
 * residual added before the sum on one shard only keep full marks. In-process steps hold the calls' refusals and
 * the notes of a half left out, and the layered model to the whole stage it must equal. */
#include <criterion/criterion.h>
#include <string.h>

#include "checks.h"
#include "checks_tp.h"
#include "model.h"
#include "pp.h"
#include "rank.h"
#include "runner.h"
#include "testset.h"
#include "schedules.h"
#include "testutil.h"

TestSuite(tpblock, .timeout = 240);

static const pp_check *check_named(const pp_test_result *r, const char *name) {
    for (int i = 0; i < r->nchecks; i++)
        if (!strcmp(r->checks[i].name, name)) return &r->checks[i];
    cr_assert_fail("no check named '%s' in %s", name, r->name);
    return NULL;
}

static void grade(const char *impl, int T, int P, int M, pp_test_result *out) {
    pp_test_config c = {.P = P, .M = M, .v = 1, .T = T, .steps = 2, .seed = 9, .time_limit_s = 30, .alpha = -1,
                        .beta = -1};
    snprintf(c.lab, sizeof c.lab, "tpblock");
    test_grade_config(impl, &c, out);
}

/* The gradient check failed with `needle` in its message. */
static void expect_gradients_say(const pp_test_result *r, const char *needle) {
    const pp_check *g = check_named(r, "gradients");
    cr_expect(!g->passed, "%s: the gradients should be wrong", r->name);
    cr_expect(strstr(g->msg, needle) != NULL, "%s: the gradient message lacks '%s': %s", r->name, needle, g->msg);
}

/* The gradient check's message begins with `first`: the cause leads. */
static void expect_gradients_begin(const pp_test_result *r, const char *first) {
    const pp_check *g = check_named(r, "gradients");
    cr_expect(!g->passed, "%s: the gradients should be wrong", r->name);
    cr_expect(!strncmp(g->msg, first, strlen(first)), "%s: the gradient message should begin '%s': %s", r->name,
              first, g->msg);
}

Test(tpblock, the_reference_gets_full_marks_on_every_default_configuration) {
    int n;
    const pp_test_config *set = pp__testset("tpblock", &n);
    cr_assert_geq(n, 4);
    for (int i = 0; i < n; i++) {
        pp_test_config c = set[i];
        snprintf(c.lab, sizeof c.lab, "tpblock");
        c.time_limit_s = 30, c.alpha = c.beta = -1;
        pp_test_result r;
        test_grade_config("solutions", &c, &r);
        cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
        cr_expect_eq(r.max, PP_PTS_GRADS + PP_PTS_WEIGHTS + PP_PTS_ONE_F_ONE_B + PP_PTS_BUBBLE + PP_PTS_PEAK +
                     PP_PTS_MESSAGES + PP_PTS_TP_SUMS + PP_PTS_TP_MEMORY, "%s: the tensor checks count", r.name);
    }
    /* the grid: (T, P) = (2, 1), (2, 2), (4, 2) */
    static const int grid[][2] = {{2, 1}, {2, 2}, {4, 2}};
    for (size_t i = 0; i < sizeof grid / sizeof *grid; i++) {
        pp_test_result r;
        grade("solutions", grid[i][0], grid[i][1], 4, &r);
        cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
    }
}

Test(tpblock, the_untouched_stub_scores_nothing) {
    char dir[256];
    cr_assert_eq(test_pristine_labs(dir, sizeof dir), 0);
    pp_test_result r;
    grade(dir, 2, 2, 4, &r);
    cr_expect_eq(r.score, 0, "%s: the stub scored %g", r.name, r.score);
    test_rm_tree(dir);
}

/* Each mistake of the block, named at the call that made it, at T = 2 and 4. */
Test(tpblock, each_mistake_of_the_block_is_named_at_its_call) {
    for (int T = 2; T <= 4; T *= 2) {
        pp_test_result r;
        grade("tests/broken/tp-sum-after-w1", T, 2, 4, &r);
        expect_gradients_say(&r, "an all-reduce of a split tensor in block 0's forward of micro-batch 0 on rank 0, "
                                 "shard 0: after W1 (and GELU) each shard holds its own columns");
        grade("tests/broken/tp-bias-before-sum", T, 2, 4, &r);
        char want[160];
        snprintf(want, sizeof want, "b2 added on %d of the %d shards to W2's partial output, before the sum", T, T);
        expect_gradients_say(&r, want);
        grade("tests/broken/tp-no-backward-sum", T, 2, 4, &r);
        expect_gradients_say(&r, "pp_block_ln2_backward read a partial gradient in block 0's backward of "
                                 "micro-batch 0 on rank 1, shard 0: every shard's W1 read the same LN2 output");
        grade("tests/broken/tp-sum-dy", T, 2, 4, &r);
        snprintf(want, sizeof want, "an all-reduce of a whole tensor in block 0's backward of micro-batch 0 on rank "
                 "1, shard 0: every shard already holds the same values, so the sum is %d times them", T);
        expect_gradients_say(&r, want);
        for (int k = 0; k < r.nchecks; k++)
            if (!strcmp(r.checks[k].name, "shards' all-reduces"))
                cr_expect(!r.checks[k].passed && strstr(r.checks[k].msg, "not graded"), "%s", r.checks[k].msg);
    }
}

/* Each mistake of the attention half, named first, at its call, at T = 2 and 4: the heads' outputs summed before
 * Wo (a split tensor), Wo's output never summed, the sum of LN1's output gradient missing, bo added before the sum
 * on every shard. */
Test(tpblock, each_mistake_of_the_attention_half_leads_with_its_call) {
    for (int T = 2; T <= 4; T *= 2) {
        pp_test_result r;
        grade("tests/broken/tp-sum-attention", T, 2, 4, &r);
        expect_gradients_begin(&r, "an all-reduce of a split tensor in block 0's forward of micro-batch 0 on rank 0, "
                                   "shard 0: after pp_block_qkv (and pp_block_attention) each shard holds its own "
                                   "heads' columns, not parts of a sum");
        grade("tests/broken/tp-attn-forward-no-sum", T, 2, 4, &r);
        expect_gradients_begin(&r, "pp_block_ln2 read a partial tensor in block 0's forward of micro-batch 0 on rank "
                                   "0, shard 0: no shards' sum ran on the Wo output of block 0's attention half (its "
                                   "bias and the residual went onto the partial products on every shard)");
        grade("tests/broken/tp-attn-no-backward-sum", T, 2, 4, &r);
        expect_gradients_begin(&r, "pp_block_ln1_backward read a partial gradient in block 0's backward of "
                                   "micro-batch 0 on rank 1, shard 0: every shard's Wq, Wk and Wv read the same LN1 "
                                   "output");
        char want[160];
        snprintf(want, sizeof want, "bo added on %d of the %d shards to Wo's partial output, before the sum (block 0's "
                 "forward of micro-batch 0 on rank 0, shard 0)", T, T);
        grade("tests/broken/tp-bo-before-sum", T, 2, 4, &r);
        expect_gradients_begin(&r, want);
    }
}

static void grade_layers(const char *impl, int T, int P, int M, int layers, pp_test_result *out) {
    pp_test_config c = {.P = P, .M = M, .v = 1, .T = T, .steps = 2, .seed = 9, .time_limit_s = 30, .alpha = -1,
                        .beta = -1, .layers = layers};
    snprintf(c.lab, sizeof c.lab, "tpblock");
    test_grade_config(impl, &c, out);
}

/* Mistakes of the block's structure, each named from the calls the run recorded: the MLP half's forward sum
 * missing, a block never run, blocks run in another order on one shard, the MLP half's residual written into its
 * input, the MLP half's residual gradient left out (at P = 1, where no message can be at fault). */
Test(tpblock, each_mistake_of_the_blocks_structure_leads_with_its_cause) {
    pp_test_result r;
    grade_layers("tests/broken/tp-forward-no-sum", 2, 2, 4, 4, &r);
    expect_gradients_begin(&r, "pp_block_ln1 read a partial tensor in block 1's forward of micro-batch 0 on rank 0, "
                               "shard 0: no shards' sum ran on the W2 output of block 0's MLP half");
    grade_layers("tests/broken/tp-skip-last-block", 2, 2, 4, 4, &r);
    expect_gradients_begin(&r, "the forward of micro-batch 0 on rank 0, shard 0 ended with no call on block 1 of its "
                               "2");
    grade_layers("tests/broken/tp-block-by-shard", 2, 1, 2, 3, &r);
    expect_gradients_begin(&r, "the forward of micro-batch 0 on rank 0, shard 1 ran block 2 where the stage's order "
                               "runs block 0");
    grade_layers("tests/broken/tp-residual-into-input", 2, 2, 4, 2, &r);
    expect_gradients_begin(&r, "pp_block_residual wrote into the input that the MLP half was given in block 0's "
                               "forward of micro-batch 0 on rank 0, shard 0");
    grade_layers("tests/broken/tp-no-residual-grad", 4, 1, 2, 2, &r);
    expect_gradients_begin(&r, "block 1's backward of micro-batch 0 on rank 0 made no pp_block_residual in its MLP "
                               "half on any shard");
}

/* Right numbers, twice the work: every block's forward run twice costs two sums per block and micro-batch more
 * (Megatron's count: 4 per block and micro-batch, one per half each way) and keeps two blocks' activations per
 * stash. */
Test(tpblock, a_block_forward_run_twice_pays_in_sums_time_and_memory) {
    pp_test_result r;
    grade("tests/broken/tp-forward-twice", 2, 2, 4, &r);
    cr_expect(check_named(&r, "gradients")->passed, "%s", check_named(&r, "gradients")->msg);
    const pp_check *s = check_named(&r, "shards' all-reduces"), *m = check_named(&r, "activation memory per shard");
    cr_expect(!s->passed && strstr(s->msg, "rank 0's shards summed 24 times, 393216 bytes in step 1; Megatron's "
                                           "blocks sum 16 times, 262144 bytes"), "%s", s->msg);
    cr_expect(!m->passed && strstr(m->msg, "a layer called twice in one forward keeps both outputs"), "%s", m->msg);
    const pp_check *b = check_named(&r, "bubble");
    cr_expect(!b->passed && strstr(b->msg, "spent") && strstr(b->msg, "in shards' sums, where its 1 block's sums "
                                                                        "take"), "%s", b->msg);
}

/* b2 and the residual added to W2's partial output on shard 0 alone, or bo and the residual to Wo's: the sum holds
 * each once, as after the sum. */
Test(tpblock, additions_before_the_sum_on_one_shard_keep_full_marks) {
    static const char *const valid[] = {"tests/valid/tp-bias-on-one-shard", "tests/valid/tp-bo-on-one-shard"};
    for (int T = 2; T <= 4; T *= 2)
        for (size_t i = 0; i < sizeof valid / sizeof *valid; i++) {
            pp_test_result r;
            grade(valid[i], T, 2, 4, &r);
            cr_expect_eq(r.score, r.max, "%s: %g/%g (%s)", r.name, r.score, r.max, r.error);
        }
}

Test(tpblock, a_block_kept_past_its_op_is_refused) {
    pp_test_result r;
    grade("tests/broken/tp-stale-block", 2, 2, 4, &r);
    test_expect_failed_run(&r, PP_ERR_USAGE, "pp_block_ln1: block 0 of micro-batch 0, chunk 0 has no forward open");
}

/* ---- in-process: the calls' refusals ---------------------------------------------------------------------- */

static pp_run_config config(const char *schedule, int T, int P, int M) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def(schedule), c.T = T, c.P = P, c.M = M;
    return c;
}

static int g_case;

/* One micro-batch through one stage (P = 1), each block as the reference writes it, both halves, with case
 * g_case's mistake. */
static void step_misuse(pp_rank *r) {
    pp_stash *st;
    pp_tensor *x = pp_stage_forward_begin(r, 0, 0, NULL, &st);
    if (g_case == 1) pp_send(r, x, 0, 5); /* a message inside an open op */
    if (g_case == 2) return;              /* the step ends with the forward open */
    if (g_case == 3) (void)pp_stash_block(r, st, pp_stage_blocks(r, 0));
    int attention = g_case != 7; /* case 7 leaves every block's attention half out, forward and backward */
    for (int i = 0; i < pp_stage_blocks(r, 0); i++) {
        pp_block *b = pp_stash_block(r, st, i);
        pp_tensor *x1 = x;
        if (attention) {
            pp_tensor *qkv = pp_block_qkv(b, pp_block_ln1(b, x));
            if (g_case == 6) (void)pp_block_proj(b, qkv); /* Wo reads the heads' outputs, not their q, k, v */
            x1 = pp_block_proj(b, pp_block_attention(b, qkv));
            pp_block_allreduce(b, x1);
            pp_block_proj_bias(b, x1);
            pp_block_residual(b, x1, x);
        }
        pp_tensor *ln = pp_block_ln2(b, x1);
        pp_tensor *h1 = pp_block_linear1(b, ln);
        if (g_case == 4) (void)pp_block_linear2(b, ln); /* W2 reads the shard's FFN columns, not n x h */
        if (g_case == 5) (void)pp_block_gelu_backward(b, h1); /* a backward layer inside the forward */
        pp_tensor *y = pp_block_linear2(b, pp_block_gelu(b, h1));
        pp_block_allreduce(b, y);
        pp_block_bias2(b, y);
        pp_block_residual(b, y, x1);
        x = y;
    }
    pp_stage_forward_end(r, st, x);
    pp_tensor *dy = pp_stage_backward_begin(r, st, pp_loss_grad(r, 1.0f));
    for (int i = pp_stage_blocks(r, 0) - 1; i >= 0; i--) {
        pp_block *b = pp_stash_block(r, st, i);
        pp_block_bias2_backward(b, dy);
        pp_tensor *dln = pp_block_linear1_backward(b, pp_block_gelu_backward(b, pp_block_linear2_backward(b, dy)));
        pp_block_allreduce(b, dln);
        pp_tensor *dx = pp_block_ln2_backward(b, dln);
        pp_block_residual(b, dx, dy);
        if (attention) {
            pp_tensor *dx1 = dx;
            pp_block_proj_bias_backward(b, dx1);
            dln = pp_block_qkv_backward(b, pp_block_attention_backward(b, pp_block_proj_backward(b, dx1)));
            pp_block_allreduce(b, dln);
            dx = pp_block_ln1_backward(b, dln);
            pp_block_residual(b, dx, dx1);
        }
        dy = dx;
    }
    pp_stage_backward_end(r, st, dy);
    pp_stash_free(r, st);
    pp_optimizer_step(r);
}

static void step_whole_stage(pp_rank *r) {
    pp_stash *st;
    (void)pp_stage_forward(r, 0, 0, NULL, &st);
}

static void step_layered_elsewhere(pp_rank *r) {
    pp_stash *st;
    (void)pp_stage_forward_begin(r, 0, 0, NULL, &st);
}

static void expect_run_fails(pp_run_config *c, pp_step_fn fn, pp_status st, const char *needle) {
    pp_run_result res;
    cr_expect_eq(pp__run(c, fn, &res), st, "case %d: %s", g_case, res.error);
    cr_expect(strstr(res.error, needle) != NULL, "case %d: the error lacks '%s': %s", g_case, needle, res.error);
    pp__result_free(&res);
}

Test(tpblock, the_layered_calls_refuse_what_the_contract_forbids) {
    pp_run_config c = config("tpblock", 2, 1, 1);
    c.layers = 2;
    g_case = 0;
    pp_run_result res;
    cr_expect_eq(pp__run(&c, step_misuse, &res), PP_OK, "%s", res.error);
    cr_expect_eq(res.tp_sums[0], 8, "2 blocks: two sums each, one per half, in the forward and in the backward");
    cr_expect_eq(res.tp_note.code, PP_TPN_NONE);
    pp__result_free(&res);
    g_case = 7; /* no attention half: the run goes on, and its first note names the half it left out */
    cr_expect_eq(pp__run(&c, step_misuse, &res), PP_OK, "%s", res.error);
    cr_expect(res.tp_note.code == PP_TPN_HALF_SKIPPED && res.tp_note.half == PP_HALF_ATTN &&
              res.tp_note.block == 0 && !res.tp_note.backward, "note %d, half %d, block %d", res.tp_note.code,
              res.tp_note.half, res.tp_note.block);
    char msg[600];
    cr_expect(pp__checks_tp_diagnose(&c, &res, msg, sizeof msg) && strstr(msg, "the forward of micro-batch 0 on rank "
              "0, shard 0 made no call of block 0's attention half"), "%s", msg);
    pp__result_free(&res);
    g_case = 1;
    expect_run_fails(&c, step_misuse, PP_ERR_USAGE, "the forward of micro-batch 0, chunk 0 is open "
                                                    "(pp_stage_forward_begin): only its blocks' calls may run");
    g_case = 2;
    expect_run_fails(&c, step_misuse, PP_ERR_USAGE, "step returned with the forward of micro-batch 0, chunk 0 open");
    g_case = 3;
    expect_run_fails(&c, step_misuse, PP_ERR_USAGE, "pp_stash_block: block 2 does not exist (chunk 0 has 2)");
    g_case = 4;
    expect_run_fails(&c, step_misuse, PP_ERR_SHAPE, "pp_block_linear2: its input is");
    g_case = 5;
    expect_run_fails(&c, step_misuse, PP_ERR_USAGE, "pp_block_gelu_backward: block 0 of micro-batch 0, chunk 0 has "
                                                    "no backward open");
    g_case = 6;
    expect_run_fails(&c, step_misuse, PP_ERR_SHAPE, "pp_block_proj: its input is");
    g_case = 0;
    expect_run_fails(&c, step_whole_stage, PP_ERR_USAGE, "pp_stage_forward: in the tpblock lab the stage's blocks are "
                                                         "the schedule's own");
    pp_run_config g = config("gpipe", 1, 1, 1);
    expect_run_fails(&g, step_layered_elsewhere, PP_ERR_USAGE, "pp_stage_forward_begin: only the tpblock lab runs a "
                                                               "stage's blocks itself");
    pp_run_config rc = config("tpblock", 2, 1, 1);
    rc.recompute = 1;
    char err[512];
    cr_expect_neq(pp__config_check(&rc, err, sizeof err), 0);
    cr_expect(strstr(err, "--recompute is not offered with 1F1B with tensor-parallel blocks"), "%s", err);
}

/* ---- the layered model against the whole stage ------------------------------------------------------------- */

/* One stage run layer by layer, as the reference block does, every block's eight layers, its two biases and its
 * two residuals, against pp__model_forward and its backward: the same output, input gradient and weight gradients
 * (uncut, T = 1; within fp32 rounding, since the block adds the biases and the residuals in its own order), and the
 * stash the formula the memory check grades by says. Stages with and without the embedding and the head. */
Test(tpblock, a_stage_run_layer_by_layer_is_the_whole_stage) {
    pp_model_dims d = {.vocab = 32, .hidden = 16, .ffn = 64, .heads = 4, .seq = 4, .layers = 3, .seed = 5};
    char err[256];
    pp_backend *be = pp__backend_open("cpu", 0, 1, err, sizeof err);
    cr_assert(be);
    int rows = 8;
    char what[96];
    for (int edge = 0; edge < 3; edge++) {
        int embed = edge == 0, head = edge == 2;
        pp_stage_model a, b;
        pp__model_init(&a, &d, 0, 3, embed, head, be);
        pp__model_init(&b, &d, 0, 3, embed, head, be);
        pp_arena arena = {0};
        int tok[8], tgt[8];
        pp__data_microbatch(&d, 2, 0, 0, tok, tgt);
        pp_tensor *tokens = pp__tensor_new(be, &arena, rows, 1, PP_I32, 0), *targets = NULL;
        pp__tensor_from_host(tokens, tok);
        if (head) {
            targets = pp__tensor_new(be, &arena, rows, 1, PP_I32, 0);
            pp__tensor_from_host(targets, tgt);
        }
        pp_tensor *x = NULL;
        if (!embed) {
            float *h = malloc((size_t)rows * d.hidden * sizeof *h);
            for (int i = 0; i < rows * d.hidden; i++) h[i] = (float)((i * 37) % 11) / 7.0f - 0.7f;
            x = pp__tensor_new(be, &arena, rows, d.hidden, PP_F32, 0);
            pp__tensor_from_host(x, h);
            free(h);
        }
        pp_model_stash *sa, *sb;
        pp_tensor *ya = pp__model_forward(&a, &arena, rows, x, embed ? tokens : NULL, targets, &sa);
        pp_tensor *h = pp__model_open(&b, &arena, rows, x, embed ? tokens : NULL, targets, &sb);
        for (int i = 0; i < 3; i++)
            for (int half = 0; half < 2; half++) { /* attention's four layers, then the MLP's */
                pp_tensor *t = h;
                for (int k = 0; k < PP_HALF_LAYERS; k++)
                    t = pp__model_layer_forward(&b, sb, i, (pp_layer)(half * PP_HALF_LAYERS + k), t);
                pp__model_bias_forward(&b, i, (pp_layer)(half * PP_HALF_LAYERS + PP_HALF_LAYERS - 1), t);
                be->ops->axpy(be->ctx, t->data, 1.0f, h->data, rows * d.hidden);
                h = t;
            }
        pp_tensor *yb = pp__model_close(&b, &arena, sb, h);
        cr_expect_eq(pp__stash_bytes(sb), pp__model_layered_bytes(&d, 3, embed, head, 1, rows),
                     "edge %d: the stash holds what the memory check's formula says", edge);
        float *ha = malloc(ya->bytes), *hb = malloc(yb->bytes);
        pp__tensor_to_host(ya, ha), pp__tensor_to_host(yb, hb);
        cr_assert_eq(ya->bytes, yb->bytes);
        snprintf(what, sizeof what, "edge %d: the output", edge);
        expect_close_arr(what, hb, ha, ya->bytes / sizeof(float), 1e-6, 1e-5);
        free(ha), free(hb);
        /* the backward from a fixed output gradient */
        pp_tensor *dy = pp__tensor_new(be, &arena, ya->rows, ya->cols, PP_F32, 0);
        float *g = malloc(dy->bytes);
        for (int i = 0; i < ya->rows * ya->cols; i++) g[i] = head ? 0.5f : (float)((i * 13) % 5) / 9.0f - 0.2f;
        pp__tensor_from_host(dy, g);
        free(g);
        pp_tensor *dxa = pp__model_backward_input(&a, &arena, sa, dy);
        pp__model_backward_weight(&a, sa);
        pp_tensor *gb = pp__model_back_open(&b, &arena, sb, dy);
        for (int i = 2; i >= 0; i--)
            for (int half = 1; half >= 0; half--) { /* the MLP's four layers in reverse, then attention's */
                pp__model_bias_backward(&b, i, (pp_layer)(half * PP_HALF_LAYERS + PP_HALF_LAYERS - 1), gb);
                pp_tensor *t = gb;
                for (int k = PP_HALF_LAYERS - 1; k >= 0; k--)
                    t = pp__model_layer_backward(&b, sb, i, (pp_layer)(half * PP_HALF_LAYERS + k), t);
                be->ops->axpy(be->ctx, t->data, 1.0f, gb->data, rows * d.hidden);
                gb = t;
            }
        pp_tensor *dxb = pp__model_back_close(&b, &arena, sb, gb);
        cr_expect_eq(dxa == NULL, dxb == NULL, "edge %d: dx on one side only", edge);
        if (dxa && dxb) {
            float *p = malloc(dxa->bytes), *q = malloc(dxb->bytes);
            pp__tensor_to_host(dxa, p), pp__tensor_to_host(dxb, q);
            snprintf(what, sizeof what, "edge %d: the input gradient", edge);
            expect_close_arr(what, q, p, dxa->bytes / sizeof(float), 1e-6, 1e-5);
            free(p), free(q);
        }
        for (int k = 0; k < a.nparams; k++) {
            float *p = malloc(a.params[k].g->bytes), *q = malloc(b.params[k].g->bytes);
            pp__tensor_to_host(a.params[k].g, p), pp__tensor_to_host(b.params[k].g, q);
            snprintf(what, sizeof what, "edge %d: %s's gradient", edge, a.params[k].name);
            expect_close_arr(what, q, p, a.params[k].g->bytes / sizeof(float), 1e-6, 1e-5);
            free(p), free(q);
        }
        pp__stash_release(sa), pp__stash_release(sb);
        pp__arena_clear(&arena);
        pp__model_free(&a), pp__model_free(&b);
    }
    pp__backend_close(be);
}

/* b2's gradient added on shard 0 alone: shard 0's gradients are full-batch training's, but shard 1's b2 gradient
 * is zero, and every shard steps its own whole b2: the gradient check grades every shard's and names it. */
Test(tpblock, a_shard_whose_gradient_differs_is_named) {
    for (int T = 2; T <= 4; T *= 2) {
        pp_test_result r;
        grade("tests/broken/tp-b2-grad-one-shard", T, 2, 4, &r);
        expect_gradients_say(&r, "shard 1 of rank 0's gradient of block0.b2 is all zero where shard 0's matches the "
                                 "full batch's");
        cr_expect_eq(r.score, 0, "%s: %g/%g", r.name, r.score, r.max);
    }
}
