/* cmd_run.c: `pplab run`: one schedule, one configuration; prints the bubble and the stash peaks.
 * Started by mpirun or srun, every process runs one rank over the mpi transport and rank 0 alone prints. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crash.h"
#include "data.h"
#include "files.h"
#include "impl_build.h"
#include "plot.h"
#include "result.h"
#include "replay.h"
#include "host.h"
#include "checks_dp.h"
#include "exposed.h"
#include "timeline.h"
#include "order_csv.h"
#include "order_interp.h"
#include "tracefile.h"
#include "transport.h"

static const char usage[] =
    "usage: pplab run --schedule S --stages P --microbatches M [flag ...]\n"
    "Runs schedule S on P ranks over M micro-batches, as grading runs it, and prints for the first step:\n"
    "  bubble: B (theory T)      virtual-clock bubble against the formula or the canonical replay (with the\n"
    "                            run's split backwards or recomputation, said on a line of its own)\n"
    "  peak stashes: s0 s1 ...   most activation stashes alive at once on each rank\n"
    "  stash memory: m0 m1 ... KiB  the most bytes they held at once on each rank (a block's attention keeps\n"
    "                            heads x seq x seq probabilities per sequence: that part grows with the square of\n"
    "                            --seq, and --recompute gives it back)\n"
    "  virtual step: S (...)     with --tp or --node-size: the step's length on the virtual clock, against the\n"
    "                            canonical order's on the same shards and links\n"
    "  exposed communication: E (theory T)  with --dp (dp1f1b, dpinterleaved): how much longer the step is than\n"
    "                            the same order with a free gradient reduce, against the canonical order's\n"
    "  time: X ms/step (...)     the step's wall time: the median of the steps after the first\n"
    "Each rank's schedule runs in a sandboxed process of its own that may use only pp.h and memory; under mpirun\n"
    "or srun every process runs one rank over the mpi transport and rank 0 prints.\n";

static const char notes[] =
    "Exit status 0 when the run completed and did work, 1 when it failed (a deadlock, a misused handle, no\n"
    "operation run at all, a file it was asked for not written), 2 for a usage error or an invalid configuration.\n";

/* Everything `pplab run` parses: the run itself, and how its schedule is run. */
typedef struct run_opts {
    pp_cli_run o;
    const char *dump_grads;
    int in_process, unsafe;
    pp_sandbox sb;
} run_opts;

static void run_opts_init(run_opts *r) {
    memset(r, 0, sizeof *r);
    r->o.impl = "labs";
    pp__config_defaults(&r->o.cfg);
    pp__sandbox_defaults(&r->sb);
}

/* The one table of run's flags: the parser's and --help's. */
static int run_table(run_opts *r, pp_flag *out) {
    pp_cli_run *o = &r->o;
    pp_run_config *c = &o->cfg;
    unsigned *g = &o->given;
    const pp_flag f[] = {
        {.name = "--impl", .kind = PP_FLAG_STR, .to = &o->impl, .arg = "I",
         .help = pp__impl_choices()},
        {.name = "--schedule", .kind = PP_FLAG_STR, .to = &o->schedule, .given = g, .bit = PP_CLI_GIVEN_SCHEDULE,
         .arg = "S", .help = "the schedule: {schedules}", .dflt = "required"},
        {.name = "--stages", .kind = PP_FLAG_INT, .to = &c->P, .lo = 1, .hi = 64, .given = g,
         .bit = PP_CLI_GIVEN_STAGES, .arg = "P", .help = "ranks, each a pipeline stage", .dflt = "required"},
        {.name = "--microbatches", .kind = PP_FLAG_INT, .to = &c->M, .lo = 1, .hi = 1024, .given = g,
         .bit = PP_CLI_GIVEN_MICROBATCHES, .arg = "M", .help = "micro-batches per step (1 for naive)",
         .dflt = "required"},
        {.name = "--chunks", .kind = PP_FLAG_INT, .to = &c->v, .lo = 1, .hi = 16, .given = g,
         .bit = PP_CLI_GIVEN_CHUNKS, .arg = "v",
         .help = "chunks (virtual stages) per rank, for {chunked}; a run that takes interleaved's default says so",
         .dflt = "2 for {chunked}, else 1"},
        {.name = "--tp", .kind = PP_FLAG_INT, .to = &c->T, .lo = 1, .hi = 8, .arg = "T",
         .help = "tensor-parallel ranks per stage, Megatron-LM's split over T ranks: each block's attention heads "
                 "(Wq, Wk, Wv and their biases by columns, Wo by rows) and its MLP (W1 and b1 by columns, W2 by rows) "
                 "cut, the LayerNorms, bo, b2, embedding and head whole on each; two all-reduces of the shards' "
                 "partial sums per block in each direction, one per half, each a ring on the shards' link "
                 "(--tp-alpha, --tp-beta) inside the op that makes it; T x D x P ranks, every shard running the same "
                 "schedule; threads transport"},
        {.name = "--tp-alpha", .kind = PP_FLAG_NUM, .to = &c->tp_alpha, .arg = "A",
         .help = "virtual cost of each of the 2(T-1) steps of a shards' sum's ring, in units of one block's forward: "
                 "the shards share a server (NVLink), a fifth of --reduce-alpha's per-message cost by default",
         .dflt = "0.01"},
        {.name = "--tp-beta", .kind = PP_FLAG_NUM, .to = &c->tp_beta, .arg = "B",
         .help = "... and per byte: a sum of the block's activation costs 2(T-1)/T x bytes x B; by default a ninth "
                 "of --reduce-beta (NVLink's 450 GB/s a direction against a 400 Gb/s port)",
         .dflt = "1.67e-06"},
        {.name = "--node-size", .kind = PP_FLAG_INT, .to = &c->node_size, .lo = 1, .hi = 256, .arg = "G",
         .help = "a topology of nodes of G ranks, each message priced by the link it crosses: inside a node "
                 "--tp-alpha + bytes x --tp-beta (a server's NVLink), between nodes --reduce-alpha + bytes x "
                 "--reduce-beta (a 400 Gb/s port); point-to-point messages, the replicas' reduces and the shards' "
                 "sums alike, a ring taking its slowest link; replaces --comm-latency",
         .dflt = "none: --comm-latency prices a message, the reduce and the sums their own links"},
        {.name = "--placement", .kind = PP_FLAG_STR, .to = &c->placement, .arg = "ORDER",
         .help = "how the ranks fill the nodes of --node-size: the axes t (shard), d (replica) and p (stage), "
                 "fastest first; tdp is Megatron-LM's (a stage's shards in one node), pdt puts a pipeline's stages "
                 "side by side and spreads the shards", .dflt = "tdp"},
        {.name = "--dp", .kind = PP_FLAG_INT, .to = &c->D, .lo = 1, .hi = 64, .arg = "D",
         .help = "data-parallel replicas of the pipeline: D x P ranks, replica d taking micro-batches d*M..d*M+M-1 "
                 "of the global batch, gradients summed over replicas by pp_grad_reduce (dp1f1b, dpinterleaved)"},
        {.name = "--reduce-alpha", .kind = PP_FLAG_NUM, .to = &c->reduce_alpha, .arg = "A",
         .help = "virtual cost of each of the 2(D-1) steps of a gradient all-reduce's ring, in units of one block's "
                 "forward"},
        {.name = "--reduce-beta", .kind = PP_FLAG_NUM, .to = &c->reduce_beta, .arg = "B",
         .help = "virtual cost of each byte a ring all-reduce moves: a chunk's reduce of G gradient bytes over D "
                 "replicas costs 2(D-1)A + 2(D-1)/D G B (the default makes one block's reduce over two replicas at "
                 "the default width cost about three block forwards: bandwidth-bound)"},
        {.name = "--layers", .kind = PP_FLAG_INT, .to = &c->layers, .lo = 1, .hi = 4096, .arg = "L",
         .help = "blocks in the model, placed as --layout says", .dflt = "one per virtual stage"},
        {.name = "--layout", .kind = PP_FLAG_STR, .to = &c->layout, .arg = "SPEC",
         .help = "blocks per virtual stage: first:K and last:K (either or both; the other stages share the rest of "
                 "--layers as evenly as they can, earlier stages taking one more; one each without --layers), or "
                 "one count per virtual stage, K,K,...",
         .dflt = "--layers spread as evenly as they can be"},
        {.name = "--microbatch-size", .kind = PP_FLAG_INT, .to = &c->mb_size, .lo = 1, .hi = 4096, .arg = "b",
         .help = "samples per micro-batch"},
        {.name = "--batch", .kind = PP_FLAG_INT, .to = &o->batch, .lo = 1, .hi = 1 << 20, .arg = "B",
         .help = "samples per step, split into the M micro-batches: sets --microbatch-size to B / M",
         .dflt = "M times --microbatch-size"},
        {.name = "--width", .kind = PP_FLAG_INT, .to = &c->hidden, .lo = 1, .hi = 65536, .arg = "H",
         .help = "the model's hidden size (its feed-forward layers are 4H wide)", .old = "--hidden"},
        {.name = "--heads", .kind = PP_FLAG_INT, .to = &c->heads, .lo = 1, .hi = 65536, .arg = "N",
         .help = "attention heads per block (--width divides by it; --tp cuts them)",
         .dflt = "4, or the nearest count that --width and --tp allow"},
        {.name = "--seq", .kind = PP_FLAG_INT, .to = &c->seq, .lo = 1, .hi = 65536, .arg = "T",
         .help = "tokens per sample"},
        {.name = "--vocab", .kind = PP_FLAG_INT, .to = &c->vocab, .lo = 2, .hi = 1 << 20, .given = g,
         .bit = PP_CLI_GIVEN_VOCAB, .arg = "V", .help = "vocabulary size", .dflt = "64; 256 with --corpus"},
        {.name = "--corpus", .kind = PP_FLAG_STR, .to = &c->corpus, .arg = "FILE",
         .help = "the data: windows of --seq + 1 bytes of a text file, drawn from its first nine tenths, its bytes the "
                 "tokens (a vocabulary of 256), instead of the synthetic task (as pplab train trains)",
         .dflt = "the synthetic task"},
        {.name = "--steps", .kind = PP_FLAG_INT, .to = &c->steps, .lo = 1, .hi = 100000, .arg = "K",
         .help = "optimizer steps; the bubble and peaks are step 1's, the time the median of the later steps'"},
        {.name = "--seed", .kind = PP_FLAG_UINT, .to = &c->seed, .lo = 0, .hi = 2147483647,
         .help = "seed of the weights and the data"},
        {.name = "--optimizer", .kind = PP_FLAG_CHOICE, .to = &c->optimizer, .choices = "sgd|adamw",
         .help = "the optimizer"},
        {.name = "--lr", .kind = PP_FLAG_FLOAT, .to = &c->lr, .help = "learning rate"},
        {.name = "--comm-latency", .kind = PP_FLAG_NUM, .to = &c->comm_latency,
         .help = "virtual cost of each boundary message, in units of one block's forward"},
        {.name = "--edge-cost", .kind = PP_FLAG_NUM, .to = &c->edge_cost,
         .help = "virtual cost of the embedding and of the head and loss in a forward (twice that in a backward, "
                 "once in each half of a split one)"},
        {.name = "--eager", .kind = PP_FLAG_SET, .to = &c->eager, .set = 1,
         .help = "sends complete at once", .dflt = "off: a send waits for its receive, as NCCL's does"},
        {.name = "--recompute", .kind = PP_FLAG_SET, .to = &c->recompute, .set = 1,
         .help = "ask the schedule to recompute activations in the backward instead of stashing them (not the "
                 "zero-bubble schedules)"},
        {.name = "--backend", .kind = PP_FLAG_STR, .to = &c->backend, .arg = "cpu|cuda",
         .help = "where the ranks compute (cuda: docs/gpu.md)"},
        {.name = "--transport", .kind = PP_FLAG_STR, .to = &c->transport, .arg = "threads|mpi|nccl",
         .help = "how ranks talk: threads of one process; mpi, one process per rank (mpirun or srun choose it); "
                 "nccl, one GPU per rank (--backend cuda)"},
        {.name = "--deadline", .kind = PP_FLAG_NUM, .to = &c->deadline_s, .lo = 1e-9, .arg = "S",
         .help = "seconds a wait may block before the mpi transport, which cannot see a deadlock, calls it one"},
        {.name = "--timeline", .kind = PP_FLAG_SET, .to = &o->timeline, .set = 1,
         .help = "draw the step, one row of ops per rank"},
        {.name = "--forward-only", .kind = PP_FLAG_SET, .to = &o->forward_only, .set = 1,
         .help = "with --timeline: the forwards alone"},
        {.name = "--wall", .kind = PP_FLAG_SET, .to = &o->wall, .set = 1,
         .help = "also print the measured wall-clock bubble beside the canonical schedule replayed on the measured "
                 "op durations (the fair prediction when stages share a device)",
         .dflt = "off; on with --backend cuda"},
        {.name = "--per-rank", .kind = PP_FLAG_SET, .to = &o->per_rank, .set = 1,
         .help = "also print each rank's idle share"},
        {.name = "--canonical", .kind = PP_FLAG_SET, .to = &o->canonical, .set = 1,
         .help = "replay the ideal schedule under the virtual clock instead of running any schedule code"},
        {.name = "--plot", .kind = PP_FLAG_STR, .to = &o->plot, .arg = "FILE.png",
         .help = "draw the step as a Gantt chart (gnuplot)", .dflt = "not drawn"},
        {.name = "--trace", .kind = PP_FLAG_STR, .to = &o->trace, .arg = "FILE",
         .help = "write step 1 op by op: FILE.csv, or FILE.json in the Trace Event Format (ui.perfetto.dev, "
                 "chrome://tracing: virtual and wall clock, one track per rank, messages beside them, an arrow from "
                 "each op whose output crossed a boundary to the op that used it; 1 ms on the viewer's ruler = 1 "
                 "virtual unit)",
         .dflt = "not written"},
        {.name = "--export-order", .kind = PP_FLAG_STR, .to = &o->export_order, .arg = "FILE.csv",
         .help = "write the order step 1 ran (with --canonical, the canonical one) as PyTorch's compute-only "
                 "schedule CSV, which _PipelineScheduleRuntime._load_csv reads: a row per rank, a cell per action "
                 "(0F3 forward, 1I3 input half, 1W3 weight half, 0B3 whole backward; stage, kind, micro-batch); "
                 "replica 0's ranks under --dp",
         .dflt = "not written"},
        {.name = "--order", .kind = PP_FLAG_STR, .to = &o->order, .arg = "FILE.csv",
         .help = pp__order_interp_built
                     ? "run the order in FILE, PyTorch's compute-only schedule CSV (as --export-order or torch's "
                       "_dump_csv writes it), on the model and the clock instead of a lab, and grade it with every "
                       "check of pplab grade against --schedule's canonical order; its rows give --stages, its stages "
                       "--chunks and its largest micro-batch --microbatches unless given"
                     : "the instructor's kit runs an order from a file, PyTorch's compute-only schedule CSV, instead "
                       "of a lab; this handout has no order interpreter (turning an order into pp.h calls is the "
                       "labs' work) and refuses it",
         .dflt = "a lab runs"},
        {.name = "--in-process", .kind = PP_FLAG_SET, .to = &r->in_process, .set = 1,
         .help = "run the schedule inside pplab, unsandboxed, for gdb, ASan and printf debugging: trusted code only "
                 "(grading always sandboxes it)"},
        {.name = "--memory-limit", .kind = PP_FLAG_MIB, .to = &r->sb.memory_limit, .lo = 16, .hi = 1 << 20,
         .help = "address space of each rank's sandboxed process"},
        {.name = "--unsafe-no-sandbox", .kind = PP_FLAG_SET, .to = &r->unsafe, .set = 1,
         .help = "sandbox without seccomp and the uid switch, where the machine refuses them: trusted code only"},
        {.name = "--dump-grads", .kind = PP_FLAG_STR, .to = &r->dump_grads, .arg = "FILE", .for_tests = 1,
         .help = "write every parameter in the model's order (its virtual stage, name, count, step-1 gradient and "
                 "final weight) through the results' one serialiser, so that two runs compare bitwise with cmp",
         .dflt = "not written"},
        /* the choices in pp_view's order */
        {.name = "--view", .kind = PP_FLAG_CHOICE, .to = &r->sb.view, .choices = "auto|namespaces|landlock|none",
         .for_tests = 1, .help = "how the lab's build sees the file system (auto: namespaces where bubblewrap "
                                 "works, else landlock), for the sandbox's own tests"},
    };
    memcpy(out, f, sizeof f);
    return (int)(sizeof f / sizeof f[0]);
}

static int run_flags(pp_flag *out) {
    static run_opts defaults;
    run_opts_init(&defaults);
    return run_table(&defaults, out);
}

static int grads_write(const pp_run_result *res, const char *path) {
    pp_wire w;
    pp__wire_init(&w);
    for (int i = 0; i < res->nparams; i++) {
        pp__wire_i64(&w, res->params[i].vstage);
        pp__param_encode(&w, &res->params[i]);
    }
    int rc = w.bad ? -1 : pp__file_write(path, w.p, w.len, 0644);
    pp__wire_free(&w);
    return rc;
}

/* Width for the timeline: $COLUMNS, else 120 when stdout is not a terminal. */
static int term_width(void) {
    const char *c = getenv("COLUMNS");
    int w = c ? atoi(c) : 0;
    return w > 20 ? w : 120;
}

/* --plot FILE.png: the run's Gantt chart (gnuplot). Returns 0 or -1. */
static int plot_run(const pp_cli_run *o, const pp_lanes_src *src, const char *what) {
    char prefix[1024];
    snprintf(prefix, sizeof prefix, "%s", o->plot);
    char *dot = strrchr(prefix, '.');
    if (dot && !strcmp(dot, ".png")) *dot = 0;
    char title[160];
    snprintf(title, sizeof title, "%s%s, P=%d, M=%d, v=%d", o->cfg.schedule->name, what, o->cfg.P, o->cfg.M, o->cfg.v);
    return pp__plot_gantt_lanes(src, title, prefix);
}

/* --export-order: the order of P ranks' traces as PyTorch's CSV, and a line that says so. Returns 0, or 1 when the
 * file could not be written. */
static int export_order(const pp_trace *traces, int P, const char *path, const char *what) {
    char err[512];
    fflush(stdout); /* the figures first, then the line about the file, also where both go to one pipe */
    if (pp__order_csv_write(traces, P, path, err, sizeof err)) {
        fprintf(stderr, "pplab run: %s\n", err);
        return 1;
    }
    fprintf(stderr, "pplab run: %s written to %s as PyTorch's compute-only schedule CSV (%d rows)\n", what, path, P);
    return 0;
}

/* --canonical: the ideal schedule, replayed under the virtual clock without running any code: the picture to
 * compare a run with, and what the warm-up asks students to draw before they have a schedule of their own. */
static int run_canonical(const pp_cli_run *o) {
    const pp_run_config *c = &o->cfg;
    pp_schedule s;
    pp_costs k;
    int split, rebuilt;
    char why[4096];
    if (!pp__theory_held(c))
        pp__cli_fail("run", "--canonical %s P=%d M=%d v=%d: %s", c->schedule->name, c->P, c->M, c->v,
                     pp__theory_unheld(c, why, sizeof why));
    if (pp__schedule_as_run(&s, c, NULL, &split, &rebuilt))
        pp__cli_fail("run", "no canonical order for %s", c->schedule->name);
    pp__costs_from_config(&k, c);
    pp_trace *tr = pp__xcalloc((size_t)c->P, sizeof *tr);
    pp__schedule_trace(&s, &k, tr);
    /* a replay prices shard 0's ranks of one pipeline, on the run's nodes (no other shard's trace: no other lane) */
    pp_run_result replay = {.P = c->P, .D = 1, .traces = tr};
    pp_lanes_src src;
    pp__lanes_src_of(&src, &replay, c);
    if (o->timeline)
        pp__timeline_print_lanes(stdout, &src, c->v, o->forward_only, term_width(), isatty(1) && !getenv("NO_COLOR"));
    char note[64];
    double theory = pp__theory_bubble_run(c, NULL, NULL, note, sizeof note);
    printf("bubble: %.4f (theory %.4f)\n", pp__trace_bubble(tr, c->P), theory);
    printf("peak stashes:");
    for (int r = 0; r < c->P; r++) printf(" %d", pp__schedule_peak(&s, r));
    printf("\n");
    if ((c->T > 1 || c->node_size > 0) && !pp__checks_dp_applies(c))
        printf("virtual step: %.4f\n", pp__trace_step_time(tr, c->P));
    if (pp__checks_dp_applies(c)) {
        int formula;
        double step, span, exposed = pp__theory_exposed_replay(c, &step, &span), theory = pp__theory_exposed(c, &formula);
        printf("exposed communication: %.4f (theory %.4f, %s); step %.4f, %.4f with a free reduce\n", exposed,
               theory, formula ? "formula" : "replay", step, span);
    }
    if (note[0]) printf("theory: the canonical order replayed %s\n", note);
    if (o->per_rank) {
        printf("bubble per rank:");
        for (int r = 0; r < c->P; r++) printf(" %.4f", pp__trace_rank_bubble(tr, c->P, r));
        printf("\n");
    }
    int rc = 0;
    char err[512];
    if (o->trace && pp__tracefile_write_lanes(&src, o->trace, err, sizeof err)) {
        fprintf(stderr, "pplab run: %s\n", err);
        rc = 1;
    } else if (o->trace) {
        char what[200];
        fprintf(stderr, "pplab run: trace of the canonical schedule written to %s (%s)\n", o->trace,
                pp__tracefile_describe_lanes(&src, o->trace, what, sizeof what));
    }
    if (o->export_order && export_order(tr, c->P, o->export_order, "the canonical order")) rc = 1;
    if (o->plot && plot_run(o, &src, " (canonical)")) rc = 1;
    pp__lanes_src_free(&src);
    for (int r = 0; r < c->P; r++) pp__trace_clear(&tr[r]);
    free(tr);
    pp__costs_free(&k);
    pp__schedule_free(&s);
    return rc;
}

/* The step's wall time, real time beside the virtual bubble: the median of the steps after the first, which pays
 * for first touches of memory and cold caches (and under MPI for the connections). */
static void print_step_time(const double *step_s, int steps) {
    if (steps == 1) {
        printf("time: %.1f ms/step (1 step, which pays for first touches: --steps 5 for a median)\n", 1e3 * step_s[0]);
        return;
    }
    double *rest = pp__xmalloc((size_t)(steps - 1) * sizeof *rest);
    memcpy(rest, step_s + 1, (size_t)(steps - 1) * sizeof *rest);
    double med = pp__cli_median(rest, steps - 1);
    if (steps == 2)
        printf("time: %.1f ms/step (step 2; step 1 %.1f ms)\n", 1e3 * med, 1e3 * step_s[0]);
    else
        printf("time: %.1f ms/step (median of steps 2-%d; step 1 %.1f ms)\n", 1e3 * med, steps, 1e3 * step_s[0]);
    free(rest);
}

/* Every choice checked, in every mode, --canonical's too, before anything runs; the --order file read into
 * file_order. Says when the chunks were the schedule's default. */
static void run_check(pp_cli_run *o, const run_opts *h, pp_schedule *file_order) {
    char err[4096], names[64];
    int chose_chunks = pp__cli_run_defaults(o);
    if (o->order && !pp__order_interp_built)
        pp__cli_fail("run", "--order runs an order through the kit's own interpreter, which this handout leaves out "
                     "(turning an order into pp.h calls is what the labs ask): write it as a lab, or run --order in "
                     "the instructor's kit");
    if (o->order) pp__cli_order_load(o, file_order), chose_chunks = 0;
    if (o->cfg.corpus && !(o->given & PP_CLI_GIVEN_VOCAB)) o->cfg.vocab = PP_CORPUS_VOCAB;
    if (strcmp(o->cfg.backend, "cpu") && strcmp(o->cfg.backend, "cuda"))
        pp__cli_fail("run", "unknown backend '%s': use cpu or cuda", o->cfg.backend);
    if (!pp__transport_caps(o->cfg.transport))
        pp__cli_fail("run", "unknown transport '%s': use %s", o->cfg.transport,
                     pp__transport_names(0, names, sizeof names, ", ", " or "));
    if (o->trace && pp__tracefile_format_check(o->trace, err, sizeof err)) pp__cli_fail("run", "%s", err);
    if (o->trace && pp__cli_writable(o->trace, err, sizeof err)) pp__cli_fail("run", "--trace %s", err);
    if (o->export_order && pp__order_csv_name_check(o->export_order, err, sizeof err)) pp__cli_fail("run", "%s", err);
    if (o->export_order && pp__cli_writable(o->export_order, err, sizeof err))
        pp__cli_fail("run", "--export-order %s", err);
    if (h->dump_grads && pp__cli_writable(h->dump_grads, err, sizeof err))
        pp__cli_fail("run", "--dump-grads %s", err);
    if (pp__config_check(&o->cfg, err, sizeof err)) pp__cli_fail("run", "%s", err);
    if (o->export_order && pp__config_dual(&o->cfg))
        pp__cli_fail("run", "--export-order writes PyTorch's schedule CSV, where a stage index lives on one rank; %s "
                     "holds every stage twice, on two pipelines, which that format cannot say (its order is "
                     "DeepSeek's, see docs/06-vshape.md): drop --export-order", o->cfg.schedule->title);
    pp__cli_run_finish(o);
    if (pp__config_check(&o->cfg, err, sizeof err)) pp__cli_fail("run", "%s", err); /* --batch changed it */
    if (chose_chunks && pp__mpi_env_rank() == 0)
        fprintf(stderr, "pplab run: --chunks %d: %s's default (at --chunks 1 it is plain 1F1B)\n",
                o->cfg.v, o->cfg.schedule->name);
}

/* Builds and runs the schedule (or the --order file's order) into res. Returns -1 when the run happened, else the
 * exit status (a program that did not start). */
static int run_execute(pp_cli_run *o, run_opts *h, pp_schedule *file_order, int me, pp_run_result *res) {
    const pp_lab_info *lab = pp__lab_for_schedule(o->cfg.schedule->name);
    /* built, and the drivers started, before the mpi transport calls MPI_Init: no fork() after it */
    /* --order grades its run: the gradients and weights come back */
    pp_program prog = {.symbol = lab->symbol, .no_params = !h->dump_grads && !o->order};
    int started = 0;
    if (o->order) pp__order_interp_set(file_order), prog.fn = pp__order_interp_step;
    else started = pp__cli_program_start("run", o->impl, o->cfg.P, h->in_process, &h->sb, lab, &prog, me);
    if (started) return me == 0 ? started : 0;
    pp__crash_install(pp__current_rank, NULL);
    pp__run_program(&o->cfg, &prog, res);
    if (o->order) pp__order_interp_set(NULL);
    pp__cli_program_end(&h->sb, h->in_process);
    return -1;
}

/* A failed run's one line on stderr. */
static void run_failure_print(const pp_run_result *res) {
    if (res->status == PP_ERR_NODEVICE)
        fprintf(stderr, "%s\n", res->error);
    else if (!strncmp(res->error, pp__status_str(res->status), strlen(pp__status_str(res->status))))
        fprintf(stderr, "pplab run: %s\n", res->error); /* the message already names its kind */
    else
        fprintf(stderr, "pplab run: %s: %s\n", pp__status_str(res->status), res->error);
}

/* The operations every rank ran; none at all is said, with what to try. */
static int run_ops(const pp_run_result *res, const pp_lab_info *lab) {
    int ops = 0;
    for (int r = 0; r < res->P; r++) ops += res->traces[r].n;
    if (!ops) {
        /* a handout has no solutions/: name it only where it is */
        char build[PATH_MAX], root[PATH_MAX], sol[PATH_MAX + 16];
        pp__impl_dirs(build, root, sizeof build);
        snprintf(sol, sizeof sol, "%s/solutions", root);
        fprintf(stderr, "pplab run: no rank ran any operation: is %s still the untouched stub? (%s--canonical draws "
                "the ideal schedule)\n", lab->symbol, access(sol, F_OK) == 0 ? "--impl solutions runs the reference, " : "");
    }
    return ops;
}

/* The run's figures against the theory: bubble, peaks, the virtual step, the exposed communication. Returns whether
 * the theory holds this configuration (a handout holds the canonical answers of its public configurations only:
 * elsewhere the run says what it measured, without a comparison). */
static int run_figures_print(pp_cli_run *o, const pp_run_result *res) {
    int P = res->P;
    /* the grid lab's run sat where its mapping put it: its theory prices the same links; its step is held to the
     * canonical placement's */
    pp_run_config canon = o->cfg;
    if (res->place && res->nplace == pp__config_world(&o->cfg)) o->cfg.place = res->place;
    int held_run = pp__theory_held(&o->cfg), held = held_run && pp__theory_held(&canon), formula;
    char note[64] = "", why[4096];
    if (held) printf("bubble: %.4f (theory %.4f)\n", res->bubble,
                     pp__theory_bubble_run(&o->cfg, res->traces, &formula, note, sizeof note));
    else printf("bubble: %.4f\n", res->bubble);
    printf("peak stashes:");
    for (int r = 0; r < P; r++) printf(" %d", res->peak_stashes[r]);
    printf("\n");
    if (res->peak_bytes) {
        printf("stash memory:");
        for (int r = 0; r < P; r++) printf(" %.1f", (double)res->peak_bytes[r] / 1024.0);
        printf(" KiB\n");
    }
    if (note[0]) printf("theory: the canonical order replayed %s, as this run ran its backwards\n", note);
    /* shards and links make a step longer in virtual time, which the bubble (a ratio) does not show */
    if ((o->cfg.T > 1 || o->cfg.node_size > 0) && held) {
        double canonical = pp__theory_step(&canon);
        if (pp__checks_dp_applies(&canon)) pp__theory_exposed_replay(&canon, &canonical, NULL); /* and its reduces */
        printf("virtual step: %.4f (the canonical order's %.4f%s)\n", res->step_time, canonical,
               o->cfg.place ? ", placed by tdp" : "");
    } else if (o->cfg.T > 1 || o->cfg.node_size > 0) {
        printf("virtual step: %.4f\n", res->step_time);
    }
    if (!held) printf("theory: none here: %s\n", pp__theory_unheld(held_run ? &canon : &o->cfg, why, sizeof why));
    if (pp__checks_dp_applies(&o->cfg) && !held) {
        printf("exposed communication: step %.4f, %.4f with a free reduce\n", res->step_time,
               pp__run_free_span(&o->cfg, res->traces));
    } else if (pp__checks_dp_applies(&o->cfg)) {
        double free_span = pp__run_free_span(&o->cfg, res->traces), theory = pp__theory_exposed(&o->cfg, &formula);
        printf("exposed communication: %.4f (theory %.4f, %s); step %.4f, %.4f with a free reduce\n",
               res->step_time - free_span, theory, formula ? "formula" : "replay", res->step_time, free_span);
    }
    return held;
}

/* Measured time (--wall, or any device but the CPU): against the canonical schedule replayed on the measured op
 * durations, where the theory holds. */
static void run_wall_print(const pp_cli_run *o, const pp_run_result *res, int held) {
    int P = res->P;
    pp_schedule s;
    pp_costs k;
    double replay = -1;
    if (held && pp__schedule_build(&s, o->cfg.schedule->name, P, o->cfg.M, o->cfg.v) == 0) {
        pp__costs_from_trace(&k, res->traces, &o->cfg);
        replay = pp__schedule_bubble(&s, &k);
        pp__costs_free(&k);
        pp__schedule_free(&s);
    }
    if (held)
        printf("wall bubble: %.4f (replay of measured op times %.4f, %s timing)\n",
               pp__trace_wall_bubble(res->traces, P), replay, strcmp(o->cfg.backend, "cpu") ? "device" : "host");
    else
        printf("wall bubble: %.4f (%s timing)\n", pp__trace_wall_bubble(res->traces, P),
               strcmp(o->cfg.backend, "cpu") ? "device" : "host");
}

/* The files the run was asked for (--trace, --dump-grads, --export-order, --plot) and --order's grade. 0, or 1 when
 * one of them failed. */
static int run_files_write(const pp_cli_run *o, const run_opts *h, pp_run_result *res, int ops) {
    char err[4096];
    int rc = 0, P = res->P;
    pp_lanes_src src;
    pp__lanes_src_of(&src, res, &o->cfg);
    if (o->trace && pp__tracefile_write_lanes(&src, o->trace, err, sizeof err)) {
        fprintf(stderr, "pplab run: %s\n", err);
        rc = 1;
    } else if (o->trace) {
        char what[200];
        fprintf(stderr, "pplab run: trace of step 1 written to %s (%s)\n", o->trace,
                pp__tracefile_describe_lanes(&src, o->trace, what, sizeof what));
    }
    if (h->dump_grads && grads_write(res, h->dump_grads)) {
        fprintf(stderr, "pplab run: cannot write --dump-grads %s: check the folder exists and is writable\n",
                h->dump_grads);
        rc = 1;
    }
    if (o->export_order && export_order(res->traces, P / res->D, o->export_order, "the order of step 1")) rc = 1;
    if (o->plot && plot_run(o, &src, "")) rc = 1;
    pp__lanes_src_free(&src);
    if (o->order && ops && pp__cli_order_grade(&o->cfg, res, o->order)) rc = 1;
    return rc;
}

static int run_main(int argc, char **argv) {
    static run_opts opts;
    pp_flag flags[PP_CLI_MAX_FLAGS];
    run_opts_init(&opts);
    pp__cli_parse(&pp__cli_run, flags, run_table(&opts, flags), argc, argv, NULL, NULL);
    pp_cli_run o = opts.o;
    if (opts.unsafe) opts.sb.lockdown = 0, opts.sb.drop_uid = 0;
    if (o.forward_only && !o.timeline) pp__cli_fail("run", "--forward-only only applies with --timeline");
    char err[4096];
    static pp_schedule file_order;
    run_check(&o, &opts, &file_order);
    if (o.canonical) return run_canonical(&o);
    if (pp__config_runnable(&o.cfg, err, sizeof err)) pp__cli_fail("run", "%s", err);
    int me = pp__cli_launch_check("run", &o.cfg);
    if (me < 0) return pp__mpi_env_rank() == 0 ? 2 : 0;
    pp_run_result res;
    int started = run_execute(&o, &opts, &file_order, me, &res);
    if (started >= 0) return started;
    if (me > 0) {
        /* rank 0 holds the gathered results and reports for every process */
        pp__result_free(&res);
        return 0;
    }
    if (res.status != PP_OK) {
        run_failure_print(&res);
        pp__result_free(&res);
        return 1;
    }
    if (pp__transport_caps(o.cfg.transport) & PP_TRANSPORT_PROCESSES)
        printf("transport: %s (%d processes)\n", o.cfg.transport, pp__config_world(&o.cfg));
    int ops = run_ops(&res, pp__lab_for_schedule(o.cfg.schedule->name));
    if (o.timeline) {
        int color = isatty(1) && !getenv("NO_COLOR");
        pp_lanes_src src;
        pp__lanes_src_of(&src, &res, &o.cfg);
        pp__timeline_print_lanes(stdout, &src, o.cfg.v, o.forward_only, term_width(), color);
        pp__lanes_src_free(&src);
    }
    int held = run_figures_print(&o, &res);
    print_step_time(res.step_s, o.cfg.steps);
    if (o.per_rank) {
        printf("bubble per rank:");
        for (int r = 0; r < res.P; r++) printf(" %.4f", pp__trace_rank_bubble(res.traces, res.P, r));
        printf("\n");
    }
    if (o.wall || strcmp(o.cfg.backend, "cpu")) run_wall_print(&o, &res, held);
    fflush(stdout);
    int rc = ops ? 0 : 1; /* a run that did no work is no success */
    if (run_files_write(&o, &opts, &res, ops)) rc = 1;
    pp__result_free(&res);
    return rc;
}

const pp_cli_command pp__cli_run = {
    .name = "run",
    .summary = "run one schedule and print its bubble and stash peaks",
    .usage = usage,
    .notes = notes,
    .flags = run_flags,
    .main = run_main,
};
