/* view.c: the build's views by name, the toolchain's folders, and the bubblewrap command line of the namespaces
 * view (view.h). */
#include "view.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const names[] = {"auto", "namespaces", "landlock", "none"};

const char *pp__view_name(pp_view v) { return v >= PP_VIEW_AUTO && v <= PP_VIEW_NONE ? names[v] : "?"; }

int pp__view_parse(const char *name) {
    for (int i = 0; i <= PP_VIEW_NONE; i++)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

const char *pp__view_bwrap(void) {
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
    ARG(pp__view_bwrap() ? pp__view_bwrap() : "bwrap");
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

