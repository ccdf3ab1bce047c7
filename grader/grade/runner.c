/* runner.c: one graded test: its supervisor (fork, subreaper, capture, time limit), its folder and files, and
 * the grading of what it wrote, in the grader's own process. What a test runs and how its file is graded is its
 * lab's kind (labkind.h): the runner is the same for every lab. */
#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"
#include "files.h"
#include "memlimit.h"
#include "reap.h"
#include "refproc.h"
#include "testcfg.h"
#include "uids.h"

static uid_t uids_taken[256];
static int nuids_taken;

const uid_t *pp__runner_uids(int *n) {
    *n = nuids_taken < 256 ? nuids_taken : 256;
    return uids_taken;
}

static uint64_t new_token(void) {
    uint64_t t = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, &t, sizeof t) != (ssize_t)sizeof t) t = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^ (uint64_t)time(NULL);
    if (fd >= 0) close(fd);
    return t | 1;
}

/* The lab a test belongs to: the suite and grade-one only make tests of labs in the table. */
static const pp_lab_info *lab_of(const pp_test_config *tc) {
    const pp_lab_info *lab = pp__lab_find(tc->lab);
    PP_ASSERT(lab && lab->kind);
    return lab;
}

/* out as a test that failed whole (st, msg), as its lab's kind shows one, keeping its name, config and timings. */
static void fail_whole(pp_test_result *out, const pp_test_config *tc, pp_status st, const char *msg) {
    pp_test_result keep = *out;
    memset(out, 0, sizeof *out);
    out->weight_err = out->loss_err = -1;
    out->cfg = keep.cfg;
    memcpy(out->name, keep.name, sizeof out->name);
    out->seconds = keep.seconds;
    out->timed_out = keep.timed_out;
    out->crashed = keep.crashed;
    lab_of(tc)->kind->fail(tc, st, msg, out);
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
    const pp_lab_info *lab;
    pid_t pid;               /* the supervisor */
    pp_refproc ref;          /* the reference process, when the lab's kind has one */
    uid_t uid;               /* the test's own uid (as root), else 0 */
    char dir[PATH_NAME];     /* the test's own folder in the private folder (policy.h): the grader's alone */
    char cap[PATH_NAME], res_path[PATH_NAME], plain_path[PATH_NAME];
    uint64_t token;
    double t0;
};

/* The test j as its lab's kind sees it; impl and backend in the supervisor, NULL in the grader. */
static pp_lab_task job_task(pp_runner_job *j, const pp_impl *impl, const char *backend) {
    return (pp_lab_task){.lab = j->lab, .tc = &j->tc, .impl = impl, .backend = backend, .token = j->token,
                         .res_path = j->res_path, .plain_path = j->plain_path, .ref = &j->ref};
}

/* The body of a test's supervisor. */
static void __attribute__((noreturn)) supervise(pp_runner_job *j, const pp_impl *impl, const char *backend) {
    pp_lab_task t = job_task(j, impl, backend);
    int rc = j->lab->kind->execute(&t);
    fflush(stdout);
    fflush(stderr);
    /* the grader ends every process of the test's uid once this one is gone; these are this subreaper's own */
    pp__reap_children(NULL, 0);
    _exit(rc ? 3 : 0);
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
    j->lab = lab_of(tc);
    tc = &j->tc; /* with the file's hash: both halves of a warm-up test draw from it */
    char uid_err[300];
    pp_sandbox *sb = pp__runopts_sandbox();
    if (!pp__runopts_in_process() && sb->lockdown && sb->drop_uid && pp__uid_take(&j->uid, uid_err, sizeof uid_err)) {
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
    if (j->lab->kind->reference && job_file(j->ref.path, sizeof j->ref.path, j->dir, "reference") == 0)
        pp__refproc_start(&j->ref, tc, j->token);
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
        if (j->uid) sb->uid = j->uid, sb->gid = (gid_t)j->uid; /* the test's own, for all its drivers */
        snprintf(sb->capture, sizeof sb->capture, "%s", j->cap); /* each driver's own file beside it */
        pp__crash_install(pp__current_rank, NULL);
        supervise(j, impl, backend);
    }
    if (j->pid > 0) setpgid(j->pid, j->pid); /* also here: no race with the child's own call */
    if (j->pid > 0) inflight_set(j->pid, j->ref.pid, j->uid, j->dir);
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
    int ranks = j->lab->kind->ranks(&j->tc);
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
    pp__reap_children(keep, n);
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

void pp__runner_finish(pp_runner_job *j, pp_test_result *out) {
    if (!j) return;
    const pp_test_config *tc = &j->tc;
    const pp_lab_kind *kind = j->lab->kind;
    pp_lab_task t = job_task(j, NULL, NULL);
    int status = 0, timed_out = 0;
    double limit = pp__test_limit_s(tc);
    if (j->pid > 0) {
        timed_out = !wait_until(j->pid, j->t0 + kind->wait_s(tc), &status);
        /* the test's whole process group: its drivers, mpirun and its ranks; and every process of its uid, which
         * reaches one that left the group too */
        kill(-j->pid, SIGKILL);
        if (j->uid) pp__uid_kill(j->uid); /* what it leaves comes here (a subreaper): reap_orphans below */
        if (timed_out)
            while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR) {}
        inflight_clear(j->pid);
        reap_orphans(j->ref.pid);
        if (!timed_out && WIFEXITED(status)) timed_out = kind->timed_out(&t);
    }
    long cap_size = 0;
    char msg[400];
    if (j->pid < 0) {
        fail_whole(out, tc, PP_ERR_INTERNAL, "cannot fork a test process: too many processes?");
    } else if (timed_out) {
        out->timed_out = 1;
        read_tail(j, out->output_tail, sizeof out->output_tail, &cap_size);
        size_t output_limit = pp__runopts_sandbox()->output_limit;
        int flooded = (size_t)cap_size >= output_limit && output_limit;
        snprintf(msg, sizeof msg, "no result after %.0f s: an endless loop, or a rank spinning without calling "
                 "pplab (a blocked pp_recv/pp_send is reported as a deadlock instead)%s", limit,
                 flooded ? "; it had printed the whole output limit by then, so it was probably printing in a loop" : "");
        fail_whole(out, tc, PP_ERR_TIMEOUT, msg);
    } else if (WIFSIGNALED(status)) {
        out->crashed = 1;
        char why[300];
        if (WTERMSIG(status) == SIGKILL)
            snprintf(msg, sizeof msg, "the test's supervisor was killed (signal 9): %s",
                     pp__memlimit_why_killed(why, sizeof why));
        else
            snprintf(msg, sizeof msg, "the test's supervisor died of signal %d (%s): this is a bug in pplab",
                     WTERMSIG(status), strsignal(WTERMSIG(status)));
        fail_whole(out, tc, PP_ERR_INTERNAL, msg);
    } else {
        kind->grade(&t, out);
    }
    pp__refproc_end(&j->ref, 0); /* the reference of a run that never got graded */
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
