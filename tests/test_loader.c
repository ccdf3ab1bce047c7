/* test_loader.c: the schedule driver's loader (driver/loader.c) and the build's object check
 * (sandbox/toolchain/objcheck.c), on objects compiled here from small C files: plain C of every kind runs when
 * loaded in-process against a test table; every construct a lab object may not hold is refused by both with its
 * one-line message; no symbol trick of an object reaches the host's own functions; and thousands of mutated
 * and truncated objects are refused or loaded without a crash (mutated ones are never called). The loader lives
 * in the driver's room, so it is compiled into this test directly. Needs gcc and objcopy. */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../driver/loader.c"
#include "objcheck.h"

#define CAP ((size_t)64 << 20)

/* ---- the table the loaded objects get -------------------------------------------------------------------- */

static int hook_calls;
long test_hook(long x);
long test_hook(long x) {
    hook_calls++;
    return x * 2 + 1;
}

void __stack_chk_fail(void);
#define FN(name) {#name, (void *)name, 0}
static const pp_loader_symbol table[] = {
    FN(printf), FN(puts),     FN(putchar), FN(fputc),     FN(fwrite),           FN(memcpy),
    FN(memset), FN(strlen),   FN(strcmp),  FN(qsort),     FN(snprintf),         FN(test_hook),
    FN(__stack_chk_fail),     {"stdout", (void *)&stdout, 1},
};
#define NTABLE (sizeof table / sizeof *table)
static pp_loader_symbol snapshot[NTABLE];

/* ---- objects ----------------------------------------------------------------------------------------------- */

typedef struct obj {
    unsigned char *buf;
    size_t len;
} obj;

static char dir[64];

static void suite_init(void) {
    snprintf(dir, sizeof dir, "/tmp/pplab-loader-XXXXXX");
    cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    memcpy(snapshot, table, sizeof table);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}
static void suite_fini(void) { nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS); }

TestSuite(loader, .init = suite_init, .fini = suite_fini, .timeout = 120);

static obj read_obj(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    obj o = {malloc((size_t)n + 1), (size_t)n};
    cr_assert(o.buf && fread(o.buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    return o;
}

static void run_or_fail(const char *cmd, const char *what) {
    char full[4096];
    snprintf(full, sizeof full, "cd %s && %s > log 2>&1", dir, cmd);
    if (system(full) != 0) {
        char log[2048];
        snprintf(log, sizeof log, "%s/log", dir);
        obj l = read_obj(log);
        l.buf[l.len] = 0;
        cr_assert_fail("%s failed: %s\n%s", what, cmd, (char *)l.buf);
    }
}

/* Compiles src as the kit does (-std=c11 -O1 -g -fPIC), then flags (a later -O wins). */
static obj compile(const char *src, const char *flags) {
    char path[128], cmd[512];
    snprintf(path, sizeof path, "%s/t.c", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(src, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "gcc -std=c11 -O1 -g -fPIC -w %s -c t.c -o t.o", flags ? flags : "");
    run_or_fail(cmd, "compiling");
    snprintf(path, sizeof path, "%s/t.o", dir);
    return read_obj(path);
}

/* The object as the build narrows it: only the functions of keep (a space-separated list) stay global. */
static obj narrow(obj o, const char *keep) {
    char path[128], cmd[2048] = "objcopy";
    snprintf(path, sizeof path, "%s/n.o", dir);
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(o.buf, 1, o.len, f) == o.len);
    fclose(f);
    char words[512];
    cr_assert_lt(strlen(keep), sizeof words);
    snprintf(words, sizeof words, "%s", keep);
    for (char *w = strtok(words, " "); w; w = strtok(NULL, " "))
        snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " --keep-global-symbol=%s", w);
    strcat(cmd, " n.o nk.o");
    run_or_fail(cmd, "objcopy");
    snprintf(path, sizeof path, "%s/nk.o", dir);
    return read_obj(path);
}

static int load(pp_image *img, obj o, size_t cap, char *err, size_t errlen) {
    return pp__loader_load(img, o.buf, o.len, table, NTABLE, cap, err, errlen);
}

static int check(obj o, const char *keep1, int require, char *err, size_t errlen) {
    const char *keep[] = {keep1};
    return pp__objcheck(o.buf, o.len, "lab.c", keep, keep1 ? 1 : 0, require, err, errlen);
}

/* A function of the image, as a pointer of type T. */
#define FUNC(T, img, name) ((T)(uintptr_t)need(img, name))
static void *need(const pp_image *img, const char *name) {
    void *p = pp__loader_symbol(img, name);
    cr_assert(p, "the image does not export %s", name);
    return p;
}

static Elf64_Sym *symbol(obj o, const char *name);

static int one_line(const char *s) { return !strchr(s, '\n') && !strncmp(s, "refused: ", 9); }

/* ---- plain C runs --------------------------------------------------------------------------------------- */

static const char rich_src[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "int counter = 7;\n"
    "static int hidden = 100;\n"
    "static const char greeting[] = \"hello, image\";\n"
    "struct big { char b[16384]; };\n"
    "static long twice(long x) { return 2 * x; }\n"
    "static long thrice(long x) { return 3 * x; }\n"
    "static long (*const ops[])(long) = {twice, thrice};\n"
    "int bump(void) { return ++counter + hidden; }\n"
    "long apply(int i, long x) { return ops[i & 1](x); }\n"
    "int sw(int x) { switch (x) { case 0: return 3; case 1: return 7; case 2: return 11; case 3: return 13;\n"
    "  case 4: return 17; case 5: return 19; case 6: return 23; default: return -1; } }\n"
    "long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
    "double poly(double x) { return x * 3.25 + 1e-3; }\n"
    "size_t greet_len(void) { return strlen(greeting); }\n"
    "const char *greet(void) { return greeting; }\n"
    "void copy_big(struct big *d, const struct big *s) { *d = *s; }\n"
    "int fmt(char *out, size_t n, double x) { return snprintf(out, n, \"%s %.2f %d\", \"v\", x, 42); }\n"
    "static int by_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }\n"
    "void sort_words(const char **w, size_t n) { qsort(w, n, sizeof *w, by_str); }\n"
    "void sort_fixed(char (*w)[8], size_t n) { qsort(w, n, 8, (int (*)(const void *, const void *))strcmp); }\n"
    "typedef int (*cmp_fn)(const char *, const char *);\n"
    "cmp_fn the_strcmp(void) { return strcmp; }\n"
    "FILE *the_stdout(void) { return stdout; }\n"
    "static char zeros[4 << 20];\n"
    "long zero_sum(void) { long s = 0; for (size_t i = 0; i < sizeof zeros; i += 4096) s += zeros[i]; zeros[5] = 1;\n"
    "  return s; }\n"
    "_Alignas(64) static char a64[64] = {1};\n"
    "_Alignas(4096) static char a4k[4096] = {2};\n"
    "_Alignas(4096) static char z4k[4096];\n"
    "char *aligned(int i) { return i == 0 ? a64 : i == 1 ? a4k : z4k; }\n"
    "int poke_rodata(void) { *(volatile char *)greeting = 'H'; return 0; }\n"
    "int poke_text(void) { *(volatile char *)(void *)poke_text = 0; return 0; }\n";

/* The rich object's functions, the lab functions of the check. */
static const char rich_fns[] = "bump apply sw fib poly greet_len greet copy_big fmt sort_words sort_fixed the_strcmp "
                               "the_stdout zero_sum aligned poke_rodata poke_text";
static const char *rich_keep[32];
static int rich_nkeep;
static char rich_words[sizeof rich_fns];

static obj rich_narrowed(const char *flags) {
    obj o = compile(rich_src, flags), k = narrow(o, rich_fns);
    free(o.buf);
    if (!rich_nkeep) {
        memcpy(rich_words, rich_fns, sizeof rich_fns);
        for (char *w = strtok(rich_words, " "); w; w = strtok(NULL, " ")) rich_keep[rich_nkeep++] = w;
    }
    return k;
}

static int check_rich(obj o, char *err, size_t errlen) {
    return pp__objcheck(o.buf, o.len, "lab.c", rich_keep, rich_nkeep, 1, err, errlen);
}

static void run_rich(pp_image *img) {
    cr_expect_eq(FUNC(int (*)(void), img, "bump")(), 108);
    cr_expect_eq(FUNC(int (*)(void), img, "bump")(), 109, "global data keeps its value between calls");
    cr_expect_eq(FUNC(long (*)(int, long), img, "apply")(0, 5), 10);
    cr_expect_eq(FUNC(long (*)(int, long), img, "apply")(1, 5), 15);
    int (*sw)(int) = FUNC(int (*)(int), img, "sw");
    const int want[] = {3, 7, 11, 13, 17, 19, 23, -1};
    for (int i = 0; i < 8; i++) cr_expect_eq(sw(i), want[i], "switch case %d", i);
    cr_expect_eq(FUNC(long (*)(int), img, "fib")(20), 6765);
    cr_expect_float_eq(FUNC(double (*)(double), img, "poly")(2.0), 6.501, 1e-12);
    cr_expect_eq(FUNC(size_t (*)(void), img, "greet_len")(), 12);
    cr_expect_str_eq(FUNC(const char *(*)(void), img, "greet")(), "hello, image");
    static struct { char b[16384]; } s, d;
    memset(s.b, 'q', sizeof s.b);
    FUNC(void (*)(void *, const void *), img, "copy_big")(&d, &s);
    cr_expect_eq(memcmp(d.b, s.b, sizeof s.b), 0, "a struct copy (memcpy through a stub)");
    char out[64];
    cr_expect_eq(FUNC(int (*)(char *, size_t, double), img, "fmt")(out, sizeof out, 2.5), 9);
    cr_expect_str_eq(out, "v 2.50 42");
    const char *words[] = {"pear", "apple", "fig"};
    FUNC(void (*)(const char **, size_t), img, "sort_words")(words, 3);
    cr_expect(!strcmp(words[0], "apple") && !strcmp(words[1], "fig") && !strcmp(words[2], "pear"));
    char fixed[3][8] = {"zeta", "alpha", "mu"};
    FUNC(void (*)(char (*)[8], size_t), img, "sort_fixed")(fixed, 3);
    cr_expect(!strcmp(fixed[0], "alpha") && !strcmp(fixed[2], "zeta"), "qsort with the table's strcmp as callback");
    cr_expect_eq((void *)(uintptr_t)FUNC(int (*(*)(void))(const char *, const char *), img, "the_strcmp")(),
                 (void *)(uintptr_t)strcmp, "the address of a table function is the function's own");
    cr_expect_eq(FUNC(FILE * (*)(void), img, "the_stdout")(), stdout, "extern data through the GOT");
    cr_expect_eq(FUNC(long (*)(void), img, "zero_sum")(), 0, "the bss is zeroed");
    char *(*aligned)(int) = FUNC(char *(*)(int), img, "aligned");
    cr_expect(((uintptr_t)aligned(0) & 63) == 0 && aligned(0)[0] == 1, "aligned(64) data");
    cr_expect(((uintptr_t)aligned(1) & 4095) == 0 && aligned(1)[0] == 2, "aligned(4096) data");
    cr_expect(((uintptr_t)aligned(2) & 4095) == 0 && aligned(2)[0] == 0, "aligned(4096) bss");
}

Test(loader, runs_plain_c_at_every_level) {
    const char *levels[] = {"-O0", "-O1", "-O2"};
    for (int i = 0; i < 3; i++) {
        obj o = compile(rich_src, levels[i]);
        pp_image img;
        char err[512];
        cr_expect(symbol(o, "memcpy"), "%s: gcc copies the struct with memcpy", levels[i]);
        cr_assert_eq(load(&img, o, CAP, err, sizeof err), 0, "%s: %s", levels[i], err);
        cr_expect_gt(img.nfns, 10);
        run_rich(&img);
        pp__loader_unload(&img);
        cr_expect_null(img.base, "unload zeroes the image");
        free(o.buf);
    }
}

Test(loader, calls_into_the_table_go_through_stubs) {
    obj o = compile("long test_hook(long x);\n"
                    "#include <stdio.h>\n"
                    "static long (*const hooks[])(long) = {test_hook, test_hook};\n"
                    "long call(long x) { return test_hook(x) + hooks[1](x); }\n"
                    "void *hook_address(void) { return (void *)test_hook; }\n"
                    "int say(void) { return printf(\"loaded: %d %.1f\\n\", 7, 0.5); }\n",
                    NULL);
    pp_image img;
    char err[512];
    cr_assert_eq(load(&img, o, CAP, err, sizeof err), 0, "%s", err);
    hook_calls = 0;
    cr_expect_eq(FUNC(long (*)(long), &img, "call")(10), 42);
    cr_expect_eq(hook_calls, 2, "a direct call and one through a .data.rel.ro table");
    cr_expect_eq(FUNC(void *(*)(void), &img, "hook_address")(), (void *)(uintptr_t)test_hook);
    cr_expect_eq(FUNC(int (*)(void), &img, "say")(), 14, "printf with a double (%%al survives the stub)");
    const unsigned char *text = img.text;
    int stubs = 0;
    for (size_t i = 0; i + 6 <= img.text_size; i++) stubs += text[i] == 0xff && text[i + 1] == 0x25;
    cr_expect_geq(stubs, 2, "test_hook and printf each have a stub");
    pp__loader_unload(&img);
    free(o.buf);
}

/* The function in the child, whose death says the region was protected. */
static void expect_fault(const pp_image *img, const char *name) {
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* die of it, without a sanitizer's report */
        FUNC(int (*)(void), img, name)();
        _exit(0x5a);
    }
    int st;
    waitpid(pid, &st, 0);
    cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "%s wrote to protected memory", name);
}

Test(loader, code_and_constants_are_read_only) {
    obj o = compile(rich_src, NULL);
    pp_image img;
    char err[512];
    cr_assert_eq(load(&img, o, CAP, err, sizeof err), 0, "%s", err);
    expect_fault(&img, "poke_rodata");
    expect_fault(&img, "poke_text");
    pp__loader_unload(&img);
    free(o.buf);
}

Test(loader, looks_up_global_functions_only) {
    obj o = compile("static int local_fn(void) { return 1; }\nint global_data = 3;\n"
                    "int pick(void) { return local_fn() + global_data; }\n",
                    NULL);
    pp_image img;
    char err[512];
    cr_assert_eq(load(&img, o, CAP, err, sizeof err), 0, "%s", err);
    cr_expect_not_null(pp__loader_symbol(&img, "pick"));
    cr_expect_null(pp__loader_symbol(&img, "local_fn"));
    cr_expect_null(pp__loader_symbol(&img, "global_data"));
    cr_expect_null(pp__loader_symbol(&img, "printf"));
    cr_expect_eq(FUNC(int (*)(void), &img, "pick")(), 4);
    pp__loader_unload(&img);
    pp__loader_unload(&img); /* twice is harmless */
    free(o.buf);
}

/* ---- refusals, by the loader and by the build's check alike ----------------------------------------------- */

static const struct refusal {
    const char *what, *src, *flags, *says;
} refusals[] = {
    {"thread-local data", "_Thread_local int t = 1;\nlong lab_fn(long a) { return a + t; }\n", NULL,
     "thread-local storage is not supported"},
    {"a constructor",
     "static long seen;\n__attribute__((constructor)) static void early(void) { seen = 1; }\n"
     "long lab_fn(long a) { return a + seen; }\n",
     NULL, "has a constructor (__attribute__((constructor)) or section .init_array)"},
    {"a destructor",
     "static long seen;\n__attribute__((destructor)) static void late(void) { seen = 1; }\n"
     "long lab_fn(long a) { return a + seen; }\n",
     NULL, "has a destructor (__attribute__((destructor)) or section .fini_array)"},
    {"fopen", "#include <stdio.h>\nlong lab_fn(long a) { return a + (fopen(\"/etc/hostname\", \"r\") != 0); }\n", NULL,
     "calls fopen(), which a lab file may not use: it may use pp.h and the C library functions listed in "
     "docs/design.md"},
    {"stdin", "#include <stdio.h>\nFILE *lab_fn(void) { return stdin; }\n", NULL,
     "uses stdin, which a lab file may not use"},
    {"a unique symbol",
     "__asm__(\".globl main\\n.type main, @gnu_unique_object\\n.data\\nmain: .long 1\\n.text\");\n"
     "long lab_fn(long a) { return a; }\n",
     NULL, "makes main a unique global symbol"},
    {"a common symbol", "int x;\nlong lab_fn(long a) { return a + x; }\n", "-fcommon", "leaves x a common symbol"},
    {"an ifunc",
     "static long real(long a) { return a; }\nstatic void *resolve(void) { return (void *)real; }\n"
     "long helper(long) __attribute__((ifunc(\"resolve\")));\nlong lab_fn(long a) { return helper(a); }\n",
     NULL, "defines helper as an ifunc"},
    {"a weak definition", "__attribute__((weak)) long lab_fn(long a) { return a; }\n", NULL,
     "makes lab_fn weak (__attribute__((weak)))"},
    {"a weak reference",
     "extern long wref(long) __attribute__((weak));\nlong lab_fn(long a) { return wref ? wref(a) : a; }\n", NULL,
     "has a weak reference to wref"},
    {"a comdat group",
     "__asm__(\".section .text.x,\\\"axG\\\",@progbits,x,comdat\\n.globl x\\nx: ret\\n.text\");\n"
     "long lab_fn(long a) { return a; }\n",
     NULL, "has a section group (a comdat: section "},
    {"writable code",
     "__asm__(\".section .text.evil,\\\"awx\\\",@progbits\\n.byte 0xc3\\n.text\");\n"
     "long lab_fn(long a) { return a; }\n",
     NULL, "has section .text.evil both writable and executable"},
    {"an unknown section type",
     "__asm__(\".section .weird,\\\"a\\\",@0x60000001\\n.byte 1\\n.text\");\nlong lab_fn(long a) { return a; }\n",
     NULL, "has section .weird of type 0x60000001, which plain C never makes"},
    {"an executable stack", "long lab_fn(long a) { return a; }\n", "-Wa,--execstack",
     "asks for an executable stack (.note.GNU-stack)"},
    {"a page and more of alignment",
     "_Alignas(8192) static char big[8192] = {1};\nlong lab_fn(void) { return (long)big; }\n", NULL,
     "aligns section .data to 8192 bytes; a lab file may align to at most 4096"},
};

Test(loader, refuses_what_a_lab_object_may_not_hold) {
    for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
        const struct refusal *r = &refusals[i];
        obj o = compile(r->src, r->flags);
        pp_image img;
        char err[512] = "";
        cr_expect_eq(load(&img, o, CAP, err, sizeof err), -1, "%s: the loader loaded it", r->what);
        cr_expect(strstr(err, r->says) && one_line(err), "%s: the loader said: %s", r->what, err);
        cr_expect(!strncmp(err, "refused: the lab file ", 22), "%s: %s", r->what, err);
        cr_expect_null(img.base);
        obj n = narrow(o, "lab_fn");
        char why[512] = "";
        cr_expect_eq(check(n, "lab_fn", 0, why, sizeof why), -1, "%s: the object check passed it", r->what);
        cr_expect(strstr(why, r->says) && one_line(why), "%s: the object check said: %s", r->what, why);
        cr_expect(!strncmp(why, "refused: lab.c ", 15), "%s: %s", r->what, why);
        free(o.buf), free(n.buf);
    }
}

Test(loader, refuses_an_image_over_the_cap) {
    obj o = compile("static char big[64 << 20];\nchar *lab_fn(void) { return big; }\n", NULL);
    pp_image img;
    char err[512];
    cr_assert_eq(load(&img, o, (size_t)16 << 20, err, sizeof err), -1);
    unsigned long need = 0;
    cr_expect_eq(sscanf(err, "refused: the lab's code and data need %lu KiB; a lab file may have at most 16384 KiB",
                        &need), 1, "%s", err);
    cr_expect(need > 65536 && need < 65536 + 64, "%s", err);
    cr_expect(strstr(err, "at most 16384 KiB") && one_line(err), "%s", err);
    cr_expect_eq(load(&img, o, (size_t)80 << 20, err, sizeof err), 0, "%s", err);
    pp__loader_unload(&img);
    free(o.buf);
}

/* ---- objects patched by hand ---------------------------------------------------------------------------- */

static Elf64_Shdr *shdr(obj o, size_t i) {
    Elf64_Ehdr *eh = (Elf64_Ehdr *)o.buf;
    return (Elf64_Shdr *)(o.buf + eh->e_shoff) + i;
}

static size_t section_index(obj o, const char *name) {
    Elf64_Ehdr *eh = (Elf64_Ehdr *)o.buf;
    const char *names = (const char *)o.buf + shdr(o, eh->e_shstrndx)->sh_offset;
    for (size_t i = 1; i < eh->e_shnum; i++)
        if (!strcmp(names + shdr(o, i)->sh_name, name)) return i;
    cr_assert_fail("no section %s", name);
    return 0;
}

static Elf64_Sym *symbol(obj o, const char *name) {
    Elf64_Shdr *st = shdr(o, section_index(o, ".symtab"));
    const char *strs = (const char *)o.buf + shdr(o, st->sh_link)->sh_offset;
    Elf64_Sym *s = (Elf64_Sym *)(o.buf + st->sh_offset);
    for (size_t k = 1; k < st->sh_size / sizeof *s; k++)
        if (!strcmp(strs + s[k].st_name, name)) return &s[k];
    return NULL;
}

static Elf64_Rela *rela(obj o, const char *section, size_t k) {
    Elf64_Shdr *s = shdr(o, section_index(o, section));
    cr_assert_lt(k, s->sh_size / sizeof(Elf64_Rela));
    return (Elf64_Rela *)(o.buf + s->sh_offset) + k;
}

static obj copy(obj o) {
    obj c = {malloc(o.len + 1), o.len};
    memcpy(c.buf, o.buf, o.len);
    return c;
}

static void expect_both_refuse(obj o, const char *what, const char *says) {
    pp_image img;
    char err[512] = "", why[512] = "";
    cr_expect_eq(load(&img, o, CAP, err, sizeof err), -1, "%s: loaded", what);
    cr_expect(strstr(err, says) && one_line(err), "%s: the loader said: %s", what, err);
    cr_expect_eq(check(o, "lab_fn", 0, why, sizeof why), -1, "%s: the object check passed it", what);
    cr_expect(strstr(why, says) && one_line(why), "%s: the object check said: %s", what, why);
}

static const char patch_src[] = "int counter = 3;\nint lab_fn(void) { return ++counter; }\n";

Test(loader, refuses_patched_objects) {
    obj base = compile(patch_src, NULL);
    obj o = narrow(base, "lab_fn");
    /* the narrowed object is fine as it is */
    pp_image img;
    char err[512];
    cr_assert_eq(load(&img, o, CAP, err, sizeof err), 0, "%s", err);
    cr_expect_eq(FUNC(int (*)(void), &img, "lab_fn")(), 4);
    pp__loader_unload(&img);

    obj p = copy(o);
    symbol(p, "counter")->st_shndx = SHN_ABS;
    expect_both_refuse(p, "an absolute symbol in a relocation", "defines counter as an absolute symbol");
    free(p.buf);

    p = copy(o);
    Elf64_Rela *r = rela(p, ".rela.text", 0);
    r->r_info = ELF64_R_INFO(ELF64_R_SYM(r->r_info), R_X86_64_DTPMOD64);
    expect_both_refuse(p, "an unknown relocation", "carries a relocation of type 16 (in section .text), which the "
                                                   "lab's loader does not handle");
    r->r_info = ELF64_R_INFO(ELF64_R_SYM(r->r_info), R_X86_64_IRELATIVE);
    expect_both_refuse(p, "IRELATIVE", "carries an IRELATIVE relocation (an ifunc)");
    free(p.buf);

    const uint64_t text_size = shdr(o, section_index(o, ".text"))->sh_size;
    const uint64_t offsets[] = {text_size - 3, text_size, text_size + 1, UINT64_MAX - 2, (uint64_t)1 << 63};
    for (size_t i = 0; i < sizeof offsets / sizeof *offsets; i++) {
        p = copy(o);
        rela(p, ".rela.text", 0)->r_offset = offsets[i];
        expect_both_refuse(p, "a relocation past its section", "a relocation outside its section");
        free(p.buf);
    }

    p = copy(o);
    r = rela(p, ".rela.text", 0);
    r->r_info = ELF64_R_INFO(100000, ELF64_R_TYPE(r->r_info));
    expect_both_refuse(p, "a symbol that does not exist", "a relocation of a symbol that does not exist");
    free(p.buf);

    p = copy(o);
    r = rela(p, ".rela.text", 0);
    /* the section symbol of .debug_info: never loaded */
    Elf64_Shdr *st = shdr(p, section_index(p, ".symtab"));
    Elf64_Sym *syms = (Elf64_Sym *)(p.buf + st->sh_offset);
    size_t debug = section_index(p, ".debug_info"), k = 1;
    while (k < st->sh_size / sizeof *syms &&
           !(ELF64_ST_TYPE(syms[k].st_info) == STT_SECTION && syms[k].st_shndx == debug))
        k++;
    cr_assert_lt(k, st->sh_size / sizeof *syms);
    r->r_info = ELF64_R_INFO(k, ELF64_R_TYPE(r->r_info));
    expect_both_refuse(p, "a reference to an unloaded section", "to a symbol in section .debug_info, which is never "
                                                                "loaded");
    free(p.buf);

    p = copy(o);
    shdr(p, section_index(p, ".data"))->sh_addralign = 24;
    expect_both_refuse(p, "a crooked alignment", "alignment is not a power of two");
    free(p.buf);

    p = copy(o);
    shdr(p, section_index(p, ".data"))->sh_type = SHT_REL;
    expect_both_refuse(p, "SHT_REL", "the lab's loader takes only SHT_RELA");
    free(p.buf);

    p = copy(o);
    shdr(p, section_index(p, ".text"))->sh_offset = p.len - 2;
    expect_both_refuse(p, "a section past the file", "a section lies outside the file");
    free(p.buf);

    struct {
        size_t at;
        unsigned char value;
        const char *says;
    } header[] = {
        {EI_CLASS, ELFCLASS32, "is not a 64-bit little-endian x86-64 ELF relocatable object"},
        {EI_DATA, ELFDATA2MSB, "is not a 64-bit little-endian x86-64 ELF relocatable object"},
        {offsetof(Elf64_Ehdr, e_type), ET_EXEC, "is not a 64-bit little-endian x86-64 ELF relocatable object"},
        {offsetof(Elf64_Ehdr, e_machine), EM_AARCH64, "is not a 64-bit little-endian x86-64 ELF relocatable object"},
        {offsetof(Elf64_Ehdr, e_shentsize), 40, "section headers of a foreign size"},
        {offsetof(Elf64_Ehdr, e_shnum), 0, "extended section numbering"},
    };
    for (size_t i = 0; i < sizeof header / sizeof *header; i++) {
        p = copy(o);
        p.buf[header[i].at] = header[i].value;
        if (header[i].at == offsetof(Elf64_Ehdr, e_shnum)) p.buf[header[i].at + 1] = 0;
        expect_both_refuse(p, "a patched header", header[i].says);
        free(p.buf);
    }
    p = copy(o);
    ((Elf64_Ehdr *)p.buf)->e_shstrndx = SHN_XINDEX;
    expect_both_refuse(p, "SHN_XINDEX", "extended section numbering");
    free(p.buf);
    p = copy(o);
    symbol(p, "counter")->st_shndx = SHN_XINDEX;
    expect_both_refuse(p, "a symbol's SHN_XINDEX", "extended section numbering");
    free(p.buf);
    free(o.buf), free(base.buf);
}

Test(loader, refuses_truncated_objects) {
    obj o = rich_narrowed(NULL);
    pp_image img;
    char err[512];
    for (size_t n = 0; n < o.len; n++) {
        obj t = {malloc(n + 1), n};
        memcpy(t.buf, o.buf, n);
        /* asserted only when wrong: tens of thousands of passing assertions would flood the runner */
        if (load(&img, t, CAP, err, sizeof err) != -1 || !one_line(err))
            cr_expect_fail("%zu of %zu bytes: loaded, or refused with %s", n, o.len, err);
        if (check_rich(t, err, sizeof err) != -1) cr_expect_fail("%zu of %zu bytes passed the check", n, o.len);
        free(t.buf);
    }
    cr_expect_eq(load(&img, o, CAP, NULL, 0), 0, "the whole object loads (with no room for a message)");
    pp__loader_unload(&img);
    free(o.buf);
}

/* ---- symbol tricks never reach the host ------------------------------------------------------------------- */

static const char *const host_names[] = {"main", "seccomp_load", "prctl", "memcpy", "pp__drv_lockdown"};
static const struct trick {
    const char *way, *fmt, *flags;
} tricks[] = {
    {"global", "long %1$s(long a) { return a + 42; }\n", NULL},
    {"unique", "__asm__(\".globl %1$s\\n.type %1$s, @gnu_unique_object\\n.data\\n%1$s: .quad 42\\n.text\");\n", NULL},
    {"common", "long %1$s;\n", "-fcommon"},
    {"ifunc",
     "static long impl(long a) { return a + 42; }\nstatic void *res(void) { return (void *)impl; }\n"
     "long %1$s(long) __attribute__((ifunc(\"res\")));\n",
     NULL},
    {"weak", "__attribute__((weak)) long %1$s(long a) { return a + 42; }\n", NULL},
    {"a section name",
     "__attribute__((section(\".text\\n.globl %1$s\\n.type %1$s,@function\\n%1$s:\\n#\")))\n"
     "long injected(long a) { return a + 42; }\n",
     NULL},
};

/* 1 when the object still shows a definition of name to the outside. */
static int visible(obj o, const char *name) {
    Elf64_Sym *s = symbol(o, name);
    return s && ELF64_ST_BIND(s->st_info) != STB_LOCAL && s->st_shndx != SHN_UNDEF;
}

static void expect_host_intact(const char *what) {
    cr_expect_eq(memcmp(table, snapshot, sizeof table), 0, "%s: the table changed", what);
    char d[8];
    void *(*volatile mc)(void *, const void *, size_t) = memcpy;
    mc(d, "abcdefg", 8);
    cr_expect_str_eq(d, "abcdefg", "%s: the host's memcpy", what);
    char name[17] = "";
    cr_expect_eq(prctl(PR_GET_NAME, name), 0, "%s: the host's prctl", what);
    cr_expect_eq(test_hook(1), 3, "%s: the host's own functions", what);
}

static void try_loading(obj o, const char *what) {
    pp_image img;
    char err[512];
    if (load(&img, o, CAP, err, sizeof err) == 0) {
        cr_expect_eq(FUNC(long (*)(long), &img, "lab_fn")(1), 4, "%s: the lab's function", what);
        pp__loader_unload(&img);
    } else {
        cr_expect(one_line(err), "%s: %s", what, err);
    }
    expect_host_intact(what);
}

Test(loader, no_symbol_trick_reaches_the_host) {
    for (size_t w = 0; w < sizeof tricks / sizeof *tricks; w++)
        for (size_t i = 0; i < sizeof host_names / sizeof *host_names; i++) {
            char src[1024], what[128];
            int n = snprintf(src, sizeof src, tricks[w].fmt, host_names[i]);
            snprintf(src + n, sizeof src - (size_t)n,
                     "unsigned long strlen(const char *);\n"
                     "long lab_fn(long a) { return a + (long)strlen(\"abc\"); }\n");
            snprintf(what, sizeof what, "%s as a %s symbol", host_names[i], tricks[w].way);
            obj o = compile(src, tricks[w].flags), k = narrow(o, "lab_fn");
            char why[512];
            cr_expect_eq(check(o, "lab_fn", 1, why, sizeof why), -1, "%s: the check passed it", what);
            cr_expect(one_line(why), "%s: %s", what, why);
            /* narrowed as the build does, it is refused or shows nothing of the name */
            cr_expect(check(k, "lab_fn", 1, why, sizeof why) == -1 || !visible(k, host_names[i]),
                      "%s: narrowed, it still defines the name", what);
            try_loading(o, what);
            try_loading(k, what);
            free(o.buf), free(k.buf);
        }
}

/* ---- the build's own rules --------------------------------------------------------------------------------- */

Test(loader, the_check_passes_kit_objects_and_wants_the_lab_functions) {
    obj o = compile(rich_src, NULL), k = rich_narrowed(NULL);
    char why[512];
    const char *keep[34];
    int nkeep = rich_nkeep;
    memcpy(keep, rich_keep, sizeof rich_keep);
    cr_expect_eq(check_rich(k, why, sizeof why), 0, "%s", why);
    cr_expect_eq(check_rich(o, why, sizeof why), -1);
    cr_expect(strstr(why, "refused: lab.c leaves counter visible"), "unnarrowed: %s", why);
    keep[nkeep++] = "pp_missing_step";
    cr_expect_eq(pp__objcheck(k.buf, k.len, "lab.c", keep, nkeep, 0, why, sizeof why), 0, "%s", why);
    cr_expect_eq(pp__objcheck(k.buf, k.len, "lab.c", keep, nkeep, 1, why, sizeof why), -1);
    cr_expect_str_eq(why, "lab.c does not define pp_missing_step(): keep the function name the lab gives (and do "
                          "not make it static)");
    free(o.buf), free(k.buf);

    o = compile("int lab_fn = 3;\n", NULL), k = narrow(o, "lab_fn");
    cr_expect_eq(check(k, "lab_fn", 1, why, sizeof why), -1);
    cr_expect(strstr(why, "defines lab_fn, but not as a function"), "%s", why);
    free(o.buf), free(k.buf);

    /* names and flags plain C never gives: the check refuses, the loader (which goes by type) takes them */
    const char *odd[][2] = {
        {"__attribute__((section(\".mysec\"))) int lab_fn(void) { return 5; }\n",
         "refused: lab.c puts code or data into section .mysec, which a lab file never needs"},
        {"__asm__(\".section .text.rw,\\\"aw\\\",@progbits\\n.long 1\\n.text\");\nint lab_fn(void) { return 5; }\n",
         "refused: lab.c has section .text.rw with type 0x1 and flags 0x3, which plain C never gives it"},
    };
    for (size_t i = 0; i < 2; i++) {
        o = compile(odd[i][0], NULL), k = narrow(o, "lab_fn");
        cr_expect_eq(check(k, "lab_fn", 1, why, sizeof why), -1);
        cr_expect(strstr(why, odd[i][1]) && one_line(why), "%s", why);
        pp_image img;
        cr_expect_eq(load(&img, k, CAP, why, sizeof why), 0, "%s", why);
        if (img.base) cr_expect_eq(FUNC(int (*)(void), &img, "lab_fn")(), 5);
        pp__loader_unload(&img);
        free(o.buf), free(k.buf);
    }
}

/* ---- mutations ---------------------------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

/* A byte of the structure the readers walk: the ELF header, the section table, the symbol table or a table of
 * relocations or names; else anywhere. */
static size_t structural_byte(obj o) {
    Elf64_Ehdr *eh = (Elf64_Ehdr *)o.buf;
    switch (rnd() % 4) {
    case 0: return rnd() % sizeof *eh;
    case 1: return eh->e_shoff + rnd() % (eh->e_shnum * sizeof(Elf64_Shdr));
    default: {
        for (int tries = 0; tries < 16; tries++) {
            Elf64_Shdr *s = shdr(o, 1 + rnd() % (eh->e_shnum - 1u));
            if ((s->sh_type == SHT_SYMTAB || s->sh_type == SHT_RELA || s->sh_type == SHT_STRTAB) && s->sh_size)
                return s->sh_offset + rnd() % s->sh_size;
        }
        return rnd() % o.len;
    }
    }
}

Test(loader, survives_mutations, .timeout = 300) {
    obj o = rich_narrowed(NULL);
    char err[512];
    cr_assert_eq(check_rich(o, err, sizeof err), 0, "%s", err);
    static const uint64_t values[] = {0, 1, 0x7f, 0x80, 0xff, 0x10, 0x40};
    int loaded = 0, passed = 0, runs = 3000;
    for (int t = 0; t < runs; t++) {
        obj m = copy(o);
        if (t % 5 == 0) m.len = rnd() % o.len; /* a truncation, mutated or not */
        int changes = 1 + (int)(rnd() % 8);
        for (int c = 0; c < changes && t % 10 != 0; c++) {
            size_t at = rnd() % 3 ? structural_byte(o) : rnd() % o.len;
            if (at < m.len) m.buf[at] = rnd() % 2 ? (unsigned char)rnd() : (unsigned char)values[rnd() % 7];
        }
        pp_image img;
        if (load(&img, m, CAP, err, sizeof err) == 0) {
            loaded++; /* never called: the mutation may have broken any instruction */
            pp__loader_unload(&img);
        } else if (!one_line(err)) {
            cr_expect_fail("mutation %d: %s", t, err);
        }
        passed += check_rich(m, err, sizeof err) == 0;
        free(m.buf);
    }
    cr_log_info("%d mutated objects: %d loaded, %d passed the object check", runs, loaded, passed);
    free(o.buf);
}
