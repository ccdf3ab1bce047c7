/* cmd_grade_one.c: `pplab grade-one`, the graded test of `pplab grade --transport mpi`. The grading process
 * stays free of MPI (it forks a test process per configuration, and fork() after MPI_Init is unsafe), so each
 * test is one `mpirun -np P pplab grade-one ...`: every process runs its rank over the mpi transport, rank 0
 * gets the gathered results, runs the reference and the checks (the same code as a threads test) and writes the
 * pp_test_result, stamped with the grader's token, to --result FILE.
 * A recomputation test needs the same schedule without recomputation too, and MPI initialises once per
 * process: the grader first starts a `grade-one --plain-out FILE` mpirun, whose rank 0 writes that run's status
 * and stash memory, and passes the file to the graded run as --plain-in. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "configs.h"
#include "crash.h"
#include "impl.h"
#include "runner.h"
#include "transport.h"

/* What the run without recomputation leaves for the graded run. */
typedef struct plain_record {
    uint64_t token;
    int32_t status, P;
    uint64_t peak_bytes[PP_MAX_RANKS];
} plain_record;

typedef struct one_opts {
    pp_test_config tc;
    const char *so, *backend, *result, *plain_out, *plain_in, *plots;
    uint64_t token;
    double deadline;
} one_opts;

static unsigned long long num_u(const char *flag, const char *val, int base) {
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(val, &end, base);
    if (errno || end == val || *end) pp__cli_fail("grade-one", "%s needs a non-negative integer, got '%s'", flag, val);
    return x;
}

static void parse(one_opts *o, int argc, char **argv) {
    pp_test_config *t = &o->tc;
    t->v = 1, t->steps = 1, t->time_limit_s = 10;
    o->backend = "cpu";
    for (int i = 2; i < argc; i++) {
        const char *f = argv[i];
#define IS(s) (!strcmp(f, s))
#define VAL() pp__cli_value(argc, argv, &i)
        if (IS("--lab")) snprintf(t->lab, sizeof t->lab, "%s", VAL());
        else if (IS("--stages")) t->P = pp__cli_int(f, VAL(), 1, PP_MAX_RANKS);
        else if (IS("--microbatches")) t->M = pp__cli_int(f, VAL(), 1, 1024);
        else if (IS("--chunks")) t->v = pp__cli_int(f, VAL(), 1, 16);
        else if (IS("--steps")) t->steps = pp__cli_int(f, VAL(), 1, 100000);
        else if (IS("--seed")) t->seed = (unsigned)num_u(f, VAL(), 10);
        else if (IS("--latency")) t->latency = pp__cli_num(f, VAL());
        else if (IS("--recompute")) t->recompute = pp__cli_int(f, VAL(), 0, 1);
        else if (IS("--layers")) t->layers = pp__cli_int(f, VAL(), 0, 4096);
        else if (IS("--hidden")) t->hidden = pp__cli_int(f, VAL(), 0, 65536);
        else if (IS("--time")) t->time_limit_s = pp__cli_num(f, VAL());
        else if (IS("--deadline")) o->deadline = pp__cli_num(f, VAL());
        else if (IS("--so")) o->so = VAL();
        else if (IS("--backend")) o->backend = VAL();
        else if (IS("--token")) o->token = num_u(f, VAL(), 16);
        else if (IS("--result")) o->result = VAL();
        else if (IS("--plain-out")) o->plain_out = VAL();
        else if (IS("--plain-in")) o->plain_in = VAL();
        else if (IS("--plots")) o->plots = VAL();
        else pp__cli_fail("grade-one", "unknown flag '%s'", f);
#undef IS
#undef VAL
    }
    if (!pp__lab_find(t->lab) || !strcmp(t->lab, "warmup"))
        pp__cli_fail("grade-one", "--lab needs naive, gpipe, 1f1b or interleaved, got '%s'", t->lab);
    if (!t->P || !t->M || !o->so || !o->token || !(o->result || o->plain_out))
        pp__cli_fail("grade-one", "needs --stages, --microbatches, --so, --token and --result or --plain-out "
                     "(it is started by pplab grade --transport mpi)");
}

static int file_put(const char *path, const void *buf, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(buf, 1, n, f) == n;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* The run without recomputation: rank 0 records its status and per-rank stash memory. */
static int plain_run(const one_opts *o) {
    const pp_lab_info *lab = pp__lab_find(o->tc.lab);
    char err[1024];
    pp_step_fn fn = (pp_step_fn)pp__impl_symbol(o->so, lab->symbol, err, sizeof err);
    pp_run_config rc;
    pp__config_to_run(&o->tc, o->backend, &rc);
    rc.transport = "mpi";
    rc.recompute = 0;
    if (o->deadline > 0) rc.deadline_s = o->deadline;
    plain_record rec = {.token = o->token, .status = PP_ERR_COMPILE, .P = rc.P};
    if (fn) {
        pp_run_result res;
        rec.status = pp__run(&rc, fn, &res);
        for (int r = 0; r < rc.P && res.peak_bytes && rec.status == PP_OK; r++) rec.peak_bytes[r] = res.peak_bytes[r];
        pp__result_free(&res);
    }
    if (pp__mpi_env_rank() != 0) return 0;
    if (file_put(o->plain_out, &rec, sizeof rec)) {
        fprintf(stderr, "pplab grade-one: cannot write %s: check /tmp is writable\n", o->plain_out);
        return 1;
    }
    return 0;
}

/* The run without recomputation as the checks read it (status and peak_bytes), or NULL when it failed. */
static const pp_run_result *plain_load(const one_opts *o, pp_run_result *res, size_t *peaks) {
    plain_record rec;
    if (!o->plain_in) return NULL;
    FILE *f = fopen(o->plain_in, "rb");
    size_t n = f ? fread(&rec, 1, sizeof rec, f) : 0;
    if (f) fclose(f);
    if (n != sizeof rec || rec.token != o->token || rec.status != PP_OK || rec.P != o->tc.P) return NULL;
    memset(res, 0, sizeof *res);
    res->status = PP_OK;
    res->P = rec.P;
    for (int r = 0; r < rec.P; r++) peaks[r] = (size_t)rec.peak_bytes[r];
    res->peak_bytes = peaks;
    return res;
}

int pp__cmd_grade_one(int argc, char **argv) {
    one_opts o = {0};
    parse(&o, argc, argv);
    int np = pp__mpi_env_size(), me = pp__mpi_env_rank();
    if (!pp__mpi_built() || !pp__mpi_env_launcher() || (np > 0 && np != o.tc.P)) {
        if (me == 0)
            fprintf(stderr, "pplab grade-one: needs mpirun -np %d and a pplab built with MPI (it is started by "
                            "pplab grade --transport mpi)\n", o.tc.P);
        return me == 0 ? 2 : 0;
    }
    pp__crash_install();
    if (o.plain_out) return plain_run(&o);
    if (o.plots) pp__runner_set_plot_dir(o.plots);
    pp_run_result plain_res;
    size_t peaks[PP_MAX_RANKS];
    const pp_run_result *plain = o.tc.recompute ? plain_load(&o, &plain_res, peaks) : NULL;
    pp_test_result *r = pp__xcalloc(1, sizeof *r);
    r->cfg = o.tc;
    /* every process runs its rank; only rank 0 (lead) grades and reports. The others exit 0 whatever happened,
     * since mpirun stops the job at the first non-zero exit, which could cut rank 0's report short. */
    int lead = pp__runner_grade(&o.tc, o.so, o.backend, "mpi", o.deadline, plain, r);
    int rc = 0;
    if (lead) {
        r->token = o.token;
        fflush(stdout);
        if (file_put(o.result, r, sizeof *r)) {
            fprintf(stderr, "pplab grade-one: cannot write %s: check /tmp is writable\n", o.result);
            rc = 3;
        }
    }
    free(r);
    return rc;
}
