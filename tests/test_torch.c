/* test_torch.c: the kit against PyTorch. Its GPT computes what torch computes from the same weights (the loss and
 * every gradient, tests/torch/gpt_check.py), and its orders travel to PyTorch: tests/torch/orders_roundtrip.py
 * exports every schedule's canonical order with `pplab run --export-order`, loads each file with torch's own
 * _PipelineScheduleRuntime._load_csv (its validation and its lowering to communication), and checks that torch
 * reads the file's order, writes the same bytes back, and, where torch has a class for the schedule, computes the
 * same order itself; full DualPipe, which the CSV cannot say, must be refused in pplab's one documented line.
 * Needs a Python with torch 2.15 (PPLAB_TORCH_PYTHON, else python3); skipped, with the reason, where there is none,
 * and failed in CI (PPLAB_CI=1), which installs it. Tests run from the project root. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "testutil.h"

TestSuite(torch, .timeout = 300);

Test(torch, every_exported_order_is_read_by_torchs_runtime) {
    const char *py = getenv("PPLAB_TORCH_PYTHON");
    if (!py || !py[0]) py = "python3";
    char cmd[2 * PATH_MAX + 256], out[1 << 16], build[PATH_MAX];
    snprintf(cmd, sizeof cmd, "'%s' -c 'import torch.distributed.pipelining.schedules as s; "
             "s._PipelineScheduleRuntime._load_csv; print(\"torch\")' 2>/dev/null", py);
    if (test_capture(cmd, out, sizeof out) != 0 || !strstr(out, "torch"))
        test_skip("no torch with torch.distributed.pipelining in %s: pip install torch==2.15.0, or set "
                     "PPLAB_TORCH_PYTHON to a Python that has it", py);
    test_build_dir(build, sizeof build);
    snprintf(cmd, sizeof cmd, "'%s' tests/torch/orders_roundtrip.py '%s' 2>&1", py, build);
    int rc = test_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "the round trip failed:\n%s", out);
    cr_expect(strstr(out, " passed, 0 failed"), "%s", out);
    cr_expect(!strstr(out, "\n0 passed"), "no order was compared:\n%s", out);
}

/* ---- the model against PyTorch's own modules on the same weights ------------------------------------------ */

/* One forward and backward of the whole model as a single stage (embedding, L blocks, head) on the cpu backend,
 * on pp__data_microbatch's tokens, written to `path` for tests/torch/gpt_check.py: a line of dims, the loss, the
 * tokens and targets, then each parameter's weight and gradient as "name rows cols v ..." lines, in the model's
 * order. Returns 0, or -1 with the reason in err. */
static int write_gpt_case(const char *path, const pp_model_dims *d, int samples, char *err, size_t len) {
    pp_backend *be = pp__backend_open("cpu", 0, 1, err, len);
    if (!be) return -1;
    if (!be->ops->attn_fwd || !be->ops->attn_bwd) {
        snprintf(err, len, "the cpu backend has no attention kernel");
        pp__backend_close(be);
        return -1;
    }
    pp_stage_model m;
    pp__model_init(&m, d, 0, d->layers, 1, 1, be);
    int rows = samples * d->seq;
    int *tok = malloc(sizeof(int) * rows), *tgt = malloc(sizeof(int) * rows);
    pp__data_microbatch(d, samples, 0, 0, tok, tgt);
    pp_arena a = {0};
    pp_tensor *tokens = pp__tensor_new(be, &a, rows, 1, PP_I32, -1), *targets = pp__tensor_new(be, &a, rows, 1, PP_I32, -1);
    pp__tensor_from_host(tokens, tok);
    pp__tensor_from_host(targets, tgt);
    pp_model_stash *st;
    pp_tensor *out = pp__model_forward(&m, &a, rows, NULL, tokens, targets, &st);
    float loss, one = 1;
    pp__tensor_to_host(out, &loss);
    pp_tensor *dy = pp__tensor_new(be, &a, 1, 1, PP_F32, -1);
    pp__tensor_from_host(dy, &one);
    pp__model_backward_input(&m, &a, st, dy);
    pp__model_backward_weight(&m, st);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, len, "cannot write %s", path);
    } else {
        fprintf(f, "dims %d %d %d %d %d %d %d\nloss %.9g\n", d->vocab, d->hidden, d->ffn, d->heads, d->seq, d->layers,
                samples, loss);
        const char *what[] = {"tokens", "targets"};
        for (int j = 0; j < 2; j++) {
            fprintf(f, "%s", what[j]);
            for (int i = 0; i < rows; i++) fprintf(f, " %d", (j ? tgt : tok)[i]);
            fprintf(f, "\n");
        }
        for (int p = 0; p < m.nparams; p++) {
            pp_param *q = &m.params[p];
            int n = q->w->rows * q->w->cols;
            float *h = malloc(sizeof(float) * n);
            for (int j = 0; j < 2; j++) {
                pp__tensor_to_host(j ? q->g : q->w, h);
                fprintf(f, "%s %s %d %d", j ? "grad" : "weight", q->name, q->w->rows, q->w->cols);
                for (int i = 0; i < n; i++) fprintf(f, " %.9g", h[i]);
                fprintf(f, "\n");
            }
            free(h);
        }
        if (fclose(f)) snprintf(err, len, "cannot write %s", path), f = NULL;
    }
    pp__stash_release(st);
    pp__arena_clear(&a);
    pp__model_free(&m);
    pp__backend_close(be);
    free(tok), free(tgt);
    return f ? 0 : -1;
}

/* The kit's GPT, forward and backward, against the same model rebuilt from its weights in PyTorch
 * (tests/torch/gpt_check.py: torch's LayerNorm, F.scaled_dot_product_attention(is_causal=True), tanh GELU and
 * cross-entropy), every gradient and the loss compared elementwise (the script states the tolerances), at two
 * shapes: the usual one, and one of a single head, odd widths and an odd sequence length. Then the script runs
 * again with --spoil, which scales one gradient of each shape by 1.01 before comparing, and must fail there and
 * only there: the check catches a mistake that size. Two runs of Python, each importing torch once. */
Test(torch, gpt_forward_and_backward_match_torchs_on_the_same_weights) {
    const char *py = getenv("PPLAB_TORCH_PYTHON");
    if (!py || !py[0]) py = "python3";
    const pp_model_dims shapes[] = {
        {.vocab = 64, .hidden = 32, .ffn = 128, .heads = 4, .seq = 16, .layers = 2, .seed = 7},
        {.vocab = 37, .hidden = 20, .ffn = 80, .heads = 1, .seq = 7, .layers = 3, .seed = 11},
    };
    const int samples[] = {2, 3};
    char cmd[4 * PATH_MAX + 256], out[1 << 16], err[256], path[2][PATH_MAX];
    for (int s = 0; s < 2; s++) {
        snprintf(path[s], sizeof path[s], "/tmp/pplab-torch-gpt-%d-%d.txt", (int)getpid(), s);
        cr_assert_eq(write_gpt_case(path[s], &shapes[s], samples[s], err, sizeof err), 0, "%s", err);
    }
    for (int spoil = 0; spoil < 2; spoil++) {
        snprintf(cmd, sizeof cmd, "'%s' tests/torch/gpt_check.py %s '%s' '%s' 2>&1", py, spoil ? "--spoil" : "",
                 path[0], path[1]);
        int rc = test_capture(cmd, out, sizeof out);
        if (rc == 77 || rc == 127) { /* the script's "no torch", or no such Python */
            for (int s = 0; s < 2; s++) unlink(path[s]);
            test_skip("no torch in %s (pip install torch==2.15.0, or set PPLAB_TORCH_PYTHON): %s", py, out);
        }
        cr_log_info("%s", out);
        if (!spoil) {
            cr_expect_eq(rc, 0, "pplab's GPT differs from torch's:\n%s", out);
            cr_expect(strstr(out, " passed, 0 failed"), "%s", out);
            cr_expect(!strstr(out, "\n0 passed"), "nothing was compared:\n%s", out);
        } else {
            cr_expect_neq(rc, 0, "one gradient scaled by 1.01 passed the comparison:\n%s", out);
            cr_expect(strstr(out, "FAIL block0.wq:") && strstr(out, " 2 failed"),
                      "the spoiled gradient should fail in each shape, and nothing else:\n%s", out);
        }
    }
    for (int s = 0; s < 2; s++) unlink(path[s]);
}
