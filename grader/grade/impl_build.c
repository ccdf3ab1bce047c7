/* impl_build.c: implementation folders, the build cache, and loading a build in-process. */
#include "impl_build.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "compile.h"
#include "files.h"
#include "hash.h"
#include "schedules.h"
#include "host.h"
#include "runtime.h"
#include "warmup_call.h"

void pp__impl_dirs(char *build, char *root, size_t len) {
    /* pplab's own folder, or its parent for test binaries in build/tests/ */
    char exe[PATH_MAX], probe[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    snprintf(probe, sizeof probe, "%s/pplab-driver", exe);
    if (access(probe, F_OK) != 0 && (slash = strrchr(exe, '/'))) *slash = 0;
    snprintf(build, len, "%s", exe);
    snprintf(root, len, "%s", exe);
    slash = strrchr(root, '/');
    if (slash) *slash = 0;
}

void pp__impl_driver(char *path, size_t len) {
    char build[PATH_MAX], root[PATH_MAX];
    pp__impl_dirs(build, root, sizeof build);
    snprintf(path, len, "%s/pplab-driver", build);
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int pp__impl_have_solutions(void) {
    char build[PATH_MAX], root[PATH_MAX], p[PATH_MAX + 16];
    pp__impl_dirs(build, root, sizeof build);
    snprintf(p, sizeof p, "%s/solutions", root);
    return is_dir(p);
}

const char *pp__impl_choices(void) {
    return pp__impl_have_solutions()
               ? "the implementation: labs (your files), solutions (the reference) or a folder with the labs' layout"
               : "the implementation: labs (your files) or a folder with the labs' layout";
}

int pp__impl_dir(const char *impl, char *dir, size_t len) {
    char build[PATH_MAX], root[PATH_MAX];
    if (is_dir(impl)) {
        if (!realpath(impl, dir)) return -1;
        return 0;
    }
    pp__impl_dirs(build, root, sizeof build);
    /* "labs" and "solutions" also resolve from the project root, so pplab works from any folder */
    if (!strchr(impl, '/')) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%s/%s", root, impl);
        if (is_dir(p) && realpath(p, dir)) return 0;
    }
    (void)len;
    return -1;
}

/* What a build is made from: the compiler, pp.h, the build's rules (PP_BUILD_RULES: raised whenever a check
 * changes, so a submission built under older rules is checked again) and the file itself, byte for byte (a
 * submission unpacked with an old time stamp over an earlier one is still rebuilt). NULL when one is missing. */
#define PP_BUILD_RULES 4
static char *build_key(const char *s, size_t ns, const char *pp_h, const char *const *keep, int nkeep, size_t *len) {
    size_t nh;
    char *h = pp__file_read(pp_h, (size_t)1 << 20, &nh);
    char *key = NULL;
    if (s && h) {
        /* the symbols a build keeps are part of what it is: a grader that keeps more must rebuild */
        char head[2048];
        int k = snprintf(head, sizeof head, "pplab build %d\ncc %s\npp.h %016llx\nkeep", PP_BUILD_RULES,
                         getenv("CC") ? getenv("CC") : "cc", (unsigned long long)pp__hash_bytes(PP_HASH_INIT, h, nh));
        for (int i = 0; i < nkeep && k < (int)sizeof head - 80; i++) k += snprintf(head + k, sizeof head - (size_t)k, " %s", keep[i]);
        k += snprintf(head + k, sizeof head - (size_t)k, "\n");
        key = pp__xmalloc((size_t)k + ns);
        memcpy(key, head, (size_t)k);
        memcpy(key + k, s, ns);
        *len = (size_t)k + ns;
    }
    free(h);
    return key;
}

/* 1 when path holds exactly the n bytes of key. */
static int same_file(const char *path, const char *key, size_t n) {
    size_t m;
    char *have = pp__file_read(path, n, &m);
    int same = have && m == n && !memcmp(have, key, n);
    free(have);
    return same;
}

static double compile_limit_s;

void pp__impl_set_compile_limit(double seconds) { compile_limit_s = seconds; }

/* The functions a lab's file provides, which stay visible in its build. */
#define PP_WU_NAME(field, symbol, type) #symbol,
static const char *const warmup_fns[] = {PP_WARMUP_FUNCTIONS(PP_WU_NAME)};
#undef PP_WU_NAME

/* The build folder of implementation folder dir into outdir (made when missing, private to the grader): labs/
 * and solutions/ of this project have their own folders; any other has one named by its path. */
static pp_status build_folder(const char *dir, const char *build, const char *root, char *outdir, size_t len,
                              char *err, size_t errlen) {
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    char rootdir[PATH_MAX + 64];
    snprintf(rootdir, sizeof rootdir, "%s/%s", root, base);
    if (!strcmp(rootdir, dir) && (!strcmp(base, "labs") || !strcmp(base, "solutions"))) {
        snprintf(outdir, len, "%s/impl/%s", build, base);
    } else {
        unsigned long h = 5381;
        for (const char *p = dir; *p; p++) h = h * 33 + (unsigned char)*p;
        snprintf(outdir, len, "%s/impl/other/%s-%08lx", build, base, h & 0xffffffffUL);
    }
    /* the builds are the grader's alone: a jailed uid may not even list them (they hold the reference's) */
    char mk[2 * PATH_MAX + 80];
    snprintf(mk, sizeof mk, "%s/impl", build);
    mkdir(mk, 0700);
    chmod(mk, 0700);
    snprintf(mk, sizeof mk, "%s/impl/other", build);
    mkdir(mk, 0700);
    if (mkdir(outdir, 0700) && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: check the permissions of the build folder", outdir);
        return PP_ERR_IO;
    }
    return PP_OK;
}

/* Under the lock of the build (lockp), compiles c into out's object and shared object unless the key file keyp
 * already holds key (the same file, pp.h, compiler and rules), then writes the key. */
static pp_status build_locked(const pp_compile *c, pp_impl *out, const char *keyp, const char *lockp,
                              const char *key, size_t klen, char *err, size_t errlen) {
    int fd = open(lockp, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX)) {
        snprintf(err, errlen, "cannot lock %s: %s", lockp, strerror(errno));
        if (fd >= 0) close(fd);
        return PP_ERR_IO;
    }
    pp_status st = PP_OK;
    if (!same_file(keyp, key, klen) || access(out->object, R_OK) || access(out->shared, R_OK)) {
        char tobj[PATH_MAX + 32], tso[PATH_MAX + 32];
        snprintf(tobj, sizeof tobj, "%s.tmp%d", out->object, (int)getpid());
        snprintf(tso, sizeof tso, "%s.tmp%d", out->shared, (int)getpid());
        unlink(keyp); /* a build that fails leaves no key: the next one starts over */
        st = pp__compile_lab(c, tobj, tso, err, errlen);
        if (st == PP_OK && (rename(tobj, out->object) || rename(tso, out->shared) || pp__file_write(keyp, key, klen, 0600))) {
            snprintf(err, errlen, "cannot install %s: %s", out->object, strerror(errno));
            st = PP_ERR_IO;
        }
        unlink(tobj);
        unlink(tso);
    }
    flock(fd, LOCK_UN);
    close(fd);
    return st;
}

pp_status pp__impl_build(const char *dir, const pp_lab_info *lab, const pp_sandbox *sb, pp_impl *out, char *err,
                         size_t errlen) {
    char build[PATH_MAX], root[PATH_MAX], src[PATH_MAX + 128], outdir[2 * PATH_MAX + 64], rel[128];
    pp__impl_dirs(build, root, sizeof build);
    const char *file = lab->file;
    snprintf(src, sizeof src, "%s/%s/%s.c", dir, lab->folder, file);
    snprintf(rel, sizeof rel, "%s/%s.c", lab->folder, file);
    struct stat lst;
    if (fstatat(AT_FDCWD, src, &lst, AT_SYMLINK_NOFOLLOW) != 0) {
        snprintf(err, errlen, "no implementation of lab %s: %s is missing", lab->name, src);
        return PP_ERR_COMPILE;
    }
    if (build_folder(dir, build, root, outdir, sizeof outdir, err, errlen)) return PP_ERR_IO;
    /* named by the lab, not its folder: one folder may hold several labs (05-zerobubble) */
    pp__impl_driver(out->driver, sizeof out->driver);
    snprintf(out->object, sizeof out->object, "%s/%s.o", outdir, lab->name);
    snprintf(out->shared, sizeof out->shared, "%s/%s.so", outdir, lab->name);
    char keyp[PATH_MAX + 16], lockp[PATH_MAX + 16], pp_h[PATH_MAX + 16];
    snprintf(keyp, sizeof keyp, "%s/%s.key", outdir, lab->name);
    snprintf(lockp, sizeof lockp, "%s/%s.lock", outdir, lab->name);
    snprintf(pp_h, sizeof pp_h, "%s/lib/pp.h", root);
    size_t klen = 0, nsrc;
    char *text;
    pp_status rd = pp__compile_read(dir, rel, &text, &nsrc, err, errlen);
    if (rd != PP_OK) return rd;
    /* the grid lab's file also says how the ranks map onto the grid (grid.h) */
    static const char *const grid_fns[] = {"pp_tpgrid_step", "pp_tpgrid_place", "pp_tpgrid_group"};
    const pp_schedule_def *def = lab->symbol ? pp__schedule_def(lab->name) : NULL;
    int grid = def && def->grid && !strcmp(lab->symbol, grid_fns[0]);
    const char *const *keep = grid ? grid_fns : lab->symbol ? &lab->symbol : warmup_fns;
    int nkeep = grid ? 3 : lab->symbol ? 1 : (int)(sizeof warmup_fns / sizeof *warmup_fns);
    crypto_hash_sha256(out->sha256, (const unsigned char *)text, nsrc);
    char *key = build_key(text, nsrc, pp_h, keep, nkeep, &klen);
    if (!key || access(out->driver, X_OK)) {
        snprintf(err, errlen, "cannot read %s or run %s: is pplab built (make)?", pp_h, out->driver);
        free(key);
        free(text);
        return PP_ERR_IO;
    }
    pp_compile c = {.src = src, .text = text, .ntext = nsrc, .rel = rel, .pp_h = pp_h, .keep = keep, .nkeep = nkeep,
                    .require = lab->symbol != NULL, .sb = sb, .time_limit_s = compile_limit_s};
    pp_status st = build_locked(&c, out, keyp, lockp, key, klen, err, errlen);
    free(key);
    free(text);
    return st;
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

int pp__impl_program(const pp_impl *impl, const pp_lab_info *lab, pp_program *prog, char *err, size_t errlen) {
    if (!(prog->fn = (pp_step_fn)pp__impl_symbol(impl->shared, lab->symbol, err, errlen))) return -1;
    const pp_schedule_def *def = pp__schedule_def(lab->name);
    if (!def || !def->grid) return 0;
    if (!(*(void **)&prog->grid_place = pp__impl_symbol(impl->shared, "pp_tpgrid_place", err, errlen)) ||
        !(*(void **)&prog->grid_group = pp__impl_symbol(impl->shared, "pp_tpgrid_group", err, errlen)))
        return -1;
    return 0;
}

void *pp__impl_load(const char *impl, const pp_lab_info *lab, char *err, size_t errlen) {
    char dir[PATH_MAX];
    if (pp__impl_dir(impl, dir, sizeof dir)) {
        snprintf(err, errlen, "--impl %s: no such folder (use labs, solutions or a folder with the labs' layout)", impl);
        return NULL;
    }
    pp_sandbox sb;
    pp__sandbox_defaults(&sb);
    pp_impl built;
    if (pp__sandbox_probe(&sb, err, errlen) || pp__impl_build(dir, lab, &sb, &built, err, errlen) != PP_OK) return NULL;
    return pp__impl_symbol(built.shared, lab->symbol, err, errlen);
}
