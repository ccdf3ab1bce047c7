/* tokens.c: the checks of tokens.h. The raw source goes through translation phases 1 and 2 into a clean copy
 * that remembers each character's physical line; that copy (or, for the preprocessed check, the student's lines
 * of cc -E output) is cut into preprocessing tokens as gcc -std=c11 cuts them (trigraphs on, no raw strings:
 * the build compiles with -std=c11, not a GNU dialect); the rules then look at tokens only. Where this lexer and
 * gcc could disagree, the rules are written so that the disagreement can only make the check stricter (a #
 * after a comment's newline starts a directive here; the parts of a name split by bytes gcc may not join are
 * checked one by one; a header name may hold no character that starts a comment or a literal). */
#include "tokens.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_IDENT, T_NUMBER, T_LITERAL, T_HEADER, T_PUNCT, T_OTHER };

typedef struct tok {
    size_t off, len; /* in the clean text */
    long line;
    int ctx;         /* raw: the directive it is in (index of its # + 1), 0 in plain text; preprocessed: which
                      * stretch of the student's lines (lines of another file end a stretch) */
    unsigned char kind, bol, nl; /* bol: only blanks and comments since a newline, one in a comment too;
                                  * nl: a newline outside comments since the last token (a directive ends) */
} tok;

typedef struct lex {
    char *c;   /* the clean text: phases 1-2 done; '\0' marks where lines of another file were left out */
    long *ln;  /* the physical line of each character */
    size_t n;
    tok *t;
    size_t nt, cap;
    int pre;   /* 1: checking preprocessed text */
    const char *name;
    char *err;
    size_t errlen;
} lex;

#define N(a) (sizeof a / sizeof *a)

static int refuse(lex *x, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(lex *x, long line, const char *fmt, ...) {
    if (!x->err || !x->errlen) return -1;
    int k = snprintf(x->err, x->errlen, "refused: %s:%ld: ", x->name, line);
    if (k >= 0 && (size_t)k < x->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(x->err + k, x->errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int no_memory(lex *x) {
    if (x->err && x->errlen)
        snprintf(x->err, x->errlen, "refused: %s: not enough memory to check it: try again, or hand in a "
                 "smaller file", x->name);
    return -1;
}

/* A token as a message may quote it: at most 40 bytes, anything unprintable as \xHH (a token can hold bytes
 * that a terminal would obey). */
static const char *quote(const lex *x, const tok *t, char *buf, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < t->len && k + 8 < cap; i++) {
        unsigned char ch = (unsigned char)x->c[t->off + i];
        if (i == 40) {
            k += (size_t)snprintf(buf + k, cap - k, "...");
            break;
        }
        if (ch >= 0x20 && ch < 0x7f) buf[k++] = (char)ch;
        else k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", ch);
    }
    buf[k] = 0;
    return buf;
}

static int tok_is(const lex *x, const tok *t, const char *s) {
    return t->len == strlen(s) && !memcmp(x->c + t->off, s, t->len);
}

/* ---- the attribute allow list ------------------------------------------------------------------------------ */

/* Attributes that change diagnostics, optimisation, alignment or layout only. Everything else is refused:
 * what names a section, a symbol or a version, changes visibility or linkage, or runs code at start-up. */
static const char *const attr_ok[] = {
    "access", "aligned", "alloc_align", "alloc_size", "always_inline", "artificial", "assume_aligned", "cleanup",
    "cold", "const", "deprecated", "designated_init", "fallthrough", "flatten", "format", "format_arg", "hot",
    "leaf", "malloc", "may_alias", "maybe_unused", "mode", "noclone", "noinline", "noipa", "nonnull", "nonstring",
    "noreturn", "nothrow", "packed", "pure", "returns_nonnull", "returns_twice", "sentinel", "transparent_union",
    "unavailable", "unused", "used", "vector_size", "warn_unused_result"};

static int attr_allowed(const char *s, size_t n) {
    if (n > 4 && !memcmp(s, "__", 2) && !memcmp(s + n - 2, "__", 2)) s += 2, n -= 4; /* __x__ is x to gcc */
    for (size_t i = 0; i < N(attr_ok); i++)
        if (strlen(attr_ok[i]) == n && !memcmp(attr_ok[i], s, n)) return 1;
    return 0;
}

/* ---- translation phases 1 and 2 ---------------------------------------------------------------------------- */

/* One character of phase 1 at s[i]: a trigraph's replacement, '\n' for \r\n or a lone \r (gcc's newlines), or
 * the byte itself; *adv is how many bytes it took. */
static char phase1(const char *s, size_t n, size_t i, size_t *adv) {
    *adv = 1;
    if (s[i] == '\r') {
        if (i + 1 < n && s[i + 1] == '\n') *adv = 2;
        return '\n';
    }
    if (s[i] == '?' && i + 2 < n && s[i + 1] == '?') {
        static const char from[] = "=(/)'<!>-", to[] = "#[\\]^{|}~";
        const char *k = memchr(from, s[i + 2], sizeof from - 1);
        if (k) {
            *adv = 3;
            return to[k - from];
        }
    }
    return s[i];
}

static int is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\f' || ch == '\v'; }

/* Phases 1 and 2 of src into x->c: a backslash, then blanks (gcc allows them, with a warning), then a newline is
 * removed. A NUL byte is refused: gcc reads on past one, but a lab file never holds one. A UTF-8 byte order
 * mark that starts the file is dropped, as gcc drops it (read as a name, it would hide a # after it). */
static int clean(lex *x, const char *s, size_t n) {
    x->c = malloc(n + 1), x->ln = malloc((n + 1) * sizeof *x->ln);
    if (!x->c || !x->ln) return no_memory(x);
    long line = 1;
    size_t i = n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3) ? 3 : 0, k = 0, a, b;
    while (i < n) {
        char ch = phase1(s, n, i, &a);
        if (ch == '\0') return refuse(x, line, "a NUL byte is not allowed in a lab file: save it as plain text");
        if (ch == '\\') {
            size_t j = i + a;
            char d = 0;
            while (j < n && is_blank(d = phase1(s, n, j, &b))) j += b;
            if (j < n && d == '\n') {
                i = j + b, line++;
                continue;
            }
        }
        x->c[k] = ch, x->ln[k++] = line;
        if (ch == '\n') line++;
        i += a;
    }
    x->n = k;
    x->c[k] = 0; /* a sentinel for the punctuator match, which may look one past the end */
    return 0;
}

/* ---- phase 3: preprocessing tokens ------------------------------------------------------------------------- */

static char at(const lex *x, size_t p) { return p < x->n ? x->c[p] : 0; }
static int is_digit(char ch) { return ch >= '0' && ch <= '9'; }
static int is_hex(char ch) { return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'); }
/* letters, digits, _, $ and every byte of a multi-byte UTF-8 character */
static int is_idchar(char ch) {
    unsigned char u = (unsigned char)ch;
    return is_digit(ch) || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u == '$' || u >= 0x80;
}

/* The length of a universal character name \uXXXX or \UXXXXXXXX at p, or 0. */
static size_t ucn_len(const lex *x, size_t p) {
    if (at(x, p) != '\\' || (at(x, p + 1) != 'u' && at(x, p + 1) != 'U')) return 0;
    size_t k = at(x, p + 1) == 'u' ? 4 : 8;
    for (size_t i = 0; i < k; i++)
        if (!is_hex(at(x, p + 2 + i))) return 0;
    return k + 2;
}

static size_t ident_end(const lex *x, size_t p) {
    for (size_t u;;) {
        if (p < x->n && is_idchar(x->c[p])) p++;
        else if ((u = ucn_len(x, p))) p += u;
        else return p;
    }
}

/* The end of the string literal or character constant whose quote is at q (a backslash escapes the next
 * character, but never a newline), or 0 if the line ends first. */
static size_t literal_end(const lex *x, size_t q) {
    char quote = x->c[q];
    for (size_t e = q + 1; e < x->n; e++) {
        if (x->c[e] == '\n' || x->c[e] == '\0') return 0;
        if (x->c[e] == quote) return e + 1;
        if (x->c[e] == '\\' && at(x, e + 1) != '\n' && at(x, e + 1) != '\0') e++;
    }
    return 0;
}

static const char *const puncts[] = {"%:%:", "...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==",
                                     "!=", "&&", "||", "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##", "<:",
                                     ":>", "<%", "%>", "%:"};

static int is_hash(const lex *x, const tok *t) {
    return t->kind == T_PUNCT && (tok_is(x, t, "#") || tok_is(x, t, "%:"));
}

/* 1 when the next token is the one after `# include` (or the refused include_next and import), which gcc
 * lexes as a header name when it starts with < or ". */
static int header_next(const lex *x, int nl) {
    if (x->pre || nl || x->nt < 2) return 0;
    const tok *d = &x->t[x->nt - 1], *h = &x->t[x->nt - 2];
    return !d->nl && h->bol && is_hash(x, h) &&
           (tok_is(x, d, "include") || tok_is(x, d, "include_next") || tok_is(x, d, "import"));
}

/* A header name's extent. Its characters are kept to those of plain file names, none of which starts a
 * comment or a literal, so that text read here as a header name reads as harmless tokens to gcc if gcc does
 * not take the line for a directive (see the top of this file). */
static int header_name(lex *x, size_t p, size_t *end) {
    char close = x->c[p] == '<' ? '>' : '"';
    size_t e = p + 1;
    while (e < x->n && x->c[e] != close && x->c[e] != '\n') e++;
    if (e >= x->n || x->c[e] != close)
        return refuse(x, x->ln[p], "an unterminated header name: close it with %c on the same line", close);
    for (size_t i = p + 1; i < e; i++) {
        char ch = x->c[i], q[200];
        int plain = (is_idchar(ch) && (unsigned char)ch < 0x80 && ch != '$') || (ch && strchr("./+-", ch));
        tok h = {p, e + 1 - p, x->ln[p], 0, T_HEADER, 0, 0};
        if (!plain || (ch == '/' && (x->c[i + 1] == '/' || x->c[i + 1] == '*')))
            return refuse(x, h.line, "the header name %s holds characters a header's name never needs: name "
                          "pp.h or a standard header plainly", quote(x, &h, q, sizeof q));
    }
    *end = e + 1;
    return 0;
}

static int push(lex *x, tok t) {
    if (x->nt == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 1024;
        tok *nt = realloc(x->t, cap * sizeof *nt);
        if (!nt) return no_memory(x);
        x->t = nt, x->cap = cap;
    }
    x->t[x->nt++] = t;
    return 0;
}

static int unterminated(lex *x, long line, char quote) {
    return refuse(x, line, "an unterminated %s: close it with %c on the same line",
                  quote == '"' ? "string literal" : "character constant", quote);
}

static int tokenize(lex *x) {
    int bol = 1, nl = 1, ctx = 1;
    for (size_t p = 0, e; p < x->n; p = e) {
        char ch = x->c[p];
        e = p + 1;
        if (ch == '\n' || ch == '\0') {
            bol = nl = 1;
            ctx += ch == '\0';
            continue;
        }
        if (is_blank(ch)) continue;
        if (ch == '/' && at(x, p + 1) == '*') {
            for (e = p + 2; e < x->n && !(x->c[e] == '*' && at(x, e + 1) == '/'); e++) {
                bol |= x->c[e] == '\n' || x->c[e] == '\0';
                ctx += x->c[e] == '\0';
            }
            if (e >= x->n) return refuse(x, x->ln[p], "an unterminated /* comment: close it with */");
            e += 2;
            continue;
        }
        if (ch == '/' && at(x, p + 1) == '/') {
            while (e < x->n && x->c[e] != '\n' && x->c[e] != '\0') e++;
            continue;
        }
        tok t = {p, 0, x->ln[p], x->pre ? ctx : 0, T_PUNCT, (unsigned char)bol, (unsigned char)nl};
        if ((ch == '<' || ch == '"') && header_next(x, nl)) {
            t.kind = T_HEADER;
            if (header_name(x, p, &e)) return -1;
        } else if ((is_idchar(ch) && !is_digit(ch)) || ucn_len(x, p)) {
            t.kind = T_IDENT;
            e = ident_end(x, p);
            size_t k = e - p;
            const char *s = x->c + p;
            char q = at(x, e);
            int prefix = (k == 1 && strchr("LuU", s[0])) || (k == 2 && !memcmp(s, "u8", 2));
            if (q == '"' && ((k == 1 && s[0] == 'R') || (k == 2 && strchr("LuU", s[0]) && s[1] == 'R') ||
                             (k == 3 && !memcmp(s, "u8R", 3))))
                return refuse(x, t.line, "a raw string literal (R\"...\") is not C11: write an ordinary string "
                              "literal");
            if ((q == '"' && prefix) || (q == '\'' && prefix && k == 1)) {
                t.kind = T_LITERAL;
                if (!(e = literal_end(x, e))) return unterminated(x, t.line, q);
            }
        } else if (is_digit(ch) || (ch == '.' && is_digit(at(x, p + 1)))) {
            t.kind = T_NUMBER;
            for (size_t u;;) {
                char d = at(x, e);
                if ((d == '+' || d == '-') && strchr("eEpP", x->c[e - 1])) e++;
                else if (e < x->n && (is_idchar(d) || d == '.')) e++;
                else if ((u = ucn_len(x, e))) e += u;
                else break;
            }
        } else if (ch == '"' || ch == '\'') {
            t.kind = T_LITERAL;
            if (!(e = literal_end(x, p))) return unterminated(x, t.line, ch);
        } else {
            size_t i = 0;
            for (; i < N(puncts); i++)
                if (!strncmp(x->c + p, puncts[i], strlen(puncts[i])) && p + strlen(puncts[i]) <= x->n) break;
            if (i < N(puncts)) e = p + strlen(puncts[i]);
            else if (!strchr("[](){}.&*+-~!/%<>^|?:;=,#", ch)) t.kind = T_OTHER;
        }
        t.len = e - p;
        if (push(x, t)) return -1;
        bol = nl = 0;
    }
    return 0;
}

/* ---- rules ------------------------------------------------------------------------------------------------- */

/* Names that act before or beyond anything the later checks see: what kind of refusal each is. glibc's
 * sys/cdefs.h (which every libc header includes) hands the argument of __glibc_macro_warning1 to _Pragma, and a
 * pragma that the preprocessor itself runs (GCC dependency "FILE" fails when FILE is missing) leaves nothing in
 * the preprocessed text: so that macro is a _Pragma here. */
enum { B_ASM, B_PRAGMA, B_PROBE, B_DECLSPEC, B_ATTRIBUTE };
static const struct {
    const char *name;
    int kind;
} names[] = {{"asm", B_ASM}, {"__asm", B_ASM}, {"__asm__", B_ASM}, {"_Pragma", B_PRAGMA},
             {"__glibc_macro_warning1", B_PRAGMA}, {"__glibc_macro_warning", B_PRAGMA},
             {"__has_include", B_PROBE}, {"__has_include_next", B_PROBE}, {"__has_include__", B_PROBE},
             {"__has_include_next__", B_PROBE}, {"__declspec", B_DECLSPEC}, {"__attribute__", B_ATTRIBUTE},
             {"__attribute", B_ATTRIBUTE}};

static int part_rule(lex *x, const tok *t, const char *part, size_t k, int whole) {
    char q[200];
    for (size_t i = 0; i < N(names); i++) {
        if (strlen(names[i].name) != k || memcmp(names[i].name, part, k)) continue;
        const char *s = names[i].name;
        switch (names[i].kind) {
        case B_ASM:
            return refuse(x, t->line, "inline assembly (%s) is not allowed in a lab file: write the schedule in "
                          "plain C", s);
        case B_PRAGMA:
            return refuse(x, t->line, "%s is not allowed in a lab file: a schedule needs no pragmas; remove it", s);
        case B_PROBE:
            return refuse(x, t->line, "%s is not allowed in a lab file: it probes which files exist; include "
                          "pp.h and standard headers only", s);
        case B_DECLSPEC:
            return refuse(x, t->line, "%s is not allowed in a lab file: write plain C", s);
        default:
            if (whole) return 1;
            return refuse(x, t->line, "the name %s holds the keyword %s: write __attribute__((...)) on its own",
                          quote(x, t, q, sizeof q), s);
        }
    }
    return 0;
}

static long ucn_value(const lex *x, size_t p, size_t u) {
    long v = 0;
    for (size_t i = 2; i < u; i++) {
        char h = x->c[p + i];
        v = 16 * v + (is_digit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    return v;
}

/* An identifier's rule. Each part between $, bytes >= 0x80 and UCNs beyond ASCII (where gcc may end an
 * identifier, or reject it) is compared on its own, a UCN of an ASCII character read as that character.
 * Returns -1 (refused), 1 for __attribute__ or __attribute spelled plainly, else 0. */
static int ident_rule(lex *x, const tok *t) {
    char part[24];
    size_t k = 0, end = t->off + t->len;
    int whole = 1;
    for (size_t p = t->off, u; p <= end; p += u ? u : 1) {
        u = p < end ? ucn_len(x, p) : 0;
        long v = u ? ucn_value(x, p, u) : p < end ? (unsigned char)x->c[p] : -1;
        if (v >= 0 && v < 0x80 && v != '$') {
            if (k < sizeof part) part[k] = (char)v;
            k++;
            whole &= !u;
            continue;
        }
        whole &= p == end;
        int r = k <= sizeof part ? part_rule(x, t, part, k, whole) : 0;
        if (r) return r;
        k = 0;
    }
    return 0;
}

static int same_ctx(const lex *x, size_t j, int ctx) { return j < x->nt && x->t[j].ctx == ctx; }

/* The token after i that continues the same text: raw plain text skips directives; a directive ends at its
 * line; the preprocessed student text runs on over lines of other files. */
static size_t next_tok(const lex *x, size_t i) {
    size_t j = i + 1;
    if (!x->pre && !x->t[i].ctx)
        while (j < x->nt && x->t[j].ctx) j++;
    return j;
}

/* __attribute__((a, b(args), ...)) at i: each name is on the allow list. The list must be written out and close
 * where it began (in one directive, in plain text with no directive inside, in one stretch of student lines),
 * so that what is read here is what gcc parses. */
static int attribute_rule(lex *x, size_t i) {
    const tok *a = &x->t[i];
    const char *where = x->pre ? "lines of another file" : a->ctx ? "the end of its directive" : "a directive";
    char q[200];
    size_t j = i + 1;
    if (!same_ctx(x, j, a->ctx) || !tok_is(x, &x->t[j], "(") || !same_ctx(x, j + 1, a->ctx) ||
        !tok_is(x, &x->t[j + 1], "("))
        return refuse(x, a->line, "%.*s without a written-out list: write it as __attribute__((name, ...)), with "
                      "the names in this file", (int)a->len, x->c + a->off);
    int depth = 0, name = 1;
    for (j += 2;; j++) {
        if (j >= x->nt)
            return refuse(x, a->line, "the file ends inside an __attribute__((...)) list: close it with ))");
        const tok *t = &x->t[j];
        if (t->ctx != a->ctx)
            return refuse(x, a->line, "an __attribute__((...)) list that does not close before %s: write the "
                          "list out in one piece", where);
        if (depth) {
            /* never needed, and each one nested would make its own scan: quadratic on a hostile file */
            if (tok_is(x, t, "__attribute__") || tok_is(x, t, "__attribute"))
                return refuse(x, t->line, "an attribute list inside the arguments of another: write each "
                              "__attribute__((...)) on its own");
            depth += tok_is(x, t, "(") - tok_is(x, t, ")");
        } else if (tok_is(x, t, ")")) {
            if (same_ctx(x, j + 1, a->ctx) && tok_is(x, &x->t[j + 1], ")")) return 0;
            return refuse(x, a->line, "an __attribute__((...)) list that is not closed by )): write it as "
                          "__attribute__((name, ...))");
        } else if (tok_is(x, t, ",")) {
            name = 1;
        } else if (name && t->kind == T_IDENT) {
            if (!attr_allowed(x->c + t->off, t->len))
                return refuse(x, t->line, "the attribute %s is not allowed in a lab file: use none, or a plain "
                              "one such as unused, aligned or noinline", quote(x, t, q, sizeof q));
            name = 0;
        } else if (!name && tok_is(x, t, "(")) {
            depth = 1;
        } else {
            return refuse(x, t->line, "%s in an __attribute__((...)) list where a name, ',' or ')' goes: write "
                          "it as __attribute__((name, name(arguments), ...))", quote(x, t, q, sizeof q));
        }
    }
}

/* Rules for every token but a directive's name. */
static int token_rule(lex *x, size_t i) {
    const tok *t = &x->t[i];
    char q[200];
    if (t->kind == T_IDENT || t->kind == T_NUMBER) { /* a number too: gcc may end one at a byte >= 0x80 */
        int r = ident_rule(x, t);
        return r > 0 ? attribute_rule(x, i) : r;
    }
    if (t->kind != T_PUNCT) return 0;
    if (tok_is(x, t, "##") || tok_is(x, t, "%:%:"))
        return refuse(x, t->line, "token pasting (%s) is not allowed in a lab file: it can build names the "
                      "build's checks never see (__has_include in an #if); write the names out",
                      quote(x, t, q, sizeof q));
    if (x->pre && is_hash(x, t))
        return refuse(x, t->line, "a stray %s in the preprocessed text (a macro made it): remove it",
                      quote(x, t, q, sizeof q));
    size_t j = next_tok(x, i);
    if ((tok_is(x, t, "[") || tok_is(x, t, "<:")) && j < x->nt && (x->pre || x->t[j].ctx == t->ctx) &&
        (tok_is(x, &x->t[j], "[") || tok_is(x, &x->t[j], "<:")))
        return refuse(x, t->line, "a [[...]] attribute is not allowed in a lab file (they are not C11): use "
                      "__attribute__((...)) with an allowed name, or none");
    return 0;
}

static const char *const directives[] = {"include", "define", "undef", "if", "ifdef", "ifndef", "elif",
                                         "elifdef", "elifndef", "else", "endif", "error"};
/* Reserved names (7.1.3) a lab file may still define: the feature-test macros of glibc and POSIX. */
static const char *const feature_macros[] = {
    "_GNU_SOURCE", "_DEFAULT_SOURCE", "_POSIX_C_SOURCE", "_POSIX_SOURCE", "_XOPEN_SOURCE", "_XOPEN_SOURCE_EXTENDED",
    "_ISOC99_SOURCE", "_ISOC11_SOURCE", "_BSD_SOURCE", "_SVID_SOURCE", "_REENTRANT", "_THREAD_SAFE",
    "_LARGEFILE64_SOURCE", "_FILE_OFFSET_BITS", "_TIME_BITS", "__STDC_WANT_LIB_EXT1__"};

/* The directive whose # is at i. A macro is a student's text that a header's lines, which the preprocessed
 * check skips, may expand: so it may not take a name that a header uses inside an attribute (reserved names,
 * attribute names: pp.h says format(printf, 2, 3), noreturn), and its ( ) and [ ] must balance, so that an
 * argument of such an attribute cannot close the list and open another. */
const char *const pp__tokens_headers[] = {
    "assert.h", "complex.h", "ctype.h",  "errno.h",  "fenv.h",      "float.h",  "inttypes.h",   "iso646.h",
    "limits.h", "locale.h",  "math.h",   "setjmp.h", "signal.h",    "stdalign.h", "stdarg.h",   "stdatomic.h",
    "stdbool.h", "stddef.h", "stdint.h", "stdio.h",  "stdlib.h",    "stdnoreturn.h", "string.h", "tgmath.h",
    "threads.h", "time.h",   "uchar.h",  "wchar.h",  "wctype.h",    "pthread.h", "sched.h",     "strings.h",
    "unistd.h",  "sys/types.h", NULL,
};

/* #include names pp.h as "pp.h", or a header of pp__tokens_headers as <name>, written out. */
static int include_rule(lex *x, const tok *d, size_t j, int ctx) {
    char q[200];
    if (!same_ctx(x, j, ctx) || x->t[j].kind != T_HEADER)
        return refuse(x, d->line, "#include of a macro's expansion is not allowed in a lab file: write the header's "
                      "name out, \"pp.h\" or <stdio.h>");
    const tok *t = &x->t[j];
    const char *s = x->c + t->off;
    size_t n = t->len - 2;
    if (s[0] == '"' && n == 4 && !memcmp(s + 1, "pp.h", 4)) return 0;
    for (size_t k = 0; s[0] == '<' && pp__tokens_headers[k]; k++)
        if (strlen(pp__tokens_headers[k]) == n && !memcmp(s + 1, pp__tokens_headers[k], n)) return 0;
    return refuse(x, t->line, "#include %s is not allowed in a lab file: include \"pp.h\", the C library's standard "
                  "headers, <pthread.h> and <unistd.h> only", quote(x, t, q, sizeof q));
}

static int directive_rule(lex *x, size_t i) {
    const tok *h = &x->t[i];
    size_t j = i + 1;
    char q[200];
    if (!same_ctx(x, j, h->ctx)) return 0; /* the null directive */
    const tok *d = &x->t[j];
    size_t k = 0;
    while (k < N(directives) && !tok_is(x, d, directives[k])) k++;
    if (d->kind == T_NUMBER)
        return refuse(x, d->line, "a line marker (# %s) is not allowed in a lab file: it makes the file's lines "
                      "look like another file's; remove it", quote(x, d, q, sizeof q));
    if (k == N(directives))
        return refuse(x, d->line, "the directive #%s is not allowed in a lab file: use only #include, #define, "
                      "#undef, #if, #ifdef, #ifndef, #elif, #else, #endif and #error", quote(x, d, q, sizeof q));
    if (tok_is(x, d, "include")) return include_rule(x, d, j + 1, h->ctx);
    int define = tok_is(x, d, "define");
    if (!define && !tok_is(x, d, "undef")) return 0;
    if (!same_ctx(x, ++j, h->ctx) || x->t[j].kind != T_IDENT) return 0; /* gcc refuses it */
    const tok *m = &x->t[j];
    const char *s = x->c + m->off;
    int reserved = m->len >= 2 && s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z'));
    for (k = 0; reserved && k < N(feature_macros); k++) reserved = !tok_is(x, m, feature_macros[k]);
    if (reserved)
        return refuse(x, m->line, "#%s of the reserved name %s is not allowed in a lab file: names that start "
                      "with __ or _ and a capital belong to the compiler and the C library; pick another name",
                      define ? "define" : "undef", quote(x, m, q, sizeof q));
    if (define && attr_allowed(s, m->len))
        return refuse(x, m->line, "#define of %s, the name of an attribute, is not allowed in a lab file: it "
                      "would change an attribute in a header; pick another name", quote(x, m, q, sizeof q));
    int paren = 0, bracket = 0;
    for (j++; define && same_ctx(x, j, h->ctx) && paren >= 0 && bracket >= 0; j++) {
        const tok *t = &x->t[j];
        paren += tok_is(x, t, "(") - tok_is(x, t, ")");
        bracket += tok_is(x, t, "[") + tok_is(x, t, "<:") - tok_is(x, t, "]") - tok_is(x, t, ":>");
    }
    if (paren || bracket)
        return refuse(x, m->line, "the macro %s does not balance its %s: a lab file's macros balance ( ) and "
                      "[ ]", quote(x, m, q, sizeof q), paren ? "parentheses" : "brackets");
    return 0;
}

static int run_rules(lex *x) {
    for (size_t i = 0; i < x->nt; i++) {
        const tok *t = &x->t[i];
        if (!x->pre && t->bol && is_hash(x, t)) {
            if (directive_rule(x, i)) return -1;
            if (same_ctx(x, i + 1, t->ctx)) i++; /* the directive's name: checked */
            continue;
        }
        if (token_rule(x, i)) return -1;
    }
    return 0;
}

static int finish(lex *x, int rc) {
    free(x->c);
    free(x->ln);
    free(x->t);
    return rc ? -1 : 0;
}

int pp__tokens_check_source(const char *src, size_t len, const char *name, char *err, size_t errlen) {
    lex x = {0};
    x.name = name, x.err = err, x.errlen = errlen;
    if (clean(&x, src, len) || tokenize(&x)) return finish(&x, -1);
    /* which directive each token is in: a # after only blanks and comments since a newline starts one, a
     * newline outside comments ends it */
    for (size_t i = 0, cur = 0; i < x.nt; i++) {
        tok *t = &x.t[i];
        if (t->bol && is_hash(&x, t)) cur = i + 1;
        else if (t->nl) cur = 0;
        t->ctx = (int)cur;
    }
    return finish(&x, run_rules(&x));
}

/* A line marker `# LINE "FILE" FLAGS` in [s, e), as gcc prints one: *line, and whether FILE (with gcc's escapes:
 * \\, \" and octal) is name. Returns 0 when the line is not a marker. */
static int marker(const char *s, const char *e, const char *name, long *line, int *mine) {
    if (e - s < 5 || memcmp(s, "# ", 2) || !is_digit(s[2])) return 0;
    long v = 0;
    for (s += 2; s < e && is_digit(*s); s++) v = v < 100000000 ? 10 * v + (*s - '0') : v;
    if (e - s < 3 || memcmp(s, " \"", 2)) return 0;
    const char *n = name;
    int same = 1;
    for (s += 2; s < e && *s != '"'; s++) {
        char ch = *s;
        if (ch == '\\' && s + 1 < e) {
            ch = *++s;
            if (ch >= '0' && ch <= '7') {
                int o = 0;
                for (int k = 0; k < 3 && s < e && *s >= '0' && *s <= '7'; k++) o = 8 * o + (*s++ - '0');
                ch = (char)o, s--;
            }
        }
        same = same && *n && *n == ch;
        n += same;
    }
    if (s >= e) return 0;
    for (s++; s < e; s++)
        if (*s != ' ' && !is_digit(*s)) return 0;
    *line = v, *mine = same && !*n;
    return 1;
}

int pp__tokens_check_preprocessed(const char *text, size_t len, const char *name, char *err, size_t errlen) {
    lex x = {0};
    x.name = name, x.err = err, x.errlen = errlen, x.pre = 1;
    x.c = malloc(len + 2), x.ln = malloc((len + 2) * sizeof *x.ln); /* a last line gets its newline */
    if (!x.c || !x.ln) return finish(&x, no_memory(&x));
    /* the student's lines, in order, a '\0' where lines of other files were left out */
    int mine = 1, gap = 0;
    long line = 1;
    for (const char *s = text, *end = text + len, *e; s < end; s = e + (e < end)) {
        e = memchr(s, '\n', (size_t)(end - s));
        if (!e) e = end;
        long at_line;
        int to_mine;
        if (marker(s, e, name, &at_line, &to_mine)) {
            gap |= mine && !to_mine;
            mine = to_mine, line = at_line;
            continue;
        }
        if (mine) {
            if (memchr(s, '\0', (size_t)(e - s)))
                return finish(&x, refuse(&x, line, "a NUL byte is not allowed in a lab file: save it as plain "
                                         "text"));
            if (*s == '#') {
                size_t k = 1;
                while (s + k < e && k < 40 && (unsigned char)s[k] >= 0x20 && (unsigned char)s[k] < 0x7f) k++;
                return finish(&x, refuse(&x, line, "the line %.*s in the preprocessed text (from _Pragma, a "
                                         "macro, or a directive) is not allowed in a lab file: remove it",
                                         (int)k, s));
            }
            if (gap && x.n) x.c[x.n] = '\0', x.ln[x.n++] = line;
            gap = 0;
            for (const char *p = s; p < e; p++) x.c[x.n] = *p, x.ln[x.n++] = line;
            x.c[x.n] = '\n', x.ln[x.n++] = line;
        }
        line++;
    }
    x.c[x.n] = 0;
    if (tokenize(&x)) return finish(&x, -1);
    return finish(&x, run_rules(&x));
}
