/* tokens.h: the structural checks of a lab file's C source, done on preprocessing tokens rather than on text, so
 * that no spelling of a construct (trigraphs, line splices, digraphs, comments, \r or \f in odd places, UCNs)
 * slips past them. Two passes, because each sees what the other cannot:
 *   - the raw source, after translation phases 1-3 done here as gcc -std=c11 does them: what acts while the file
 *     is preprocessed and leaves no trace in the output (#pragma, #line and line markers, #include_next, #ident;
 *     __has_include, which probes which files exist; ## pasting, which could build __has_include inside an #if),
 *     and the macros a header's lines could expand;
 *   - the compiler's preprocessed output (cc -std=c11 -E), whose student lines are exactly what is compiled:
 *     asm, attributes and _Pragma that macros built, system headers' macros included.
 * Neither reads a file or runs anything; both take their input as arbitrary bytes (not NUL-terminated).
 *
 * Attributes allowed in __attribute__((...)), plain or as __name__ (they change diagnostics, optimisation,
 * alignment or layout only): access, aligned, alloc_align, alloc_size, always_inline, artificial, assume_aligned,
 * cleanup, cold, const, deprecated, designated_init, fallthrough, flatten, format, format_arg, hot, leaf, malloc,
 * may_alias, maybe_unused, mode, noclone, noinline, noipa, nonnull, nonstring, noreturn, nothrow, packed, pure,
 * returns_nonnull, returns_twice, sentinel, transparent_union, unavailable, unused, used, vector_size,
 * warn_unused_result. Every other name is refused: section, alias, weak, weakref, symver, visibility, ifunc,
 * constructor, destructor, target, target_clones, naked, optimize, copy, common, nocommon, tls_model,
 * init_priority, externally_visible, no_reorder, retain, noinit, persistent, ... and any name a macro stands for.
 *
 * Both return 0, or -1 with one line in err (errlen bytes, cut to fit; nothing when err is NULL or errlen 0):
 * "refused: NAME:LINE: <what was found>: <what to do>", NAME as given and LINE the physical line (from 1) where
 * the offending token starts; "refused: NAME: not enough memory to check it: ..." when memory runs out. */
#ifndef PP_TOKENS_H
#define PP_TOKENS_H

#include <stddef.h>

/* Checks src (len bytes: the lab file exactly as handed in) compiled under `name`. Refused, lexical problems
 * first, then the first rule broken in file order:
 *   - a NUL byte; an unterminated comment, string literal, character constant or header name; a header name
 *     with characters other than letters, digits and _ . / + - (or two that start a comment); a raw string R"...";
 *   - a directive other than #include, #define, #undef, #if, #ifdef, #ifndef, #elif, #elifdef, #elifndef,
 *     #else, #endif, #error and the null directive, in skipped groups too. A # (or %:) starts a directive when
 *     only blanks and comments come between it and a newline, even a newline inside a comment; a leading UTF-8
 *     byte order mark is skipped, as gcc skips it;
 *   - outside literals and comments, the identifiers asm, __asm, __asm__, _Pragma, __has_include,
 *     __has_include_next (and their __x__ forms), __declspec, and glibc's __glibc_macro_warning and
 *     __glibc_macro_warning1, which hand their argument to _Pragma (a pragma the preprocessor runs itself, such
 *     as GCC dependency "FILE", which fails when FILE is missing, leaves no trace for the preprocessed check);
 *     each part of a name or number between $, bytes >= 0x80 and UCNs is checked on its own (gcc may end the
 *     token there), a UCN of an ASCII character read as that character;
 *   - ## or %:%:; [[ or <:<: (or <:[, [<:), blanks, comments and, in plain text, directives between;
 *   - __attribute__ or __attribute not followed by ((; a list that does not close with )) in the directive it
 *     is in or, in plain text, before a directive; a list with something other than names, their
 *     parenthesized arguments and commas, or with another list inside an argument; a name not allowed above;
 *   - #define or #undef of a reserved name (__x or _X; the feature-test macros _GNU_SOURCE, _DEFAULT_SOURCE,
 *     _POSIX_C_SOURCE, _POSIX_SOURCE, _XOPEN_SOURCE, _XOPEN_SOURCE_EXTENDED, _ISOC99_SOURCE, _ISOC11_SOURCE,
 *     _BSD_SOURCE, _SVID_SOURCE, _REENTRANT, _THREAD_SAFE, _LARGEFILE64_SOURCE, _FILE_OFFSET_BITS, _TIME_BITS and
 *     __STDC_WANT_LIB_EXT1__ excepted); #define of an allowed attribute's name; a #define whose ( ) or [ ] do not
 *     balance. The preprocessed check skips the lines of pp.h and system headers, which expand the student's
 *     macros too: these three keep such a macro from turning an attribute there into another.
 * Ordinary identifiers that share a name with an attribute or a directive (int section; void line(void)) are
 * fine. Not seen by either check: a macro of some other installed header that expands to _Pragma or
 * __has_include around the student's argument (criterion's CR_PRAGMA): the build's dependency pass accepts any
 * header under the compiler's search path, and only narrowing that list closes it. */
int pp__tokens_check_source(const char *src, size_t len, const char *name, char *err, size_t errlen);

/* Checks text (len bytes: the output of cc -std=c11 -E for the file compiled as `name`; only valid after
 * pp__tokens_check_source passed on that file, which makes every line marker gcc's own). The student's lines are
 * those under a marker `# LINE "FILE" FLAGS` whose FILE (gcc's escapes undone) is exactly `name`, and any before
 * the first marker; the lines of pp.h and system headers are skipped, but a header's macro the student's line
 * expands is on that line, so it is checked. A marker names the line after it; each further line is one more.
 * The student's lines are tokenized as one stream (phase 3 only: the compiler reads a .i without trigraphs or
 * splices) that remembers where lines of other files were left out. Refused in them:
 *   - a NUL byte; an unterminated comment or literal;
 *   - a line starting with # that is no marker (#pragma from _Pragma, #ident); any other # or %: or ##
 *     (gcc prints them only from a macro);
 *   - the identifiers of the source check (asm pasted from as##m, __asm__ from glibc's __REDIRECT);
 *   - __attribute__ without a (( list, one not closed before lines of another file, or one refused for the
 *     reasons the source check gives (a name not allowed, above);
 *   - [[ or <:<:, lines of other files between them too. */
int pp__tokens_check_preprocessed(const char *text, size_t len, const char *name, char *err, size_t errlen);

/* The headers a lab file may include besides "pp.h" (NULL-terminated): the C library's standard headers and the
 * few POSIX ones a schedule has a use for. Those include others of the system, which is fine; a header of any
 * other installed library could wrap _Pragma or __has_include around a name of the student's. */
extern const char *const pp__tokens_headers[];

/* The headers a lab file may include besides "pp.h" (NULL-terminated): the C library's standard headers and the
 * few POSIX ones a schedule has a use for. Those include others of the system, which is fine; a header of any
 * other installed library could wrap _Pragma or __has_include around a name of the student's. */
extern const char *const pp__tokens_headers[];

#endif /* PP_TOKENS_H */
