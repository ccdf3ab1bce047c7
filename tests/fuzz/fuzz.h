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

#endif /* PP_FUZZ_H */
