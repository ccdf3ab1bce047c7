/* plugin.c: finding and opening libpp_cuda.so (plugin.h). */
#include "plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *handle;
static char why[PATH_MAX + 256];

static void plugin_load(void) {
    char exe[PATH_MAX], path[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(why, sizeof why, "cannot find libpp_cuda.so: /proc/self/exe is not readable");
        return;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    /* beside the program (build/pplab), then one folder up (build/tests/test_cuda, build/bench/...) */
    for (int up = 0; up < 2; up++) {
        snprintf(path, sizeof path, "%s%s/libpp_cuda.so", exe, up ? "/.." : "");
        if (access(path, R_OK)) continue;
        if (!(handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            snprintf(why, sizeof why, "cannot load %s: %s", path, dlerror());
        return;
    }
    snprintf(why, sizeof why, "libpp_cuda.so is not beside %s: rebuild with make (nvcc and cuBLAS found)", exe);
}

void *pp__plugin_symbol(const char *name, char *err, size_t errlen) {
    pthread_once(&once, plugin_load);
    void *sym = handle ? dlsym(handle, name) : NULL;
    if (!sym && err && errlen) {
        if (handle) snprintf(err, errlen, "libpp_cuda.so lacks %s: rebuild with make", name);
        else snprintf(err, errlen, "%s", why);
    }
    return sym;
}
