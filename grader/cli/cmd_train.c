/* cmd_train.c: `pplab train`: the kit's model trained on a corpus of text (the kit's is data/shakespeare.txt, bytes
 * as tokens) by any schedule of the kit, a lab's own code or the reference, through the runtime every run goes
 * through; each step's training loss (the step's mean, as the run reports it), validation loss and wall time, then a
 * sample of text the trained model writes. The weights come back from the run after the steps it is asked for
 * (pp_program.on_step), from every rank, thread or process; the validation loss and the sample are computed here, on
 * the whole model rebuilt as one stage on the CPU. Started by mpirun or srun, every process runs one rank over the
 * mpi transport and rank 0 alone prints. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crash.h"
#include "data.h"
#include "hash.h"
#include "host.h"
#include "impl_build.h"
#include "plot.h"
#include "schedules.h"
#include "transport.h"

static const char usage[] =
    "usage: pplab train [flag ...]\n"
    "Trains the kit's model on a corpus of text, bytes as tokens (the kit's: data/shakespeare.txt, nine plays of\n"
    "Shakespeare; its last tenth held out for validation), with schedule S run as grading runs it, then writes a\n"
    "sample of text with the trained model. Each step prints:\n"
    "  step K/N  loss L  val V  T ms   the step's mean training loss, the loss on a fixed validation batch (after\n"
    "                                  the steps --eval-every picks; '-' after the others) and the step's wall time\n"
    "(a progress bar instead when stdout is a terminal), then a summary, with the loss of a unigram byte model of the\n"
    "corpus to compare, and the sample. Under mpirun or srun every process runs one rank over the mpi transport and\n"
    "rank 0 prints.\n";

static const char notes[] =
    "Exit status 0 when the training ran, 1 when the run failed (a deadlock, a misused handle, a schedule that ran\n"
    "nothing, a plot not drawn), 2 for a usage error or an invalid configuration.\n";

/* The validation loss after a step: on VAL_WINDOWS windows spread evenly over the held-out tail, the same ones every
 * time; at the end, on FINAL_WINDOWS of them, VAL_WINDOWS at a time. */
enum { VAL_WINDOWS = 8, FINAL_WINDOWS = 256 };

typedef struct train_opts {
    pp_run_config cfg;
    const char *schedule, *impl, *plot, *prompt, *corpus;
    unsigned given;      /* PP_CLI_GIVEN_CHUNKS when --chunks was given */
    int sample, eval_every, in_process, unsafe;
    float temperature;
    pp_sandbox sb;
} train_opts;

static void train_opts_init(train_opts *t) {
    memset(t, 0, sizeof *t);
    pp__config_defaults(&t->cfg);
    pp_run_config *c = &t->cfg;
    t->schedule = "1f1b", t->impl = "labs", t->prompt = "\\n";
    c->P = 2, c->M = 4, c->layers = 4, c->hidden = 128, c->seq = 64, c->mb_size = 8, c->vocab = PP_CORPUS_VOCAB;
    c->steps = 600, c->optimizer = PP_OPT_ADAMW, c->lr = 3e-3f;
    t->sample = 300, t->eval_every = 1, t->temperature = 0.8f;
    pp__sandbox_defaults(&t->sb);
}

/* The one table of train's flags: the parser's and --help's. */
static int train_table(train_opts *t, pp_flag *out) {
    pp_run_config *c = &t->cfg;
    const pp_flag f[] = {
        {.name = "--impl", .kind = PP_FLAG_STR, .to = &t->impl, .arg = "I", .help = pp__impl_choices()},
        {.name = "--schedule", .kind = PP_FLAG_STR, .to = &t->schedule, .arg = "S",
         .help = "the schedule: {schedules}"},
        {.name = "--stages", .kind = PP_FLAG_INT, .to = &c->P, .lo = 1, .hi = 64, .arg = "P",
         .help = "ranks, each a pipeline stage"},
        {.name = "--microbatches", .kind = PP_FLAG_INT, .to = &c->M, .lo = 1, .hi = 1024, .arg = "M",
         .help = "micro-batches per step (1 for naive)"},
        {.name = "--chunks", .kind = PP_FLAG_INT, .to = &c->v, .lo = 1, .hi = 16, .given = &t->given,
         .bit = PP_CLI_GIVEN_CHUNKS, .arg = "v", .help = "chunks (virtual stages) per rank, for {chunked}",
         .dflt = "2 for {chunked}, else 1"},
        {.name = "--transport", .kind = PP_FLAG_STR, .to = &c->transport, .arg = "threads|mpi",
         .help = "how ranks talk: threads of one process; mpi, one process per rank (mpirun or srun choose it)"},
        {.name = "--corpus", .kind = PP_FLAG_STR, .to = &t->corpus, .arg = "FILE",
         .help = "the text to learn, its bytes the tokens: windows of its first nine tenths train, its last tenth "
                 "validates", .dflt = "the kit's data/shakespeare.txt"},
        {.name = "--layers", .kind = PP_FLAG_INT, .to = &c->layers, .lo = 1, .hi = 4096, .arg = "L",
         .help = "blocks in the model, spread over the virtual stages"},
        {.name = "--width", .kind = PP_FLAG_INT, .to = &c->hidden, .lo = 1, .hi = 65536, .arg = "H",
         .help = "the model's hidden size (its feed-forward layers are 4H wide)"},
        {.name = "--seq", .kind = PP_FLAG_INT, .to = &c->seq, .lo = 1, .hi = 65536, .arg = "T",
         .help = "bytes per window: each window's tokens are T bytes of the corpus, its targets the next T"},
        {.name = "--microbatch-size", .kind = PP_FLAG_INT, .to = &c->mb_size, .lo = 1, .hi = 4096, .arg = "b",
         .help = "windows per micro-batch"},
        {.name = "--steps", .kind = PP_FLAG_INT, .to = &c->steps, .lo = 1, .hi = 100000, .arg = "K",
         .help = "optimizer steps"},
        {.name = "--lr", .kind = PP_FLAG_FLOAT, .to = &c->lr, .help = "AdamW's learning rate"},
        {.name = "--seed", .kind = PP_FLAG_UINT, .to = &c->seed, .lo = 0, .hi = 2147483647,
         .help = "seed of the weights, of the windows drawn and of the sample"},
        {.name = "--eval-every", .kind = PP_FLAG_INT, .to = &t->eval_every, .lo = 1, .hi = 100000, .arg = "K",
         .help = "measure the validation loss after every K-th step (and the last)"},
        {.name = "--sample", .kind = PP_FLAG_INT, .to = &t->sample, .lo = 0, .hi = 1 << 20, .arg = "N",
         .help = "bytes of text to write with the trained model at the end (0: none)"},
        {.name = "--temperature", .kind = PP_FLAG_FLOAT, .to = &t->temperature, .lo = 1e-9,
         .help = "the sample's temperature: below 1 surer, above 1 wilder"},
        {.name = "--prompt", .kind = PP_FLAG_STR, .to = &t->prompt, .arg = "TEXT",
         .help = "the text the sample starts from (\\n is a line break)", .dflt = "\\n"},
        {.name = "--plot", .kind = PP_FLAG_STR, .to = &t->plot, .arg = "FILE.png",
         .help = "draw the training and validation losses per step and the unigram model's (gnuplot)",
         .dflt = "not drawn"},
        {.name = "--in-process", .kind = PP_FLAG_SET, .to = &t->in_process, .set = 1,
         .help = "run the schedule inside pplab, unsandboxed, for gdb, ASan and printf debugging: trusted code only"},
        {.name = "--unsafe-no-sandbox", .kind = PP_FLAG_SET, .to = &t->unsafe, .set = 1,
         .help = "sandbox without seccomp and the uid switch, where the machine refuses them: trusted code only"},
    };
    memcpy(out, f, sizeof f);
    return (int)(sizeof f / sizeof f[0]);
}

static int train_flags(pp_flag *out) {
    static train_opts defaults;
    train_opts_init(&defaults);
    return train_table(&defaults, out);
}

/* ---- the whole model as one stage: validation and sampling -------------------------------------------------- */

typedef struct trainer {
    const train_opts *o;
    const pp_corpus *corpus;
    pp_backend *be;
    pp_stage_model m;          /* every block, the embedding and the head, on the CPU */
    float *loss, *val;         /* per step; val NAN where it was not measured */
    double *step_s;
    int steps_done, tty, bar;  /* bar: the progress bar's line is on screen */
    double t0;
} trainer;

/* Loads the run's weights (the whole model's, in any order) into the one-stage model, by name. */
static void model_load(trainer *t, const pp_param_result *w, int n) {
    PP_ASSERT(n == t->m.nparams);
    for (int i = 0; i < t->m.nparams; i++) {
        pp_param *p = &t->m.params[i];
        int k = 0;
        while (k < n && strcmp(w[k].name, p->name)) k++;
        PP_ASSERT(k < n && w[k].count == p->w->rows * p->w->cols);
        pp__tensor_from_host(p->w, w[k].weight);
    }
}

/* The model's forward over rows tokens (with their targets); its mean loss, and into probs (rows x 256, when not
 * NULL) the next byte's distribution at every position. */
static float model_forward(trainer *t, int rows, const int *tok, const int *tgt, float *probs) {
    pp_arena arena = {0};
    pp_tensor *tokens = pp__tensor_new(t->be, &arena, rows, 1, PP_I32, -1);
    pp_tensor *targets = pp__tensor_new(t->be, &arena, rows, 1, PP_I32, -1);
    pp__tensor_from_host(tokens, tok);
    pp__tensor_from_host(targets, tgt);
    pp_model_stash *st;
    float loss;
    pp__tensor_to_host(pp__model_forward(&t->m, &arena, rows, NULL, tokens, targets, &st), &loss);
    if (probs) pp__tensor_to_host(pp__stash_probs(st), probs);
    pp__stash_release(st);
    pp__arena_clear(&arena);
    return loss;
}

/* The mean loss of the model on n windows spread evenly over the held-out tail, VAL_WINDOWS at a time. */
static double validate(trainer *t, int n) {
    int seq = t->o->cfg.seq;
    size_t bytes = (size_t)VAL_WINDOWS * seq * sizeof(int);
    int *tok = pp__xmalloc(bytes), *tgt = pp__xmalloc(bytes);
    double sum = 0;
    for (int i = 0; i < n; i += VAL_WINDOWS) {
        int b = n - i < VAL_WINDOWS ? n - i : VAL_WINDOWS;
        for (int k = 0; k < b; k++)
            pp__corpus_window(t->corpus, pp__corpus_val_offset(t->corpus, seq, i + k, n), seq, tok + k * seq,
                              tgt + k * seq);
        sum += (double)model_forward(t, b * seq, tok, tgt, NULL) * b;
    }
    free(tok), free(tgt);
    return sum / n;
}

/* The corpus and, on rank 0 (me), the one-stage model; 0, or -1 after a line on stderr. */
static int trainer_init(trainer *t, const train_opts *o, int me) {
    char err[1024];
    memset(t, 0, sizeof *t);
    t->o = o;
    if (!(t->corpus = pp__corpus_open(o->cfg.corpus, o->cfg.seq, err, sizeof err)) ||
        !(t->be = pp__backend_open("cpu", 0, 1, err, sizeof err))) {
        fprintf(stderr, "pplab train: %s\n", err);
        return -1;
    }
    if (me != 0) return 0; /* rank 0 alone reports */
    pp_model_dims d;
    pp__config_model_dims(&o->cfg, &d);
    pp__model_init(&t->m, &d, 0, d.layers, 1, 1, t->be);
    int K = o->cfg.steps;
    t->loss = pp__xcalloc((size_t)K, sizeof *t->loss);
    t->val = pp__xcalloc((size_t)K, sizeof *t->val);
    t->step_s = pp__xcalloc((size_t)K, sizeof *t->step_s);
    for (int k = 0; k < K; k++) t->val[k] = NAN;
    t->tty = isatty(1) && !pp__mpi_env_launcher(); /* a launcher's pseudo-terminal is none of the user's */
    t->t0 = pp__now();
    return 0;
}

static void trainer_free(trainer *t) {
    if (t->m.params) pp__model_free(&t->m);
    if (t->be) pp__backend_close(t->be);
    free(t->loss), free(t->val), free(t->step_s);
}

/* The loss of a unigram byte model of the training part: the entropy of its bytes' frequencies, in nats. */
static double unigram_loss(const pp_corpus *c) {
    double count[256] = {0}, h = 0;
    for (size_t i = 0; i < c->train; i++) count[c->bytes[i]]++;
    for (int b = 0; b < 256; b++)
        if (count[b] > 0) h -= count[b] / (double)c->train * log(count[b] / (double)c->train);
    return h;
}

/* ---- the report of each step --------------------------------------------------------------------------------- */

/* "step 12/600  loss 2.4512  val 2.5012  38.1 ms", or with '-' where the validation loss was not measured. */
static void step_text(const trainer *t, int step, char *buf, size_t len) {
    char val[32] = "     -";
    if (!isnan(t->val[step])) snprintf(val, sizeof val, "%.4f", t->val[step]);
    int K = t->o->cfg.steps, w = snprintf(NULL, 0, "%d", K);
    snprintf(buf, len, "step %*d/%d  loss %.4f  val %s  %.1f ms", w, step + 1, K, t->loss[step], val,
             1e3 * t->step_s[step]);
}

/* pp_program.on_step: the step's figures, its validation loss when the weights came with it, and its line (on a
 * terminal, the progress bar's). */
static void on_step(void *arg, int step, float loss, double step_s, const pp_param_result *weights, int n) {
    trainer *t = arg;
    t->loss[step] = loss, t->step_s[step] = step_s, t->steps_done = step + 1;
    if (weights) {
        model_load(t, weights, n);
        t->val[step] = (float)validate(t, VAL_WINDOWS);
    }
    char line[160];
    step_text(t, step, line, sizeof line);
    if (!t->tty) {
        printf("%s\n", line);
        fflush(stdout);
        return;
    }
    int K = t->o->cfg.steps, done = (int)(20.0 * (step + 1) / K);
    printf("\r[%.*s%*s] %s ", done, "####################", 20 - done, "", line);
    t->bar = 1;
    /* every tenth of the way a line stays, so the curve can be read back */
    if ((step + 1) % (K / 10 > 0 ? K / 10 : 1) == 0 || step == K - 1) printf("\n"), t->bar = 0;
    fflush(stdout);
}

/* ---- the end: summary, plot, sample -------------------------------------------------------------------------- */

/* A generator of the sample's draws, from --seed: splitmix64's step, uniform in [0, 1). */
static double draw(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/* The byte after text[0..len): the model's distribution at the last of (up to) seq bytes before it, sharpened or
 * flattened by the temperature. The window starts at its first position: a later position sees only those
 * before it, so what pads the window behind the context changes nothing. */
static int next_byte(trainer *t, const unsigned char *text, size_t len, int *tok, int *tgt, float *probs,
                     uint64_t *rng) {
    int seq = t->o->cfg.seq;
    size_t from = len > (size_t)seq ? len - (size_t)seq : 0;
    int m = (int)(len - from);
    for (int j = 0; j < seq; j++) tok[j] = j < m ? text[from + (size_t)j] : ' ', tgt[j] = 0;
    model_forward(t, seq, tok, tgt, probs);
    const float *p = probs + (size_t)(m - 1) * PP_CORPUS_VOCAB;
    double w[PP_CORPUS_VOCAB], sum = 0;
    for (int b = 0; b < PP_CORPUS_VOCAB; b++) sum += w[b] = pow(p[b] > 0 ? p[b] : 0, 1.0 / t->o->temperature);
    double u = draw(rng) * sum;
    int b = 0;
    while (b < PP_CORPUS_VOCAB - 1 && (u -= w[b]) >= 0) b++;
    return b;
}

/* The prompt and n bytes the trained model writes after it, printable (a byte outside printable ASCII and the
 * line break shows as '?'). */
static void sample_print(trainer *t, const char *prompt, int n) {
    size_t plen = strlen(prompt);
    int seq = t->o->cfg.seq;
    unsigned char *text = pp__xmalloc(plen + (size_t)n + 1);
    memcpy(text, prompt, plen);
    int *tok = pp__xmalloc((size_t)seq * sizeof *tok), *tgt = pp__xmalloc((size_t)seq * sizeof *tgt);
    float *probs = pp__xmalloc((size_t)seq * PP_CORPUS_VOCAB * sizeof *probs);
    uint64_t rng = pp__hash_text(PP_HASH_INIT ^ t->o->cfg.seed, "sample", 16);
    for (size_t k = plen; k < plen + (size_t)n; k++)
        text[k] = (unsigned char)next_byte(t, text, k, tok, tgt, probs, &rng);
    for (size_t i = 0; i < plen + (size_t)n; i++)
        if (text[i] != '\n' && (text[i] < ' ' || text[i] > '~')) text[i] = '?';
    printf("sample (%d bytes after the prompt, temperature %g, seed %u):\n", n, t->o->temperature, t->o->cfg.seed);
    fwrite(text, 1, plen + (size_t)n, stdout);
    printf("\n");
    free(text), free(tok), free(tgt), free(probs);
}

/* The summary: time, the losses reached (the validation loss on FINAL_WINDOWS windows), the unigram model's. */
static void summary_print(trainer *t, double unigram) {
    int K = t->steps_done, last = K < 10 ? K : 10;
    double elapsed = pp__now() - t->t0, mean = 0, *rest = pp__xmalloc((size_t)K * sizeof *rest);
    for (int k = K - last; k < K; k++) mean += t->loss[k] / last;
    memcpy(rest, t->step_s, (size_t)K * sizeof *rest);
    double med = pp__cli_median(K > 1 ? rest + 1 : rest, K > 1 ? K - 1 : 1);
    free(rest);
    char which[64] = "step 1";
    if (K > 1) snprintf(which, sizeof which, "the median of steps 2-%d", K);
    printf("trained %d steps in %.1f s (%.1f ms/step, %s)\n", K, elapsed, 1e3 * med, which);
    printf("training loss %.4f (the last %d steps' mean), validation loss %.4f (%d windows of the held-out tail); "
           "a unigram byte model: %.4f\n", mean, last, validate(t, FINAL_WINDOWS), FINAL_WINDOWS, unigram);
}

/* --plot: the losses per step against the unigram model's. 0, or -1 after a line on stderr. */
static int plot_losses(const trainer *t, const char *path, double unigram) {
    int K = t->steps_done, nv = 0;
    double *x = pp__xmalloc((size_t)K * sizeof *x), *y = pp__xmalloc((size_t)K * sizeof *y);
    double *vx = pp__xmalloc((size_t)K * sizeof *vx), *vy = pp__xmalloc((size_t)K * sizeof *vy);
    for (int k = 0; k < K; k++) {
        x[k] = k + 1, y[k] = t->loss[k];
        if (!isnan(t->val[k])) vx[nv] = k + 1, vy[nv++] = t->val[k];
    }
    double ux[2] = {1, K}, uy[2] = {unigram, unigram};
    pp_plot_series s[] = {{"training (the step's mean)", x, y, K, PP_PLOT_LINES, 0},
                          {"validation (held-out tail)", vx, vy, nv, nv > 40 ? PP_PLOT_LINES : PP_PLOT_LINESPOINTS, 0},
                          {"unigram byte model", ux, uy, 2, PP_PLOT_LINES, 0}};
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s", path);
    char *dot = strrchr(prefix, '.');
    if (dot && !strcmp(dot, ".png")) *dot = 0;
    char title[200];
    snprintf(title, sizeof title, "pplab train: %s, P=%d, M=%d, v=%d", t->o->cfg.schedule->name, t->o->cfg.P,
             t->o->cfg.M, t->o->cfg.v);
    int rc = pp__plot_xy(prefix, title, "step", "loss (nats per byte)", s, 3);
    free(x), free(y), free(vx), free(vy);
    return rc;
}

/* ---- the command ----------------------------------------------------------------------------------------------- */

/* --prompt with its escapes undone (\n, \t, \\), into buf. */
static void prompt_unescape(const char *s, char *buf, size_t len) {
    size_t n = 0;
    for (; *s && n + 1 < len; s++) {
        if (s[0] == '\\' && (s[1] == 'n' || s[1] == 't' || s[1] == '\\'))
            buf[n++] = s[1] == 'n' ? '\n' : s[1] == 't' ? '\t' : '\\', s++;
        else
            buf[n++] = *s;
    }
    buf[n] = 0;
}

/* Every choice checked before anything runs; the corpus's path settled (the kit's when none was given). */
static void train_check(train_opts *o, char *corpus, size_t len) {
    char err[4096], names[64];
    if (pp__config_schedule(&o->cfg, o->schedule, err, sizeof err)) pp__cli_fail("train", "%s", err);
    if (!(o->given & PP_CLI_GIVEN_CHUNKS)) o->cfg.v = pp__schedule_default_chunks(o->cfg.schedule);
    if (!pp__transport_caps(o->cfg.transport))
        pp__cli_fail("train", "unknown transport '%s': use %s", o->cfg.transport,
                     pp__transport_names(PP_TRANSPORT_GRADES, names, sizeof names, ", ", " or "));
    if (o->corpus) {
        snprintf(corpus, len, "%s", o->corpus);
    } else {
        char build[PATH_MAX], root[PATH_MAX];
        pp__impl_dirs(build, root, sizeof build);
        snprintf(corpus, len, "%s/data/shakespeare.txt", root);
    }
    o->cfg.corpus = corpus;
    if (o->plot && pp__cli_writable(o->plot, err, sizeof err)) pp__cli_fail("train", "--plot %s", err);
    if (!o->prompt[0]) pp__cli_fail("train", "--prompt needs at least one byte to start the sample from");
    if (pp__config_check(&o->cfg, err, sizeof err) || pp__config_runnable(&o->cfg, err, sizeof err))
        pp__cli_fail("train", "%s", err);
}

/* The run's first lines: what trains, on what. */
static void header_print(const train_opts *o, const pp_corpus *c, double unigram) {
    const pp_run_config *cfg = &o->cfg;
    pp_model_dims d;
    pp__config_model_dims(cfg, &d);
    printf("pplab train: %s on %d stage%s x %d chunk%s, %d micro-batches of %d windows of %d bytes a step; %d "
           "blocks of width %d, %d heads (%ld parameters); AdamW, lr %g\n", cfg->schedule->name, cfg->P,
           cfg->P > 1 ? "s" : "", cfg->v, cfg->v > 1 ? "s" : "", cfg->M, cfg->mb_size, cfg->seq, d.layers, d.hidden,
           d.heads, pp__model_param_count(&d, d.layers, 1, 1, 1), (double)cfg->lr);
    printf("corpus: %s, %zu bytes: the first %zu to train on, the last %zu to validate; a unigram byte model's "
           "loss: %.4f\n", o->corpus ? o->corpus : "data/shakespeare.txt", c->size, c->train, c->size - c->train,
           unigram);
    if (pp__transport_caps(cfg->transport) & PP_TRANSPORT_PROCESSES)
        printf("transport: %s (%d processes)\n", cfg->transport, pp__config_world(cfg));
    fflush(stdout);
}

/* The run's end on rank 0: its failure, or the summary, the plot and the sample. The exit status. */
static int train_report(const train_opts *o, trainer *t, const pp_run_result *res, double unigram) {
    if (t->bar) printf("\n");
    fflush(stdout);
    if (res->status != PP_OK) {
        fprintf(stderr, "pplab train: %s: %s\n", pp__status_str(res->status), res->error);
        return 1;
    }
    int ops = 0;
    for (int r = 0; r < res->P; r++) ops += res->traces[r].n;
    if (!ops) {
        /* a handout has no solutions/: name it only where it is */
        char build[PATH_MAX], root[PATH_MAX], sol[PATH_MAX + 16];
        pp__impl_dirs(build, root, sizeof build);
        snprintf(sol, sizeof sol, "%s/solutions", root);
        fprintf(stderr, "pplab train: no rank ran any operation: is %s still the untouched stub?%s\n",
                pp__lab_for_schedule(o->cfg.schedule->name)->symbol,
                access(sol, F_OK) == 0 ? " (--impl solutions trains with the reference)" : "");
        return 1;
    }
    summary_print(t, unigram);
    int rc = o->plot && plot_losses(t, o->plot, unigram) ? 1 : 0;
    if (o->sample > 0) {
        char prompt[1024];
        prompt_unescape(o->prompt, prompt, sizeof prompt);
        sample_print(t, prompt, o->sample);
    }
    return rc;
}

static int train_main(int argc, char **argv) {
    static train_opts o;
    static char corpus[PATH_MAX];
    pp_flag flags[PP_CLI_MAX_FLAGS];
    train_opts_init(&o);
    pp__cli_parse(&pp__cli_train, flags, train_table(&o, flags), argc, argv, NULL, NULL);
    if (o.unsafe) o.sb.lockdown = 0, o.sb.drop_uid = 0;
    train_check(&o, corpus, sizeof corpus);
    int me = pp__cli_launch_check("train", &o.cfg);
    if (me < 0) return pp__mpi_env_rank() == 0 ? 2 : 0;
    static trainer t;
    if (trainer_init(&t, &o, me)) return me == 0 ? 1 : 0;
    double unigram = unigram_loss(t.corpus);
    if (me == 0) header_print(&o, t.corpus, unigram);
    const pp_lab_info *lab = pp__lab_for_schedule(o.cfg.schedule->name);
    pp_program prog = {.symbol = lab->symbol, .no_params = 1, .on_step = on_step, .step_arg = &t,
                       .weights_every = o.eval_every};
    int started = pp__cli_program_start("train", o.impl, o.cfg.P, o.in_process, &o.sb, lab, &prog, me);
    if (started) return me == 0 ? started : 0;
    pp__crash_install(pp__current_rank, NULL);
    pp_run_result res;
    pp__run_program(&o.cfg, &prog, &res);
    pp__cli_program_end(&o.sb, o.in_process);
    int rc = me == 0 ? train_report(&o, &t, &res, unigram) : 0;
    pp__result_free(&res);
    trainer_free(&t);
    return rc;
}

const pp_cli_command pp__cli_train = {
    .name = "train",
    .summary = "train the kit's model on Shakespeare's plays with a schedule, then write a sample",
    .usage = usage,
    .notes = notes,
    .flags = train_flags,
    .main = train_main,
};
