/* test_layout.c: rules of the source tree that no compiler checks. lib/ and grader/'s rooms include each other's
 * files without a cycle, a file and its header counting as one module (a cycle is what makes a header impossible to
 * read alone, and a library impossible to split); CUDA's #ifdef stays in the two registries and kernels/. Tests
 * run from the project root. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbols.h"

enum { MAX_MODS = 256, NAME = 128 };

typedef struct {
    char name[NAME]; /* "lib/runtime": the path without .c/.h */
    int deps[MAX_MODS], ndeps;
} module;

static module mods[MAX_MODS];
static int nmods;

static int module_index(const char *name) {
    for (int i = 0; i < nmods; i++)
        if (!strcmp(mods[i].name, name)) return i;
    cr_assert_lt(nmods, MAX_MODS, "more than %d modules", MAX_MODS);
    snprintf(mods[nmods].name, NAME, "%s", name);
    mods[nmods].ndeps = 0;
    return nmods++;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Where #include "name" from a file in dir resolves, as the build's -I folders resolve it; 0 when it does not
 * (a system header, or one of another tree). */
static int resolve(const char *dir, const char *name, char *out, size_t len) {
    const char *roots[] = {dir, "lib", "kernels", "sandbox/proto", "sandbox/host", "sandbox/policy", "sandbox/build", "grader/cli", "grader/grade",
                           "grader/theory", "grader/report", "grader/view"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        snprintf(out, len, "%s/%s", roots[i], name);
        if (exists(out)) return 1;
    }
    return 0;
}

static void strip_ext(char *path) {
    size_t n = strlen(path);
    if (n > 2 && path[n - 2] == '.' && (path[n - 1] == 'c' || path[n - 1] == 'h')) path[n - 2] = 0;
}

static void add_dep(int from, int to) {
    if (from == to) return;
    for (int i = 0; i < mods[from].ndeps; i++)
        if (mods[from].deps[i] == to) return;
    mods[from].deps[mods[from].ndeps++] = to;
}

static void scan_dir(const char *dir) {
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s (run the tests from the project root)", dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 3 || e->d_name[n - 2] != '.' || (e->d_name[n - 1] != 'c' && e->d_name[n - 1] != 'h')) continue;
        char path[512], self[512], line[1024], target[640];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(self, sizeof self, "%s", path);
        strip_ext(self);
        int me = module_index(self);
        FILE *f = fopen(path, "r");
        cr_assert(f, "cannot read %s", path);
        while (fgets(line, sizeof line, f)) {
            char inc[256];
            if (sscanf(line, " #include \"%255[^\"]\"", inc) != 1) continue;
            if (!resolve(dir, inc, target, sizeof target)) continue;
            strip_ext(target);
            add_dep(me, module_index(target));
        }
        fclose(f);
    }
    closedir(d);
}

/* Depth-first search; on a back edge, writes the cycle into out and returns 1. */
static int state[MAX_MODS], stack_[MAX_MODS], depth;

static int dfs(int v, char *out, size_t len) {
    state[v] = 1;
    stack_[depth++] = v;
    for (int i = 0; i < mods[v].ndeps; i++) {
        int w = mods[v].deps[i];
        if (state[w] == 1) {
            size_t used = 0;
            int from = 0;
            while (stack_[from] != w) from++;
            for (int k = from; k < depth && used < len; k++)
                used += (size_t)snprintf(out + used, len - used, "%s -> ", mods[stack_[k]].name);
            if (used < len) snprintf(out + used, len - used, "%s", mods[w].name);
            return 1;
        }
        if (state[w] == 0 && dfs(w, out, len)) return 1;
    }
    depth--;
    state[v] = 2;
    return 0;
}

Test(layout, no_include_cycle_in_lib_or_grader) {
    const char *dirs[] = {"lib",         "sandbox/driver", "sandbox/proto", "sandbox/host", "sandbox/policy", "sandbox/build", "lib/transport", "grader/cli", "grader/grade",
                          "grader/theory", "grader/report", "grader/view",   "kernels/cpu"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) scan_dir(dirs[i]);
    cr_assert_gt(nmods, 20, "only %d modules found: run from the project root", nmods);
    char cycle[4096] = "";
    for (int v = 0; v < nmods; v++)
        if (state[v] == 0) {
            depth = 0;
            cr_assert(!dfs(v, cycle, sizeof cycle), "an include cycle (a file and its header are one module): %s",
                      cycle);
        }
}

/* The check itself catches a cycle: two modules that include each other. */
Test(layout, the_cycle_check_finds_one) {
    int a = module_index("x/a"), b = module_index("x/b");
    add_dep(a, b);
    add_dep(b, a);
    char cycle[256] = "";
    depth = 0;
    cr_expect(dfs(a, cycle, sizeof cycle), "a <-> b not found");
    cr_expect_str_eq(cycle, "x/a -> x/b -> x/a");
}

/* CUDA's conditional compilation lives in the backend and transport registries and under kernels/ only. */
Test(layout, cuda_ifdefs_only_in_the_registries_and_kernels) {
    const char *dirs[] = {"lib",           "sandbox/driver", "sandbox/proto", "sandbox/host", "sandbox/policy", "sandbox/build", "lib/transport", "grader/cli", "grader/grade",
                          "grader/theory", "grader/report", "grader/view", "bench"};
    const char *allowed[] = {"lib/backend.c", "lib/transport.c"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        DIR *d = opendir(dirs[i]);
        cr_assert(d, "cannot open %s", dirs[i]);
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 3 || e->d_name[n - 2] != '.' || (e->d_name[n - 1] != 'c' && e->d_name[n - 1] != 'h')) continue;
            char path[512], line[1024];
            snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
            int ok = 0;
            for (size_t k = 0; k < sizeof allowed / sizeof allowed[0]; k++) ok |= !strcmp(path, allowed[k]);
            FILE *f = fopen(path, "r");
            cr_assert(f, "cannot read %s", path);
            for (int ln = 1; fgets(line, sizeof line, f); ln++)
                if (strstr(line, "PP_HAVE_CUDA") && strchr(line, '#') && !ok)
                    cr_expect(0, "%s:%d tests PP_HAVE_CUDA: only the registries (lib/backend.c, lib/transport.c) "
                                 "and kernels/ may", path, ln);
            fclose(f);
        }
        closedir(d);
    }
}

/* The trust boundary's room includes nothing of the runtime: sandbox/ reads only its own headers and, of lib/,
 * the few the protocol speaks (pp.h's types and pp_tag, the placement of virtual stages, the status table). A
 * schedule driver built from it cannot reach the grader's state by accident, and its code stays small enough to
 * read. */
Test(layout, sandbox_includes_only_the_protocol_of_lib) {
    const char *dirs[] = {"sandbox/proto", "sandbox/host", "sandbox/policy", "sandbox/driver", "sandbox/build"};
    const char *allowed_lib[] = {"pp.h", "tag.h", "placement.h", "error.h"};
    int seen = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        DIR *d = opendir(dirs[i]);
        cr_assert(d, "cannot open %s (run the tests from the project root)", dirs[i]);
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 3 || e->d_name[n - 2] != '.' || (e->d_name[n - 1] != 'c' && e->d_name[n - 1] != 'h')) continue;
            char path[512], line[1024], inc[256];
            snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
            FILE *f = fopen(path, "r");
            cr_assert(f, "cannot read %s", path);
            for (int ln = 1; fgets(line, sizeof line, f); ln++) {
                if (sscanf(line, " #include \"%255[^\"]\"", inc) != 1) continue;
                seen++;
                char target[600];
                int ours = 0;
                for (size_t k = 0; k < sizeof dirs / sizeof dirs[0] && !ours; k++) {
                    snprintf(target, sizeof target, "%s/%s", dirs[k], inc);
                    ours = exists(target);
                }
                for (size_t k = 0; k < sizeof allowed_lib / sizeof allowed_lib[0] && !ours; k++)
                    ours = !strcmp(inc, allowed_lib[k]);
                cr_expect(ours, "%s:%d includes \"%s\", which is neither sandbox/'s nor one of lib/'s protocol headers "
                          "(pp.h, tag.h, placement.h, error.h)", path, ln, inc);
            }
            fclose(f);
        }
        closedir(d);
    }
    cr_expect_gt(seen, 20, "only %d includes found", seen);
}

/* The loader's table names exactly the functions pp.h declares (sandbox/proto/symbols.h): a pp.h function it
 * lacked would be refused at build time, one it had too many would be a name no header promises. */
#define LAYOUT_NAME(fn) #fn,
static const char *const api_names[] = {PP_SYMBOLS_API(LAYOUT_NAME)};
#undef LAYOUT_NAME

Test(layout, the_loaders_table_is_pp_h) {
    FILE *f = fopen("lib/pp.h", "r");
    cr_assert(f, "run from the project root");
    char line[512], declared[64][64];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < 64) {
        if (line[0] == ' ' || line[0] == '*' || line[0] == '/' || line[0] == '#' || !strncmp(line, "typedef", 7)) continue;
        for (char *at = strstr(line, "pp_"); at; at = strstr(at + 1, "pp_")) {
            size_t k = 0;
            while ((at[k] >= 'a' && at[k] <= 'z') || at[k] == '_' || (at[k] >= '0' && at[k] <= '9')) k++;
            if (at[k] != '(' || (at > line && at[-1] != ' ' && at[-1] != '*')) continue;
            snprintf(declared[n++], 64, "%.*s", (int)k, at);
            break;
        }
    }
    fclose(f);
    int napi = (int)(sizeof api_names / sizeof *api_names);
    cr_expect_eq(n, napi, "pp.h declares %d functions, symbols.h lists %d", n, napi);
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int k = 0; k < napi; k++) found |= !strcmp(declared[i], api_names[k]);
        cr_expect(found, "pp.h declares %s, which sandbox/proto/symbols.h does not list", declared[i]);
    }
}
