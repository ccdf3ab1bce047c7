/* impl.c: compiles lab implementations on demand and loads them with dlopen. */
#include "impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const pp_lab_info pp__labs[] = {
    {"warmup", "00-warmup", NULL},
    {"naive", "01-naive", "pp_naive_step"},
    {"gpipe", "02-gpipe", "pp_gpipe_step"},
    {"1f1b", "03-1f1b", "pp_1f1b_step"},
    {"interleaved", "04-interleaved", "pp_interleaved_step"},
};
const int pp__nlabs = (int)(sizeof pp__labs / sizeof *pp__labs);

const pp_lab_info *pp__lab_find(const char *name) {
    for (int i = 0; i < pp__nlabs; i++)
        if (!strcmp(name, pp__labs[i].name) || !strcmp(name, pp__labs[i].folder)) return &pp__labs[i];
    return NULL;
}

const pp_lab_info *pp__lab_for_schedule(const char *schedule) {
    const pp_lab_info *l = pp__lab_find(schedule);
    return l && l->symbol ? l : NULL;
}

/* The build folder (the one holding libpp.so: pplab's own folder, or its parent for test binaries in
 * build/tests/) and the project root above it. */
static void exe_dirs(char *build, char *root, size_t len) {
    char exe[PATH_MAX], probe[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    snprintf(probe, sizeof probe, "%s/libpp.so", exe);
    if (access(probe, F_OK) != 0 && (slash = strrchr(exe, '/'))) *slash = 0;
    snprintf(build, len, "%s", exe);
    snprintf(root, len, "%s", exe);
    slash = strrchr(root, '/');
    if (slash) *slash = 0;
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int pp__impl_dir(const char *impl, char *dir, size_t len) {
    char build[PATH_MAX], root[PATH_MAX];
    if (is_dir(impl)) {
        if (!realpath(impl, dir)) return -1;
        return 0;
    }
    exe_dirs(build, root, sizeof build);
    /* "labs" and "solutions" also resolve from the project root, so pplab works from any folder */
    if (!strchr(impl, '/')) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%s/%s", root, impl);
        if (is_dir(p) && realpath(p, dir)) return 0;
    }
    (void)len;
    return -1;
}

static double mtime(const char *p) {
    struct stat st;
    if (stat(p, &st)) return -1;
    return (double)st.st_mtim.tv_sec + 1e-9 * (double)st.st_mtim.tv_nsec;
}

/* Runs the compiler, capturing what it prints. */
static int compile(const char *src, const char *out, const char *build, const char *root, char *err, size_t errlen) {
    char cmd[4 * PATH_MAX + 512], log[PATH_MAX + 16];
    snprintf(log, sizeof log, "%s.log", out);
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    const char *san =
#if defined(__SANITIZE_ADDRESS__)
        " -fsanitize=address,undefined -fno-omit-frame-pointer";
#else
        "";
#endif
    snprintf(cmd, sizeof cmd,
             "%s -std=c11 -O1 -g -fPIC -shared -Wall -Wextra -Wno-unused-parameter%s -I'%s/lib' -o '%s' '%s' "
             "-L'%s' -lpp -Wl,-rpath,'%s' > '%s' 2>&1",
             cc, san, root, out, src, build, build, log);
    int rc = system(cmd);
    if (rc != 0) {
        FILE *f = fopen(log, "r");
        size_t n = 0;
        int len = snprintf(err, errlen, "compile error in %s:\n", src);
        if (f && len > 0 && (size_t)len < errlen) n = fread(err + len, 1, errlen - (size_t)len - 1, f);
        if (len > 0 && (size_t)len < errlen) err[(size_t)len + n] = 0;
        if (f) fclose(f);
        unlink(log);
        return -1;
    }
    unlink(log);
    return 0;
}

int pp__impl_build(const char *dir, const pp_lab_info *lab, char *so_path, size_t pathlen, char *err,
                   size_t errlen) {
    char build[PATH_MAX], root[PATH_MAX], src[PATH_MAX + 128], outdir[2 * PATH_MAX + 64];
    exe_dirs(build, root, sizeof build);
    const char *file = !strcmp(lab->name, "warmup") ? "warmup" : !strcmp(lab->name, "1f1b") ? "onef1b" : lab->name;
    snprintf(src, sizeof src, "%s/%s/%s.c", dir, lab->folder, file);
    if (mtime(src) < 0) {
        snprintf(err, errlen, "no implementation of lab %s: %s is missing", lab->name, src);
        return -1;
    }
    /* labs/ and solutions/ of this project share the objects `make` prebuilt; other folders get their own */
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    char rootdir[PATH_MAX + 64];
    snprintf(rootdir, sizeof rootdir, "%s/%s", root, base);
    if (!strcmp(rootdir, dir) && (!strcmp(base, "labs") || !strcmp(base, "solutions"))) {
        snprintf(outdir, sizeof outdir, "%s/impl/%s", build, base);
    } else {
        unsigned long h = 5381;
        for (const char *p = dir; *p; p++) h = h * 33 + (unsigned char)*p;
        snprintf(outdir, sizeof outdir, "%s/impl/other/%s-%08lx", build, base, h & 0xffffffffUL);
    }
    char mk[2 * PATH_MAX + 80];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", outdir);
    if (system(mk) != 0) {
        snprintf(err, errlen, "cannot create %s: check the permissions of the build folder", outdir);
        return -1;
    }
    snprintf(so_path, pathlen, "%s/%s.so", outdir, lab->folder);
    char lockp[PATH_MAX + 16];
    snprintf(lockp, sizeof lockp, "%s.lock", so_path);
    int fd = open(lockp, O_CREAT | O_RDWR, 0644);
    if (fd < 0 || flock(fd, LOCK_EX)) {
        snprintf(err, errlen, "cannot lock %s: %s", lockp, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    int rc = 0;
    char header[PATH_MAX + 16];
    snprintf(header, sizeof header, "%s/lib/pp.h", root);
    double so_t = mtime(so_path);
    if (so_t < mtime(src) || so_t < mtime(header)) {
        char tmp[PATH_MAX + 32];
        snprintf(tmp, sizeof tmp, "%s.tmp%d", so_path, (int)getpid());
        rc = compile(src, tmp, build, root, err, errlen);
        if (rc == 0 && rename(tmp, so_path)) {
            snprintf(err, errlen, "cannot install %s: %s", so_path, strerror(errno));
            rc = -1;
        }
        unlink(tmp);
    }
    flock(fd, LOCK_UN);
    close(fd);
    return rc;
}

void *pp__impl_symbol(const char *so_path, const char *symbol, char *err, size_t errlen) {
    void *h = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "cannot load %s: %s", so_path, dlerror());
        return NULL;
    }
    void *sym = dlsym(h, symbol);
    if (!sym) snprintf(err, errlen, "%s does not define %s(): keep the function name the lab gives", so_path, symbol);
    return sym;
}

void *pp__impl_load(const char *impl, const pp_lab_info *lab, char *err, size_t errlen) {
    char dir[PATH_MAX], so[PATH_MAX];
    if (pp__impl_dir(impl, dir, sizeof dir)) {
        snprintf(err, errlen, "--impl %s: no such folder (use labs, solutions or a folder with the labs' layout)", impl);
        return NULL;
    }
    if (pp__impl_build(dir, lab, so, sizeof so, err, errlen)) return NULL;
    return pp__impl_symbol(so, lab->symbol, err, errlen);
}
