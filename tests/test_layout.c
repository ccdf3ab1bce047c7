/* test_layout.c: rules of the source tree that no compiler checks. The kit is a plan of rooms in levels (base/ at
 * the bottom, the trusted sandbox/, lib/, then pplab's grader/ beside the untrusted driver/ and labs/), and no file
 * includes or calls a room above its own or beside it, read from the sources and from the build's objects; the
 * files include each other without a cycle, a file and its header counting as one module (a cycle is what makes a
 * header impossible to read alone, and a library impossible to split), and call each other without a loop; CUDA's
 * #ifdef stays in the two registries and kernels/. Tests run from the project root. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "labs.h"
#include "symbols.h"
#include "transport.h"

enum { MAX_MODS = 512, NAME = 128 };

typedef struct {
    char name[NAME]; /* "lib/run/runtime": the path without .c/.h */
    int deps[MAX_MODS], ndeps;
} module;

/* The folders that hold the kit's C, each a room; and those the build names with -I (the Makefile's LIB_INC,
 * SANDBOX_INC and GRADER_INC), where an #include "name" resolves. */
static const char *const source_dirs[] = {"lib",           "base",           "lib/schedule",   "lib/model",
                                          "lib/transport", "lib/run",        "sandbox/proto",  "sandbox/host",
                                          "sandbox/policy", "sandbox/toolchain", "driver",         "grader/cli",
                                          "grader/grade",  "grader/theory",  "grader/report",  "grader/view",
                                          "kernels/cpu"};
static const char *const include_dirs[] = {"lib",           "base",           "lib/schedule",      "lib/model",
                                           "lib/transport", "lib/run",        "kernels",           "sandbox/proto",
                                           "sandbox/host",  "sandbox/policy", "sandbox/toolchain", "grader/cli",
                                           "grader/grade",  "grader/theory",  "grader/report",     "grader/view"};
#define COUNT(a) (sizeof(a) / sizeof(a)[0])

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
    snprintf(out, len, "%s/%s", dir, name);
    if (exists(out)) return 1;
    for (size_t i = 0; i < sizeof include_dirs / sizeof include_dirs[0]; i++) {
        snprintf(out, len, "%s/%s", include_dirs[i], name);
        if (exists(out)) return 1;
    }
    return 0;
}

/* A C or CUDA source or header: name.c, name.h, name.cu. */
static int is_source(const char *name) {
    size_t n = strlen(name);
    return (n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h')) ||
           (n > 3 && !strcmp(name + n - 3, ".cu"));
}

static void strip_ext(char *path) {
    size_t n = strlen(path);
    if (n > 2 && path[n - 2] == '.' && (path[n - 1] == 'c' || path[n - 1] == 'h')) path[n - 2] = 0;
    else if (n > 3 && !strcmp(path + n - 3, ".cu")) path[n - 3] = 0;
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
        if (!is_source(e->d_name)) continue;
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
    for (size_t i = 0; i < COUNT(source_dirs); i++) scan_dir(source_dirs[i]);
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
    const char *allowed[] = {"lib/model/backend.c", "lib/transport/transport.c"};
    for (size_t i = 0; i <= COUNT(source_dirs); i++) {
        const char *dir = i < COUNT(source_dirs) ? source_dirs[i] : "bench";
        if (!strcmp(dir, "kernels/cpu")) continue;
        DIR *d = opendir(dir);
        cr_assert(d, "cannot open %s", dir);
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 3 || e->d_name[n - 2] != '.' || (e->d_name[n - 1] != 'c' && e->d_name[n - 1] != 'h')) continue;
            char path[512], line[1024];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            int ok = 0;
            for (size_t k = 0; k < sizeof allowed / sizeof allowed[0]; k++) ok |= !strcmp(path, allowed[k]);
            FILE *f = fopen(path, "r");
            cr_assert(f, "cannot read %s", path);
            for (int ln = 1; fgets(line, sizeof line, f); ln++)
                if (strstr(line, "PP_HAVE_CUDA") && strchr(line, '#') && !ok)
                    cr_expect(0, "%s:%d tests PP_HAVE_CUDA: only the registries (lib/model/backend.c, lib/transport/transport.c) "
                                 "and kernels/ may", path, ln);
            fclose(f);
        }
        closedir(d);
    }
}

/* ---- rooms: the plan of the kit, from the ground up ------------------------------------------------------------ */

/* Every folder of the kit's C lies in a room, and the rooms stand in levels: a file includes and calls files of its
 * own room and of rooms on lower levels only, never one above it nor one beside it on its own level (docs/design.md,
 * "Layers", draws the same plan).
 *   0  base/               everyone's: status codes and the fatal path, text made safe to show, hashing, the tag
 *                          layout
 *   1  sandbox/proto/      what both sides of the trust boundary link: the channel, the wire, the requests
 *      sandbox/policy/     what a jailed process may do
 *   2  sandbox/host/       the trusted end of a driver
 *      sandbox/toolchain/  the lab build
 *   3  lib/                the runtime, pp.h on top; with kernels/, the backends its model room registers (each
 *                          calls the other through backend.h, so they are one room in two folders)
 *   4  grader/             pplab; with bench/, pplab bench, a command of grader/cli's table
 *      driver/             the untrusted side's pp.h: the schedule driver, which sees of lib/ pp.h alone ...
 *      labs/               ... as the labs (and their solutions) do
 * The driver and the labs stand on pp.h and beside the grader, blind to it and it to them. */
static const struct room {
    const char *name;
    const char *folders[2]; /* the top folders it holds */
    int level;
    int above_pp_h; /* it may see of lib/ pp.h alone */
} rooms[] = {
    {"base", {"base"}, 0, 0},
    {"sandbox/proto", {"sandbox/proto"}, 1, 0},
    {"sandbox/policy", {"sandbox/policy"}, 1, 0},
    {"sandbox/host", {"sandbox/host"}, 2, 0},
    {"sandbox/toolchain", {"sandbox/toolchain"}, 2, 0},
    {"lib", {"lib", "kernels"}, 3, 0},
    {"grader", {"grader", "bench"}, 4, 0},
    {"driver", {"driver"}, 4, 1},
    {"labs", {"labs", "solutions"}, 4, 1},
};

/* The room of a module ("lib/run/rank": a path without its extension), -1 when no room holds it. */
static int room_of(const char *module) {
    for (size_t i = 0; i < COUNT(rooms); i++)
        for (size_t k = 0; k < COUNT(rooms[i].folders) && rooms[i].folders[k]; k++) {
            size_t n = strlen(rooms[i].folders[k]);
            if (!strncmp(module, rooms[i].folders[k], n) && module[n] == '/') return (int)i;
        }
    return -1;
}

/* 1 when module from may not include or call module to, with the reason in why; 0 when it may. */
static int edge_forbidden(const char *from, const char *to, char *why, size_t len) {
    int a = room_of(from), b = room_of(to);
    if (a < 0 || b < 0) {
        snprintf(why, len, "%s lies in no room (add its folder to test_layout.c's rooms, at its level)",
                 a < 0 ? from : to);
        return 1;
    }
    if (a == b) return 0;
    if (rooms[b].level >= rooms[a].level) {
        snprintf(why, len, "room %s (level %d) reaches room %s (level %d), which is %s it", rooms[a].name,
                 rooms[a].level, rooms[b].name, rooms[b].level, rooms[b].level > rooms[a].level ? "above" : "beside");
        return 1;
    }
    if (rooms[a].above_pp_h && !strcmp(rooms[b].name, "lib") && strcmp(to, "lib/pp")) {
        snprintf(why, len, "room %s stands above pp.h: of lib/ it may use pp.h alone", rooms[a].name);
        return 1;
    }
    return 0;
}

/* Every edge of the graph of modules (includes or calls) against the plan; how many edges there were. */
static int check_rooms(const char *verb) {
    int edges = 0;
    char why[300];
    for (int v = 0; v < nmods; v++)
        for (int i = 0; i < mods[v].ndeps; i++, edges++)
            if (edge_forbidden(mods[v].name, mods[mods[v].deps[i]].name, why, sizeof why))
                cr_expect(0, "%s %s %s: %s", mods[v].name, verb, mods[mods[v].deps[i]].name, why);
    return edges;
}

/* The rule itself: what it lets pass and what it stops, each way a room can be left. */
Test(layout, the_room_check_finds_an_edge_up) {
    char why[300];
    cr_expect(!edge_forbidden("lib/run/server", "sandbox/host/host", why, sizeof why), "%s", why);
    cr_expect(!edge_forbidden("sandbox/host/host", "base/error", why, sizeof why), "%s", why);
    cr_expect(!edge_forbidden("kernels/cpu/backend_cpu", "lib/model/backend", why, sizeof why), "%s", why);
    cr_expect(!edge_forbidden("driver/driver", "lib/pp", why, sizeof why), "%s", why);
    cr_expect(!edge_forbidden("labs/02-gpipe/gpipe", "lib/pp", why, sizeof why), "%s", why);
    cr_expect(edge_forbidden("sandbox/toolchain/files", "lib/run/rank", why, sizeof why), "the trusted machinery "
              "calling up into lib/");
    cr_expect(edge_forbidden("base/error", "sandbox/proto/wire", why, sizeof why), "base/ standing on a room");
    cr_expect(edge_forbidden("sandbox/proto/chan", "sandbox/policy/filter", why, sizeof why), "a room beside");
    cr_expect(edge_forbidden("grader/cli/main", "driver/main", why, sizeof why), "the grader reaching the driver");
    cr_expect(edge_forbidden("driver/client", "lib/schedule/placement", why, sizeof why), "the driver past pp.h");
    cr_expect_str_eq(why, "room driver stands above pp.h: of lib/ it may use pp.h alone");
    cr_expect(edge_forbidden("tools/x", "base/error", why, sizeof why), "a folder outside the rooms");
}

/* No file includes a header of a room above its own or beside it: the rooms' sources, the CUDA kernels', and every
 * lab's and solution's. */
Test(layout, rooms_include_only_rooms_below) {
    for (size_t i = 0; i < COUNT(source_dirs); i++) scan_dir(source_dirs[i]);
    scan_dir("kernels/cuda");
    scan_dir("bench");
    const char *labs_dirs[] = {"labs", "solutions"};
    for (size_t i = 0; i < COUNT(labs_dirs); i++) {
        DIR *d = opendir(labs_dirs[i]);
        cr_assert(d, "cannot open %s (run from the project root)", labs_dirs[i]);
        for (struct dirent *e; (e = readdir(d));) {
            char sub[512];
            struct stat st;
            snprintf(sub, sizeof sub, "%s/%s", labs_dirs[i], e->d_name);
            if (e->d_name[0] != '.' && stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) scan_dir(sub);
        }
        closedir(d);
    }
    int edges = check_rooms("includes");
    cr_expect_gt(edges, 200, "only %d includes found between the kit's files", edges);
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

/* lib/ is in rooms that show the runtime, and its top holds pp.h alone: a reader who opens lib/ sees the public
 * header and four folders, not a flat list of forty files. */
Test(layout, lib_is_in_rooms) {
    const char *rooms[] = {"schedule", "model", "transport", "run"};
    DIR *d = opendir("lib");
    cr_assert(d, "cannot open lib (run the tests from the project root)");
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[512];
        snprintf(path, sizeof path, "lib/%s", e->d_name);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0, "cannot stat %s", path);
        int room = 0;
        for (size_t i = 0; i < COUNT(rooms); i++) room |= !strcmp(e->d_name, rooms[i]);
        if (S_ISDIR(st.st_mode))
            cr_expect(room, "lib/%s is a folder outside the rooms (schedule, model, transport, run)", e->d_name);
        else
            cr_expect_str_eq(e->d_name, "pp.h", "lib/%s lies outside lib's rooms: only pp.h stands at lib/'s top",
                             e->d_name);
    }
    closedir(d);
    for (size_t i = 0; i < COUNT(rooms); i++) {
        char path[64];
        snprintf(path, sizeof path, "lib/%s", rooms[i]);
        cr_expect(exists(path), "lib's room %s is missing", path);
    }
}

/* ---- calls: who calls whom, read from the objects the build made ----------------------------------------------- */

/* A module of the call graph is one compiled file (build/obj/lib/run/result.o is lib/run/result); it calls another
 * when it leaves a symbol undefined that the other defines in the same program. Two programs are read: pplab's
 * objects (build/obj: every room but the driver; libpp is made of them too) and the driver's own compilation of
 * what it links (build/obj-driver), each resolved within itself, since the driver defines pp.h's functions again. */
static char g_objroot[512];
enum { PROGRAM_PPLAB, PROGRAM_DRIVER, MAX_SYMS = 8192 };
static struct {
    char name[96];
    int mod, program;
} defined[MAX_SYMS];
static int ndefined;
static struct {
    char name[96];
    int mod, program;
} wanted[4 * MAX_SYMS];
static int nwanted;

/* Whether <root>/<rel>.o was compiled from a source that still exists (a file moved away leaves its old object
 * behind in a build folder). Writes the module's name. */
static int object_module(const char *rel, char *name, size_t len) {
    char src[600];
    snprintf(name, len, "%s", rel);
    size_t n = strlen(name);
    if (n > 5 && !strcmp(name + n - 5, ".cu.o")) {
        name[n - 5] = 0;
        snprintf(src, sizeof src, "%s.cu", name);
    } else {
        name[n - 2] = 0;
        snprintf(src, sizeof src, "%s.c", name);
    }
    return exists(src);
}

static void read_object(const char *path, const char *rel, int program) {
    char name[NAME], cmd[1200], line[512];
    if (!object_module(rel, name, sizeof name)) return;
    int me = module_index(name);
    snprintf(cmd, sizeof cmd, "nm -P '%s' 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "cannot run nm");
    while (fgets(line, sizeof line, p)) {
        char sym[96], type;
        if (sscanf(line, "%95s %c", sym, &type) != 2) continue;
        if (type == 'U') {
            cr_assert_lt(nwanted, (int)COUNT(wanted), "too many undefined symbols");
            snprintf(wanted[nwanted].name, sizeof wanted[nwanted].name, "%s", sym);
            wanted[nwanted].program = program;
            wanted[nwanted++].mod = me;
        } else if (strchr("TDBRVW", type)) { /* global: what other files can call or read */
            cr_assert_lt(ndefined, MAX_SYMS, "too many symbols");
            snprintf(defined[ndefined].name, sizeof defined[ndefined].name, "%s", sym);
            defined[ndefined].program = program;
            defined[ndefined++].mod = me;
        }
    }
    pclose(p);
}

/* The objects under root/rel, every folder down; rel "" is the whole root. */
static void scan_objects(const char *root, const char *rel, int program) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char sub[1024], path[2048];
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        snprintf(path, sizeof path, "%s/%s", root, sub);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        size_t n = strlen(e->d_name);
        if (S_ISDIR(st.st_mode)) scan_objects(root, sub, program);
        else if (n > 2 && !strcmp(e->d_name + n - 2, ".o")) read_object(path, sub, program);
    }
    closedir(d);
}

static void call_graph(void) {
    char exe[512], driver_root[600];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert(n > 0, "cannot read /proc/self/exe");
    exe[n] = 0;
    *strrchr(exe, '/') = 0; /* <build>/tests */
    *strrchr(exe, '/') = 0; /* <build> */
    snprintf(g_objroot, sizeof g_objroot, "%s/obj", exe);
    snprintf(driver_root, sizeof driver_root, "%s/obj-driver", exe);
    scan_objects(g_objroot, "", PROGRAM_PPLAB);
    scan_objects(driver_root, "", PROGRAM_DRIVER);
    for (int i = 0; i < nwanted; i++)
        for (int k = 0; k < ndefined; k++)
            if (wanted[i].program == defined[k].program && !strcmp(wanted[i].name, defined[k].name))
                add_dep(wanted[i].mod, defined[k].mod);
}

/* No two files call each other, through any number of others: a call loop is a pair of files that can only be
 * understood, tested or moved together. The graph comes from the symbols the build's objects define and need. */
Test(layout, no_call_loop) {
    call_graph();
    cr_assert_gt(nmods, 60, "only %d compiled files found under %s: build first (make)", nmods, g_objroot);
    /* the graph holds the calls it should: the runtime fills its results through result.c */
    int runtime = module_index("lib/run/runtime"), result = module_index("lib/run/result"), seen = 0;
    for (int i = 0; i < mods[runtime].ndeps; i++) seen |= mods[runtime].deps[i] == result;
    cr_expect(seen, "the call graph misses lib/run/runtime's calls into lib/run/result: is nm at work?");
    char cycle[4096] = "";
    for (int v = 0; v < nmods; v++)
        if (state[v] == 0) {
            depth = 0;
            cr_expect(!dfs(v, cycle, sizeof cycle), "a call loop (each file calls the next): %s", cycle);
            if (cycle[0]) break;
        }
}

/* No compiled file calls into a room above its own or beside it (the plan above), in pplab or in the driver: the
 * driver calls the protocol, the filter and base/, never lib/ (it implements pp.h itself), and sandbox/ calls
 * nothing of lib/. Every compiled file lies in a room. */
Test(layout, rooms_call_only_rooms_below) {
    call_graph();
    cr_assert_gt(nmods, 60, "only %d compiled files found under %s: build first (make)", nmods, g_objroot);
    int client = module_index("driver/client"), proto = 0;
    for (int i = 0; i < mods[client].ndeps; i++)
        proto |= !strncmp(mods[mods[client].deps[i]].name, "sandbox/proto/", 14);
    cr_expect(proto, "the call graph misses the driver's calls into the protocol: is build/obj-driver there?");
    for (int v = 0; v < nmods; v++)
        cr_expect_geq(room_of(mods[v].name), 0, "%s was compiled, yet lies in no room of test_layout.c's plan",
                      mods[v].name);
    int edges = check_rooms("calls");
    cr_expect_gt(edges, 300, "only %d calls found between the kit's files", edges);
}

/* Each step of the jail is written once, in sandbox/policy/jail.c, and taken through pp__jail_enter: the uid
 * switch, no new privileges, the resource limits, the empty root. A second copy is a second place to get wrong,
 * and one that a change of the first would miss. Comments aside, no other file of the kit names their calls. */
Test(layout, each_jail_step_is_written_once) {
    const char *steps[] = {"setresuid", "setresgid", "setgroups", "PR_SET_NO_NEW_PRIVS", "setrlimit", "RLIMIT_", "chroot"};
    int in_jail = 0;
    for (size_t i = 0; i < COUNT(source_dirs); i++) {
        DIR *d = opendir(source_dirs[i]);
        cr_assert(d, "cannot open %s", source_dirs[i]);
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 3 || e->d_name[n - 2] != '.' || (e->d_name[n - 1] != 'c' && e->d_name[n - 1] != 'h')) continue;
            char path[512], line[1024];
            snprintf(path, sizeof path, "%s/%s", source_dirs[i], e->d_name);
            int jail = !strcmp(path, "sandbox/policy/jail.c");
            FILE *f = fopen(path, "r");
            cr_assert(f, "cannot read %s", path);
            int comment = 0;
            for (int ln = 1; fgets(line, sizeof line, f); ln++) {
                /* the code of the line, comments blanked */
                for (char *p = line; *p; p++) {
                    if (comment) {
                        if (p[0] == '*' && p[1] == '/') comment = 0, *p++ = ' ';
                        *p = ' ';
                    } else if (p[0] == '/' && p[1] == '*') {
                        comment = 1, *p = ' ';
                    } else if (p[0] == '/' && p[1] == '/') {
                        *p = 0;
                        break;
                    }
                }
                for (size_t k = 0; k < COUNT(steps); k++) {
                    if (!strstr(line, steps[k])) continue;
                    if (jail) in_jail++;
                    else cr_expect(0, "%s:%d: %s outside sandbox/policy/jail.c, whose pp__jail_enter is the one place "
                                   "a jail step is taken", path, ln, steps[k]);
                }
            }
            fclose(f);
        }
        closedir(d);
    }
    cr_expect_geq(in_jail, 6, "sandbox/policy/jail.c names only %d of the jail's steps", in_jail);
}

/* The checks are one function each, none longer than a screen (60 lines): a check a reader cannot see whole is
 * one whose branches a change can break unseen. A function is counted from its first line at the margin to the
 * closing brace at the margin. */
Test(layout, checks_are_one_short_function_each) {
    const char *files[] = {"grader/grade/checks.c", "grader/grade/checks_dp.c", "grader/grade/check_add.c",
                           "grader/grade/grad_mix.c", "grader/grade/order_diff.c"};
    int functions = 0;
    for (size_t i = 0; i < COUNT(files); i++) {
        FILE *f = fopen(files[i], "r");
        cr_assert(f, "cannot read %s (run from the project root)", files[i]);
        char line[1024], name[128] = "";
        int start = 0, body = 0;
        for (int ln = 1; fgets(line, sizeof line, f); ln++) {
            size_t n = strcspn(line, "\n");
            line[n] = 0;
            int margin = line[0] >= 'a' && line[0] <= 'z';
            if (!start && margin && strchr(line, '(') && n && line[n - 1] != ';')
                start = ln, body = 0, snprintf(name, sizeof name, "%.100s", line);
            if (start && !body && n && line[n - 1] == ';') start = 0; /* a declaration over several lines */
            if (start && n && line[n - 1] == '{') body = 1;
            if (start && body && !strcmp(line, "}")) {
                functions++;
                cr_expect_leq(ln - start + 1, 60, "%s:%d: a function of %d lines (at most 60): %s", files[i], start,
                              ln - start + 1, name);
                start = 0;
            }
        }
        fclose(f);
    }
    cr_expect_gt(functions, 20, "only %d functions found in the checks", functions);
}

/* ---- every function fits in one view ------------------------------------------------------------------------- */

/* The kit's own C, in its rooms (a room that a layout moves elsewhere, driver/ or base/, is read where it is). */
static const char *const code_roots[] = {"lib", "grader", "sandbox", "bench", "kernels", "driver", "base"};

enum { FN_MAX_LINES = 80 };

/* text with its comments, string and character literals and preprocessor lines blanked to spaces, newlines kept:
 * what is left is the code's braces, parentheses and names, so that a brace in a string or a comment counts for
 * nothing. */
static void blank_non_code(char *t) {
    int bol = 1;
    for (char *p = t; *p;) {
        if (bol && (*p == ' ' || *p == '\t')) { p++; continue; }
        if (bol && *p == '#') { /* a directive, with its continued lines */
            for (; *p && !(*p == '\n' && p[-1] != '\\'); p++) *p = *p == '\n' ? '\n' : ' ';
            continue;
        }
        bol = 0;
        if (p[0] == '/' && p[1] == '*') {
            char *end = strstr(p + 2, "*/");
            end = end ? end + 2 : p + strlen(p);
            for (; p < end; p++) *p = *p == '\n' ? '\n' : ' ';
        } else if (p[0] == '/' && p[1] == '/') {
            for (; *p && *p != '\n'; p++) *p = ' ';
        } else if (*p == '"' || *p == '\'') {
            char q = *p++;
            for (; *p && *p != q; p++) {
                if (*p == '\\' && p[1]) *p++ = ' ';
                *p = *p == '\n' ? '\n' : ' ';
            }
            if (*p) p++;
        } else {
            bol = *p++ == '\n';
        }
    }
}

/* The name before the parameter list that ends at code[close] (the last ')' before a body): its identifier. */
static void function_name(const char *code, long close, char *name, size_t len) {
    int depth = 0;
    long i = close;
    for (; i >= 0; i--) {
        if (code[i] == ')') depth++;
        if (code[i] == '(' && --depth == 0) break;
    }
    while (i > 0 && (code[i - 1] == ' ' || code[i - 1] == '\t' || code[i - 1] == '\n')) i--;
    long end = i;
    while (i > 0 && (code[i - 1] == '_' || (code[i - 1] >= 'a' && code[i - 1] <= 'z') ||
                     (code[i - 1] >= 'A' && code[i - 1] <= 'Z') || (code[i - 1] >= '0' && code[i - 1] <= '9')))
        i--;
    snprintf(name, len, "%.*s", (int)(end - i), code + i);
}

/* A function's extent: where its body opens and how many lines it counts. */
typedef struct fn_len {
    char name[128];
    int line, lines;
} fn_len;

/* The functions of the file at path into out (max of them); returns how many there are. A body is a '{' at file
 * scope right after a parameter list's ')'; its length runs from the line of that brace to the line of its closing
 * one, less the lines inside brace initializers ('{' after '='), which are data (a flag table) rather than steps
 * to follow. */
static int scan_functions(const char *path, fn_len *out, int max) {
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot read %s", path);
    static char code[1 << 21];
    size_t n = fread(code, 1, sizeof code - 1, f);
    fclose(f);
    cr_assert_lt(n, sizeof code - 1, "%s is larger than the test reads", path);
    code[n] = 0;
    blank_non_code(code);
    int depth = 0, line = 1, start = 0, init_depth = 0, init_start = 0, init_lines = 0, count = 0;
    char last = 0, name[128] = "";
    long close = -1;
    for (long i = 0; code[i]; i++) {
        char ch = code[i];
        if (ch == '\n') line++;
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') continue;
        if (ch == '{') {
            if (start && !init_depth && last == '=') init_depth = depth + 1, init_start = line;
            if (depth == 0 && last == ')') start = line, init_lines = 0, function_name(code, close, name, sizeof name);
            depth++;
        } else if (ch == '}') {
            depth--;
            if (init_depth && depth == init_depth - 1) init_lines += line - init_start, init_depth = 0;
            if (depth == 0 && start && count < max) {
                snprintf(out[count].name, sizeof out[count].name, "%s", name);
                out[count].line = start, out[count].lines = line - start + 1 - init_lines;
                count++;
            }
            if (depth == 0) start = 0;
        } else if (ch == ')') {
            close = i;
        }
        last = ch;
    }
    return count;
}

/* Holds every function of the file at path to the limit; returns how many it read. */
static int check_function_lengths(const char *path) {
    static fn_len fns[4096];
    int n = scan_functions(path, fns, (int)COUNT(fns));
    for (int i = 0; i < n; i++)
        cr_expect_leq(fns[i].lines, FN_MAX_LINES, "%s:%d: %s is %d lines long (at most %d, brace initializers aside): "
                      "split it by what each part does", path, fns[i].line, fns[i].name, fns[i].lines, FN_MAX_LINES);
    return n;
}

/* Reads every .c, .h and .cu file under dir; returns how many functions they hold. */
static int check_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int functions = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st)) continue;
        const char *dot = strrchr(e->d_name, '.');
        if (S_ISDIR(st.st_mode)) functions += check_tree(path);
        else if (dot && (!strcmp(dot, ".c") || !strcmp(dot, ".h") || !strcmp(dot, ".cu")))
            functions += check_function_lengths(path);
    }
    closedir(d);
    return functions;
}

/* Every function of the kit's own C fits in one view: at most 80 lines, brace initializers (flag tables) aside;
 * a reader holds a function whole, and a change cannot break a branch the reader never saw. The functions are
 * found by a scan of the code's tokens that knows C's braces, comments, strings and directives (no compiler
 * flag or tool that a machine may lack: the scan runs wherever the tests do, and .cu files too). */
Test(layout, every_function_fits_in_one_view) {
    int functions = 0;
    for (size_t i = 0; i < COUNT(code_roots); i++) functions += check_tree(code_roots[i]);
    cr_expect_gt(functions, 1000, "only %d functions found in the kit's own C", functions);
}

/* The scan counts what the limit means: a function, less its brace initializers, and nothing in its comments or
 * strings. */
Test(layout, the_function_scan_counts_lines) {
    char path[] = "/tmp/pplab-fnlen-XXXXXX.c";
    int fd = mkstemps(path, 2);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "static const int table[] = {\n1,\n2,\n};\n/* } { */\nint f(int x) {\n    const char *s = \"}\";\n");
    for (int i = 0; i < 90; i++) fprintf(f, "    x += %d; /* { */\n", i);
    fprintf(f, "    return x;\n}\nvoid g(void) {\n    static const int t[] = {\n");
    for (int i = 0; i < 100; i++) fprintf(f, "        %d,\n", i);
    fprintf(f, "    };\n    (void)t;\n}\n");
    fclose(f);
    fn_len fns[4];
    int n = scan_functions(path, fns, 4);
    unlink(path);
    cr_assert_eq(n, 2, "the scan found %d functions in a file of 2 (and a table)", n);
    cr_expect(!strcmp(fns[0].name, "f") && fns[0].line == 6 && fns[0].lines == 94, "f: %s at %d, %d lines",
              fns[0].name, fns[0].line, fns[0].lines);
    cr_expect(!strcmp(fns[1].name, "g") && fns[1].lines == 4, "g, its table aside: %s, %d lines", fns[1].name,
              fns[1].lines);
}

/* The runner is the same for every lab: what a test runs, which processes it captures, how long it may take and
 * how its file is graded come from the row's kind (labkind.h), so that a new lab adds a row and a kind, never a
 * branch in runner.c. Its code (comments aside) holds no string literal that is a lab's name or folder, and every
 * row has a kind whose every entry is there. */
Test(layout, the_runner_names_no_lab) {
    for (int l = 0; l < pp__nlabs; l++) {
        const pp_lab_kind *k = pp__labs[l].kind;
        cr_assert(k, "lab %s has no kind in the labs' table", pp__labs[l].name);
        cr_expect(k->ranks && k->wait_s && k->execute && k->timed_out && k->grade && k->fail,
                  "lab %s's kind misses an entry", pp__labs[l].name);
    }
    const char *files[] = {"grader/grade/runner.c", "grader/grade/runner.h"};
    int literals = 0;
    for (size_t i = 0; i < COUNT(files); i++) {
        FILE *f = fopen(files[i], "r");
        cr_assert(f, "cannot read %s (run from the project root)", files[i]);
        char line[1024];
        int comment = 0;
        for (int ln = 1; fgets(line, sizeof line, f); ln++)
            for (char *p = line; *p; p++) {
                if (comment) {
                    if (p[0] == '*' && p[1] == '/') comment = 0, p++;
                    continue;
                }
                if (p[0] == '/' && p[1] == '*') {
                    comment = 1, p++;
                    continue;
                }
                if (p[0] == '/' && p[1] == '/') break;
                if (p[0] == '\'' && p[1] && p[2] == '\'') { /* a character literal: '"' is no string */
                    p += 2;
                    continue;
                }
                if (*p != '"') continue;
                char lit[512];
                size_t n = 0;
                for (p++; *p && *p != '"'; p++) {
                    if (*p == '\\' && p[1]) p++;
                    if (n + 1 < sizeof lit) lit[n++] = *p;
                }
                lit[n] = 0;
                literals++;
                for (int l = 0; l < pp__nlabs; l++)
                    cr_expect(strcmp(lit, pp__labs[l].name) && strcmp(lit, pp__labs[l].folder),
                              "%s:%d: names lab \"%s\": let its kind decide (labkind.h)", files[i], ln, lit);
                if (!*p) break;
            }
        fclose(f);
    }
    cr_expect_gt(literals, 10, "only %d string literals found in the runner: is it still there?", literals);
}

/* How many string comparisons in the C text `src` (of file `path`, for the messages; NULL: silent) test a
 * transport's name: a strcmp, strncmp, strcasecmp or strncasecmp whose arguments hold an identifier with
 * "transport" in it (cfg->transport) or a string literal that is a transport's name ("mpi"). Comments are skipped
 * and literals read as C reads them, so a name in a comment or a message counts for nothing. */
static int transport_name_tests(const char *src, const char *path) {
    static const char *const cmps[] = {"strcmp", "strncmp", "strcasecmp", "strncasecmp"};
    int found = 0, line = 1, call_line = 0, depth = 0, hit = 0;
    for (const char *p = src; *p; p++) {
        if (*p == '\n') line++;
        if (p[0] == '/' && p[1] == '*') {
            for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++) line += *p == '\n';
            if (!*p) break;
            p++;
        } else if (p[0] == '/' && p[1] == '/') {
            while (p[1] && p[1] != '\n') p++;
        } else if (*p == '"' || *p == '\'') {
            char lit[256];
            size_t n = 0;
            for (char q = *p++; *p && *p != q; p++) {
                if (*p == '\\' && p[1]) p++;
                if (n + 1 < sizeof lit) lit[n++] = *p;
            }
            lit[n] = 0;
            for (int i = 0; depth && pp__transport_name(i); i++) hit |= !strcmp(lit, pp__transport_name(i));
            if (!*p) break;
        } else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
            const char *start = p;
            while (p[1] == '_' || (p[1] >= 'a' && p[1] <= 'z') || (p[1] >= 'A' && p[1] <= 'Z') ||
                   (p[1] >= '0' && p[1] <= '9'))
                p++;
            size_t n = (size_t)(p - start) + 1;
            char word[128];
            snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), start);
            if (depth && strcasestr(word, "transport")) hit = 1;
            for (size_t k = 0; !depth && k < COUNT(cmps); k++)
                if (!strcmp(word, cmps[k])) {
                    const char *q = p + 1;
                    while (*q == ' ' || *q == '\t') q++;
                    if (*q == '(') depth = -1, call_line = line; /* its '(' opens the arguments */
                }
        } else if (*p == '(' && depth) {
            depth = depth < 0 ? 1 : depth + 1;
        } else if (*p == ')' && depth > 0 && --depth == 0) {
            if (hit && path) cr_expect(0, "%s:%d tests a transport's name: ask its capabilities (comm.h's "
                                          "PP_TRANSPORT_* bits, transport.h) instead", path, call_line);
            found += hit;
            hit = 0;
        }
    }
    return found;
}

/* A transport is known by what it can do, as a lab by its kind: outside the registry (lib/transport/transport.c)
 * no file of the kit tests a transport's name, so that a new transport is its own file, its table and its row in
 * the registry, and no caller changes. Comparisons are what is counted, not every literal: a default ("threads" in
 * a configuration) or a transport's own table names a transport without making anything depend on the name. */
Test(layout, no_transport_is_told_apart_by_its_name) {
    int files = 0, tests = 0;
    for (size_t i = 0; i < COUNT(source_dirs) + 2; i++) {
        const char *dir = i < COUNT(source_dirs) ? source_dirs[i] : i == COUNT(source_dirs) ? "bench" : "kernels/cuda";
        DIR *d = opendir(dir);
        cr_assert(d, "cannot open %s (run the tests from the project root)", dir);
        for (struct dirent *e; (e = readdir(d));) {
            const char *dot = strrchr(e->d_name, '.');
            if (!dot || (strcmp(dot, ".c") && strcmp(dot, ".h") && strcmp(dot, ".cu"))) continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (!strcmp(path, "lib/transport/transport.c")) continue;
            FILE *f = fopen(path, "r");
            cr_assert(f, "cannot read %s", path);
            static char src[1 << 20];
            src[fread(src, 1, sizeof src - 1, f)] = 0;
            fclose(f);
            tests += transport_name_tests(src, path);
            files++;
        }
        closedir(d);
    }
    cr_expect_eq(tests, 0, "%d comparisons of a transport's name outside lib/transport/transport.c", tests);
    cr_expect_gt(files, 100, "only %d files read", files);
}

/* The count above finds what it must, and only that. */
Test(layout, the_transport_name_count_finds_one) {
    cr_expect_eq(transport_name_tests("if (!strcmp(cfg->transport, \"mpi\")) x(); /* strcmp(transport, a) */", NULL),
                 1);
    cr_expect_eq(transport_name_tests("int m = strcmp (kind, \"nccl\") && !strncmp(t->name, \"threads\", 7);", NULL),
                 2);
    cr_expect_eq(transport_name_tests("if (strcmp(o->transport_name, a)) y(\"mpi\");", NULL), 1);
    cr_expect_eq(transport_name_tests("if (!strcmp(api, \"pp_recv\")) f(\"threads\", cfg->transport);", NULL), 0);
}

/* docs/README.md's table of chapters names every chapter docs/ holds (NN-name.md), each with its lab folder. */
Test(layout, the_docs_index_names_every_chapter) {
    FILE *f = fopen("docs/README.md", "r");
    cr_assert(f, "docs/README.md is missing");
    static char index[1 << 16];
    index[fread(index, 1, sizeof index - 1, f)] = 0;
    fclose(f);
    DIR *d = opendir("docs");
    cr_assert(d);
    int chapters = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        if (len < 7 || n[0] < '0' || n[0] > '9' || n[1] < '0' || n[1] > '9' || n[2] != '-' ||
            strcmp(n + len - 3, ".md"))
            continue;
        char row[300], lab[300];
        snprintf(row, sizeof row, "| [%s](%s) |", n, n);
        snprintf(lab, sizeof lab, "`labs/%.*s`", (int)(len - 3), n);
        cr_expect(strstr(index, row), "docs/README.md's table lacks the chapter %s", n);
        cr_expect(strstr(index, lab), "docs/README.md's table lacks the lab %s", lab);
        chapters++;
    }
    closedir(d);
    cr_expect_geq(chapters, 9, "only %d chapters found in docs/", chapters);
}
