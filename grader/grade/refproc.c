/* refproc.c: the reference process of a test, its start, its end and its file. */
#include "refproc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memlimit.h"
#include "resultfile.h"
#include "testcfg.h"

static void __attribute__((noreturn)) reference_execute(const pp_test_config *tc, uint64_t token, const char *path) {
    /* what it has to say goes into its file; nothing reaches the grader's terminal */
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 1), dup2(null, 2), close(null);
    pp__resultfile_fatal_to(tc, token, path, PP_RESULTFILE_REFERENCE);
    pp_run_config rc;
    pp__test_to_run(tc, "cpu", &rc);
    pp_reference ref;
    char err[512];
    pp_wire w;
    pp__wire_init(&w);
    pp__resultfile_head(&w, token, PP_RESULTFILE_REFERENCE);
    int failed = pp__reference_run(&rc, 0, &ref, err, sizeof err);
    pp__wire_u32(&w, failed ? PP_ERR_BACKEND : PP_OK);
    if (failed) {
        pp__wire_str(&w, err, sizeof err - 1);
    } else {
        pp__reference_encode(&w, &ref, rc.steps);
        pp__reference_free(&ref);
    }
    int rc_w = pp__resultfile_put(path, &w);
    pp__wire_free(&w);
    _exit(rc_w ? 3 : 0);
}

void pp__refproc_start(pp_refproc *rp, const pp_test_config *tc, uint64_t token) {
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_DFL); /* not the grader's handlers: an interrupt just ends it */
        signal(SIGTERM, SIG_DFL);
        reference_execute(tc, token, rp->path);
    }
    if (pid < 0) {
        unlink(rp->path);
        rp->path[0] = 0;
        return;
    }
    rp->pid = pid;
}

int pp__refproc_end(pp_refproc *rp, int wait) {
    if (!rp->pid) return -1;
    if (!wait) kill(rp->pid, SIGKILL);
    int st = 0;
    while (waitpid(rp->pid, &st, 0) < 0 && errno == EINTR) {}
    rp->pid = 0;
    return st;
}

int pp__refproc_read(pp_refproc *rp, uint64_t token, int steps, pp_reference *ref, pp_status *st_out, char *err,
                     size_t errlen) {
    memset(ref, 0, sizeof *ref);
    int st = pp__refproc_end(rp, 1);
    if (st < 0) return 0;
    *st_out = PP_ERR_INTERNAL;
    if (WIFSIGNALED(st)) {
        char why[300];
        snprintf(err, errlen, "the grader's reference process died of signal %d (%s) before its result: %s",
                 WTERMSIG(st), strsignal(WTERMSIG(st)),
                 WTERMSIG(st) == SIGKILL ? pp__memlimit_why_killed(why, sizeof why) : "a bug in pplab");
        return -1;
    }
    snprintf(err, errlen, "the grader's reference process ended without its result: a bug in pplab, or no disk");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
    size_t len = 0;
    unsigned char *buf = pp__resultfile_get(rp->path, &len);
    pp_wire_in r;
    int got = -1;
    if (buf && pp__resultfile_open(&r, buf, len, token, PP_RESULTFILE_REFERENCE) == 0) {
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
