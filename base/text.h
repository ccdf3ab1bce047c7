/* text.h: text that pplab did not write (a schedule's output, its pp_fail message, whatever a driver sends, the
 * compiler's messages), made safe to show beside pplab's own: cleaned of every character that could pass for a
 * line break or repaint a terminal, and marked, line by line, as not pplab's. The runtime marks what a driver
 * sends as it composes a failure; the reports mark the output they quote. */
#ifndef PP_TEXT_H
#define PP_TEXT_H

#include <stdarg.h>
#include <stddef.h>

/* What every line of text pplab did not write starts with, wherever it is shown. No line pplab writes starts
 * with '|' (after its blanks), in any report; a parser that strips blanks still finds the mark. */
#define PP_TEXT_MARK "| "

/* A NUL-terminated copy of at most max bytes of s (which need not be terminated within max; a NUL ends it) that
 * holds valid UTF-8 and no control character but tab and newline: each of these becomes one '?': the other C0
 * controls (\r, \v, \f, ESC, 0x1c-0x1f, ...), DEL, the C1 controls U+0080-U+009F, U+2028 and U+2029, the bidi
 * controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069); each byte of an invalid or overlong sequence,
 * a surrogate or a code point past U+10FFFF becomes one '?' too. Every other character stays as it is ("→",
 * "é", emoji). Cleaning a clean text changes nothing. The caller frees it; NULL only when memory runs out. */
char *pp__text_clean(const char *s, size_t max);

/* pp__text_clean(s, max) with PP_TEXT_MARK before each of its lines ("| step 1\n| step 2"; an empty line gets "|"
 * alone, and nothing follows a last newline). The caller frees it; NULL only when memory runs out. */
char *pp__text_quote(const char *s, size_t max);

/* Appends printf-style text to buf, which holds len bytes of text, within cap bytes (cap >= 1); returns the new
 * length. Past the end the text is cut: a report built of lines keeps the lines that fit. */
size_t pp__text_append(char *buf, size_t cap, size_t len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
size_t pp__text_vappend(char *buf, size_t cap, size_t len, const char *fmt, va_list ap);

#endif /* PP_TEXT_H */
