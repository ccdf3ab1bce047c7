/* fuzz.h: what every fuzz target of tests/fuzz/ shares. A target is one parser of the trusted side fed bytes
 * that someone else wrote: LLVMFuzzerTestOneInput, which libFuzzer calls (make fuzz) and tests/fuzz/replay.c
 * calls once per kept input (make test). A target returns 0 and lets the sanitizers speak; a property the
 * parser's output must have (a report that parses back) is checked with fuzz_require, which aborts. */
#ifndef PP_FUZZ_H
#define PP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with what broke: libFuzzer keeps the input as a finding, the replay fails. */
#define fuzz_require(cond, ...)                                                                                \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            fprintf(stderr, "fuzz: property broken: " __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                                               \
            abort();                                                                                           \
        }                                                                                                      \
    } while (0)

/* The input as a NUL-terminated string (malloc'd; NULs inside stay, so a C parser sees a prefix). */
static inline char *fuzz_string(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s) abort();
    if (size) memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* A message a student reads (a refusal): one printable line, not empty, ended inside its buffer of cap bytes. */
static inline void fuzz_one_line(const char *err, size_t cap, const char *what) {
    size_t n = strnlen(err, cap);
    fuzz_require(n < cap, "%s: the message is not terminated inside its buffer", what);
    fuzz_require(n > 0, "%s: a refusal without a message", what);
    for (size_t i = 0; i < n; i++)
        fuzz_require(err[i] >= 0x20 && err[i] < 0x7f, "%s: byte 0x%02x at %zu of the message: %s", what,
                     (unsigned char)err[i], i, err);
}

#endif /* PP_FUZZ_H */
