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
#include "impl.h"
#include "runner.h"
#include "schedules.h"
#include "host.h"
#include "suite.h"
#include "transport.h"
#include "uids.h"

typedef struct one_opts {
    pp_test_config tc;
    const char *driver, *object, *backend, *out, *capture;
    unsigned uid;
    double deadline;
    int plain;
    pp_sandbox sb;
} one_opts;

static void parse(one_opts *o, int argc, char **argv) {
    pp_test_config *t = &o->tc;
    t->v = 1, t->steps = 1, t->time_limit_s = 10;
    o->backend = "cpu";
    pp__sandbox_defaults(&o->sb);
    const char *lab = "";
    double memory = 0;
    int unsafe = 0;
    const char *layout = NULL;
    const pp_flag flags[] = {
        {.name = "--lab", .kind = PP_FLAG_STR, .to = &lab},
        {.name = "--stages", .kind = PP_FLAG_INT, .to = &t->P, .lo = 1, .hi = PP_MAX_RANKS},
        {.name = "--microbatches", .kind = PP_FLAG_INT, .to = &t->M, .lo = 1, .hi = 1024},
        {.name = "--chunks", .kind = PP_FLAG_INT, .to = &t->v, .lo = 1, .hi = 16},
        {.name = "--steps", .kind = PP_FLAG_INT, .to = &t->steps, .lo = 1, .hi = 100000},
        {.name = "--seed", .kind = PP_FLAG_UINT, .to = &t->seed, .lo = 0, .hi = 2147483647},
        {.name = "--latency", .kind = PP_FLAG_NUM, .to = &t->latency},
        {.name = "--recompute", .kind = PP_FLAG_INT, .to = &t->recompute, .lo = 0, .hi = 1},
        {.name = "--layers", .kind = PP_FLAG_INT, .to = &t->layers, .lo = 0, .hi = 4096},
        {.name = "--hidden", .kind = PP_FLAG_INT, .to = &t->hidden, .lo = 0, .hi = 65536},
        {.name = "--layout", .kind = PP_FLAG_STR, .to = &layout},
        {.name = "--edge-cost", .kind = PP_FLAG_NUM, .to = &t->edge},
        {.name = "--time", .kind = PP_FLAG_NUM, .to = &t->time_limit_s},
        {.name = "--deadline", .kind = PP_FLAG_NUM, .to = &o->deadline},
        {.name = "--driver", .kind = PP_FLAG_STR, .to = &o->driver},
        {.name = "--object", .kind = PP_FLAG_STR, .to = &o->object},
        {.name = "--uid", .kind = PP_FLAG_UINT, .to = &o->uid, .lo = PP_UID_BASE, .hi = PP_UID_BASE + PP_UID_SPAN - 1},
        {.name = "--backend", .kind = PP_FLAG_STR, .to = &o->backend},
        {.name = "--out", .kind = PP_FLAG_STR, .to = &o->out},
        {.name = "--capture", .kind = PP_FLAG_STR, .to = &o->capture}, /* where each driver's output goes */
        {.name = "--plain", .kind = PP_FLAG_SET, .to = &o->plain, .set = 1},
        {.name = "--memory-limit", .kind = PP_FLAG_NUM, .to = &memory}, /* bytes, as pplab grade passes it */
        {.name = "--unsafe-no-sandbox", .kind = PP_FLAG_SET, .to = &unsafe, .set = 1},
    };
    for (int i = 2; i < argc; i++)
        if (!pp__cli_flag(flags, (int)(sizeof flags / sizeof flags[0]), argc, argv, &i))
            pp__cli_fail("grade-one", "unknown flag '%s'", argv[i]);
    snprintf(t->lab, sizeof t->lab, "%s", lab);
    snprintf(t->layout, sizeof t->layout, "%s", layout ? layout : "");
    if (memory > 0) o->sb.memory_limit = (size_t)memory;
    if (unsafe) o->sb.lockdown = 0, o->sb.drop_uid = 0;
    if (o->uid) o->sb.uid = (uid_t)o->uid, o->sb.gid = (gid_t)o->uid; /* the test's, shared by all its ranks */
    if (o->capture) snprintf(o->sb.capture, sizeof o->sb.capture, "%s", o->capture);
    if (!pp__lab_find(t->lab) || !strcmp(t->lab, "warmup"))
        pp__cli_fail("grade-one", "--lab needs %s, got '%s'", pp__schedule_names((char[256]){0}, 256, ", ", " or "),
                     t->lab);
    if (!t->P || !t->M || !o->driver || !o->object || !o->out)
        pp__cli_fail("grade-one", "needs --stages, --microbatches, --driver, --object and --out (it is started by "
                     "pplab grade --transport mpi)");
}

int pp__cmd_grade_one(int argc, char **argv) {
    one_opts o = {0};
    parse(&o, argc, argv);
    int np = pp__mpi_env_size(), me = pp__mpi_env_rank();
    const char *tok = getenv("PPLAB_TOKEN");
    if (!pp__mpi_built() || !pp__mpi_env_launcher() || (np > 0 && np != o.tc.P) || !tok) {
        if (me == 0)
            fprintf(stderr, "pplab grade-one: needs mpirun -np %d, PPLAB_TOKEN in the environment and a pplab built "
                            "with MPI (it is started by pplab grade --transport mpi)\n", o.tc.P);
        return me == 0 ? 2 : 0;
    }
    uint64_t token = strtoull(tok, NULL, 16);
    pp__crash_install(pp__current_rank, NULL);
    char err[600];
    if (o.sb.lockdown && pp__sandbox_probe(&o.sb, err, sizeof err)) {
        if (me == 0) fprintf(stderr, "pplab grade-one: %s\n", err);
        return me == 0 ? 2 : 0;
    }
    pp__runner_set_sandbox(&o.sb);
    /* every process runs its rank (its driver starts before MPI_Init); rank 0 alone writes the results. The
     * others exit 0 whatever happened, since mpirun stops the job at the first non-zero exit, which could cut
     * rank 0's report short. */
    static pp_impl impl;
    snprintf(impl.driver, sizeof impl.driver, "%s", o.driver);
    snprintf(impl.object, sizeof impl.object, "%s", o.object);
    int rc = pp__runner_execute(&o.tc, &impl, o.backend, "mpi", o.deadline, o.plain, token, o.out);
    if (rc && me == 0) fprintf(stderr, "pplab grade-one: cannot write %s: check /tmp is writable\n", o.out);
    return me == 0 ? rc : 0;
}
