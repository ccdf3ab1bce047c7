/* mpirun.c: a test's runs as MPI processes: the supervisor starts `mpirun pplab grade-one` for each, holds the
 * test's time limit from the ranks' start and writes the run's file in rank 0's place when no report came. */
#include "mpirun.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "reap.h"
#include "resultfile.h"
#include "runopts.h"
#include "testcfg.h"
#include "schedules.h"

/* The mpirun command line of test j: the graded run, or (plain) the same run without recomputation. */
enum { MPI_ARGS = 64 };
typedef struct mpi_cmd {
    char buf[MPI_ARGS][320];
    char *argv[MPI_ARGS + 1];
    int n;
} mpi_cmd;

static void mpi_arg(mpi_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mpi_arg(mpi_cmd *c, const char *fmt, ...) {
    PP_ASSERT(c->n < MPI_ARGS);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->buf[c->n], sizeof c->buf[c->n], fmt, ap);
    va_end(ap);
    c->argv[c->n] = c->buf[c->n];
    c->argv[++c->n] = NULL;
}

/* Seconds a wait may block under mpirun before the mpi transport calls it a deadlock: well inside the time
 * limit, so that start-up (about a second), the report and, for recomputation, a second mpirun still fit. */
static double mpi_deadline(const pp_test_config *tc) {
    double limit = pp__test_limit_s(tc);
    double d = 0.4 * limit / (tc->recompute ? 2 : 1);
    return d < 0.5 ? 0.5 : d > 10 ? 10 : d;
}

/* The processes a test's mpirun starts: one per rank, shards x stages x replicas. */
static int mpi_processes(const pp_test_config *t) { return t->P * (t->D > 1 ? t->D : 1) * (t->T > 1 ? t->T : 1); }

static void mpi_cmd_build(mpi_cmd *c, const pp_test_config *t, const pp_impl *impl, const char *backend,
                          const char *path, int plain) {
    const pp_sandbox *sb = pp__runopts_sandbox();
    c->n = 0;
    mpi_arg(c, "mpirun");
    if (geteuid() == 0) mpi_arg(c, "--allow-run-as-root");
    mpi_arg(c, "--oversubscribe");
    if (pp__runopts_hostfile()) mpi_arg(c, "--hostfile"), mpi_arg(c, "%s", pp__runopts_hostfile());
    /* Open MPI's session folders and shared-memory segments, on every node, in the test's own folder (which the
     * grader removes whole): a run killed halfway leaves nothing in /tmp or /dev/shm */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    if (strrchr(dir, '/')) *strrchr(dir, '/') = 0;
    mpi_arg(c, "--mca"), mpi_arg(c, "orte_tmpdir_base"), mpi_arg(c, "%s", dir);
    mpi_arg(c, "--mca"), mpi_arg(c, "btl_vader_backing_directory"), mpi_arg(c, "%s", dir);
    mpi_arg(c, "-x"), mpi_arg(c, "PPLAB_TOKEN"); /* the token travels in the environment, not on a command line */
    mpi_arg(c, "-np"), mpi_arg(c, "%d", mpi_processes(t));
    mpi_arg(c, "%s", pp__runopts_mpi_exe()), mpi_arg(c, "grade-one");
    mpi_arg(c, "--lab"), mpi_arg(c, "%s", t->lab);
    mpi_arg(c, "--stages"), mpi_arg(c, "%d", t->P);
    mpi_arg(c, "--microbatches"), mpi_arg(c, "%d", t->M);
    if (t->D > 1) {
        mpi_arg(c, "--dp"), mpi_arg(c, "%d", t->D);
        if (t->alpha >= 0) mpi_arg(c, "--reduce-alpha"), mpi_arg(c, "%.17g", t->alpha);
        if (t->beta >= 0) mpi_arg(c, "--reduce-beta"), mpi_arg(c, "%.17g", t->beta);
    }
    mpi_arg(c, "--chunks"), mpi_arg(c, "%d", t->v);
    mpi_arg(c, "--steps"), mpi_arg(c, "%d", t->steps);
    mpi_arg(c, "--seed"), mpi_arg(c, "%u", t->seed);
    mpi_arg(c, "--latency"), mpi_arg(c, "%.17g", t->latency);
    mpi_arg(c, "--recompute"), mpi_arg(c, "%d", t->recompute);
    mpi_arg(c, "--layers"), mpi_arg(c, "%d", t->layers);
    if (t->layout[0]) mpi_arg(c, "--layout"), mpi_arg(c, "%s", t->layout);
    if (t->T > 1) mpi_arg(c, "--tp"), mpi_arg(c, "%d", t->T);
    if (t->node_size > 0) mpi_arg(c, "--node-size"), mpi_arg(c, "%d", t->node_size);
    if (t->placement[0]) mpi_arg(c, "--placement"), mpi_arg(c, "%s", t->placement);
    mpi_arg(c, "--edge-cost"), mpi_arg(c, "%.17g", t->edge);
    mpi_arg(c, "--hidden"), mpi_arg(c, "%d", t->hidden);
    mpi_arg(c, "--time"), mpi_arg(c, "%.17g", t->time_limit_s);
    mpi_arg(c, "--deadline"), mpi_arg(c, "%.17g", mpi_deadline(t));
    mpi_arg(c, "--driver"), mpi_arg(c, "%s", impl->driver);
    mpi_arg(c, "--object"), mpi_arg(c, "%s", impl->object);
    if (sb->drop_uid) mpi_arg(c, "--uid"), mpi_arg(c, "%u", (unsigned)sb->uid);
    mpi_arg(c, "--backend"), mpi_arg(c, "%s", backend);
    mpi_arg(c, "--memory-limit"), mpi_arg(c, "%zu", sb->memory_limit);
    if (!sb->lockdown) mpi_arg(c, "--unsafe-no-sandbox");
    mpi_arg(c, "--out"), mpi_arg(c, "%s", path);
    if (sb->capture[0]) mpi_arg(c, "--capture"), mpi_arg(c, "%s", sb->capture);
    if (plain) mpi_arg(c, "--plain");
}

/* Seconds mpirun may take to start a test's ranks (until rank 0 says every rank is set up): start-up is the
 * launcher's and the machine's, not the submission's, so a test's time limit counts its runs from then on. */
#define MPI_START_S 30

/* Seconds from mpirun's start to rank 0's word that every rank is set up. The grid lab's rank 0 asks the
 * submission's mapping before MPI starts, and gives it the test's time limit (lib/run/server.c): that wait is the
 * submission's, and ends in its own time-out, reported by rank 0, never in the launcher's. */
static double start_window_s(const pp_test_config *tc) {
    const pp_schedule_def *def = pp__schedule_def(tc->lab);
    return MPI_START_S + (def && def->grid ? pp__test_limit_s(tc) : 0);
}
/* Seconds an mpirun may take to end once rank 0 wrote the result (it holds on to a lost node until its own
 * keepalive gives up on it). */
#define MPI_END_S 3

/* Starts c's mpirun: its pid, or -1 when fork fails. */
static pid_t mpirun_spawn(const mpi_cmd *c) {
    pid_t pid = fork();
    if (pid == 0) {
        /* mpirun forwards stdin to rank 0: a background process group reading the terminal would stop */
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0), close(nul);
        execvp(c->argv[0], c->argv);
        fprintf(stderr, "pplab grade: cannot start mpirun (%s): install openmpi-bin or grade with "
                "--transport threads\n", strerror(errno));
        _exit(127);
    }
    return pid;
}

/* How an mpirun ended: its wait status, whether it ran past the time left after its ranks were ready (over) or
 * never got them started (unstarted), and when they were ready (0: never). */
typedef struct mpirun_end {
    int st, over, unstarted;
    double t_ready;
} mpirun_end;

/* Waits for mpirun pid, whose ranks say they are ready in the file `ready` and whose rank 0 writes its result to
 * path, killing it once it runs `left` seconds past ready, never starts its ranks, or cannot end after the result. */
static mpirun_end mpirun_watch(pid_t pid, const pp_test_config *tc, const char *path, const char *ready,
                               double left) {
    mpirun_end e = {0, 0, 0, 0};
    double t_launch = pp__now(), t_result = 0, window = start_window_s(tc);
    while (pid > 0) {
        pid_t got = waitpid(pid, &e.st, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR)) break;
        double t = pp__now();
        struct stat rs;
        if (!e.t_ready && access(ready, F_OK) == 0) e.t_ready = t;
        if (!t_result && stat(path, &rs) == 0 && rs.st_size > 0) t_result = t;
        e.unstarted = !e.t_ready && !t_result && t - t_launch > window;
        e.over = e.t_ready && !t_result && t - e.t_ready > left;
        /* rank 0 wrote its result: an mpirun that still cannot end (a node it lost) is ended for it */
        if ((t_result && t - t_result > MPI_END_S) || e.unstarted || e.over) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &e.st, 0) < 0 && errno == EINTR) {}
            break;
        }
        usleep(2000);
    }
    return e;
}

void pp__mpirun_execute(const pp_test_config *tc, const pp_impl *impl, const char *backend, uint64_t token,
                        const char *res_path, const char *plain_path) {
    char tok[32];
    snprintf(tok, sizeof tok, "%016" PRIx64, token);
    setenv("PPLAB_TOKEN", tok, 1);
    /* mpirun's own session folder in the test's folder too (mpi_cmd_build places the ranks'): two tests' mpiruns
     * never meet there */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", res_path);
    if (strrchr(dir, '/')) *strrchr(dir, '/') = 0;
    setenv("TMPDIR", dir, 1);
    double limit = pp__test_limit_s(tc), used = 0;
    mpi_cmd *c = pp__xcalloc(1, sizeof *c);
    for (int plain = tc->recompute ? 1 : 0; plain >= 0; plain--) {
        const char *path = plain ? plain_path : res_path;
        char ready[PATH_MAX + 8];
        snprintf(ready, sizeof ready, "%s.ready", path);
        mpi_cmd_build(c, tc, impl, backend, path, plain);
        pid_t pid = mpirun_spawn(c);
        mpirun_end e = mpirun_watch(pid, tc, path, ready, limit - used);
        int st = e.st, over = e.over, unstarted = e.unstarted;
        if (e.t_ready) used += pp__now() - e.t_ready;
        pp__reap_children(NULL, 0);
        pp_run_result res;
        memset(&res, 0, sizeof res);
        res.P = tc->P, res.v = tc->v;
        if (over || unstarted) {
            /* in the graded run's file, which the grader reads first */
            res.status = over ? PP_ERR_TIMEOUT : PP_ERR_INTERNAL;
            if (unstarted)
                snprintf(res.error, sizeof res.error, "mpirun did not start the test's %d processes within %g s: "
                         "the machine is overloaded, or Open MPI cannot start processes here (try mpirun -np 2 "
                         "hostname)", mpi_processes(tc), start_window_s(tc));
            pp__resultfile_put_run(res_path, token, &res, tc->steps);
            break;
        }
        struct stat fs;
        if (stat(path, &fs) == 0 && fs.st_size > 0) continue;
        /* no rank 0 report: say why in its place */
        /* mpirun, and every process below it, is the kit's: a submission's crash is its driver's, which its rank
         * reports */
        res.status = PP_ERR_INTERNAL;
        if (pid < 0 || (WIFEXITED(st) && WEXITSTATUS(st) == 127))
            snprintf(res.error, sizeof res.error, "mpirun could not be started: install openmpi-bin (Open MPI) or "
                     "grade with --transport threads");
        else
            snprintf(res.error, sizeof res.error, "mpirun ended (%s %d) before rank 0 reported the run: see the "
                     "output", WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        pp__resultfile_put_run(path, token, &res, tc->steps);
    }
    free(c);
}

double pp__mpirun_wait_s(const pp_test_config *tc) {
    double limit = pp__test_limit_s(tc);
    return limit + (tc->recompute ? 2 : 1) * (start_window_s(tc) + MPI_END_S + 10);
}
