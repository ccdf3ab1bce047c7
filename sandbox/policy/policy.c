/* policy.c: the sandbox of policy.h: defaults, the machine probe and the build's view, the private folder. */
#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "filter.h"
#include "landlock.h"
#include "uids.h"

void pp__sandbox_defaults(pp_sandbox *sb) {
    memset(sb, 0, sizeof *sb);
    sb->exe_fd = sb->obj_fd = sb->root_fd = -1;
    sb->lockdown = 1;
    sb->drop_uid = geteuid() == 0;
    sb->view = PP_VIEW_AUTO;
    sb->memory_limit = PP_SANDBOX_MEMORY_DEFAULT;
    sb->output_limit = PP_SANDBOX_OUTPUT_DEFAULT;
}

/* ---- the private folder -------------------------------------------------------------------------------- */

static char private_dir[256];
static pid_t private_owner;

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void private_remove(void) {
    /* a fork inherits the handler; only the process that made the folder removes it */
    if (private_dir[0] && getpid() == private_owner) nftw(private_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *pp__private_dir(void) {
    if (private_dir[0] && private_owner == getpid()) return private_dir;
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[sizeof private_dir];
    snprintf(dir, sizeof dir, "%s/pplab-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        snprintf(dir, sizeof dir, "/tmp/pplab-XXXXXX");
        if (!mkdtemp(dir)) return NULL;
    }
    chmod(dir, 0700); /* mkdtemp's mode already, whatever the umask: said once more for the reader */
    int first = !private_owner;
    memcpy(private_dir, dir, sizeof private_dir);
    private_owner = getpid();
    if (first) atexit(private_remove);
    return private_dir;
}

/* The drivers' empty root: a folder made under $TMPDIR (or /tmp), opened, and removed at once, so that no file
 * is left of it however the process ends (an MPI rank killed with its job runs no exit handler). A removed
 * folder stays a valid root for whoever enters it by the descriptor, and nothing can be created in it. */
static int make_empty_root(pp_sandbox *sb, char *err, size_t len) {
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[sizeof sb->empty_root];
    snprintf(dir, sizeof dir, "%s/pplab-root-XXXXXX", tmp);
    if (!mkdtemp(dir) && (snprintf(dir, sizeof dir, "/tmp/pplab-root-XXXXXX"), !mkdtemp(dir))) {
        snprintf(err, len, "cannot make the drivers' empty root under $TMPDIR or /tmp: %s", strerror(errno));
        return -1;
    }
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int saved = errno;
    rmdir(dir);
    if (fd < 0) {
        snprintf(err, len, "cannot open the drivers' empty root %s: %s", dir, strerror(saved));
        return -1;
    }
    sb->root_fd = fd;
    memcpy(sb->empty_root, dir, sizeof sb->empty_root);
    return 0;
}

int pp__path_others_reach(const char *path) {
    char real[PATH_MAX];
    if (!realpath(path, real)) return 0;
    for (char *slash = strrchr(real, '/'); slash && slash != real; slash = strrchr(real, '/')) {
        *slash = 0;
        struct stat st;
        if (stat(real, &st) || !(st.st_mode & S_IXOTH)) return 0;
    }
    return 1;
}

int pp__private_fix(const char *path) {
    struct stat st;
    if (geteuid() != 0 || stat(path, &st) || !pp__path_others_reach(path)) return 0;
    /* a device or a pipe (--config /dev/null, <(...)) holds nothing of the instructor's, and is the whole
     * machine's: chmod'ing /dev/null would break every other program */
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return 0;
    /* a folder others cannot enter hides all it holds, whatever their modes (the driver inside stays executable
     * by descriptor); a file others cannot read is private */
    mode_t open_to_others = S_IRWXG | S_IRWXO;
    if (!(st.st_mode & (S_ISDIR(st.st_mode) ? (S_IXOTH | S_IROTH) : S_IROTH))) return 0;
    return chmod(path, st.st_mode & ~open_to_others & 07777) ? -1 : 1;
}

/* ---- the probe ------------------------------------------------------------------------------------------ */

int pp__sandbox_check_driver(const pp_sandbox *sb, const char *driver, char *err, size_t len) {
    struct stat st;
    if (!sb->lockdown) return 0;
    if (stat(driver, &st) || !S_ISREG(st.st_mode)) {
        snprintf(err, len, "the schedule driver %s is missing: build pplab first (make)", driver);
        return -1;
    }
    /* a test's uid has no groups and owns nothing: it may run the driver only if others may */
    int runs = sb->drop_uid ? (st.st_mode & S_IXOTH) != 0 : access(driver, X_OK) == 0;
    if (!runs) {
        snprintf(err, len, "the schedule driver %s (mode %04o) cannot be run by %s, so no test could start: "
                 "chmod 0755 it (make does), and keep the folders above it private instead (their modes are what "
                 "hides the kit)", driver, (unsigned)(st.st_mode & 07777),
                 sb->drop_uid ? "the tests' uids, which get what others may" : "this user");
        return -1;
    }
    return 0;
}

int pp__sandbox_probe(pp_sandbox *sb, char *err, size_t len) {
    if (!sb->lockdown) return sb->view = PP_VIEW_NONE, 0;
    int fds[2];
    if (pipe(fds)) {
        snprintf(err, len, "cannot probe the sandbox: pipe: %s", strerror(errno));
        return -1;
    }
    /* a uid of this process's own for what it jails; a test or a build takes one of its own on top */
    if (sb->drop_uid && (sb->uid < PP_UID_BASE || sb->uid - PP_UID_BASE >= PP_UID_SPAN)) {
        if (pp__uid_take(&sb->uid, err, len)) return close(fds[0]), close(fds[1]), -1;
        sb->gid = (gid_t)sb->uid;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char why[200] = "";
        const char *what = NULL;
        if (pp__jail_enter(sb, PP_JAIL_PROBE, &what)) {
            if (pp__jail_failed_to_become(what))
                snprintf(why, sizeof why, "switching to uid %u failed (%s)", (unsigned)sb->uid, strerror(errno));
            else
                snprintf(why, sizeof why, "loading a seccomp filter failed (%s)", strerror(errno));
        }
        (void)!write(fds[1], why, strlen(why));
        _exit(0);
    }
    close(fds[1]);
    char why[200] = "";
    ssize_t n = pid > 0 ? read(fds[0], why, sizeof why - 1) : -1;
    close(fds[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    if (pid < 0) {
        snprintf(err, len, "cannot probe the sandbox: fork: %s", strerror(errno));
        return -1;
    }
    if (n > 0) {
        why[n] = 0;
        snprintf(err, len, "this machine refuses the sandbox: %s; run where seccomp and uid switches are allowed "
                 "(docs/design.md, section \"The trust boundary\"), or pass --unsafe-no-sandbox if you trust every "
                 "submission", why);
        return -1;
    }
    if (!(sb->prefilter = pp__filter_preexec(err, len))) return -1;
    if (sb->drop_uid && !sb->empty_root[0] && make_empty_root(sb, err, len)) return -1;
    /* a view asked for by name must exist here; AUTO waits for the first build, which may never come (a cached
     * lab), since finding out whether bubblewrap works costs a few of its starts */
    return sb->view == PP_VIEW_AUTO ? 0 : pp__sandbox_view(sb, sb->view, err, len);
}

/* 1 when bubblewrap starts a process in the namespaces view here, in the jail a build gets. The probe's child is
 * a subreaper that reaps all bubblewrap leaves behind, so nothing of it outlives the probe. */
static int bwrap_works(const pp_sandbox *sb) {
    if (!pp__view_bwrap()) return 0;
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        pid_t tool = fork();
        if (tool > 0) {
            int st = 0, tst = 1;
            pid_t w;
            while ((w = wait(&st)) > 0 || errno == EINTR)
                if (w == tool) tst = st;
            _exit(WIFEXITED(tst) ? WEXITSTATUS(tst) : 1);
        }
        if (tool < 0) _exit(1);
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) dup2(nul, 0), dup2(nul, 1), dup2(nul, 2);
        /* the build's jail, without the view being probed for */
        pp_sandbox jail = *sb;
        jail.view = PP_VIEW_NAMESPACES;
        const char *what;
        if (pp__jail_enter(&jail, PP_JAIL_BUILD, &what)) _exit(1);
        char *argv[80];
        int n = pp__view_bwrap_argv(pp__view_tools(NULL), "/", argv, 78);
        if (n < 0) _exit(1);
        argv[n++] = "/usr/bin/true";
        argv[n] = NULL;
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        execve(argv[0], argv, envp);
        _exit(127);
    }
    int st = 0;
    if (pid < 0) return 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int pp__sandbox_view(pp_sandbox *sb, pp_view want, char *err, size_t len) {
    static int probed = -1;
    if (want == PP_VIEW_NONE) return sb->view = PP_VIEW_NONE, 0;
    if (want == PP_VIEW_AUTO || want == PP_VIEW_NAMESPACES) {
        if (probed < 0) probed = bwrap_works(sb);
        if (probed) return sb->view = PP_VIEW_NAMESPACES, 0;
        if (want == PP_VIEW_NAMESPACES) {
            snprintf(err, len, "--view namespaces: bubblewrap %s here; install it (apt-get install bubblewrap), "
                     "allow unprivileged user namespaces, or use --view landlock",
                     pp__view_bwrap() ? "cannot make namespaces" : "is not installed");
            return -1;
        }
    }
    if (pp__landlock_abi() > 0) return sb->view = PP_VIEW_LANDLOCK, 0;
    if (want == PP_VIEW_LANDLOCK) {
        snprintf(err, len, "--view landlock: this kernel has no Landlock (Linux 5.13 or later, with landlock in "
                 "its lsm= list); use --view auto");
        return -1;
    }
    return sb->view = PP_VIEW_NONE, 0;
}

void pp__sandbox_size_tasks(pp_sandbox *sb, int drivers) {
    int need = drivers * (1 + PP_SANDBOX_THREADS_PER_DRIVER) + 4;
    sb->nproc = sb->drop_uid ? need : pp__uid_tasks(getuid()) + need;
}

