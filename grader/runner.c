/* runner.c: fork, pipe, time limit and output capture around one graded test. With the mpi transport the
 * forked child execs `mpirun ... pplab grade-one` instead (one mpirun per test: no fork() after MPI_Init), and
 * rank 0 writes the result to a file the parent reads once mpirun has ended. */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checks.h"
#include "configs.h"
#include "crash.h"
#include "impl.h"
#include "plot.h"
#include "result_io.h"
#include "schedule.h"
#include "transport.h"

/* ---- in the child -------------------------------------------------------------------------------------- */

static const char *plot_dir;

void pp__runner_set_plot_dir(const char *dir) { plot_dir = dir; }

/* The student's timeline above the canonical one, as plot_dir/<test name>.png. */
static void plot_pair(const pp_run_config *rc, const pp_run_result *res, const char *name) {
    pp_schedule s;
    pp_costs k;
    if (pp__schedule_build(&s, rc->schedule, rc->P, rc->M, rc->v)) return;
    pp__costs_from_config(&k, rc);
    pp_trace *ideal = pp__xcalloc((size_t)rc->P, sizeof *ideal);
    if (pp__schedule_trace(&s, &k, ideal) >= 0) {
        char prefix[1024];
        int n = snprintf(prefix, sizeof prefix, "%s/", plot_dir);
        for (const char *p = name; *p && n < (int)sizeof prefix - 1; p++)
            prefix[n++] = (*p == ' ' || *p == '=') ? (*p == ' ' ? '_' : '-') : *p;
        prefix[n] = 0;
        pp__plot_gantt_pair(res->traces, ideal, rc->P, prefix);
    }
    for (int r = 0; r < rc->P; r++) pp__trace_clear(&ideal[r]);
    free(ideal);
    pp__costs_free(&k);
    pp__schedule_free(&s);
}

int pp__runner_grade(const pp_test_config *tc, const char *so_path, const char *backend, const char *transport,
                     double deadline_s, const pp_run_result *plain_given, pp_test_result *out) {
    int mpi = !strcmp(transport, "mpi"), lead = !mpi || pp__mpi_env_rank() == 0;
    if (!strcmp(tc->lab, "warmup")) {
        if (lead) pp__warmup_grade(so_path, tc, out);
        return lead;
    }
    const pp_lab_info *lab = pp__lab_find(tc->lab);
    char err[1024];
    pp_step_fn fn = (pp_step_fn)pp__impl_symbol(so_path, lab->symbol, err, sizeof err);
    pp_run_config rc;
    pp__config_to_run(tc, backend, &rc);
    rc.transport = transport;
    if (deadline_s > 0) rc.deadline_s = deadline_s;
    if (!fn) {
        if (lead) pp__checks_failed_run(&rc, PP_ERR_COMPILE, err, out);
        return lead;
    }
    pp_run_result res, plain = {0};
    pp__run(&rc, fn, &res);
    if (!lead) {
        /* rank 0 holds the gathered results and grades for every process */
        pp__result_free(&res);
        return 0;
    }
    int have_plain = 0, own_plain = rc.recompute && !mpi && res.status == PP_OK;
    if (own_plain) {
        pp_run_config rc2 = rc;
        rc2.recompute = 0;
        have_plain = pp__run(&rc2, fn, &plain) == PP_OK;
    } else if (rc.recompute && plain_given) {
        /* MPI initialises once per process: the run without recomputation was the previous mpirun's */
        plain = *plain_given;
        have_plain = 1;
    }
    pp__runner_check(tc, &rc, &res, have_plain ? &plain : NULL, out);
    pp__result_free(&res);
    if (own_plain) pp__result_free(&plain);
    return 1;
}

void pp__runner_check(const pp_test_config *tc, const pp_run_config *rc, const pp_run_result *res,
                      const pp_run_result *plain, pp_test_result *out) {
    char err[1024];
    if (res->status != PP_OK) {
        pp__checks_failed_run(rc, res->status, res->error, out);
        return;
    }
    out->bubble = res->bubble;
    if (plot_dir) {
        char name[96];
        pp__config_name(tc, name, sizeof name);
        plot_pair(rc, res, name);
    }
    if (pp__checks_zero_grads(rc, res, out)) return;
    /* the micro-batches' own gradients only serve to diagnose wrong gradients: compute them only then */
    pp_reference ref;
    int failed = pp__reference_run(rc, 0, &ref, err, sizeof err);
    if (!failed && !pp__checks_grads_ok(res, &ref)) {
        pp__reference_free(&ref);
        failed = pp__reference_run(rc, 1, &ref, err, sizeof err);
    }
    if (failed) {
        pp__checks_failed_run(rc, PP_ERR_BACKEND, err, out);
    } else {
        pp__checks_run(rc, res, plain && plain->status == PP_OK ? plain : NULL, &ref, out);
        pp__reference_free(&ref);
    }
}

/* In the forked child of a threads test: runs the student's step function (and, for recomputation, the same
 * run without it) and writes the raw results to the job's files. Grading happens in the parent, which never
 * loads the student's code: what this process reports can only be what a run produced. */
static int child_execute(const pp_test_config *tc, const char *so_path, const char *backend, uint64_t token,
                         const char *res_path, const char *plain_path) {
    const pp_lab_info *lab = pp__lab_find(tc->lab);
    char err[1024];
    pp_run_config rc;
    pp__config_to_run(tc, backend, &rc);
    pp_run_result res = {0};
    pp_step_fn fn = (pp_step_fn)pp__impl_symbol(so_path, lab->symbol, err, sizeof err);
    if (!fn) {
        res.status = PP_ERR_COMPILE;
        res.P = rc.P, res.v = rc.v;
        snprintf(res.error, sizeof res.error, "%s", err);
    } else {
        pp__run(&rc, fn, &res);
    }
    FILE *f = fopen(res_path, "wb");
    int rc_w = !f || pp__result_write(f, token, rc.steps, &res) || fclose(f);
    if (fn && rc.recompute && res.status == PP_OK) {
        pp_run_result plain;
        rc.recompute = 0;
        pp__run(&rc, fn, &plain);
        FILE *g = fopen(plain_path, "wb");
        rc_w |= !g || pp__result_write(g, token, rc.steps, &plain) || fclose(g);
        pp__result_free(&plain);
    }
    pp__result_free(&res);
    return rc_w ? 3 : 0;
}

static int write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k, n -= (size_t)k;
    }
    return 0;
}

/* ---- in the parent ------------------------------------------------------------------------------------- */

static const char *mpi_exe; /* pplab to start under mpirun; NULL: tests run in the forked child */

int pp__runner_set_transport(const char *transport, const char *pplab_exe) {
    if (!strcmp(transport, "threads")) {
        mpi_exe = NULL;
        return 0;
    }
    if (strcmp(transport, "mpi") || !pplab_exe) return -1;
    mpi_exe = pplab_exe;
    return 0;
}

static uint64_t new_token(void) {
    uint64_t t = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0 || read(fd, &t, sizeof t) != (ssize_t)sizeof t) t = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^ (uint64_t)time(NULL);
    if (fd >= 0) close(fd);
    return t | 1;
}

/* The last `max` bytes of the capture file, starting at a line boundary. */
static void read_tail(const char *path, char *dst, size_t max) {
    dst[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f), from = size > (long)max - 1 ? size - (long)max + 1 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(dst, 1, max - 1, f);
    dst[n] = 0;
    fclose(f);
    if (from > 0) {
        char *nl = strchr(dst, '\n');
        if (nl) memmove(dst, nl + 1, strlen(nl + 1) + 1);
    }
}

static void fail_whole(pp_test_result *out, const pp_test_config *tc, pp_status st, const char *msg) {
    pp_test_result keep = *out;
    memset(out, 0, sizeof *out);
    out->cfg = keep.cfg;
    memcpy(out->name, keep.name, sizeof out->name);
    out->seconds = keep.seconds;
    out->timed_out = keep.timed_out;
    out->crashed = keep.crashed;
    if (!strcmp(tc->lab, "warmup")) {
        pp__check_add(out, "warm-up answers", 1, 0, "not graded: %s", pp__status_str(st));
        out->status = st;
        snprintf(out->error, sizeof out->error, "%s", msg);
    } else {
        pp_run_config rc;
        pp__config_to_run(tc, "cpu", &rc);
        pp__checks_failed_run(&rc, st, msg, out);
    }
}

/* Tests in flight, for pp__runner_abort_all (read from a signal handler: plain fixed-size storage). */
#define MAX_INFLIGHT 64
static volatile pid_t inflight_pid[MAX_INFLIGHT];
static char inflight_files[MAX_INFLIGHT][3][32];

static void inflight_set(pid_t pid, const char *a, const char *b, const char *c) {
    for (int i = 0; i < MAX_INFLIGHT; i++)
        if (!inflight_pid[i]) {
            snprintf(inflight_files[i][0], 32, "%s", a);
            snprintf(inflight_files[i][1], 32, "%s", b);
            snprintf(inflight_files[i][2], 32, "%s", c);
            inflight_pid[i] = pid;
            return;
        }
}

static void inflight_clear(pid_t pid) {
    for (int i = 0; i < MAX_INFLIGHT; i++)
        if (inflight_pid[i] == pid) inflight_pid[i] = 0;
}

void pp__runner_abort_all(void) {
    for (int i = 0; i < MAX_INFLIGHT; i++) {
        pid_t pid = inflight_pid[i];
        if (!pid) continue;
        kill(-pid, SIGKILL); /* each test leads its own process group: mpirun, ranks, anything it forked */
        kill(pid, SIGKILL);
        for (int k = 0; k < 3; k++)
            if (inflight_files[i][k][0]) unlink(inflight_files[i][k]);
    }
}

/* A test in flight. */
struct pp_runner_job {
    pp_test_config tc;
    pid_t pid;
    int fd;                  /* the warm-up's result pipe; -1 when the result comes in files */
    int raw;                 /* threads: the child reports raw results, this process grades them */
    char cap[32];
    char res_path[32], plain_path[32]; /* under mpirun: rank 0's result, and the run without recomputation's */
    uint64_t token;
    double t0;
};

/* Seconds a wait may block under mpirun before the mpi transport calls it a deadlock: well inside the time
 * limit, so that start-up (about a second), the report and, for recomputation, a second mpirun still fit. */
static double mpi_deadline(const pp_test_config *tc) {
    double limit = tc->time_limit_s > 0 ? tc->time_limit_s : 10;
    double d = 0.4 * limit / (tc->recompute ? 2 : 1);
    return d < 0.5 ? 0.5 : d > 10 ? 10 : d;
}

/* The mpirun command line of test j: the graded run, or (plain) the same run without recomputation. Strings
 * live in buf; argv is NULL-terminated. */
enum { MPI_ARGS = 48 };
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

static void mpi_cmd_build(mpi_cmd *c, const pp_runner_job *j, const char *so_path, const char *backend, int plain) {
    const pp_test_config *t = &j->tc;
    c->n = 0;
    mpi_arg(c, "mpirun");
    if (geteuid() == 0) mpi_arg(c, "--allow-run-as-root");
    mpi_arg(c, "--oversubscribe");
    mpi_arg(c, "-np"), mpi_arg(c, "%d", t->P);
    mpi_arg(c, "%s", mpi_exe), mpi_arg(c, "grade-one");
    mpi_arg(c, "--lab"), mpi_arg(c, "%s", t->lab);
    mpi_arg(c, "--stages"), mpi_arg(c, "%d", t->P);
    mpi_arg(c, "--microbatches"), mpi_arg(c, "%d", t->M);
    mpi_arg(c, "--chunks"), mpi_arg(c, "%d", t->v);
    mpi_arg(c, "--steps"), mpi_arg(c, "%d", t->steps);
    mpi_arg(c, "--seed"), mpi_arg(c, "%u", t->seed);
    mpi_arg(c, "--latency"), mpi_arg(c, "%.17g", t->latency);
    mpi_arg(c, "--recompute"), mpi_arg(c, "%d", t->recompute);
    mpi_arg(c, "--layers"), mpi_arg(c, "%d", t->layers);
    mpi_arg(c, "--hidden"), mpi_arg(c, "%d", t->hidden);
    mpi_arg(c, "--time"), mpi_arg(c, "%.17g", t->time_limit_s);
    mpi_arg(c, "--deadline"), mpi_arg(c, "%.17g", mpi_deadline(t));
    mpi_arg(c, "--so"), mpi_arg(c, "%s", so_path);
    mpi_arg(c, "--backend"), mpi_arg(c, "%s", backend);
    mpi_arg(c, "--token"), mpi_arg(c, "%016" PRIx64, j->token);
    if (plain) {
        mpi_arg(c, "--plain-out"), mpi_arg(c, "%s", j->plain_path);
        return;
    }
    mpi_arg(c, "--result"), mpi_arg(c, "%s", j->res_path);
    if (t->recompute) mpi_arg(c, "--plain-in"), mpi_arg(c, "%s", j->plain_path);
    if (plot_dir) mpi_arg(c, "--plots"), mpi_arg(c, "%s", plot_dir);
}

/* In the forked child: the run without recomputation first (when the test needs it), then the graded run,
 * each one mpirun. The child leads its own process group, so the parent's kill(-pid) on timeout ends mpirun
 * and every rank. */
static void mpi_child(const pp_runner_job *j, const char *so_path, const char *backend) {
    mpi_cmd *c = pp__xcalloc(1, sizeof *c);
    if (j->tc.recompute) {
        mpi_cmd_build(c, j, so_path, backend, 1);
        pid_t pid = fork();
        if (pid == 0) {
            execvp(c->argv[0], c->argv);
            _exit(127);
        }
        int st;
        while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    }
    mpi_cmd_build(c, j, so_path, backend, 0);
    execvp(c->argv[0], c->argv);
    fprintf(stderr, "pplab grade: cannot start mpirun (%s): install openmpi-bin or grade with --transport threads\n",
            strerror(errno));
    _exit(127);
}

static int temp_file(char *path, size_t len, const char *kind) {
    snprintf(path, len, "/tmp/pplab-%s-XXXXXX", kind);
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

pp_runner_job *pp__runner_start(const pp_test_config *tc, const char *so_path, const char *build_err,
                                const char *backend, pp_test_result *out) {
    memset(out, 0, sizeof *out);
    out->cfg = *tc;
    pp__config_name(tc, out->name, sizeof out->name);
    if (!so_path) {
        fail_whole(out, tc, PP_ERR_COMPILE, build_err ? build_err : "the implementation did not build");
        return NULL;
    }
    /* the warm-up has no ranks: it runs in the forked child whatever the transport */
    int warmup = !strcmp(tc->lab, "warmup"), mpi = mpi_exe && !warmup;
    pp_runner_job *j = pp__xcalloc(1, sizeof *j);
    j->tc = *tc;
    j->fd = -1;
    j->raw = !mpi && !warmup;
    snprintf(j->cap, sizeof j->cap, "/tmp/pplab-output-XXXXXX");
    int capfd = mkstemp(j->cap);
    int fds[2] = {-1, -1};
    int files_ok = warmup || (temp_file(j->res_path, sizeof j->res_path, "result") == 0 &&
                              (!tc->recompute || temp_file(j->plain_path, sizeof j->plain_path, "plain") == 0));
    if (capfd < 0 || !files_ok || (warmup && pipe(fds))) {
        fail_whole(out, tc, PP_ERR_IO, "cannot create the capture file or pipe: check /tmp");
        if (capfd >= 0) close(capfd), unlink(j->cap);
        if (j->res_path[0]) unlink(j->res_path);
        if (j->plain_path[0]) unlink(j->plain_path);
        free(j);
        return NULL;
    }
    j->token = new_token();
    j->t0 = pp__now();
    fflush(stdout);
    fflush(stderr);
    j->pid = fork();
    if (j->pid == 0 && mpi) {
        setpgid(0, 0);
        /* mpirun forwards stdin to rank 0: a background process group reading the terminal would stop */
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0), close(nul);
        dup2(capfd, 1);
        dup2(capfd, 2);
        close(capfd);
        mpi_child(j, so_path, backend);
    }
    if (j->pid == 0) {
        /* its own process group, so whatever the student's code starts ends with it (kill(-pid)) */
        setpgid(0, 0);
        dup2(capfd, 1);
        dup2(capfd, 2);
        close(capfd);
        /* a schedule printing without end must not fill the disk: the capture stops growing at 64 MiB */
        struct rlimit fsize = {64 << 20, 64 << 20};
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &fsize);
        pp__crash_install();
        if (j->raw) _exit(child_execute(tc, so_path, backend, j->token, j->res_path, j->plain_path));
        close(fds[0]);
        pp_test_result *r = pp__xcalloc(1, sizeof *r);
        r->cfg = *tc;
        pp__runner_grade(tc, so_path, backend, "threads", 0, NULL, r);
        r->token = j->token;
        fflush(stdout);
        _exit(write_all(fds[1], r, sizeof *r) ? 3 : 0);
    }
    if (j->pid > 0) setpgid(j->pid, j->pid); /* also here: no race with the child's own call */
    if (j->pid > 0) inflight_set(j->pid, j->cap, j->res_path, j->plain_path);
    if (warmup) close(fds[1]), j->fd = fds[0];
    close(capfd);
    return j;
}

/* Waits for the child (mpirun) until the deadline t0 + limit; 1 when it exited (status set), 0 on timeout. */
static int wait_until(pid_t pid, double t_end, int *status) {
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid) return 1;
        if (w < 0 && errno != EINTR) return 1;
        if (pp__now() >= t_end) return 0;
        usleep(5000);
    }
}

/* Reads the whole file at path (at most max bytes) into a malloc'd buffer; NULL when missing or too big. */
static void *file_slurp(const char *path, size_t max, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = size >= 0 && (size_t)size <= max ? pp__xmalloc((size_t)size + 1) : NULL;
    *len = buf ? fread(buf, 1, (size_t)size, f) : 0;
    fclose(f);
    return buf;
}

/* A threads test that ended normally: parse its raw results and grade them here. */
static void grade_raw(const pp_runner_job *j, pp_test_result *out) {
    const pp_test_config *tc = &j->tc;
    pp_run_config rc;
    pp__config_to_run(tc, "cpu", &rc);
    size_t len = 0, plen = 0;
    void *buf = file_slurp(j->res_path, (size_t)1 << 30, &len), *pbuf = NULL;
    pp_run_result res, plain;
    int ok = buf && pp__result_read(buf, len, j->token, &rc, &res) == 0, have_plain = 0;
    if (ok && tc->recompute && res.status == PP_OK) {
        pbuf = file_slurp(j->plain_path, (size_t)1 << 30, &plen);
        have_plain = pbuf && pp__result_read(pbuf, plen, j->token, &rc, &plain) == 0;
    }
    double secs = out->seconds;
    if (!ok) {
        fail_whole(out, tc, PP_ERR_CRASH, "the test process ended without a valid report of its run (did the "
                   "schedule write to the grader's files or end the process?)");
    } else {
        pp__runner_check(tc, &rc, &res, have_plain ? &plain : NULL, out);
        pp__result_free(&res);
        if (have_plain) pp__result_free(&plain);
    }
    out->seconds = secs;
    free(buf);
    free(pbuf);
}

/* Reads up to n bytes of path into dst; returns the count. */
static size_t file_get(const char *path, void *dst, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t k = fread(dst, 1, n, f);
    fclose(f);
    return k;
}

void pp__runner_finish(pp_runner_job *j, pp_test_result *out) {
    if (!j) return;
    const pp_test_config *tc = &j->tc;
    int files = j->res_path[0] != 0; /* the result comes in files: raw (threads) or rank 0's (mpirun) */
    pp_test_result *got = pp__xcalloc(1, sizeof *got);
    size_t have = 0;
    int timed_out = 0, status = 0;
    double limit = tc->time_limit_s > 0 ? tc->time_limit_s : 10;
    while (!files && j->pid > 0 && have < sizeof *got) {
        int left_ms = (int)((j->t0 + limit - pp__now()) * 1000);
        if (left_ms <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p = {j->fd, POLLIN, 0};
        int k = poll(&p, 1, left_ms);
        if (k < 0 && errno == EINTR) continue;
        if (k == 0) continue;
        ssize_t n = read(j->fd, (char *)got + have, sizeof *got - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        have += (size_t)n;
    }
    if (files && j->pid > 0) {
        timed_out = !wait_until(j->pid, j->t0 + limit, &status);
        if (timed_out) kill(j->pid, SIGKILL);
        else if (!j->raw) have = file_get(j->res_path, got, sizeof *got);
    } else if (timed_out && j->pid > 0) {
        kill(j->pid, SIGKILL);
    }
    /* the test's whole process group: mpirun and its ranks, or anything the student's code forked */
    if (j->pid > 0) kill(-j->pid, SIGKILL), inflight_clear(j->pid);
    if (j->pid > 0 && (!files || timed_out))
        while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR) {}
    if (j->fd >= 0) close(j->fd);
    out->seconds = pp__now() - j->t0;
    char msg[400];
    if (j->pid < 0) {
        fail_whole(out, tc, PP_ERR_IO, "cannot fork a test process: too many processes?");
    } else if (timed_out) {
        out->timed_out = 1;
        snprintf(msg, sizeof msg, "no result after %.0f s: an endless loop, or a rank spinning without calling "
                 "pplab (a blocked pp_recv/pp_send is reported as a deadlock instead)", limit);
        fail_whole(out, tc, PP_ERR_TIMEOUT, msg);
    } else if (j->raw && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        grade_raw(j, out);
    } else if (have == sizeof *got && got->token == j->token) {
        double secs = out->seconds;
        char name[sizeof out->name];
        memcpy(name, out->name, sizeof name);
        *out = *got;
        out->seconds = secs;
        out->cfg = *tc;
        memcpy(out->name, name, sizeof name);
    } else if (WIFSIGNALED(status)) {
        out->crashed = 1;
        int sig = WTERMSIG(status);
        snprintf(msg, sizeof msg, "the test process crashed with signal %d (%s)", sig, strsignal(sig));
        fail_whole(out, tc, PP_ERR_CRASH, msg);
    } else if (files && !j->raw && WIFEXITED(status) && WEXITSTATUS(status) > 128) {
        /* mpirun reports a rank killed by a signal as 128 + the signal */
        out->crashed = 1;
        int sig = WEXITSTATUS(status) - 128;
        snprintf(msg, sizeof msg, "the test process crashed with signal %d (%s) in the schedule code", sig, strsignal(sig));
        fail_whole(out, tc, PP_ERR_CRASH, msg);
    } else if (files && !j->raw && WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        fail_whole(out, tc, PP_ERR_IO, "mpirun could not be started: install openmpi-bin (Open MPI) or grade with "
                   "--transport threads");
    } else {
        snprintf(msg, sizeof msg, "the test process exited (status %d) without a result: did the schedule call "
                 "exit()?", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        fail_whole(out, tc, PP_ERR_CRASH, msg);
    }
    free(got);
    read_tail(j->cap, out->output_tail, sizeof out->output_tail);
    unlink(j->cap);
    if (j->res_path[0]) unlink(j->res_path);
    if (j->plain_path[0]) unlink(j->plain_path);
    free(j);
}

void pp__runner_test(const pp_test_config *tc, const char *so_path, const char *build_err, const char *backend,
                     pp_test_result *out) {
    pp__runner_finish(pp__runner_start(tc, so_path, build_err, backend, out), out);
}
