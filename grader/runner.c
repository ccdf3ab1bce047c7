/* runner.c: fork, pipe, time limit and output capture around one graded test. */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checks.h"
#include "configs.h"
#include "crash.h"
#include "impl.h"
#include "plot.h"
#include "schedule.h"

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

static void child_grade(const pp_test_config *tc, const char *so_path, const char *backend, pp_test_result *out) {
    if (!strcmp(tc->lab, "warmup")) {
        pp__warmup_grade(so_path, tc, out);
        return;
    }
    const pp_lab_info *lab = pp__lab_find(tc->lab);
    char err[1024];
    pp_step_fn fn = (pp_step_fn)pp__impl_symbol(so_path, lab->symbol, err, sizeof err);
    pp_run_config rc;
    pp__config_to_run(tc, backend, &rc);
    if (!fn) {
        pp__checks_failed_run(&rc, PP_ERR_COMPILE, err, out);
        return;
    }
    pp_run_result res, plain = {0};
    pp__run(&rc, fn, &res);
    if (res.status != PP_OK) {
        pp__checks_failed_run(&rc, res.status, res.error, out);
        pp__result_free(&res);
        return;
    }
    out->bubble = res.bubble;
    if (plot_dir) {
        char name[96];
        pp__config_name(tc, name, sizeof name);
        plot_pair(&rc, &res, name);
    }
    if (pp__checks_zero_grads(&rc, &res, out)) {
        pp__result_free(&res);
        return;
    }
    int have_plain = 0;
    if (rc.recompute) {
        pp_run_config rc2 = rc;
        rc2.recompute = 0;
        have_plain = pp__run(&rc2, fn, &plain) == PP_OK;
    }
    pp_reference ref;
    if (pp__reference_run(&rc, 1, &ref, err, sizeof err)) {
        pp__checks_failed_run(&rc, PP_ERR_BACKEND, err, out);
    } else {
        pp__checks_run(&rc, &res, have_plain ? &plain : NULL, &ref, out);
        pp__reference_free(&ref);
    }
    pp__result_free(&res);
    if (rc.recompute) pp__result_free(&plain);
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

/* A test in flight. */
struct pp_runner_job {
    pp_test_config tc;
    pid_t pid;
    int fd;
    char cap[32];
    uint64_t token;
    double t0;
};

pp_runner_job *pp__runner_start(const pp_test_config *tc, const char *so_path, const char *build_err,
                                const char *backend, pp_test_result *out) {
    memset(out, 0, sizeof *out);
    out->cfg = *tc;
    pp__config_name(tc, out->name, sizeof out->name);
    if (!so_path) {
        fail_whole(out, tc, PP_ERR_COMPILE, build_err ? build_err : "the implementation did not build");
        return NULL;
    }
    pp_runner_job *j = pp__xcalloc(1, sizeof *j);
    j->tc = *tc;
    snprintf(j->cap, sizeof j->cap, "/tmp/pplab-output-XXXXXX");
    int capfd = mkstemp(j->cap);
    int fds[2];
    if (capfd < 0 || pipe(fds)) {
        fail_whole(out, tc, PP_ERR_IO, "cannot create the capture file or pipe: check /tmp");
        if (capfd >= 0) close(capfd), unlink(j->cap);
        free(j);
        return NULL;
    }
    j->token = new_token();
    j->t0 = pp__now();
    fflush(stdout);
    fflush(stderr);
    j->pid = fork();
    if (j->pid == 0) {
        close(fds[0]);
        dup2(capfd, 1);
        dup2(capfd, 2);
        close(capfd);
        pp__crash_install();
        pp_test_result *r = pp__xcalloc(1, sizeof *r);
        r->cfg = *tc;
        child_grade(tc, so_path, backend, r);
        r->token = j->token;
        fflush(stdout);
        _exit(write_all(fds[1], r, sizeof *r) ? 3 : 0);
    }
    close(fds[1]);
    close(capfd);
    j->fd = fds[0];
    return j;
}

void pp__runner_finish(pp_runner_job *j, pp_test_result *out) {
    if (!j) return;
    const pp_test_config *tc = &j->tc;
    pp_test_result *got = pp__xcalloc(1, sizeof *got);
    size_t have = 0;
    int timed_out = 0;
    double limit = tc->time_limit_s > 0 ? tc->time_limit_s : 10;
    while (j->pid > 0 && have < sizeof *got) {
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
    if (timed_out && j->pid > 0) kill(j->pid, SIGKILL);
    int status = 0;
    if (j->pid > 0) waitpid(j->pid, &status, 0);
    close(j->fd);
    out->seconds = pp__now() - j->t0;
    char msg[400];
    if (j->pid < 0) {
        fail_whole(out, tc, PP_ERR_IO, "cannot fork a test process: too many processes?");
    } else if (timed_out) {
        out->timed_out = 1;
        snprintf(msg, sizeof msg, "no result after %.0f s: an endless loop, or a rank spinning without calling "
                 "pplab (a blocked pp_recv/pp_send is reported as a deadlock instead)", limit);
        fail_whole(out, tc, PP_ERR_TIMEOUT, msg);
    } else if (have == sizeof *got && got->token == j->token) {
        double secs = out->seconds;
        char name[sizeof out->name];
        memcpy(name, out->name, sizeof name);
        *out = *got;
        out->seconds = secs;
        memcpy(out->name, name, sizeof name);
    } else if (WIFSIGNALED(status)) {
        out->crashed = 1;
        int sig = WTERMSIG(status);
        snprintf(msg, sizeof msg, "the test process crashed with signal %d (%s)", sig, strsignal(sig));
        fail_whole(out, tc, PP_ERR_CRASH, msg);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) >= 128) {
        out->crashed = 1;
        int sig = WEXITSTATUS(status) - 128;
        snprintf(msg, sizeof msg, "the test process crashed with signal %d (%s) in the schedule code", sig, strsignal(sig));
        fail_whole(out, tc, PP_ERR_CRASH, msg);
    } else {
        snprintf(msg, sizeof msg, "the test process exited (status %d) without a result: did the schedule call "
                 "exit()?", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        fail_whole(out, tc, PP_ERR_CRASH, msg);
    }
    free(got);
    read_tail(j->cap, out->output_tail, sizeof out->output_tail);
    unlink(j->cap);
    free(j);
}

void pp__runner_test(const pp_test_config *tc, const char *so_path, const char *build_err, const char *backend,
                     pp_test_result *out) {
    pp__runner_finish(pp__runner_start(tc, so_path, build_err, backend, out), out);
}
