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
#include "suite.h"
#include "crash.h"
#include "impl.h"
#include "schedules.h"
#include "runner.h"
#include "spawn.h"
#include "transport.h"

typedef struct one_opts {
    pp_test_config tc;
    const char *driver, *backend, *out;
    double deadline;
    int plain;
    pp_sandbox sb;
} one_opts;

static void parse(one_opts *o, int argc, char **argv) {
    pp_test_config *t = &o->tc;
    t->v = 1, t->steps = 1, t->time_limit_s = 10;
    o->backend = "cpu";
    pp__sandbox_defaults(&o->sb);
    for (int i = 2; i < argc; i++) {
        const char *f = argv[i];
#define IS(s) (!strcmp(f, s))
#define VAL() pp__cli_value(argc, argv, &i)
        if (IS("--lab")) snprintf(t->lab, sizeof t->lab, "%s", VAL());
        else if (IS("--stages")) t->P = pp__cli_int(f, VAL(), 1, PP_MAX_RANKS);
        else if (IS("--microbatches")) t->M = pp__cli_int(f, VAL(), 1, 1024);
        else if (IS("--chunks")) t->v = pp__cli_int(f, VAL(), 1, 16);
        else if (IS("--steps")) t->steps = pp__cli_int(f, VAL(), 1, 100000);
        else if (IS("--seed")) t->seed = (unsigned)pp__cli_int(f, VAL(), 0, 2147483647);
        else if (IS("--latency")) t->latency = pp__cli_num(f, VAL());
        else if (IS("--recompute")) t->recompute = pp__cli_int(f, VAL(), 0, 1);
        else if (IS("--layers")) t->layers = pp__cli_int(f, VAL(), 0, 4096);
        else if (IS("--hidden")) t->hidden = pp__cli_int(f, VAL(), 0, 65536);
        else if (IS("--time")) t->time_limit_s = pp__cli_num(f, VAL());
        else if (IS("--deadline")) o->deadline = pp__cli_num(f, VAL());
        else if (IS("--driver")) o->driver = VAL();
        else if (IS("--backend")) o->backend = VAL();
        else if (IS("--out")) o->out = VAL();
        else if (IS("--plain")) o->plain = 1;
        else if (IS("--memory-limit")) o->sb.memory_limit = (size_t)pp__cli_num(f, VAL());
        else if (IS("--unsafe-no-sandbox")) o->sb.lockdown = 0, o->sb.drop_uid = 0;
        else pp__cli_fail("grade-one", "unknown flag '%s'", f);
#undef IS
#undef VAL
    }
    if (!pp__lab_find(t->lab) || !strcmp(t->lab, "warmup"))
        pp__cli_fail("grade-one", "--lab needs %s, got '%s'", pp__schedule_names((char[256]){0}, 256, ", ", " or "),
                     t->lab);
    if (!t->P || !t->M || !o->driver || !o->out)
        pp__cli_fail("grade-one", "needs --stages, --microbatches, --driver and --out (it is started by pplab grade "
                     "--transport mpi)");
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
    pp__runner_set_sandbox(&o.sb);
    /* every process runs its rank (its driver starts before MPI_Init); rank 0 alone writes the results. The
     * others exit 0 whatever happened, since mpirun stops the job at the first non-zero exit, which could cut
     * rank 0's report short. */
    static pp_impl impl;
    snprintf(impl.driver, sizeof impl.driver, "%s", o.driver);
    int rc = pp__runner_execute(&o.tc, &impl, o.backend, "mpi", o.deadline, o.plain, token, o.out);
    if (rc && me == 0) fprintf(stderr, "pplab grade-one: cannot write %s: check /tmp is writable\n", o.out);
    return me == 0 ? rc : 0;
}
