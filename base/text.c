/* text.c: text that pplab did not write, made safe to show (text.h). */
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t pp__text_vappend(char *buf, size_t cap, size_t len, const char *fmt, va_list ap) {
    if (len + 1 >= cap) return len;
    int n = vsnprintf(buf + len, cap - len, fmt, ap);
    if (n < 0) return len;
    return len + (size_t)n < cap ? len + (size_t)n : cap - 1;
}

size_t pp__text_append(char *buf, size_t cap, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    len = pp__text_vappend(buf, cap, len, fmt, ap);
    va_end(ap);
    return len;
}

/* 1 for a code point no report shows as itself. Each of these ends a line for some reader (Python's splitlines()
 * splits at \v, \f, \r, \x1c-\x1e, U+0085, U+2028 and U+2029), moves a terminal's cursor, erases or colours what
 * is there (ESC, the C1 CSI), or reorders what a reader sees (the bidi controls): student text with any of them
 * could be read as a line of the grader's. Tab and newline stay; a newline is where the mark goes. */
static int hidden_code_point(unsigned cp) {
    if (cp < 0x20) return cp != '\n' && cp != '\t';
    if (cp >= 0x7f && cp <= 0x9f) return 1; /* DEL, the C1 controls */
    if (cp == 0x2028 || cp == 0x2029) return 1;
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

char *pp__text_clean(const char *s, size_t max) {
    size_t n = s ? strnlen(s, max) : 0;
    char *o = malloc(n + 1);
    if (!o) return NULL;
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k = 0;
    while (i < n) {
        unsigned char c = u[i];
        size_t need = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 9;
        int good = need != 9 && i + need < n;
        for (size_t j = 1; good && j <= need; j++) good = (u[i + j] & 0xc0) == 0x80;
        unsigned cp = c;
        if (good && need > 0) {
            /* Overlong forms (an overlong newline must not become one), UTF-16 surrogates and code points past
             * U+10FFFF are invalid too. */
            cp = need == 1 ? (c & 0x1fu) : need == 2 ? (c & 0x0fu) : (c & 0x07u);
            for (size_t j = 1; j <= need; j++) cp = (cp << 6) | (u[i + j] & 0x3fu);
            unsigned lo = need == 1 ? 0x80 : need == 2 ? 0x800 : 0x10000;
            good = cp >= lo && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
        }
        if (!good) {
            /* one '?' per byte: the bytes after a bad lead are looked at again, as leads of their own */
            o[k++] = '?';
            i++;
            continue;
        }
        if (hidden_code_point(cp))
            o[k++] = '?';
        else
            for (size_t j = 0; j <= need; j++) o[k++] = (char)u[i + j];
        i += need + 1;
    }
    o[k] = '\0';
    return o;
}

char *pp__text_quote(const char *s, size_t max) {
    char *clean = pp__text_clean(s, max);
    if (!clean) return NULL;
    size_t n = strlen(clean), lines = 1;
    for (size_t i = 0; i < n; i++) lines += clean[i] == '\n';
    char *o = malloc(n + lines * (sizeof PP_TEXT_MARK - 1) + 1);
    if (o) {
        size_t k = 0;
        for (const char *line = clean; *line;) {
            const char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            /* an empty line gets the mark without its blank: no trailing blanks */
            size_t mark = len ? sizeof PP_TEXT_MARK - 1 : 1;
            memcpy(o + k, PP_TEXT_MARK, mark);
            memcpy(o + k + mark, line, len);
            k += mark + len;
            if (nl) o[k++] = '\n';
            line += len + (nl != NULL);
        }
        o[k] = '\0';
    }
    free(clean);
    return o;
}
