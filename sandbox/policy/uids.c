/* uids.c: taking, counting and reaping the uids of tests and builds (uids.h). */
#include "uids.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail.h"

/* Calls fn(pid, uids[4], ppid, threads, ctx) for every process in /proc: its real, effective, saved and
 * file-system uid, its parent and its thread count, from one read of /proc/PID/status. */
static void each_process(void (*fn)(pid_t pid, const unsigned *uids, long ppid, int threads, void *ctx), void *ctx) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char path[64], buf[4096];
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = 0;
        unsigned u[4] = {0};
        int threads = 1;
        long ppid = 0;
        char *at = strstr(buf, "\nUid:");
        if (!at || sscanf(at + 5, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4) continue;
        if ((at = strstr(buf, "\nThreads:"))) threads = atoi(at + 9);
        if ((at = strstr(buf, "\nPPid:"))) ppid = atol(at + 6);
        fn((pid_t)atol(e->d_name), u, ppid, threads, ctx);
    }
    if (d) closedir(d);
}

typedef struct {
    unsigned uid;
    int any, tasks;
} uid_count;

static void count_one(pid_t pid, const unsigned *u, long ppid, int threads, void *ctx) {
    (void)pid, (void)ppid;
    uid_count *c = ctx;
    if (u[0] == c->uid) c->tasks += threads > 0 ? threads : 1;
    if (u[0] == c->uid || u[1] == c->uid || u[2] == c->uid || u[3] == c->uid) c->any++;
}

int pp__uid_tasks(uid_t uid) {
    uid_count c = {(unsigned)uid, 0, 0};
    each_process(count_one, &c);
    return c.tasks;
}

int pp__uid_take(uid_t *uid, char *err, size_t len) {
    for (int attempt = 0; attempt < 64; attempt++) {
        unsigned r;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (unsigned)getpid() * 2654435761u + (unsigned)attempt;
        uid_t u = (uid_t)(PP_UID_BASE + r % PP_UID_SPAN);
        if (getpwuid(u) || getgrgid((gid_t)u)) continue;
        uid_count c = {(unsigned)u, 0, 0};
        each_process(count_one, &c);
        if (c.any) continue;
        *uid = u;
        return 0;
    }
    snprintf(err, len, "no free uid in the sandbox's range %u..%u: is another grader using it all?", PP_UID_BASE,
             PP_UID_BASE + PP_UID_SPAN - 1);
    return -1;
}

/* The helper: it shares the caller's memory (no page tables copied, which matters in a process that holds a
 * model) and makes raw system calls only, its jail's among them. */
static int kill_as(void *arg) {
    const char *what;
    if (pp__jail_enter(arg, PP_JAIL_REAPER, &what)) syscall(SYS_exit, 1);
    /* every process this uid may signal, which is every process of this uid but the helper itself */
    syscall(SYS_kill, -1, SIGKILL);
    syscall(SYS_exit, 0);
    return 0;
}

int pp__uid_kill(uid_t uid) {
    /* a kill(-1) as a real account would end that account's every process: only the reserved range */
    if (uid < PP_UID_BASE || uid - PP_UID_BASE >= PP_UID_SPAN) return -1;
    char stack[16384] __attribute__((aligned(16))); /* the caller waits until the helper is gone */
    pp_sandbox as = {.drop_uid = 1, .uid = uid, .gid = (gid_t)uid};
    pid_t pid = clone(kill_as, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &as);
    if (pid < 0) return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

typedef struct {
    unsigned uid;
    pid_t me;
    int left;
} reap_round;

/* One process of /proc: counts it when it is of the uid, and reaps it when it is a child of this process (a
 * subreaper adopts the orphans the kill left, as zombies). */
static void reap_one_status(pid_t pid, const unsigned *u, long ppid, int threads, void *ctx) {
    (void)threads;
    reap_round *r = ctx;
    if (u[0] != r->uid && u[1] != r->uid && u[2] != r->uid && u[3] != r->uid) return;
    if (ppid == r->me && waitpid(pid, NULL, 0) == pid) return;
    r->left++;
}

int pp__uid_reap(uid_t uid) {
    if (pp__uid_kill(uid)) return -1;
    reap_round r = {(unsigned)uid, getpid(), 0};
    /* a killed parent's children reach this process a moment later: a few rounds until none is left */
    for (int round = 0; round < 200; round++) {
        r.left = 0;
        each_process(reap_one_status, &r);
        if (!r.left) return 0;
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
    }
    return r.left;
}
