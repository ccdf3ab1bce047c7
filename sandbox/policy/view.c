/* view.c: choosing the build's view, and the bubblewrap command line of the namespaces view (view.h). */
#include "view.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landlock.h"

static const char *const names[] = {"auto", "namespaces", "landlock", "none"};

const char *pp__view_name(pp_view v) { return v >= PP_VIEW_AUTO && v <= PP_VIEW_NONE ? names[v] : "?"; }

int pp__view_parse(const char *name) {
    for (int i = 0; i <= PP_VIEW_NONE; i++)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

/* bubblewrap, found where Debian installs it or on PATH; NULL when missing. */
static const char *bwrap_path(void) {
    static char path[PATH_MAX];
    if (path[0]) return path;
    const char *env = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "/usr/bin:/bin:%s", env ? env : "");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/bwrap", d);
        if (d[0] == '/' && access(p, X_OK) == 0) {
            snprintf(path, sizeof path, "%s", p);
            return path;
        }
    }
    return NULL;
}

const char *const *pp__view_tools(const char *cc) {
    static char extra[PATH_MAX];
    static const char *tools[3];
    tools[0] = "/usr";
    tools[1] = tools[2] = NULL;
    /* the compiler's own prefix when it is not under /usr: <prefix>/bin/gcc */
    char word[PATH_MAX], real[PATH_MAX];
    if (cc && sscanf(cc, " %4095s", word) == 1 && strchr(word, '/') && realpath(word, real) &&
        strncmp(real, "/usr/", 5)) {
        char *slash = strrchr(real, '/');
        if (slash) *slash = 0;
        slash = strrchr(real, '/');
        if (slash && slash != real) *slash = 0;
        snprintf(extra, sizeof extra, "%s", real);
        tools[1] = extra;
    }
    return tools;
}

int pp__view_bwrap_argv(const char *const *tools, const char *build_dir, char **argv, int cap) {
    static char binds[8][PATH_MAX];
    int n = 0, over = 0;
#define ARG(s) (n < cap - 1 ? (void)(argv[n++] = (char *)(s)) : (void)(over = 1))
    ARG(bwrap_path() ? bwrap_path() : "bwrap");
    ARG("--unshare-all"), ARG("--die-with-parent"), ARG("--new-session");
    for (int i = 0; tools[i] && i < 8; i++) {
        snprintf(binds[i], sizeof binds[i], "%s", tools[i]);
        ARG("--ro-bind"), ARG(binds[i]), ARG(binds[i]);
    }
    /* a merged /usr links these into it; an older layout has them as folders of their own */
    static const char *const top[][2] = {{"/bin", "usr/bin"}, {"/lib", "usr/lib"}, {"/lib64", "usr/lib64"},
                                         {"/sbin", "usr/sbin"}, {"/lib32", "usr/lib32"}, {"/libx32", "usr/libx32"}};
    for (size_t i = 0; i < sizeof top / sizeof *top; i++) {
        struct stat st;
        if (lstat(top[i][0], &st)) continue;
        if (S_ISLNK(st.st_mode)) ARG("--symlink"), ARG(top[i][1]), ARG(top[i][0]);
        else ARG("--ro-bind"), ARG(top[i][0]), ARG(top[i][0]);
    }
    ARG("--ro-bind-try"), ARG("/etc/alternatives"), ARG("/etc/alternatives");
    ARG("--ro-bind-try"), ARG("/etc/ld.so.cache"), ARG("/etc/ld.so.cache");
    ARG("--dev"), ARG("/dev"), ARG("--tmpfs"), ARG("/tmp");
    ARG("--bind"), ARG(build_dir), ARG("/build"), ARG("--chdir"), ARG("/build");
    ARG("--");
#undef ARG
    argv[n] = NULL;
    return over ? -1 : n;
}

/* 1 when bubblewrap starts a process in the namespaces view here, as as_uid when switch_uid. The probe's child
 * is a subreaper that reaps all bubblewrap leaves behind, so nothing of it outlives the probe. */
static int bwrap_works(int switch_uid, uid_t as_uid) {
    if (!bwrap_path()) return 0;
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
        if (switch_uid && (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, as_uid, as_uid, as_uid) ||
                           syscall(SYS_setresuid, as_uid, as_uid, as_uid)))
            _exit(1);
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

int pp__view_resolve(pp_view want, int switch_uid, uid_t as_uid, pp_view *out, char *err, size_t len) {
    static int probed = -1;
    if (want == PP_VIEW_NONE) return *out = PP_VIEW_NONE, 0;
    if (want == PP_VIEW_AUTO || want == PP_VIEW_NAMESPACES) {
        if (probed < 0) probed = bwrap_works(switch_uid, as_uid);
        if (probed) return *out = PP_VIEW_NAMESPACES, 0;
        if (want == PP_VIEW_NAMESPACES) {
            snprintf(err, len, "--view namespaces: bubblewrap %s here; install it (apt-get install bubblewrap), "
                     "allow unprivileged user namespaces, or use --view landlock",
                     bwrap_path() ? "cannot make namespaces" : "is not installed");
            return -1;
        }
    }
    if (pp__landlock_abi() > 0) return *out = PP_VIEW_LANDLOCK, 0;
    if (want == PP_VIEW_LANDLOCK) {
        snprintf(err, len, "--view landlock: this kernel has no Landlock (Linux 5.13 or later, with landlock in "
                 "its lsm= list); use --view auto");
        return -1;
    }
    return *out = PP_VIEW_NONE, 0;
}
