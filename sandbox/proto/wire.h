/* wire.h: the one serialiser for everything that crosses a process boundary: a schedule driver's requests and
 * the runtime's replies, the warm-up's answers, a run's raw results (result files, MPI gathers). Values are
 * written in host byte order (both ends are the same machine, or MPI ranks of one build), without padding.
 *
 * Writing never fails halfway silently: a buffer that cannot grow (fixed) or an allocation that fails marks the
 * writer bad, and every later put is a no-op. Reading is for bytes an untrusted process may have written: every
 * get is bounds-checked, integers are range-checked by the caller's limits, and the first problem marks the
 * reader bad (later gets return zeros) so a parser checks `bad` once at the end. Self-contained (libc only): it
 * is linked into the schedule driver too. */
#ifndef PP_WIRE_H
#define PP_WIRE_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_wire {
    unsigned char *p;
    size_t len, cap;
    int fixed;   /* 1: p is the caller's buffer of cap bytes, never reallocated */
    int bad;     /* set on overflow of a fixed buffer or on a failed allocation */
} pp_wire;

/* A growable writer (p owned, freed with pp__wire_free) or one over the caller's buf of cap bytes. */
void pp__wire_init(pp_wire *w);
void pp__wire_init_fixed(pp_wire *w, void *buf, size_t cap);
void pp__wire_free(pp_wire *w);

void pp__wire_put(pp_wire *w, const void *src, size_t n);
void pp__wire_u32(pp_wire *w, uint32_t x);
void pp__wire_i64(pp_wire *w, int64_t x);
void pp__wire_u64(pp_wire *w, uint64_t x);
void pp__wire_f64(pp_wire *w, double x);
/* A string as its length (u32) then its bytes, at most max of them (longer strings are cut). */
void pp__wire_str(pp_wire *w, const char *s, size_t max);

typedef struct pp_wire_in {
    const unsigned char *p, *end;
    int bad;
} pp_wire_in;

void pp__wire_in_init(pp_wire_in *r, const void *buf, size_t len);
/* Copies n bytes into dst (zeros, and bad, when fewer remain). */
void pp__wire_get(pp_wire_in *r, void *dst, size_t n);
/* The next n bytes in place (NULL, and bad, when fewer remain). */
const void *pp__wire_view(pp_wire_in *r, size_t n);
/* An integer that must lie in [lo, hi]; lo (and bad) otherwise. */
int64_t pp__wire_get_i64(pp_wire_in *r, int64_t lo, int64_t hi);
uint32_t pp__wire_get_u32(pp_wire_in *r, uint32_t lo, uint32_t hi);
uint64_t pp__wire_get_u64(pp_wire_in *r);
/* A double that must be finite (0, and bad, otherwise: NaN or inf never reaches a check). */
double pp__wire_get_f64(pp_wire_in *r);
/* A string written by pp__wire_str into dst (cap bytes, always NUL-terminated); longer ones are bad. Control
 * bytes other than tab and newline become '?', so a report never carries escape codes it did not write itself
 * (UTF-8 passes; the report writers check it). */
void pp__wire_get_str(pp_wire_in *r, char *dst, size_t cap);
/* Bytes left to read. */
size_t pp__wire_left(const pp_wire_in *r);

#endif /* PP_WIRE_H */
