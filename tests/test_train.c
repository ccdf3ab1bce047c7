/* test_train.c: training on a corpus. Its windows are drawn from the seed, step and micro-batch alone and are the
 * file's bytes; a run on corpus data passes every check of pplab grade against the full-batch reference on the same
 * data; the weights a run reports after its steps are the ones it ends with; and `pplab train` prints its lines,
 * learns (its training loss falls below a unigram byte model's, computed here from the file), and refuses a bad
 * flag or a missing corpus in one line. Tests run from the project root. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "impl_build.h"
#include "runtime.h"
#include "schedule_lab.h"
#include "schedules.h"
#include "testutil.h"

#define CORPUS "data/shakespeare.txt"

TestSuite(train, .timeout = 120);

static const pp_corpus *corpus(int seq) {
    char err[1024];
    const pp_corpus *c = pp__corpus_open(CORPUS, seq, err, sizeof err);
    cr_assert(c, "%s", err);
    return c;
}

/* The file's bytes, read here as a reader would. */
static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot read %s (run from the project root)", path);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*n + 1);
    cr_assert(b && fread(b, 1, *n, f) == *n);
    fclose(f);
    return b;
}

Test(train, the_corpus_is_the_file_with_its_last_tenth_held_out) {
    size_t n;
    unsigned char *bytes = slurp(CORPUS, &n);
    const pp_corpus *c = corpus(64);
    cr_expect_eq(c->size, n);
    cr_expect_eq(c->train, n - n / 10, "the training part ends where the last tenth starts");
    cr_expect(!memcmp(c->bytes, bytes, n), "the corpus holds the file's bytes");
    cr_expect_eq(corpus(16), c, "a second open is the same bytes, read once");
    for (size_t i = 0; i < n; i++)
        cr_assert(bytes[i] == '\n' || (bytes[i] >= ' ' && bytes[i] <= '~'), "byte %zu (%d) is not printable ASCII",
                  i, bytes[i]);
    free(bytes);
}

/* Windows: drawn from (seed, step, micro-batch, window) alone, inside the training part, the targets the tokens
 * moved by one byte; another step, micro-batch or seed draws others. */
Test(train, windows_are_drawn_from_the_seed_step_and_microbatch) {
    const int seq = 32, b = 4;
    const pp_corpus *c = corpus(seq);
    pp_model_dims d = {.vocab = 256, .hidden = 8, .ffn = 32, .seq = seq, .layers = 1, .seed = 7};
    int tok[4 * 32], tgt[4 * 32], tok2[4 * 32], tgt2[4 * 32];
    pp__data_fill(CORPUS, &d, b, 3, 5, tok, tgt);
    pp__data_fill(CORPUS, &d, b, 3, 5, tok2, tgt2);
    cr_expect(!memcmp(tok, tok2, sizeof tok) && !memcmp(tgt, tgt2, sizeof tgt), "the same draw twice differs");
    for (int i = 0; i < b; i++) {
        size_t off = pp__corpus_offset(c, d.seed, seq, 3, 5, i);
        cr_expect_leq(off + (size_t)seq, c->train - 1, "window %d at %zu leaves the training part", i, off);
        for (int j = 0; j < seq; j++) {
            cr_assert_eq(tok[i * seq + j], c->bytes[off + (size_t)j]);
            cr_assert_eq(tgt[i * seq + j], c->bytes[off + (size_t)j + 1]);
        }
    }
    int same = 0;
    for (int step = 0; step < 50; step++)
        for (int mb = 0; mb < 8; mb++)
            for (unsigned seed = 1; seed <= 2; seed++)
                same += pp__corpus_offset(c, seed, seq, step, mb, 0) == pp__corpus_offset(c, 1, seq, 0, 0, 0);
    cr_expect_eq(same, 1, "%d of 800 draws fell on the same window as (seed 1, step 0, mb 0)", same);
    /* the validation windows: the tail's first and last whole windows, and every one inside it */
    cr_expect_eq(pp__corpus_val_offset(c, seq, 0, 16), c->train);
    cr_expect_eq(pp__corpus_val_offset(c, seq, 15, 16), c->size - (size_t)seq - 1);
}

Test(train, without_a_corpus_the_data_is_the_synthetic_tasks) {
    pp_model_dims d = {.vocab = 64, .hidden = 8, .ffn = 32, .seq = 16, .layers = 1, .seed = 3};
    int tok[2 * 16], tgt[2 * 16], tok2[2 * 16], tgt2[2 * 16];
    pp__data_fill(NULL, &d, 2, 1, 2, tok, tgt);
    pp__data_microbatch(&d, 2, 1, 2, tok2, tgt2);
    cr_expect(!memcmp(tok, tok2, sizeof tok) && !memcmp(tgt, tgt2, sizeof tgt));
}

Test(train, a_bad_corpus_is_one_line_naming_it) {
    char err[1024];
    cr_expect_null(pp__corpus_open("/nonexistent/text.txt", 16, err, sizeof err));
    cr_expect(strstr(err, "/nonexistent/text.txt") && strstr(err, "--corpus") && !strchr(err, '\n'), "%s", err);
    char path[] = "/tmp/pplab-corpus-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, "To be, or not to be", 19), 19);
    close(fd);
    cr_expect_null(pp__corpus_open(path, 16, err, sizeof err), "19 bytes hold no window of 17 in each part");
    cr_expect(strstr(err, "lower --seq") && !strchr(err, '\n'), "%s", err);
    unlink(path);
    pp_run_config c;
    pp__config_defaults(&c);
    c.corpus = CORPUS;
    cr_expect_neq(pp__config_check(&c, err, sizeof err), 0, "vocab 64 on a corpus of bytes");
    cr_expect(strstr(err, "the vocabulary must be 256, not 64"), "%s", err);
    c.vocab = 256;
    cr_expect_eq(pp__config_check(&c, err, sizeof err), 0, "%s", err);
}

static pp_step_fn solution(const char *lab) {
    char err[4096];
    pp_step_fn fn = (pp_step_fn)pp__impl_load("solutions", pp__lab_find(lab), err, sizeof err);
    cr_assert(fn, "%s", err);
    return fn;
}

static pp_run_config corpus_config(const char *schedule, int P, int M, int v) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def(schedule), c.P = P, c.M = M, c.v = v, c.steps = 2;
    c.corpus = CORPUS, c.vocab = 256, c.seq = 32;
    return c;
}

/* The grader's own checks (every one of pplab grade: gradients, losses, weights after the steps, bubble, peaks)
 * against the full-batch reference, which draws the same windows. */
Test(train, a_corpus_run_passes_every_check_against_the_reference) {
    static const struct { const char *lab; int P, M, v; } runs[] = {{"1f1b", 2, 4, 1}, {"interleaved", 2, 4, 2}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        pp_run_config c = corpus_config(runs[i].lab, runs[i].P, runs[i].M, runs[i].v);
        pp_run_result res;
        cr_assert_eq(pp__run(&c, solution(runs[i].lab), &res), PP_OK, "%s", res.error);
        static pp_test_result out;
        memset(&out, 0, sizeof out);
        snprintf(out.cfg.lab, sizeof out.cfg.lab, "%s", runs[i].lab);
        out.cfg.P = c.P, out.cfg.M = c.M, out.cfg.v = c.v, out.cfg.steps = c.steps, out.cfg.seed = c.seed;
        out.status = PP_OK;
        pp__schedule_lab_check(&c, &res, NULL, NULL, &out);
        for (int k = 0; k < out.nchecks; k++)
            cr_expect(out.checks[k].passed, "%s on the corpus: check %s failed: %s", runs[i].lab, out.checks[k].name,
                      out.checks[k].msg);
        cr_expect_eq(out.score, out.max, "%s: %g of %g", runs[i].lab, out.score, out.max);
        cr_expect_lt(out.grad_err, 1e-5, "%s: gradients %.3g off the reference's", runs[i].lab, out.grad_err);
        pp__result_free(&res);
    }
}

/* What a run reports after its steps (pp_program.on_step) is its loss of each step and, when asked, the weights it
 * then holds: after the last step, the ones its result carries. */
typedef struct reported {
    int calls, with_weights, n;
    float loss[8];
    float *last;
} reported;

static void on_step(void *arg, int step, float loss, double step_s, const pp_param_result *w, int n) {
    reported *r = arg;
    cr_assert_eq(step, r->calls, "step %d reported as the %d-th", step, r->calls);
    cr_expect_gt(step_s, 0);
    r->loss[r->calls++] = loss;
    if (!w) return;
    r->with_weights++;
    free(r->last);
    long total = 0;
    for (int i = 0; i < n; i++) total += w[i].count;
    r->last = malloc((size_t)total * sizeof(float));
    for (int i = 0, k = 0; i < n; k += w[i].count, i++) memcpy(r->last + k, w[i].weight, (size_t)w[i].count * 4);
    r->n = (int)total;
}

Test(train, the_weights_a_run_reports_are_the_ones_it_holds) {
    pp_run_config c = corpus_config("interleaved", 2, 4, 2);
    c.steps = 5, c.optimizer = PP_OPT_ADAMW, c.lr = 1e-3f;
    reported r = {0};
    pp_program prog = {.fn = solution("interleaved"), .on_step = on_step, .step_arg = &r, .weights_every = 2};
    pp_run_result res;
    cr_assert_eq(pp__run_program(&c, &prog, &res), PP_OK, "%s", res.error);
    cr_expect_eq(r.calls, 5);
    cr_expect_eq(r.with_weights, 3, "after steps 2, 4 and the last");
    for (int k = 0; k < 5; k++) cr_expect_eq(r.loss[k], res.loss[k], "step %d's loss", k + 1);
    long k = 0;
    for (int i = 0; i < res.nparams; k += res.params[i].count, i++)
        cr_expect(!memcmp(r.last + k, res.params[i].weight, (size_t)res.params[i].count * 4), "%s",
                  res.params[i].name);
    cr_expect_eq(k, r.n, "the reported weights are the whole model's");
    free(r.last);
    pp__result_free(&res);
    /* a reporting run cuts no stage over shards */
    c.T = 2;
    cr_expect_eq(pp__run_program(&c, &prog, &res), PP_ERR_CONFIG);
    cr_expect(strstr(res.error, "drop --tp"), "%s", res.error);
    pp__result_free(&res);
}

/* ---- pplab train ---------------------------------------------------------------------------------------------- */

static int pplab(char *out, size_t len, const char *args) {
    char dir[PATH_MAX], cmd[PATH_MAX + 1024];
    test_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "NO_COLOR=1 '%s/pplab' %s 2>&1", dir, args);
    return test_capture(cmd, out, len);
}

static char buf[1 << 17];

/* The entropy of the file's bytes in nats: what a model that knows only how often each byte comes reaches. */
static double unigram_entropy(const char *path) {
    size_t n;
    unsigned char *b = slurp(path, &n);
    double count[256] = {0}, h = 0;
    for (size_t i = 0; i < n; i++) count[b[i]]++;
    for (int i = 0; i < 256; i++)
        if (count[i] > 0) h -= count[i] / (double)n * log(count[i] / (double)n);
    free(b);
    return h;
}

Test(train, a_short_training_prints_its_lines_and_learns) {
    int rc = pplab(buf, sizeof buf, "train --impl solutions --steps 30 --width 64 --layers 2 --seq 32 --sample 80");
    cr_assert_eq(rc, 0, "%s", buf);
    cr_expect(strstr(buf, "pplab train: 1f1b on 2 stages x 1 chunk, 4 micro-batches of 8 windows of 32 bytes"), "%s",
              buf);
    cr_expect(strstr(buf, "corpus: data/shakespeare.txt, "), "%s", buf);
    for (int k = 1; k <= 30; k++) {
        char line[64];
        snprintf(line, sizeof line, "\nstep %2d/30  loss ", k);
        cr_expect(strstr(buf, line), "no line for step %d:\n%s", k, buf);
    }
    const char *sum = strstr(buf, "\ntrained 30 steps in ");
    cr_assert(sum, "%s", buf);
    double loss = 0, val = 0, uni = 0;
    const char *at = strstr(sum, "\ntraining loss ");
    cr_assert(at && sscanf(at, "\ntraining loss %lf", &loss) == 1, "%s", sum);
    cr_assert((at = strstr(sum, "validation loss ")) && sscanf(at, "validation loss %lf", &val) == 1, "%s", sum);
    cr_assert((at = strstr(sum, "a unigram byte model: ")) && sscanf(at, "a unigram byte model: %lf", &uni) == 1);
    double h = unigram_entropy(CORPUS);
    cr_expect(fabs(uni - h) < 0.01, "the unigram loss it prints, %.4f, is the file's byte entropy %.4f", uni, h);
    cr_expect_lt(loss, h, "after 30 steps the training loss %.4f is still above a unigram model's %.4f", loss, h);
    cr_expect_lt(val, h, "the validation loss %.4f is above a unigram model's %.4f", val, h);
    const char *sample = strstr(sum, "\nsample (80 bytes after the prompt, temperature 0.8, seed 1234):\n");
    cr_assert(sample, "%s", sum);
    cr_expect_geq(strlen(strchr(sample + 1, '\n') + 1), 81, "the prompt and 80 bytes: %s", sample);
}

Test(train, bad_input_gets_one_clear_line) {
    static const struct { const char *args, *needle; } cases[] = {
        {"train --steps x", "--steps needs an integer"},
        {"train --bogus", "unknown flag '--bogus'"},
        {"train --schedule pipedream", "unknown schedule 'pipedream'"},
        {"train --corpus /nonexistent/plays.txt", "corpus /nonexistent/plays.txt: No such file or directory"},
        {"train --transport carrier-pigeon", "unknown transport 'carrier-pigeon'"},
        {"train --prompt=", "--prompt needs a value"},
        {"train --temperature 0", "--temperature needs a number > 0"},
        {"train --seq 100000", "--seq needs an integer"},
        {"train --plot /nonexistent/loss.png", "--plot /nonexistent/loss.png: its folder /nonexistent"},
        {"train --schedule naive", "use --microbatches 1"},
        {"train --stages 4 --layers 2", "--layers 2 is fewer than the 4 virtual stages"},
        {"train extra", "unexpected argument 'extra'"},
        {"run --schedule gpipe --stages 2 --microbatches 2 --corpus " CORPUS " --vocab 100",
         "the vocabulary must be 256, not 100"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = pplab(buf, sizeof buf, cases[i].args);
        cr_expect_eq(rc, 2, "'%s' is a usage error: exit 2, got %d", cases[i].args, rc);
        cr_expect(strstr(buf, cases[i].needle) != NULL, "'%s': expected '%s' in: %s", cases[i].args, cases[i].needle,
                  buf);
        cr_expect(strchr(buf, '\n') == buf + strlen(buf) - 1, "'%s': one line only: %s", cases[i].args, buf);
    }
}

/* An untouched stub trains nothing, and says so. */
Test(train, a_stub_that_runs_nothing_says_so) {
    char dir[PATH_MAX], args[PATH_MAX + 128];
    cr_assert_eq(test_pristine_labs(dir, sizeof dir), 0);
    snprintf(args, sizeof args, "train --impl %s --steps 2 --sample 10", dir);
    int rc = pplab(buf, sizeof buf, args);
    test_rm_tree(dir);
    cr_expect_eq(rc, 1, "%s", buf);
    cr_expect(strstr(buf, "no rank ran any operation: is pp_1f1b_step still the untouched stub?"), "%s", buf);
    cr_expect(!strstr(buf, "sample ("), "no sample from an untrained model: %s", buf);
}
