/* test_tokens.c: the token checks of sandbox/toolchain/tokens.h. Each rule is tried through the spellings that beat
 * the text-matching checks before them (splices, trigraphs, digraphs, comments before #, \r, UCNs, macros that
 * paste or hide names); the preprocessed check runs on real `gcc -std=c11 -E` output; every lab file, solution
 * and valid or broken variant passes both; and random bytes and mutated solutions never crash either check
 * (build this suite with -fsanitize=address,undefined to see that). Tests run from the project root. */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tokens.h"

#define NAME "02-gpipe/gpipe.c"

static char err[1024];

/* The checks on an exact copy of the bytes, so that a read past the end is one a sanitizer sees. */
static int raw_n(const char *s, size_t n) {
    char *copy = malloc(n ? n : 1);
    memcpy(copy, s, n);
    err[0] = 0;
    int rc = pp__tokens_check_source(copy, n, NAME, err, sizeof err);
    free(copy);
    return rc;
}
static int raw(const char *s) { return raw_n(s, strlen(s)); }

static int pre_n(const char *s, size_t n, const char *name) {
    char *copy = malloc(n ? n : 1);
    memcpy(copy, s, n);
    err[0] = 0;
    int rc = pp__tokens_check_preprocessed(copy, n, name, err, sizeof err);
    free(copy);
    return rc;
}

/* The message is one line, for the right file and line, and names what was found. */
static void expect_message(const char *src, int line, const char *what) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "refused: " NAME ":%d: ", line);
    cr_expect(!strncmp(err, prefix, strlen(prefix)), "want \"%s...\" for:\n%s\ngot: %s", prefix, src, err);
    cr_expect(strstr(err, what), "want \"%s\" in the message for:\n%s\ngot: %s", what, src, err);
    cr_expect(!strchr(err, '\n'), "one line: %s", err);
    cr_expect(strlen(err) > strlen(prefix) && strstr(err + strlen(prefix), ": "), "what, then what to do: %s", err);
}

static void refused(const char *src, int line, const char *what) {
    cr_expect_eq(raw(src), -1, "the source check must refuse:\n%s", src);
    expect_message(src, line, what);
}

static void accepted(const char *src) {
    cr_expect_eq(raw(src), 0, "the source check must accept:\n%s\ngot: %s", src, err);
}

static char text[1 << 23];

/* `gcc -std=c11 -E` of src compiled as NAME (with the build's flags and lib/ for pp.h) into text; its length. */
static size_t preprocess(const char *src) {
    char dir[] = "/tmp/pplab-tokens-XXXXXX", cwd[PATH_MAX], path[PATH_MAX + 64], cmd[3 * PATH_MAX];
    cr_assert(mkdtemp(dir) && getcwd(cwd, sizeof cwd));
    snprintf(path, sizeof path, "%s/02-gpipe", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/" NAME, dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(src, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cd '%s' && gcc -std=c11 -O1 -fPIC -I'%s/lib' -E " NAME " 2>/dev/null", dir, cwd);
    int rc = test_capture(cmd, text, sizeof text);
    test_rm_tree(dir);
    cr_assert_eq(rc, 0, "gcc -E failed on:\n%s", src);
    return strlen(text);
}

static int pre(const char *src) {
    size_t n = preprocess(src);
    return pre_n(text, n, NAME);
}

static void pre_refused(const char *src, int line, const char *what) {
    cr_expect_eq(pre(src), -1, "the preprocessed check must refuse:\n%s", src);
    expect_message(src, line, what);
}

static void pre_accepted(const char *src) {
    cr_expect_eq(pre(src), 0, "the preprocessed check must accept:\n%s\ngot: %s", src, err);
}

static void both_accepted(const char *src) {
    accepted(src);
    pre_accepted(src);
}

TestSuite(tokens, .timeout = 120);

/* ---- the source check: inline assembly however it is spelled --------------------------------------------- */

Test(tokens, asm_in_every_spelling) {
    refused("void f(void) { asm(\"nop\"); }\n", 1, "inline assembly (asm)");
    refused("#include \"pp.h\"\n\n__asm__(\".incbin \\\"/etc/hostname\\\"\");\n", 3, "inline assembly (__asm__)");
    refused("int x;\nvoid f(void) { __asm volatile(\"\"); }\n", 2, "inline assembly (__asm)");
    refused("void f(void) { a\\\nsm(\"nop\"); }\n", 1, "inline assembly (asm)");          /* a splice */
    refused("void f(void) { a\\  \t\nsm(\"nop\"); }\n", 1, "inline assembly (asm)");     /* blanks before it */
    refused("void f(void) { a\\\r\nsm(\"nop\"); }\n", 1, "inline assembly (asm)");       /* \r\n */
    refused("int x;\nvoid f(void) { a?\?/\nsm(\"nop\"); }\n", 2, "inline assembly (asm)"); /* ??/ is \ */
    refused("void f(void) { __a\\\ns\\\nm__(\"\"); }\n", 1, "inline assembly (__asm__)");
    refused("void f(void) { \\u0061sm(\"nop\"); }\n", 1, "inline assembly (asm)");      /* a UCN of 'a' */
    refused("int my$asm;\n", 1, "inline assembly (asm)");                                /* gcc may split it */
    refused("int \xc2\xa0" "asm(\"nop\");\n", 1, "inline assembly (asm)");               /* a stray U+00A0 */
    refused("int x = 1\xc2\xa0" "asm(\"nop\");\n", 1, "inline assembly (asm)");          /* after a number */
    refused("#define A asm\n", 1, "inline assembly (asm)");                              /* in a macro */
    refused("#if defined(asm)\n#endif\n", 1, "inline assembly (asm)");
    refused("int x __asm__(\"printf\");\n", 1, "inline assembly (__asm__)");             /* an asm label */
    refused("int x;\n/* a\ncomment */ __asm__(\"\");\n", 3, "inline assembly (__asm__)");
    refused("int a;\r\nint b;\r\nasm(\"\");\r\n", 3, "inline assembly (asm)");
    refused("int a;\rint b;\rasm(\"\");\r", 3, "inline assembly (asm)");                 /* a lone \r is a newline */
}

Test(tokens, exact_message) {
    cr_assert_eq(raw("#include \"pp.h\"\n\n/* x */\n\n__asm__(\"nop\");\n"), -1);
    cr_expect_str_eq(err, "refused: 02-gpipe/gpipe.c:5: inline assembly (__asm__) is not allowed in a lab file: "
                          "write the schedule in plain C");
}

Test(tokens, pragma_and_has_include) {
    refused("_Pragma(\"weak x\")\n", 1, "_Pragma is not allowed");
    refused("_Pra\\\ngma(\"weak x\")\n", 1, "_Pragma is not allowed");
    refused("#define P _Pragma(\"GCC poison x\")\n", 1, "_Pragma is not allowed");
    refused("#if __has_include(\"/etc/passwd\")\n#endif\n", 1, "__has_include is not allowed");
    refused("#if __has_include_next(<stdio.h>)\n#endif\n", 1, "__has_include_next is not allowed");
    refused("#define Q __has_include\n", 1, "__has_include is not allowed");
    refused("__declspec(dllexport) int x;\n", 1, "__declspec is not allowed");
    /* glibc's macro runs a pragma that the preprocessor consumes: nothing of it reaches the preprocessed text */
    refused("#include <stdio.h>\n__glibc_macro_warning1(GCC dependency \"/etc/passwd\")\n", 2,
            "__glibc_macro_warning1 is not allowed");
}

Test(tokens, token_pasting) {
    /* gcc takes a pasted __has_include for the real one inside an #if, where no later check looks */
    refused("#define P(a, b) a##b\n#if P(__has_, include)(\"/etc/passwd\")\n#endif\n", 1, "token pasting (##)");
    refused("#define P(a, b) a %:%: b\n", 1, "token pasting (%:%:)");
    refused("#define P(a, b) a #\\\n# b\n", 1, "token pasting (##)");
}

/* ---- directives ------------------------------------------------------------------------------------------ */

Test(tokens, directives_refused_however_introduced) {
    refused("#pragma weak x\n", 1, "the directive #pragma is not allowed");
    refused("int x;\n?\?=pragma weak x\n", 2, "the directive #pragma");
    refused("%:pragma weak x\n", 1, "the directive #pragma");
    refused("/* */ # pragma weak x\n", 1, "the directive #pragma");
    refused("# /* a\n b */ pragma weak x\n", 2, "the directive #pragma");   /* a comment does not end it */
    refused("int x; /* a\n*/ # pragma weak x\n", 2, "the directive #pragma"); /* a newline in a comment */
    refused("int x;\r#pragma weak x\n", 2, "the directive #pragma");        /* a lone \r */
    refused("int x;\n\f \v\t#pragma weak x\n", 2, "the directive #pragma");
    refused("#\\\npragma weak x\n", 2, "the directive #pragma");
    refused("#pra\\\ngma weak x\n", 1, "the directive #pragma");
    refused("#if 0\n#pragma weak x\n#endif\n", 2, "the directive #pragma");  /* skipped groups too */
    refused("#pragma redefine_extname pp_gpipe_step fopen\n", 1, "#pragma");
    refused("#pragma GCC system_header\nasm(\"\");\n", 1, "#pragma");
    refused("#/**/line 1 \"x\"\n", 1, "the directive #line is not allowed");
    refused("#line 1 \"/usr/include/stdio.h\"\nasm(\"nop\");\n", 1, "#line");
    refused("# 1 \"/usr/include/stdio.h\"\n", 1, "a line marker (# 1)");
    refused("#1\"/usr/include/stdio.h\" 3\n", 1, "a line marker");
    refused("#ident \"x\"\n", 1, "#ident");
    refused("#sccs \"x\"\n", 1, "#sccs");
    refused("#include_next <stdio.h>\n", 1, "#include_next");
    refused("#import <stdio.h>\n", 1, "#import");
    refused("#assert machine(x86)\n", 1, "#assert");
    refused("#unassert machine\n", 1, "#unassert");
    refused("#warning hello\n", 1, "#warning");
    refused("#embed \"/etc/passwd\"\n", 1, "#embed");
    refused("#frobnicate\n", 1, "#frobnicate");
    refused("#\"x\"\n", 1, "the directive #\"x\"");
    refused("#pragma\xe2\x80\x8b weak x\n", 1, "#pragma\\xe2\\x80\\x8b");   /* bytes shown, not sent */
    refused("\xef\xbb\xbf#pragma weak x\n", 1, "#pragma");                    /* gcc skips a leading BOM */
    refused("#a123456789b123456789c123456789d123456789e123456789\n", 1,
            "#a123456789b123456789c123456789d123456789... is not allowed");   /* long names are cut */
}

Test(tokens, directives_allowed) {
    accepted("#include <stdio.h>\n#include \"pp.h\"\n#include/**/<stdint.h>\n# include <sys/types.h>\n");
    accepted("#define X 1\n#undef X\n#ifdef X\n#elif defined(Y) && Y > 2\n#else\n#endif\n#ifndef Z\n#endif\n");
    accepted("#if 1\n#elifdef A\n#elifndef B\n#endif\n#error stop here\n");
    accepted("#\n# \n#/* nothing */\n");                                   /* null directives */
    accepted("?\?=define X 1\n%:define Y 2\n%:include <stdio.h>\n");
    both_accepted("#define X 1 \\\n  + 2 \\\r\n  + 3\n#define S(x) #x\nconst char *s = S(a);\n");
    accepted("#define _POSIX_C_SOURCE 199309L\n#define _GNU_SOURCE\n#undef _GNU_SOURCE\n");
    /* only pp.h and the standard headers, named as written */
    refused("#include <asm/unistd.h>\n", 1, "#include <asm/unistd.h> is not allowed in a lab file");
    refused("#include <criterion/criterion.h>\n", 1, "#include <criterion/criterion.h> is not allowed");
    refused("#include \"runtime.h\"\n", 1, "#include \"runtime.h\" is not allowed");
    refused("#define H <stdio.h>\n#include H\n", 2, "#include of a macro's expansion is not allowed");
    accepted("\xef\xbb\xbf#include <stdio.h>\nint x\xef\xbb\xbf;\n");
}

Test(tokens, header_names) {
    refused("#include <stdio.h\nint x;\n", 1, "an unterminated header name");
    refused("#include \"pp.h\nint x;\n", 1, "an unterminated header name");
    /* gcc reads <x/ *> (without the blank) as a header name, but as the start of a comment outside a directive */
    refused("#include <x/*>\nint x;\n", 1, "the header name <x/*> holds characters");
    refused("#include \"a\\\" asm(\"nop\") \"\n", 1, "the header name \"a\\\"");
    refused("#include <a b>\n", 1, "holds characters");
}

/* ---- attributes ------------------------------------------------------------------------------------------ */

Test(tokens, attributes_refused) {
    refused("__attribute__((section(\".x\"))) int x;\n", 1, "the attribute section is not allowed");
    refused("__attribute__((__section__(\".x\"))) int x;\n", 1, "the attribute __section__ is not allowed");
    refused("void g(void);\nvoid f(void) __attribute__((unused, alias(\"g\")));\n", 2, "the attribute alias");
    refused("int x __attribute((weak));\n", 1, "the attribute weak");
    refused("int x __attribute__ ( ( aligned(8) ,\n visibility(\"default\") ) );\n", 2, "the attribute visibility");
    refused("int x __attribute__((aligned(__alignof__(int)), section(\"x\")));\n", 1, "the attribute section");
    const char *bad[] = {"alias", "weakref", "weak", "symver", "visibility", "ifunc", "constructor", "destructor",
                         "target_clones", "target", "naked", "externally_visible", "copy", "common", "nocommon",
                         "tls_model", "init_priority", "optimize", "no_reorder", "retain", "noinit", "persistent",
                         "section", "__constructor__", "noplt", "interrupt", "no_instrument_function", "S"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char src[256], what[128];
        snprintf(src, sizeof src, "int x __attribute__((unused, %s(\"x\")));\n", bad[i]);
        snprintf(what, sizeof what, "the attribute %s is not allowed", bad[i]);
        refused(src, 1, what);
    }
    /* a name given by a macro is read here as the macro's name */
    refused("#define S section\nint x __attribute__((S(\".x\")));\n", 2, "the attribute S");
}

Test(tokens, attribute_lists_written_out) {
    refused("#define A __attribute__\n", 1, "__attribute__ without a written-out list");
    refused("#define A(x) __attribute__(x)\n", 1, "__attribute__ without a written-out list");
    refused("#if X __attribute((unused\n#endif\n", 1, "does not close before the end of its directive");
    refused("int x __attribute__((unused,\n#define X\n section(\".x\")));\n", 1, "does not close before a directive");
    refused("int x __attribute__((aligned(8\n#if 0\n(\n#endif\n), section(\".x\")));\n", 1,
            "does not close before a directive");
    refused("int x __attribute__((unused", 1, "the file ends inside an __attribute__((...)) list");
    refused("int x __attribute__((unused) y);\n", 1, "not closed by ))");
    refused("int x __attribute__((\"section\"));\n", 1, "\"section\" in an __attribute__((...)) list");
    refused("int x __attribute__((unused::section));\n", 1, ": in an __attribute__((...)) list");
    refused("int x$__attribute__((section(\".x\")));\n", 1, "holds the keyword __attribute__");
    refused("int x __attribute__((aligned(__attribute__((unused)) 8)));\n", 1, "inside the arguments of another");
}

Test(tokens, attributes_allowed) {
    both_accepted("__attribute__((unused)) static int x;\n");
    both_accepted("__attribute__((aligned(64))) static char b[64];\n");
    both_accepted("static int y __attribute__((__aligned__(64), __unused__));\n");
    both_accepted("static int z __attribute__(());\nstatic int w __attribute__((, unused,));\n");
    both_accepted("void f(const char *, ...) __attribute__((format(printf, 1, 2), nonnull(1)));\n");
    both_accepted("static inline __attribute__((always_inline, const)) int g(int a) { return a; }\n");
    both_accepted("static void h(int *p) { int q __attribute__((cleanup(h))) = 0; (void)q; (void)p; }\n");
    both_accepted("typedef float v4 __attribute__((vector_size(16), may_alias));\n");
    both_accepted("__attribute__((noreturn, cold, noinline, used)) static void die(void) { for (;;) {} }\n");
    both_accepted("#define UNUSED __attribute__((unused))\nUNUSED static int u;\n");
    both_accepted("_Alignas(64) static char buf[64];\n_Static_assert(sizeof(int) == 4, \"int\");\n");
}

Test(tokens, c2x_attributes) {
    refused("[[gnu::section(\".x\")]] int x;\n", 1, "a [[...]] attribute is not allowed");
    refused("<:<:gnu::weak:>:> int x;\n", 1, "a [[...]] attribute");
    refused("int x;\n[ /* */ [gnu::weak]] int y;\n", 2, "a [[...]] attribute");
    refused("<:[gnu::weak]:> int x;\n", 1, "a [[...]] attribute");
    refused("[\n#define X 1\n[gnu::weak]] int x;\n", 1, "a [[...]] attribute");   /* around a directive */
    both_accepted("int a<:3:> = <%1, 2, 3%>;\nint f(void) <% return a<:a<:0:>:>; %>\n");
    accepted("int a[3], b[2];\nint g(void) { return a[b[0]] + a[ (b[1]) ]; }\n");
}

/* ---- macros a header could expand -------------------------------------------------------------------------- */

Test(tokens, macro_names_and_balance) {
    refused("#define __STDC_VERSION__ 1\n", 1, "#define of the reserved name __STDC_VERSION__");
    refused("#define _Foo 1\n", 1, "the reserved name _Foo");
    refused("#undef __x86_64__\n", 1, "#undef of the reserved name __x86_64__");
    refused("#define __pure__ section(\".x\")\n", 1, "the reserved name __pure__");
    /* pp.h declares pp_fail with __attribute__((format(printf, 2, 3), noreturn)) */
    refused("#define noreturn section(\".x\")\n#include \"pp.h\"\n", 1,
            "#define of noreturn, the name of an attribute");
    refused("#define format(...) alias(\"f\")\n", 1, "#define of format");
    refused("#define printf printf, 2, 3), section(\".x\"), format(printf\n", 1, "does not balance its parentheses");
    refused("#define OPEN (\n", 1, "the macro OPEN does not balance its parentheses");
    refused("#define CLOSE ] [\n", 1, "does not balance its brackets");
    refused("#define L <:\n", 1, "does not balance its brackets");
    accepted("#define MAX(a, b) ((a) > (b) ? (a) : (b))\n#define AT(x, i) (x)[i]\n#define BEGIN {\n#define END }\n");
    accepted("#define _GNU_SOURCE 1\n#define UNUSED_X 1\n#define section 3\n#define weak(x) (x)\n");
}

/* ---- ordinary names and text that only look like the refused ones ----------------------------------------- */

Test(tokens, lookalikes_accepted) {
    both_accepted("int section = 3;\nvoid line(void) {}\nstatic int weak, alias, pragma, visibility, constructor;\n"
             "int f(void) { return section + weak + alias + pragma + visibility + constructor; }\n"
             "struct asmx { int include, define, ident; } has_include, attribute__;\nint asm_count, _asm, asm_;\n");
    both_accepted("const char *s = \"asm(\\\"nop\\\") #pragma weak __attribute__((section)) [[x]] ## __has_include\";\n"
             "const char *t = \"?\?=pragma ?\?( asm\";\nchar c = '#', d = '\\'', e = '\"';\n"
             "const char *u = u8\"asm\", *v = L\"asm\";\n");
    both_accepted("/* __attribute__((section(\".x\"))) asm(\"nop\") #pragma weak [[ ## */\n"
             "// #pragma weak x __asm__ \\\n   still a comment: asm\nint x; /* multi\n line */ int y;\n");
    both_accepted("int caf\xc3\xa9 = 1; /* \xe2\x9c\x93 */ const char *w = \"\xe2\x9c\x93\";\n");
    both_accepted("double d = 1.e+5, e = 0x1p-3, f = .5;\nint g = 0xasm;\n");    /* a pp-number, not an identifier */
    both_accepted("");
}

/* ---- lexical problems ------------------------------------------------------------------------------------- */

Test(tokens, unterminated_and_odd_bytes) {
    cr_expect_eq(raw_n("int x;\nint y;\0\n", 15), -1);
    expect_message("(NUL)", 2, "a NUL byte is not allowed");
    refused("int x; /* no end\n\n", 1, "an unterminated /* comment");
    refused("int x;\nconst char *s = \"no end;\n", 2, "an unterminated string literal");
    refused("char c = 'x;\n", 1, "an unterminated character constant");
    refused("const char *s = L\"no end\n", 1, "an unterminated string literal");
    refused("const char *s = \"a\\\n", 1, "an unterminated string literal");
    refused("const char *s = R\"x(\n)x\";\n", 1, "a raw string literal");
    refused("const char *s = u8R\"(a)\";\n", 1, "a raw string literal");
    accepted("int x; @ ` \\ \x01 \x7f\n");                                  /* stray bytes are gcc's to refuse */
}

Test(tokens, message_buffer) {
    char small[24];
    cr_expect_eq(pp__tokens_check_source("asm", 3, NAME, small, sizeof small), -1);
    cr_expect_eq(strlen(small), sizeof small - 1, "truncated to fit: %s", small);
    cr_expect_eq(pp__tokens_check_source("asm", 3, NAME, NULL, 0), -1);
    cr_expect_eq(pp__tokens_check_preprocessed("asm", 3, NAME, NULL, 0), -1);
    cr_expect_eq(pp__tokens_check_source("", 0, NAME, small, sizeof small), 0);
}

/* ---- the preprocessed check, on gcc's own output ------------------------------------------------------------ */

Test(tokens, preprocessed_sees_what_macros_build) {
    pre_refused("#define CAT(a, b) a##b\nvoid f(void) { CAT(as, m)(\"nop\"); }\n", 2, "inline assembly (asm)");
    pre_refused("#define CAT(a, b) a##b\n\nvoid f(void) { CAT(__as, m__)(\"nop\"); }\n", 3, "(__asm__)");
    pre_refused("#define CAT(a, b) a##b\nint x;\nCAT(_Pra, gma)(\"weak foo\")\nint y;\n", 3,
                "the line #pragma weak foo");
    pre_refused("#define CAT(a, b) a##b\n#define S CAT(sec, tion)\nint x __attribute__((S(\".x\")));\n", 3,
                "the attribute section");
    pre_refused("#define unused section\nint x __attribute__((unused(\".x\")));\n", 2, "the attribute section");
    pre_refused("#define RP )\nint x __attribute__((aligned(8 RP, section(\".x\"))));\n", 2, "the attribute section");
    pre_refused("#define A __attribute__\nint x A((weak));\n", 2, "the attribute weak");
    pre_refused("#define L [\nL[gnu::weak]] int x;\n", 2, "a [[...]] attribute");
    pre_refused("#define H # 1 \"/usr/include/stdio.h\"\nH\nint x;\n", 2, "a stray #");
    pre_refused("#define H(x) x\nH(%:) int x;\n", 2, "a stray %:");
    pre_refused("#pragma weak x\n", 1, "the line #pragma weak x");
    pre_refused("#if 1\nint x;\n#else\nint y;\n#endif\n#ident \"x\"\n", 6, "the line #ident");
}

Test(tokens, preprocessed_sees_header_macros_on_student_lines) {
    /* glibc's own macros, expanded on the student's line: an asm label, a copy attribute */
    pre_refused("#include <stdio.h>\n\nint __REDIRECT(my_puts, (const char *), puts);\n", 3,
                "inline assembly (__asm__)");
    pre_refused("#include <stdio.h>\nextern int y __attribute_copy__(puts);\n", 2, "the attribute __copy__");
    pre_refused("#include <stdio.h>\n\n\nvoid f(void) {\n    __asm__(\"nop\");\n}\n", 5, "(__asm__)");
    pre_refused("#include <stdio.h>\nvoid f(void) {\n  puts(\"a\");\n#include <stdio.h>\n  asm(\"\");\n}\n", 5,
                "(asm)");
    /* headers' own lines are theirs: stdio.h holds asm labels and attributes that a lab file could not */
    pre_accepted("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n#include \"pp.h\"\n"
                 "int f(void) { printf(\"%d\", 1); return (int)sqrt(4.0) + (int)strlen(\"x\"); }\n");
    pre_accepted("#include <assert.h>\n#include <stddef.h>\nint g(int *p) { assert(p != NULL); return 0; }\n"
                 "__attribute__((unused)) static int u;\nint a<:2:>;\n");
}

/* Hand-made cc -E text: which lines are the student's. */
Test(tokens, preprocessed_line_markers) {
    const char *t1 = "# 0 \"" NAME "\"\n# 1 \"/usr/include/stdio.h\" 1 3 4\nextern int y __asm__(\"z\");\n"
                     "# 3 \"" NAME "\" 2\nint z;\n\nasm(\"\");\n";
    cr_expect_eq(pre_n(t1, strlen(t1), NAME), -1);
    expect_message(t1, 5, "inline assembly (asm)");
    const char *t2 = "# 1 \"02-gpipe/gpipe.c.h\"\nasm(\"\");\n# 1 \"02-gpipe/gpipe\"\nasm(\"\");\n";
    cr_expect_eq(pre_n(t2, strlen(t2), NAME), 0, "%s", err);
    const char *t3 = "# 7 \"a\\\"b\\\\c\\101.c\"\nint x;\nasm(\"\");\n";     /* gcc's escapes: a"b\cA.c */
    cr_expect_eq(pre_n(t3, strlen(t3), "a\"b\\cA.c"), -1);
    cr_expect(strstr(err, ":8: inline assembly"), "%s", err);
    const char *t4 = "asm(\"\");\n# 1 \"x.c\"\n";                          /* before any marker: the student's */
    cr_expect_eq(pre_n(t4, strlen(t4), NAME), -1);
    const char *t5 = "# 1 \"" NAME "\"\nint a[\n# 1 \"h.h\" 1\n# 2 \"" NAME "\" 2\n[gnu::weak]];\n";
    cr_expect_eq(pre_n(t5, strlen(t5), NAME), -1);
    cr_expect(strstr(err, ":1: a [[...]] attribute"), "%s", err);
    const char *t6 = "# 1 \"" NAME "\"\nint x __attribute__((unused,\n# 1 \"h.h\" 1\n# 2 \"" NAME "\" 2\nweak));\n";
    cr_expect_eq(pre_n(t6, strlen(t6), NAME), -1);
    cr_expect(strstr(err, "does not close before lines of another file"), "%s", err);
    const char *t7 = "# 1 \"" NAME "\"\n # 1 \"/usr/include/stdio.h\"\nasm(\"\");\n";
    cr_expect_eq(pre_n(t7, strlen(t7), NAME), -1);
    cr_expect(strstr(err, ":1: a stray #"), "%s", err);
    const char *t8 = "# 1 \"" NAME "\"\nint x;\0\n";
    cr_expect_eq(pre_n(t8, strlen(t8) + 2, NAME), -1);
    cr_expect(strstr(err, ":1: a NUL byte"), "%s", err);
}

/* ---- every real lab file passes both ------------------------------------------------------------------------ */

static int nfiles, nfailed;

static int check_file(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)ftw;
    size_t len = strlen(path);
    if (flag != FTW_F || len < 2 || strcmp(path + len - 2, ".c")) return 0;
    nfiles++;
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (pp__tokens_check_source(buf, n, path, err, sizeof err)) {
        cr_log_error("%s: the source check refused it: %s", path, err);
        nfailed++;
        return 0;
    }
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof cmd, "gcc -std=c11 -E -O1 -fPIC -I lib '%s' 2>/dev/null", path);
    cr_assert_eq(test_capture(cmd, text, sizeof text), 0, "gcc -E %s", path);
    if (pp__tokens_check_preprocessed(text, strlen(text), path, err, sizeof err)) {
        cr_log_error("%s: the preprocessed check refused it: %s", path, err);
        nfailed++;
    }
    return 0;
}

Test(tokens, every_lab_file_passes_both) {
    const char *dirs[] = {"solutions", "labs", "tests/valid", "tests/broken"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        int before = nfiles;
        cr_assert_eq(nftw(dirs[i], check_file, 16, FTW_PHYS), 0, "cannot walk %s (run from the project root)", dirs[i]);
        cr_expect_gt(nfiles, before, "no .c file under %s", dirs[i]);
    }
    cr_log_info("%d files checked", nfiles);
    cr_expect_eq(nfailed, 0, "%d of %d lab files were refused (see the log)", nfailed, nfiles);
}

/* The hostile submissions that the build refused by their text are refused for what they are. */
Test(tokens, hostile_sources) {
    const struct { const char *dir, *what; } cases[] = {
        {"asm-incbin", "inline assembly (__asm__)"}, {"section-incbin", "the attribute section"},
        {"constructor", "the attribute constructor"}, {"ifunc", "the attribute ifunc"},
        {"preinit", "the attribute section"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/hostile/%s/02-gpipe/gpipe.c", cases[i].dir);
        size_t n;
        FILE *f = fopen(path, "rb");
        cr_assert(f, "%s", path);
        static char buf[1 << 16];
        n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        cr_expect_eq(pp__tokens_check_source(buf, n, path, err, sizeof err), -1, "%s", path);
        cr_expect(strstr(err, cases[i].what), "%s: %s", path, err);
    }
}

/* ---- fuzz: never a crash, never a read past the end, always one line --------------------------------------- */

static void check_any(const char *s, size_t n) {
    char *copy = malloc(n ? n : 1);
    memcpy(copy, s, n);
    char e[256];
    for (int which = 0; which < 2; which++) {
        e[0] = 0;
        int rc = which ? pp__tokens_check_preprocessed(copy, n, NAME, e, sizeof e)
                       : pp__tokens_check_source(copy, n, NAME, e, sizeof e);
        cr_assert(rc == 0 || rc == -1);
        if (rc) cr_assert(!strncmp(e, "refused: " NAME ":", strlen("refused: " NAME ":")) && !strchr(e, '\n'), "%s", e);
    }
    free(copy);
}

Test(tokens, fuzz_random_bytes) {
    static const char alphabet[] = "#?\\\n\r\"'/*()[]<>:%,.+-=!$_ \t\f\vaeEpPsmLuUR8__attribute__asm0123456789\x80\xc3";
    tu_rng r = {42};
    char buf[600];
    for (int i = 0; i < 2000; i++) {
        size_t n = (size_t)tu_rng_int(&r, (int)sizeof buf);
        int mode = tu_rng_int(&r, 3);
        for (size_t k = 0; k < n; k++)
            buf[k] = mode == 0 ? (char)tu_rng_int(&r, 256) : alphabet[tu_rng_int(&r, (int)sizeof alphabet - 1)];
        static const char mark[] = "# 1 \"" NAME "\"\n";
        if (mode == 2) memcpy(buf, mark, n < sizeof mark - 1 ? n : sizeof mark - 1); /* the student's lines */
        check_any(buf, n);
    }
}

Test(tokens, fuzz_mutated_solution) {
    FILE *f = fopen("solutions/03-1f1b/onef1b.c", "rb");
    cr_assert(f, "run from the project root");
    static char base[1 << 16], buf[1 << 17];
    size_t n0 = fread(base, 1, sizeof base, f);
    fclose(f);
    cr_assert_eq(raw_n(base, n0), 0, "%s", err);
    static const char *const bits[] = {"?\?/", "\\\n", "\\ \n", "/*", "*/", "//", "\"", "'", "#", "%:", "<:", "[[",
                                       "__attribute__((", "))", "asm", "_Pragma(", "\r", "\n#", "##", "\\u0061",
                                       "u8\"", "R\"(", "#include <", "#define X (", "\xff", "\0"};
    tu_rng r = {7};
    for (int i = 0; i < 2000; i++) {
        size_t n = n0;
        memcpy(buf, base, n);
        for (int m = 1 + tu_rng_int(&r, 4); m > 0; m--) {
            size_t at = (size_t)tu_rng_int(&r, (int)n + 1);
            int op = tu_rng_int(&r, 3);
            if (op == 0 && n + 32 < sizeof buf) { /* insert a piece */
                const char *b = bits[tu_rng_int(&r, (int)(sizeof bits / sizeof *bits))];
                size_t k = *b ? strlen(b) : 1;
                memmove(buf + at + k, buf + at, n - at);
                memcpy(buf + at, b, k);
                n += k;
            } else if (op == 1 && at < n) { /* delete a few bytes */
                size_t k = (size_t)tu_rng_int(&r, 8);
                if (k > n - at) k = n - at;
                memmove(buf + at, buf + at + k, n - at - k);
                n -= k;
            } else if (at < n) {
                buf[at] = (char)tu_rng_int(&r, 256);
            }
        }
        if (i % 2) n = (size_t)tu_rng_int(&r, (int)n + 1); /* cut short, mid-token */
        check_any(buf, n);
    }
}
