/* cmd_grade_one.c: `pplab grade-one`, one run of a test of `pplab grade --transport mpi`. The grading process
 * stays free of MPI (fork() after MPI_Init is unsafe), so a test's supervisor starts
 * `mpirun -np P pplab grade-one ...`: every process is a trusted rank that serves its own sandboxed driver over
 * the mpi transport, and rank 0 writes the gathered raw results, stamped with the token from PPLAB_TOKEN (never
 * a command line), to --out. The grader grades that file exactly as it grades a threads test. A recomputation
 * test needs the same schedule without recomputation too, and MPI initialises once per process: the supervisor
 * starts a second mpirun with --plain. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crash.h"
#include "impl_build.h"
#include "runner.h"
#include "schedules.h"
#include "host.h"
#include "schedule_lab.h"
#include "suite.h"
#include "transport.h"
#include "uids.h"

static const char usage[] =
    "usage: pplab grade-one --lab S --stages P --microbatches M --driver F --object F --out F [flag ...]\n"
    "One graded test on the mpi transport, started by `pplab grade --transport mpi` as `mpirun -np P pplab\n"
    "grade-one ...`: every process runs its rank, rank 0 writes the raw results, stamped with the token in\n"
    "PPLAB_TOKEN, to --out. Not meant to be typed: its flags follow the grader and may change.\n";

typedef struct one_opts {
    pp_test_config tc;
    const char *driver, *object, *backend, *out, *capture, *lab, *layout, *placement;
    unsigned uid;
    double deadline, memory;
    int plain, unsafe;
    pp_sandbox sb;
} one_opts;

static void one_opts_init(one_opts *o) {
    memset(o, 0, sizeof *o);
    o->tc.v = 1, o->tc.steps = 1, o->tc.time_limit_s = 10;
    o->tc.D = 1, o->tc.alpha = o->tc.beta = -1;
    o->backend = "cpu", o->lab = "";
    o->deadline = 10;
    pp__sandbox_defaults(&o->sb);
}

/* The table the grader's mpi_cmd_build (runner.c) writes a command line for: a flag renamed here is renamed
 * there. */
static int one_table(one_opts *o, pp_flag *out) {
    pp_test_config *t = &o->tc;
    const pp_flag f[] = {
        {.name = "--lab", .kind = PP_FLAG_STR, .to = &o->lab, .arg = "S", .help = "the schedule: {schedules}",
         .dflt = "required"},
        {.name = "--stages", .kind = PP_FLAG_INT, .to = &t->P, .lo = 1, .hi = PP_MAX_RANKS, .arg = "P",
         .help = "ranks: as many as mpirun started", .dflt = "required"},
        {.name = "--microbatches", .kind = PP_FLAG_INT, .to = &t->M, .lo = 1, .hi = 1024, .arg = "M",
         .help = "micro-batches per step", .dflt = "required"},
        {.name = "--tp", .kind = PP_FLAG_INT, .to = &t->T, .lo = 1, .hi = 8, .arg = "T",
         .help = "tensor-parallel shards of each stage"},
        {.name = "--node-size", .kind = PP_FLAG_INT, .to = &t->node_size, .lo = 1, .hi = 256, .arg = "G",
         .help = "ranks per node of a topology"},
        {.name = "--placement", .kind = PP_FLAG_STR, .to = &o->placement, .arg = "ORDER",
         .help = "how the ranks fill the nodes (t, d, p, fastest first)"},
        {.name = "--dp", .kind = PP_FLAG_INT, .to = &t->D, .lo = 1, .hi = 64, .arg = "D",
         .help = "replicas of the pipeline: mpirun starts D*P processes"},
        {.name = "--reduce-alpha", .kind = PP_FLAG_NUM, .to = &t->alpha, .arg = "A",
         .help = "virtual cost of one of a reduce's messages", .dflt = "the run's default"},
        {.name = "--reduce-beta", .kind = PP_FLAG_NUM, .to = &t->beta, .arg = "B",
         .help = "virtual cost of a reduced byte", .dflt = "the run's default"},
        {.name = "--chunks", .kind = PP_FLAG_INT, .to = &t->v, .lo = 1, .hi = 16, .arg = "v",
         .help = "chunks per rank"},
        {.name = "--steps", .kind = PP_FLAG_INT, .to = &t->steps, .lo = 1, .hi = 100000, .arg = "K",
         .help = "optimizer steps"},
        {.name = "--seed", .kind = PP_FLAG_UINT, .to = &t->seed, .lo = 0, .hi = 2147483647,
         .help = "seed of the weights and the data"},
        {.name = "--latency", .kind = PP_FLAG_NUM, .to = &t->latency, .help = "virtual cost of a boundary message"},
        {.name = "--recompute", .kind = PP_FLAG_INT, .to = &t->recompute, .lo = 0, .hi = 1, .arg = "0|1",
         .help = "ask for activation recomputation"},
        {.name = "--layers", .kind = PP_FLAG_INT, .to = &t->layers, .lo = 0, .hi = 4096, .arg = "L",
         .help = "blocks in the model", .dflt = "0: one per virtual stage"},
        {.name = "--hidden", .kind = PP_FLAG_INT, .to = &t->hidden, .lo = 0, .hi = 65536, .arg = "H",
         .help = "the model's width (the configuration's width=)", .dflt = "0: the run's default"},
        {.name = "--layout", .kind = PP_FLAG_STR, .to = &o->layout, .arg = "SPEC", .help = "blocks per virtual stage",
         .dflt = "even"},
        {.name = "--edge-cost", .kind = PP_FLAG_NUM, .to = &t->edge,
         .help = "virtual cost of the embedding and of the head and loss"},
        {.name = "--time", .kind = PP_FLAG_NUM, .to = &t->time_limit_s, .arg = "S", .help = "the test's time limit"},
        {.name = "--deadline", .kind = PP_FLAG_NUM, .to = &o->deadline, .arg = "S",
         .help = "seconds a wait may block before it is called a deadlock"},
        {.name = "--driver", .kind = PP_FLAG_STR, .to = &o->driver, .arg = "F", .help = "the schedule driver",
         .dflt = "required"},
        {.name = "--object", .kind = PP_FLAG_STR, .to = &o->object, .arg = "F", .help = "the lab's built object",
         .dflt = "required"},
        {.name = "--uid", .kind = PP_FLAG_UINT, .to = &o->uid, .lo = PP_UID_BASE, .hi = PP_UID_BASE + PP_UID_SPAN - 1,
         .help = "the test's uid, shared by all its ranks (as root)", .dflt = "this process's"},
        {.name = "--backend", .kind = PP_FLAG_STR, .to = &o->backend, .arg = "cpu|cuda", .help = "where ranks compute"},
        {.name = "--out", .kind = PP_FLAG_STR, .to = &o->out, .arg = "F", .help = "where rank 0 writes the results",
         .dflt = "required"},
        {.name = "--capture", .kind = PP_FLAG_STR, .to = &o->capture, .arg = "DIR",
         .help = "where each driver's output goes", .dflt = "this process's output"},
        {.name = "--plain", .kind = PP_FLAG_SET, .to = &o->plain, .set = 1,
         .help = "the recomputation test's run without recomputation"},
        {.name = "--memory-limit", .kind = PP_FLAG_NUM, .to = &o->memory, .arg = "BYTES",
         .help = "address space of each driver, in bytes as pplab grade passes it", .dflt = "the sandbox's default"},
        {.name = "--unsafe-no-sandbox", .kind = PP_FLAG_SET, .to = &o->unsafe, .set = 1,
         .help = "drivers without seccomp and the uid switch"},
    };
    memcpy(out, f, sizeof f);
    return (int)(sizeof f / sizeof f[0]);
}

static int one_flags(pp_flag *out) {
    static one_opts defaults;
    one_opts_init(&defaults);
    return one_table(&defaults, out);
}

static void parse(one_opts *o, int argc, char **argv) {
    pp_test_config *t = &o->tc;
    pp_flag flags[PP_CLI_MAX_FLAGS];
    one_opts_init(o);
    pp__cli_parse(&pp__cli_grade_one, flags, one_table(o, flags), argc, argv, NULL, NULL);
    snprintf(t->lab, sizeof t->lab, "%s", o->lab);
    snprintf(t->layout, sizeof t->layout, "%s", o->layout ? o->layout : "");
    snprintf(t->placement, sizeof t->placement, "%s", o->placement ? o->placement : "");
    if (o->memory > 0) o->sb.memory_limit = (size_t)o->memory;
    if (o->unsafe) o->sb.lockdown = 0, o->sb.drop_uid = 0;
    if (o->uid) o->sb.uid = (uid_t)o->uid, o->sb.gid = (gid_t)o->uid; /* the test's, shared by all its ranks */
    if (o->capture) snprintf(o->sb.capture, sizeof o->sb.capture, "%s", o->capture);
    const pp_lab_info *lab = pp__lab_find(t->lab);
    if (!lab || lab->kind != &pp__schedule_lab) /* the warm-up has no ranks to spread */
        pp__cli_fail("grade-one", "--lab needs %s, got '%s'", pp__schedule_names((char[256]){0}, 256, ", ", " or "),
                     t->lab);
    if (!t->P || !t->M || !o->driver || !o->object || !o->out)
        pp__cli_fail("grade-one", "needs --stages, --microbatches, --driver, --object and --out (it is started by "
                     "pplab grade --transport mpi)");
}

static int grade_one_main(int argc, char **argv) {
    static one_opts o;
    parse(&o, argc, argv);
    int np = pp__mpi_env_size(), me = pp__mpi_env_rank();
    const char *tok = getenv("PPLAB_TOKEN");
    int world = o.tc.P * o.tc.D * (o.tc.T > 1 ? o.tc.T : 1); /* every shard of every stage of every replica */
    const char *transport = pp__transport_launched(NULL); /* a launched process runs the one of processes */
    if (!transport || !pp__transport_built(transport) || !pp__mpi_env_launcher() || (np > 0 && np != world) || !tok) {
        if (me == 0)
            fprintf(stderr, "pplab grade-one: needs mpirun -np %d, PPLAB_TOKEN in the environment and a pplab built "
                            "with MPI (it is started by pplab grade --transport mpi)\n", world);
        return me == 0 ? 2 : 0;
    }
    uint64_t token = strtoull(tok, NULL, 16);
    pp__crash_install(pp__current_rank, NULL);
    char err[600];
    if (o.sb.lockdown && pp__sandbox_probe(&o.sb, err, sizeof err)) {
        if (me == 0) fprintf(stderr, "pplab grade-one: %s\n", err);
        return me == 0 ? 2 : 0;
    }
    pp__runopts_set_sandbox(&o.sb);
    /* every process runs its rank (its driver starts before MPI_Init); rank 0 alone writes the results. The
     * others exit 0 whatever happened, since mpirun stops the job at the first non-zero exit, which could cut
     * rank 0's report short. */
    static pp_impl impl;
    snprintf(impl.driver, sizeof impl.driver, "%s", o.driver);
    snprintf(impl.object, sizeof impl.object, "%s", o.object);
    int rc = pp__schedule_lab_execute(pp__lab_find(o.tc.lab), &o.tc, &impl, o.backend, transport, o.deadline, o.plain,
                                      token, o.out);
    if (rc && me == 0) fprintf(stderr, "pplab grade-one: cannot write %s: check /tmp is writable\n", o.out);
    return me == 0 ? rc : 0;
}

const pp_cli_command pp__cli_grade_one = {
    .name = "grade-one",
    .usage = usage,
    .flags = one_flags,
    .main = grade_one_main,
};
