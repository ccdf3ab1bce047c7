/* runner.c: one graded test: its supervisor (fork, subreaper, capture, time limit), the raw result file it
 * writes, and the grading of that file in the grader's own process. */
#include "runner.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "checks.h"
#include "crash.h"
#include "files.h"
#include "plot.h"
#include "result.h"
#include "schedule.h"
#include "host.h"
#include "suite.h"
#include "tracefile.h"
#include "transport.h"
#include "uids.h"
#include "warmup_call.h"
#include "wire.h"

#define RESULT_MAGIC 0x70706c6162726573ull /* "pplabres" */
enum { KIND_RUN = 1, KIND_WARMUP = 2, KIND_REFERENCE = 3 };

static const char *plot_dir;
static const char *mpi_exe; /* pplab to start under mpirun; NULL: ranks are threads of the supervisor */
static const char *mpi_hostfile; /* ... and the nodes it spreads them over; NULL: this machine */
static pp_sandbox sandbox;
static int sandbox_set;
static int in_process; /* the unsafe debugging mode: the student's object runs inside the supervisor */

void pp__runner_set_in_process(int on) { in_process = on; }

static uid_t uids_taken[256];
static int nuids_taken;

const uid_t *pp__runner_uids(int *n) {
    *n = nuids_taken < 256 ? nuids_taken : 256;
    return uids_taken;
}

void pp__runner_set_plot_dir(const char *dir) { plot_dir = dir; }

void pp__runner_set_sandbox(const pp_sandbox *sb) {
    sandbox = *sb;
    sandbox_set = 1;
}

/* The sandbox of later tests: as set, else the defaults, probed once (the pre-exec filter, the drivers' empty
 * root, the build's view). A probe that fails leaves the defaults: the driver's start then names what failed. */
static const pp_sandbox *sandbox_get(void) {
    if (!sandbox_set) {
        char err[600];
        pp__sandbox_defaults(&sandbox);
        if (pp__sandbox_probe(&sandbox, err, sizeof err)) fprintf(stderr, "pplab: %s\n", err);
        sandbox_set = 1;
    }
    return &sandbox;
}

void pp__runner_set_hostfile(const char *hostfile) { mpi_hostfile = hostfile; }

int pp__runner_set_transport(const char *transport, const char *pplab_exe) {
    if (!strcmp(transport, "threads")) {
        mpi_exe = NULL;
        return 0;
    }
    if (strcmp(transport, "mpi") || !pplab_exe) return -1;
    mpi_exe = pplab_exe;
    return 0;
}

/* ---- result files --------------------------------------------------------------------------------------- */

static void file_head(pp_wire *w, uint64_t token, int kind) {
    pp__wire_u64(w, RESULT_MAGIC);
    pp__wire_u64(w, token);
    pp__wire_u32(w, (uint32_t)kind);
}

/* Written beside path, then renamed over it: a reader never sees part of a file. Under mpirun the supervisor
 * takes a result that is there as rank 0's last word and ends mpirun soon after; on a busy machine rank 0 could
 * still be writing it. */
static int file_put(const char *path, const pp_wire *w) {
    char part[PATH_MAX + 32];
    snprintf(part, sizeof part, "%s.part%d", path, (int)getpid());
    if (w->bad || pp__file_write(part, w->p, w->len, 0600)) {
        unlink(part);
        return -1;
    }
    if (rename(part, path)) {
        unlink(part);
        return -1;
    }
    return 0;
}

/* The whole file at path (NULL when missing). Its size follows from the configuration, so no cap applies:
 * any model the machine holds reaches the grader. */
static unsigned char *file_get(const char *path, size_t *len) {
    return (unsigned char *)pp__file_read(path, PP_FILE_ANY_SIZE, len);
}

/* Writes a run's result file: head, then the run as the grader decodes it. 0, or -1. */
static int run_file_put(const char *path, uint64_t token, const pp_run_result *res, int steps) {
    pp_wire w;
    pp__wire_init(&w);
    file_head(&w, token, KIND_RUN);
    pp__result_encode(&w, res, steps);
    int rc = file_put(path, &w);
    pp__wire_free(&w);
    return rc;
}

/* Opens a result file of kind: the reader is positioned after its head. 0, or -1 when it is not ours. */
static int file_open(pp_wire_in *r, const unsigned char *buf, size_t len, uint64_t token, int kind) {
    pp__wire_in_init(r, buf, len);
    uint64_t magic = pp__wire_get_u64(r), tok = pp__wire_get_u64(r);
    uint32_t k = pp__wire_get_u32(r, 0, 0xffffffffu);
    return !r->bad && magic == RESULT_MAGIC && tok == token && (int)k == kind ? 0 : -1;
}

/* ---- in the supervisor (and in grade-one) --------------------------------------------------------------- */

/* pp_program.on_ready under mpirun: rank 0 says that every rank is set up, by creating the file named arg. */
static void ready_touch(void *arg) {
    int fd = open((const char *)arg, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
}

int pp__runner_execute(const pp_test_config *tc, const pp_impl *impl, const char *backend, const char *transport,
                       double deadline_s, int plain, uint64_t token, const char *path) {
    const pp_lab_info *lab = pp__lab_find(tc->lab);
    pp_run_config rc;
    pp__test_to_run(tc, backend, &rc);
    rc.transport = transport;
    if (deadline_s > 0) rc.deadline_s = deadline_s;
    if (plain) rc.recompute = 0;
    pp_sandbox sb = *sandbox_get();
    sb.cpu_limit_s = tc->time_limit_s > 0 ? tc->time_limit_s : 10;
    pp__sandbox_size_tasks(&sb, rc.P);
    pp_program prog = {.sandbox = &sb, .symbol = lab->symbol};
    char ready[PATH_MAX];
    if (!strcmp(transport, "mpi")) {
        snprintf(ready, sizeof ready, "%s.ready", path);
        prog.on_ready = ready_touch, prog.ready_arg = ready;
    }
    char err[1024] = "";
    if (in_process) {
        prog.sandbox = NULL;
        prog.fn = (pp_step_fn)pp__impl_symbol(impl->shared, lab->symbol, err, sizeof err);
    } else {
        pp__host_open(&sb, impl->driver, impl->object, err, sizeof err);
    }
    pp_run_result res;
    if (err[0]) {
        memset(&res, 0, sizeof res);
        res.status = PP_ERR_IO;
        res.P = rc.P, res.v = rc.v;
        snprintf(res.error, sizeof res.error, "%s", err);
    } else {
        pp__run_program(&rc, &prog, &res);
    }
    pp__host_close(&sb);
    int rc_w = 0;
    if (strcmp(transport, "mpi") || pp__mpi_env_rank() == 0) rc_w = run_file_put(path, token, &res, rc.steps) ? 1 : 0;
    pp__result_free(&res);
    return rc_w;
}

/* The warm-up part's answers, asked of a driver of the student's warm-up file (or, in the debugging mode, of
 * its object loaded here). */
static int warmup_execute(const pp_test_config *tc, const pp_impl *impl, uint64_t token, const char *path) {
    pp_sandbox sb = *sandbox_get();
    sb.cpu_limit_s = tc->time_limit_s > 0 ? tc->time_limit_s : 10;
    pp__sandbox_size_tasks(&sb, 1);
    pp_wire rec, w;
    pp__wire_init(&rec);
    char err[600] = "";
    pp_status st = PP_OK;
    pp_warmup_fns fns = {0}, *direct = NULL;
    if (in_process) {
        void *h = dlopen(impl->shared, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            snprintf(err, sizeof err, "cannot load %s: %s", impl->shared, dlerror());
            st = PP_ERR_IO;
        } else {
#define PP_WU_LOOKUP(field, symbol, type) *(void **)&fns.field = dlsym(h, #symbol);
            PP_WARMUP_FUNCTIONS(PP_WU_LOOKUP)
#undef PP_WU_LOOKUP
            direct = &fns;
        }
    } else if (pp__host_open(&sb, impl->driver, impl->object, err, sizeof err)) {
        st = PP_ERR_IO;
    }
    if (st == PP_OK) st = pp__warmup_record(tc, &sb, direct, &rec, err, sizeof err);
    pp__host_close(&sb);
    pp__wire_init(&w);
    file_head(&w, token, KIND_WARMUP);
    pp__wire_u32(&w, (uint32_t)st);
    pp__wire_str(&w, err, sizeof err - 1);
    pp__wire_u64(&w, rec.len);
    pp__wire_put(&w, rec.p, rec.len);
    int bad = file_put(path, &w);
    pp__wire_free(&rec);
    pp__wire_free(&w);
    return bad ? 1 : 0;
}

/* Every process this one still has below it: killed, then reaped. A subreaper inherits the orphans of its
 * descendants, so repeating until none is left reaches all of them, however deep they forked. Children listed
 * in keep are left alone (the grader's other tests in flight). */
static void reap_children(const pid_t *keep, int nkeep) {
    pid_t me = getpid();
    for (int round = 0; round < 1000; round++) {
        DIR *d = opendir("/proc");
        if (!d) return;
        pid_t kids[256];
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)) && n < 256) {
            char *end;
            long pid = strtol(e->d_name, &end, 10);
            if (*end || pid <= 0) continue;
            char path[64], buf[512];
            snprintf(path, sizeof path, "/proc/%ld/stat", pid);
            FILE *f = fopen(path, "r");
            if (!f) continue;
            size_t k = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[k] = 0;
            char *close_paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
            long ppid;
            char state;
            if (!close_paren || sscanf(close_paren + 1, " %c %ld", &state, &ppid) != 2 || ppid != me) continue;
            int kept = 0;
            for (int i = 0; i < nkeep; i++) kept |= keep[i] == (pid_t)pid;
            if (!kept) kids[n++] = (pid_t)pid;
        }
        closedir(d);
        if (!n) return;
        for (int i = 0; i < n; i++) kill(kids[i], SIGKILL);
        for (int i = 0; i < n; i++)
            while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR) {}
    }
}

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
    double limit = tc->time_limit_s > 0 ? tc->time_limit_s : 10;
    double d = 0.4 * limit / (tc->recompute ? 2 : 1);
    return d < 0.5 ? 0.5 : d > 10 ? 10 : d;
}

static void mpi_cmd_build(mpi_cmd *c, const pp_test_config *t, const pp_impl *impl, const char *backend,
                          const char *path, int plain) {
    const pp_sandbox *sb = sandbox_get();
    c->n = 0;
    mpi_arg(c, "mpirun");
    if (geteuid() == 0) mpi_arg(c, "--allow-run-as-root");
    mpi_arg(c, "--oversubscribe");
    if (mpi_hostfile) mpi_arg(c, "--hostfile"), mpi_arg(c, "%s", mpi_hostfile);
    /* Open MPI's session folders and shared-memory segments, on every node, in the test's own folder (which the
     * grader removes whole): a run killed halfway leaves nothing in /tmp or /dev/shm */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    if (strrchr(dir, '/')) *strrchr(dir, '/') = 0;
    mpi_arg(c, "--mca"), mpi_arg(c, "orte_tmpdir_base"), mpi_arg(c, "%s", dir);
    mpi_arg(c, "--mca"), mpi_arg(c, "btl_vader_backing_directory"), mpi_arg(c, "%s", dir);
    mpi_arg(c, "-x"), mpi_arg(c, "PPLAB_TOKEN"); /* the token travels in the environment, not on a command line */
    mpi_arg(c, "-np"), mpi_arg(c, "%d", t->P * (t->D > 1 ? t->D : 1));
    mpi_arg(c, "%s", mpi_exe), mpi_arg(c, "grade-one");
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
/* Seconds an mpirun may take to end once rank 0 wrote the result (it holds on to a lost node until its own
 * keepalive gives up on it). */
#define MPI_END_S 3

/* The test's runs under mpirun, one each: without recomputation first (when the test needs it), then graded.
 * Their time after start-up counts against the test's limit; a run past it is killed with everything below
 * this process and recorded as timed out (the grader reports it as its own timeout), so that a deadlock found
 * by the deadline always comes before the limit, however long start-up took on a loaded machine. */
static void mpi_execute(const pp_test_config *tc, const pp_impl *impl, const char *backend, uint64_t token,
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
    double limit = tc->time_limit_s > 0 ? tc->time_limit_s : 10, used = 0;
    mpi_cmd *c = pp__xcalloc(1, sizeof *c);
    for (int plain = tc->recompute ? 1 : 0; plain >= 0; plain--) {
        const char *path = plain ? plain_path : res_path;
        char ready[PATH_MAX + 8];
        snprintf(ready, sizeof ready, "%s.ready", path);
        mpi_cmd_build(c, tc, impl, backend, path, plain);
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
        int st = 0, over = 0, unstarted = 0;
        double t_launch = pp__now(), t_ready = 0, t_result = 0;
        while (pid > 0) {
            pid_t got = waitpid(pid, &st, WNOHANG);
            if (got == pid || (got < 0 && errno != EINTR)) break;
            double t = pp__now();
            struct stat rs;
            if (!t_ready && access(ready, F_OK) == 0) t_ready = t;
            if (!t_result && stat(path, &rs) == 0 && rs.st_size > 0) t_result = t;
            unstarted = !t_ready && t - t_launch > MPI_START_S;
            over = t_ready && !t_result && t - t_ready > limit - used;
            /* rank 0 wrote its result: an mpirun that still cannot end (a node it lost) is ended for it */
            if (t_result && t - t_result > MPI_END_S) {
                kill(pid, SIGKILL);
                while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
                break;
            }
            if (unstarted || over) {
                kill(pid, SIGKILL);
                while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
                break;
            }
            usleep(2000);
        }
        if (t_ready) used += pp__now() - t_ready;
        reap_children(NULL, 0);
        pp_run_result res;
        memset(&res, 0, sizeof res);
        res.P = tc->P, res.v = tc->v;
        if (over || unstarted) {
            /* in the graded run's file, which the grader reads first */
            res.status = over ? PP_ERR_TIMEOUT : PP_ERR_INTERNAL;
            if (unstarted)
                snprintf(res.error, sizeof res.error, "mpirun did not start the test's %d ranks within %d s: the "
                         "machine is overloaded, or Open MPI cannot start processes here (try mpirun -np 2 "
                         "hostname)", tc->P * (tc->D > 1 ? tc->D : 1), MPI_START_S);
            run_file_put(res_path, token, &res, tc->steps);
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
        run_file_put(path, token, &res, tc->steps);
    }
    free(c);
}

/* Where a supervisor or a reference process reports a fatal error of its own (pp__die): the file the grader
 * reads, so that the grade names it (out of memory: which size) instead of a process that ended without a word. */
static struct {
    const pp_test_config *tc;
    uint64_t token;
    const char *path;
    int kind;
} fatal_to;

static pp_status fatal_status(const char *what) {
    return strncmp(what, "out of memory", 13) ? PP_ERR_CRASH : PP_ERR_LIMIT;
}

static void __attribute__((noreturn)) report_fatal(const char *what, const char *hint) {
    /* a fixed buffer: the failure may be the heap's */
    static unsigned char buf[8192];
    pp_wire w;
    pp__wire_init_fixed(&w, buf, sizeof buf);
    file_head(&w, fatal_to.token, fatal_to.kind);
    char msg[1400];
    snprintf(msg, sizeof msg, "%s%s: %s", fatal_to.kind == KIND_REFERENCE ? "the grader's full-batch reference: " : "",
             what,
             fatal_status(what) == PP_ERR_LIMIT ? "the configuration's model does not fit this machine's memory"
                                                : hint);
    if (fatal_to.kind == KIND_REFERENCE) {
        pp__wire_u32(&w, (uint32_t)fatal_status(what));
        pp__wire_str(&w, msg, sizeof msg - 1);
    } else {
        static pp_run_result res;
        res.status = fatal_status(what);
        res.P = fatal_to.tc->P, res.v = fatal_to.tc->v;
        snprintf(res.error, sizeof res.error, "%s", msg);
        pp__result_encode(&w, &res, fatal_to.tc->steps);
    }
    int rc = file_put(fatal_to.path, &w);
    _exit(rc ? 3 : 0);
}

static void fatal_report_to(const pp_test_config *tc, uint64_t token, const char *path, int kind) {
    fatal_to.tc = tc, fatal_to.token = token, fatal_to.path = path, fatal_to.kind = kind;
    pp__die_set_handler(report_fatal);
}

/* The body of a test's supervisor. */
static void __attribute__((noreturn)) supervise(const pp_test_config *tc, const pp_impl *impl, const char *backend,
                                                uint64_t token, const char *res_path, const char *plain_path) {
    int rc = 0;
    if (!strcmp(tc->lab, "warmup")) {
        rc = warmup_execute(tc, impl, token, res_path);
    } else {
        fatal_report_to(tc, token, res_path, KIND_RUN);
        if (mpi_exe) {
            mpi_execute(tc, impl, backend, token, res_path, plain_path);
        } else {
            rc = pp__runner_execute(tc, impl, backend, "threads", 0, 0, token, res_path);
            if (tc->recompute) rc |= pp__runner_execute(tc, impl, backend, "threads", 0, 1, token, plain_path);
        }
    }
    fflush(stdout);
    fflush(stderr);
    /* the grader ends every process of the test's uid once this one is gone; these are this subreaper's own */
    reap_children(NULL, 0);
    _exit(rc ? 3 : 0);
}

/* ---- in the grader ------------------------------------------------------------------------------------- */

/* The student's timeline above the canonical one, as plot_dir/<test name>.png, and the run's trace as
 * plot_dir/<test name>.json (Trace Event Format). */
static void plot_pair(const pp_run_config *rc, const pp_run_result *res, const char *name) {
    pp_schedule s;
    pp_costs k;
    if (pp__schedule_build(&s, rc->schedule, rc->P, rc->M, rc->v)) return;
    pp__costs_from_config(&k, rc);
    pp_trace *ideal = pp__xcalloc((size_t)rc->P, sizeof *ideal);
    if (pp__schedule_trace(&s, &k, ideal) >= 0) {
        char prefix[1024];
        int n = snprintf(prefix, sizeof prefix, "%s/", plot_dir);
        /* a file name without spaces, '=' or the ':' of "hidden: " */
        for (const char *p = name; *p && n < (int)sizeof prefix - 1; p++)
            if (*p != ':') prefix[n++] = *p == ' ' ? '_' : *p == '=' ? '-' : *p;
        prefix[n] = 0;
        pp__plot_gantt_pair(res->traces, ideal, rc->P, prefix);
        /* and the run itself, for ui.perfetto.dev */
        char json[1100];
        snprintf(json, sizeof json, "%s.json", prefix);
        if (pp__tracefile_write_json(res->traces, res->P, res->D, json))
            fprintf(stderr, "pplab grade: cannot write %s: check the --plot-dir folder is writable\n", json);
    }
    for (int r = 0; r < rc->P; r++) pp__trace_clear(&ideal[r]);
    free(ideal);
    pp__costs_free(&k);
    pp__schedule_free(&s);
}

void pp__runner_check(const pp_test_config *tc, const pp_run_config *rc, const pp_run_result *res,
                      const pp_run_result *plain, pp_reference *given, pp_test_result *out) {
    char err[1024];
    if (res->status != PP_OK) {
        pp__checks_failed_run(rc, res->status, res->error, res->traces, res->waiting_tag, out);
        out->crashed = res->status == PP_ERR_CRASH;
        return;
    }
    out->bubble = res->bubble;
    if (plot_dir) {
        char name[96];
        pp__test_name(tc, name, sizeof name);
        plot_pair(rc, res, name);
    }
    if (pp__checks_zero_grads(rc, res, out)) return;
    /* the micro-batches' own gradients only serve to diagnose wrong gradients: compute them only then */
    pp_reference ref;
    int failed = 0;
    if (given) {
        ref = *given;
        memset(given, 0, sizeof *given);
    } else {
        failed = pp__reference_run(rc, 0, &ref, err, sizeof err);
    }
    if (!failed && !pp__checks_grads_ok(res, &ref)) {
        pp__reference_free(&ref);
        failed = pp__reference_run(rc, 1, &ref, err, sizeof err);
    }
    if (failed) {
        pp__checks_failed_run(rc, PP_ERR_BACKEND, err, NULL, NULL, out);
    } else {
        pp__checks_run(rc, res, plain, &ref, out);
        pp__reference_free(&ref);
    }
}

static uint64_t new_token(void) {
    uint64_t t = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, &t, sizeof t) != (ssize_t)sizeof t) t = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^ (uint64_t)time(NULL);
    if (fd >= 0) close(fd);
    return t | 1;
}

static void fail_whole(pp_test_result *out, const pp_test_config *tc, pp_status st, const char *msg) {
    pp_test_result keep = *out;
    memset(out, 0, sizeof *out);
    out->weight_err = out->loss_err = -1;
    out->cfg = keep.cfg;
    memcpy(out->name, keep.name, sizeof out->name);
    out->seconds = keep.seconds;
    out->timed_out = keep.timed_out;
    out->crashed = keep.crashed;
    if (!strcmp(tc->lab, "warmup")) {
        pp__warmup_fail(tc, st, msg, out);
    } else {
        pp_run_config rc;
        pp__test_to_run(tc, "cpu", &rc);
        pp__checks_failed_run(&rc, st, msg, NULL, NULL, out);
    }
}

/* Tests in flight, for pp__runner_abort_all (read from a signal handler: plain fixed-size storage). */
#define MAX_INFLIGHT 64
#define PATH_NAME 320
static volatile pid_t inflight_pid[MAX_INFLIGHT], inflight_ref[MAX_INFLIGHT];
static volatile uid_t inflight_uid[MAX_INFLIGHT];
static char inflight_dir[MAX_INFLIGHT][PATH_NAME];

/* dst = dir "/" name [rank], with no stdio: a signal handler removes a test's folder too. */
static void job_path(char *dst, size_t len, const char *dir, const char *name, int rank) {
    size_t n = 0;
    for (const char *p = dir; *p && n + 1 < len; p++) dst[n++] = *p;
    if (n + 1 < len) dst[n++] = '/';
    for (const char *p = name; *p && n + 1 < len; p++) dst[n++] = *p;
    if (rank >= 0 && n + 8 < len) {
        for (const char *p = ".rank"; *p; p++) dst[n++] = *p;
        if (rank >= 10) dst[n++] = (char)('0' + rank / 10 % 10);
        dst[n++] = (char)('0' + rank % 10);
    }
    dst[n] = 0;
}

/* Empties the folder open as fd, however deep (up to a depth no test's files reach), and closes fd. Only calls
 * a signal handler may make (getdents64, unlinkat, openat), and no link is followed: what the folder holds was
 * made by the grader's own processes and Open MPI's, but it is removed as if anything could be in it. */
static void tree_empty(int fd, int depth) {
    char buf[4096];
    for (int pass = 0, left = 1; left && pass < 8; pass++) {
        left = 0;
        lseek(fd, 0, SEEK_SET);
        ssize_t n;
        while ((n = getdents64(fd, buf, sizeof buf)) > 0)
            for (ssize_t off = 0; off < n;) {
                struct dirent64 *d = (struct dirent64 *)(buf + off);
                off += d->d_reclen;
                if (d->d_name[0] == '.' && (!d->d_name[1] || (d->d_name[1] == '.' && !d->d_name[2]))) continue;
                left = 1;
                if (unlinkat(fd, d->d_name, 0) == 0 || depth >= 16) continue;
                int sub = openat(fd, d->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0) tree_empty(sub, depth + 1);
                unlinkat(fd, d->d_name, AT_REMOVEDIR);
            }
    }
    close(fd);
}

/* Removes a test's folder and everything in it: its files, and under mpirun Open MPI's session folder and
 * shared-memory segments (async-signal-safe: pp__runner_abort_all calls it from a signal handler). */
static void job_dir_remove(const char *dir) {
    if (!dir[0]) return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) tree_empty(fd, 0);
    rmdir(dir);
}

static void inflight_set(pid_t pid, pid_t ref, uid_t uid, const char *dir) {
    for (int i = 0; i < MAX_INFLIGHT; i++)
        if (!inflight_pid[i]) {
            snprintf(inflight_dir[i], PATH_NAME, "%s", dir);
            inflight_ref[i] = ref;
            inflight_uid[i] = uid;
            inflight_pid[i] = pid;
            return;
        }
}

static void inflight_clear(pid_t pid) {
    for (int i = 0; i < MAX_INFLIGHT; i++)
        if (inflight_pid[i] == pid) inflight_pid[i] = inflight_ref[i] = 0, inflight_uid[i] = 0;
}

void pp__runner_abort_all(void) {
    for (int i = 0; i < MAX_INFLIGHT; i++) {
        pid_t pid = inflight_pid[i];
        if (!pid) continue;
        kill(-pid, SIGKILL); /* each test leads its own process group: drivers, mpirun, ranks */
        kill(pid, SIGKILL);
        if (inflight_ref[i]) kill(inflight_ref[i], SIGKILL);
        if (inflight_uid[i]) pp__uid_kill(inflight_uid[i]);
        job_dir_remove(inflight_dir[i]);
    }
}

/* A new empty file `name` of the test's folder dir, mode 0600. 0, or -1. */
static int job_file(char *path, size_t len, const char *dir, const char *name) {
    job_path(path, len, dir, name, -1);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

/* A test in flight. */
struct pp_runner_job {
    pp_test_config tc;
    pid_t pid, ref_pid;      /* the supervisor; the reference process (runs only), else 0 */
    uid_t uid;               /* the test's own uid (as root), else 0 */
    char dir[PATH_NAME];     /* the test's own folder in the private folder (policy.h): the grader's alone */
    char cap[PATH_NAME], res_path[PATH_NAME], plain_path[PATH_NAME], ref_path[PATH_NAME];
    uint64_t token;
    double t0;
};

/* The reference process: the full-batch reference of the test's configuration, computed beside the run (it
 * used to be the grader's own serial work, half of all CPU time), written into a token-stamped file. It runs
 * pplab's code alone, on nothing the submission produced, so it is as trusted as the grader. */
static void __attribute__((noreturn)) reference_execute(const pp_test_config *tc, uint64_t token, const char *path) {
    /* what it has to say goes into its file; nothing reaches the grader's terminal */
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 1), dup2(null, 2), close(null);
    fatal_report_to(tc, token, path, KIND_REFERENCE);
    pp_run_config rc;
    pp__test_to_run(tc, "cpu", &rc);
    pp_reference ref;
    char err[512];
    pp_wire w;
    pp__wire_init(&w);
    file_head(&w, token, KIND_REFERENCE);
    int failed = pp__reference_run(&rc, 0, &ref, err, sizeof err);
    pp__wire_u32(&w, failed ? PP_ERR_BACKEND : PP_OK);
    if (failed) {
        pp__wire_str(&w, err, sizeof err - 1);
    } else {
        pp__reference_encode(&w, &ref, rc.steps);
        pp__reference_free(&ref);
    }
    int rc_w = file_put(path, &w);
    pp__wire_free(&w);
    _exit(rc_w ? 3 : 0);
}

/* Starts the reference process of j (its pid in j->ref_pid, 0 when it could not start: the grader then computes
 * the reference itself). */
static void reference_start(pp_runner_job *j) {
    if (job_file(j->ref_path, sizeof j->ref_path, j->dir, "reference")) return;
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_DFL); /* not the grader's handlers: an interrupt just ends it */
        signal(SIGTERM, SIG_DFL);
        reference_execute(&j->tc, j->token, j->ref_path);
    }
    if (pid < 0) {
        unlink(j->ref_path);
        j->ref_path[0] = 0;
        return;
    }
    j->ref_pid = pid;
}

/* Ends j's reference process: waits for it to finish, or kills it (!wait) when the test needs it no more, and
 * reaps it. Returns its wait status, or -1 when none is running. */
static int reference_end(pp_runner_job *j, int wait) {
    if (!j->ref_pid) return -1;
    if (!wait) kill(j->ref_pid, SIGKILL);
    int st = 0;
    while (waitpid(j->ref_pid, &st, 0) < 0 && errno == EINTR) {}
    j->ref_pid = 0;
    return st;
}

/* Waits for j's reference and reads its file (steps losses) into ref. Returns 1 with ref filled, 0 when none was
 * started (ref empty: the caller computes it), -1 with *st_out and err set when it failed. */
static int reference_read(pp_runner_job *j, int steps, pp_reference *ref, pp_status *st_out, char *err,
                          size_t errlen) {
    memset(ref, 0, sizeof *ref);
    int st = reference_end(j, 1);
    if (st < 0) return 0;
    *st_out = PP_ERR_INTERNAL;
    if (WIFSIGNALED(st)) {
        snprintf(err, errlen, "the grader's reference process died of signal %d (%s) before its result: %s",
                 WTERMSIG(st), strsignal(WTERMSIG(st)),
                 WTERMSIG(st) == SIGKILL ? "the machine ran out of memory (the kernel's OOM killer)" : "a bug in pplab");
        return -1;
    }
    snprintf(err, errlen, "the grader's reference process ended without its result: a bug in pplab, or no disk");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
    size_t len = 0;
    unsigned char *buf = file_get(j->ref_path, &len);
    pp_wire_in r;
    int got = -1;
    if (buf && file_open(&r, buf, len, j->token, KIND_REFERENCE) == 0) {
        pp_status s = (pp_status)pp__wire_get_u32(&r, 0, PP_STATUS_COUNT - 1);
        if (s != PP_OK) {
            *st_out = s;
            pp__wire_get_str(&r, err, errlen);
        } else if (pp__reference_decode(&r, steps, ref) == 0) {
            got = 1;
        }
    }
    free(buf);
    return got;
}

pp_runner_job *pp__runner_start(const pp_test_config *tc, const pp_impl *impl, pp_status build_st,
                                const char *build_err, const char *backend, pp_test_result *out) {
    memset(out, 0, sizeof *out);
    out->weight_err = out->loss_err = -1;
    out->cfg = *tc;
    if (impl) memcpy(out->cfg.file_sha256, impl->sha256, sizeof impl->sha256);
    pp__test_name(tc, out->name, sizeof out->name);
    if (!impl) {
        fail_whole(out, tc, build_st != PP_OK ? build_st : PP_ERR_COMPILE,
                   build_err ? build_err : "the implementation did not build");
        return NULL;
    }
    /* the grader adopts what a killed supervisor leaves behind, and reaps it (see reap_orphans) */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    pp_runner_job *j = pp__xcalloc(1, sizeof *j);
    j->tc = out->cfg;
    tc = &j->tc; /* with the file's hash: both halves of a warm-up test draw from it */
    char uid_err[300];
    const pp_sandbox *sb = sandbox_get();
    if (!in_process && sb->lockdown && sb->drop_uid && pp__uid_take(&j->uid, uid_err, sizeof uid_err)) {
        fail_whole(out, tc, PP_ERR_SANDBOX, uid_err);
        free(j);
        return NULL;
    }
    if (j->uid) uids_taken[nuids_taken++ % 256] = j->uid;
    const char *priv = pp__private_dir();
    if (priv) snprintf(j->dir, sizeof j->dir, "%s/test-XXXXXX", priv);
    int dir_ok = priv && mkdtemp(j->dir);
    if (!dir_ok) j->dir[0] = 0;
    int capfd = !dir_ok || job_file(j->cap, sizeof j->cap, j->dir, "output") ? -1 : open(j->cap, O_WRONLY | O_APPEND | O_CLOEXEC);
    int files_ok = capfd >= 0 && job_file(j->res_path, sizeof j->res_path, j->dir, "result") == 0 &&
                   (!tc->recompute || job_file(j->plain_path, sizeof j->plain_path, j->dir, "plain") == 0);
    if (!files_ok) {
        fail_whole(out, tc, PP_ERR_INTERNAL, "cannot create the test's capture and result files: check $TMPDIR (or /tmp)");
        if (capfd >= 0) close(capfd);
        job_dir_remove(j->dir);
        free(j);
        return NULL;
    }
    j->token = new_token();
    j->t0 = pp__now();
    fflush(stdout);
    fflush(stderr);
    if (strcmp(tc->lab, "warmup")) reference_start(j);
    j->pid = fork();
    if (j->pid == 0) {
        /* its own process group, a subreaper of everything below it, and its output in the capture file, which
         * the drivers inherit as theirs */
        setpgid(0, 0);
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(capfd, 1);
        dup2(capfd, 2);
        close(capfd);
        if (j->uid) sandbox.uid = j->uid, sandbox.gid = (gid_t)j->uid; /* the test's own, for all its drivers */
        snprintf(sandbox.capture, sizeof sandbox.capture, "%s", j->cap); /* each driver's own file beside it */
        pp__crash_install(pp__current_rank, NULL);
        supervise(tc, impl, backend, j->token, j->res_path, j->plain_path);
    }
    if (j->pid > 0) setpgid(j->pid, j->pid); /* also here: no race with the child's own call */
    if (j->pid > 0) inflight_set(j->pid, j->ref_pid, j->uid, j->dir);
    close(capfd);
    return j;
}

/* Appends the last `max` bytes of the file at path to the growing text t (n of cap), and the file's size to
 * the largest seen. */
static void tail_add(const char *path, size_t max, char **t, size_t *n, size_t *cap, long *largest) {
    FILE *f = fopen(path, "r");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f), from = size > (long)max ? size - (long)max : 0;
    if (size > *largest) *largest = size;
    fseek(f, from, SEEK_SET);
    if (*n + max + 1 > *cap) *cap = *n + max + 1, *t = pp__xrealloc(*t, *cap);
    *n += fread(*t + *n, 1, max, f);
    fclose(f);
}

/* The last `max` bytes of what the test printed, starting at a line boundary: each rank's driver in rank order,
 * then the supervisor's own lines, so the same run shows the same text whatever order the ranks ran in.
 * *largest gets the size of the largest file (the output limit is per process). */
static void read_tail(const pp_runner_job *j, char *dst, size_t max, long *largest) {
    char path[PATH_NAME + 32];
    char *t = NULL;
    size_t n = 0, cap = 0;
    *largest = 0;
    int ranks = strcmp(j->tc.lab, "warmup") ? (j->tc.P > 0 && j->tc.P <= PP_MAX_RANKS ? j->tc.P : PP_MAX_RANKS) : 1;
    for (int r = 0; r < ranks; r++) job_path(path, sizeof path, j->dir, "output", r), tail_add(path, max, &t, &n, &cap, largest);
    tail_add(j->cap, max, &t, &n, &cap, largest);
    size_t from = n > max - 1 ? n - (max - 1) : 0;
    if (from > 0) {
        char *nl = memchr(t + from, '\n', n - from);
        if (nl) from = (size_t)(nl + 1 - t);
    }
    if (t) memcpy(dst, t + from, n - from);
    dst[n - from] = 0;
    /* the output is kept as a C string: a NUL the schedule printed would hide everything after it */
    for (size_t i = 0; i < n - from; i++)
        if (!dst[i]) dst[i] = '?';
    free(t);
}

/* Waits for the supervisor until t_end; 1 when it exited (status set), 0 on timeout. */
static int wait_until(pid_t pid, double t_end, int *status) {
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid) return 1;
        if (w < 0 && errno != EINTR) return 1;
        if (pp__now() >= t_end) return 0;
        usleep(2000);
    }
}

/* Orphans of a killed supervisor came to this process (a subreaper): end them too, but not the supervisors
 * and reference processes of tests still in flight (this one's reference included: it is read next). */
static void reap_orphans(pid_t own_ref) {
    pid_t keep[2 * MAX_INFLIGHT + 1];
    int n = 0;
    for (int i = 0; i < MAX_INFLIGHT; i++) {
        if (inflight_pid[i]) keep[n++] = inflight_pid[i];
        if (inflight_ref[i]) keep[n++] = inflight_ref[i];
    }
    if (own_ref) keep[n++] = own_ref;
    reap_children(keep, n);
}

/* The results of a run, read from the supervisor's file and graded here. */
static void grade_run(pp_runner_job *j, pp_test_result *out) {
    const pp_test_config *tc = &j->tc;
    pp_run_config rc;
    pp__test_to_run(tc, "cpu", &rc);
    size_t len = 0, plen = 0;
    unsigned char *buf = file_get(j->res_path, &len), *pbuf = NULL;
    pp_run_result res, plain;
    pp_wire_in r;
    int ok = buf && file_open(&r, buf, len, j->token, KIND_RUN) == 0 &&
             pp__result_decode(&r, rc.P * rc.D, rc.v, rc.steps, &res) == 0, have_plain = 0;
    if (ok && tc->recompute && res.status == PP_OK) {
        pbuf = file_get(j->plain_path, &plen);
        have_plain = pbuf && file_open(&r, pbuf, plen, j->token, KIND_RUN) == 0 &&
                     pp__result_decode(&r, rc.P * rc.D, rc.v, rc.steps, &plain) == 0;
    }
    pp_reference ref = {0}; /* stays empty when the run failed and no reference is read */
    char err[1400] = "";
    pp_status ref_st = PP_OK;
    /* a failed run needs no reference (pp__runner_finish stops it) */
    int got = ok && res.status == PP_OK ? reference_read(j, rc.steps, &ref, &ref_st, err, sizeof err) : 0;
    if (!ok) {
        fail_whole(out, tc, PP_ERR_INTERNAL, "the test's supervisor ended without a report of its run: this is a bug in "
                   "pplab, or the machine ran out of memory or disk");
    } else if (got < 0 && res.status == PP_OK) {
        pp__checks_failed_run(&rc, ref_st, err, NULL, NULL, out);
        pp__result_free(&res);
        if (have_plain) pp__result_free(&plain);
    } else {
        pp__runner_check(tc, &rc, &res, have_plain ? &plain : NULL, got > 0 ? &ref : NULL, out);
        pp__reference_free(&ref);
        pp__result_free(&res);
        if (have_plain) pp__result_free(&plain);
    }
    free(buf);
    free(pbuf);
}

/* The warm-up's recorded answers, graded here. */
static void grade_warmup(const pp_runner_job *j, pp_test_result *out) {
    size_t len = 0;
    unsigned char *buf = file_get(j->res_path, &len);
    pp_wire_in r;
    if (!buf || file_open(&r, buf, len, j->token, KIND_WARMUP)) {
        free(buf);
        fail_whole(out, &j->tc, PP_ERR_INTERNAL, "the warm-up's supervisor ended without its answers: this is a bug in "
                   "pplab, or the machine ran out of memory or disk");
        return;
    }
    pp_status st = (pp_status)pp__wire_get_u32(&r, 0, PP_STATUS_COUNT - 1);
    char err[600];
    pp__wire_get_str(&r, err, sizeof err);
    uint64_t n = pp__wire_get_u64(&r);
    const void *rec = pp__wire_view(&r, n);
    if (r.bad) {
        fail_whole(out, &j->tc, PP_ERR_INTERNAL, "the warm-up's answers are malformed: this is a bug in pplab");
    } else if (st != PP_OK) {
        out->crashed = st == PP_ERR_CRASH;
        fail_whole(out, &j->tc, st, err);
    } else {
        pp__warmup_grade(&j->tc, rec, (size_t)n, out);
    }
    free(buf);
}

/* The score, from the checks alone: each check's points within [0, its max], their sum. */
static void settle_score(pp_test_result *out) {
    out->score = out->max = 0;
    for (int i = 0; i < out->nchecks; i++) {
        pp_check *c = &out->checks[i];
        if (!(c->max >= 0)) c->max = 0;
        if (!(c->points >= 0)) c->points = 0;
        if (c->points > c->max) c->points = c->max;
        out->score += c->points, out->max += c->max;
    }
}

/* 1 when the supervisor recorded that its run outlived the time limit (under mpirun, whose start-up the
 * supervisor leaves out of the limit). */
static int run_file_timed_out(const pp_runner_job *j) {
    size_t len = 0;
    unsigned char *buf = file_get(j->res_path, &len);
    pp_wire_in r;
    pp_run_result res;
    pp_run_config rc;
    pp__test_to_run(&j->tc, "cpu", &rc);
    int over = buf && file_open(&r, buf, len, j->token, KIND_RUN) == 0 &&
               pp__result_decode(&r, rc.P * rc.D, rc.v, rc.steps, &res) == 0;
    if (over) {
        over = res.status == PP_ERR_TIMEOUT;
        pp__result_free(&res);
    }
    free(buf);
    return over;
}

void pp__runner_finish(pp_runner_job *j, pp_test_result *out) {
    if (!j) return;
    const pp_test_config *tc = &j->tc;
    int status = 0, timed_out = 0;
    double limit = tc->time_limit_s > 0 ? tc->time_limit_s : 10;
    /* under mpirun the supervisor holds the limit from the ranks' start (mpi_execute); this one only stops a
     * supervisor that never ends */
    int mpi = mpi_exe && strcmp(tc->lab, "warmup");
    double outer = limit + (mpi ? (tc->recompute ? 2 : 1) * (MPI_START_S + MPI_END_S + 10) : 0);
    if (j->pid > 0) {
        timed_out = !wait_until(j->pid, j->t0 + outer, &status);
        /* the test's whole process group: its drivers, mpirun and its ranks; and every process of its uid, which
         * reaches one that left the group too */
        kill(-j->pid, SIGKILL);
        if (j->uid) pp__uid_kill(j->uid); /* what it leaves comes here (a subreaper): reap_orphans below */
        if (timed_out)
            while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR) {}
        inflight_clear(j->pid);
        reap_orphans(j->ref_pid);
        if (mpi && !timed_out && WIFEXITED(status)) timed_out = run_file_timed_out(j);
    }
    long cap_size = 0;
    char msg[400];
    if (j->pid < 0) {
        fail_whole(out, tc, PP_ERR_INTERNAL, "cannot fork a test process: too many processes?");
    } else if (timed_out) {
        out->timed_out = 1;
        read_tail(j, out->output_tail, sizeof out->output_tail, &cap_size);
        int flooded = (size_t)cap_size >= sandbox_get()->output_limit && sandbox_get()->output_limit;
        snprintf(msg, sizeof msg, "no result after %.0f s: an endless loop, or a rank spinning without calling "
                 "pplab (a blocked pp_recv/pp_send is reported as a deadlock instead)%s", limit,
                 flooded ? "; it had printed the whole output limit by then, so it was probably printing in a loop" : "");
        fail_whole(out, tc, PP_ERR_TIMEOUT, msg);
    } else if (WIFSIGNALED(status)) {
        out->crashed = 1;
        snprintf(msg, sizeof msg, "the test's supervisor died of signal %d (%s): this is a bug in pplab, or the "
                 "machine ran out of memory", WTERMSIG(status), strsignal(WTERMSIG(status)));
        fail_whole(out, tc, PP_ERR_INTERNAL, msg);
    } else if (!strcmp(tc->lab, "warmup")) {
        grade_warmup(j, out);
    } else {
        grade_run(j, out);
    }
    reference_end(j, 0); /* the reference of a run that never got graded */
    out->seconds = pp__now() - j->t0; /* the whole test: the run, the reference and the checks */
    settle_score(out);
    if (!out->output_tail[0]) read_tail(j, out->output_tail, sizeof out->output_tail, &cap_size);
    job_dir_remove(j->dir);
    free(j);
}

void pp__runner_test(const pp_test_config *tc, const pp_impl *impl, pp_status build_st, const char *build_err,
                     const char *backend, pp_test_result *out) {
    pp__runner_finish(pp__runner_start(tc, impl, build_st, build_err, backend, out), out);
}
