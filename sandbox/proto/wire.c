/* wire.c: the byte writer and the bounds-checked reader of wire.h. */
#include "wire.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pp__wire_init(pp_wire *w) { memset(w, 0, sizeof *w); }

void pp__wire_init_fixed(pp_wire *w, void *buf, size_t cap) {
    memset(w, 0, sizeof *w);
    w->p = buf;
    w->cap = cap;
    w->fixed = 1;
}

void pp__wire_free(pp_wire *w) {
    if (!w->fixed) free(w->p);
    memset(w, 0, sizeof *w);
}

void pp__wire_put(pp_wire *w, const void *src, size_t n) {
    if (w->bad || n == 0) return;
    if (n > w->cap - w->len) {
        if (w->fixed || n > SIZE_MAX / 2 - w->len) {
            w->bad = 1;
            return;
        }
        size_t cap = 2 * (w->len + n) + 256;
        unsigned char *p = realloc(w->p, cap);
        if (!p) {
            w->bad = 1;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->len, src, n);
    w->len += n;
}

void pp__wire_u32(pp_wire *w, uint32_t x) { pp__wire_put(w, &x, sizeof x); }
void pp__wire_i64(pp_wire *w, int64_t x) { pp__wire_put(w, &x, sizeof x); }
void pp__wire_u64(pp_wire *w, uint64_t x) { pp__wire_put(w, &x, sizeof x); }
void pp__wire_f64(pp_wire *w, double x) { pp__wire_put(w, &x, sizeof x); }

void pp__wire_str(pp_wire *w, const char *s, size_t max) {
    size_t n = s ? strnlen(s, max) : 0;
    pp__wire_u32(w, (uint32_t)n);
    pp__wire_put(w, s, n);
}

void pp__wire_in_init(pp_wire_in *r, const void *buf, size_t len) {
    r->p = buf;
    r->end = r->p + len;
    r->bad = 0;
}

size_t pp__wire_left(const pp_wire_in *r) { return r->bad ? 0 : (size_t)(r->end - r->p); }

const void *pp__wire_view(pp_wire_in *r, size_t n) {
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    const void *at = r->p;
    r->p += n;
    return at;
}

void pp__wire_get(pp_wire_in *r, void *dst, size_t n) {
    if (n == 0) return;
    const void *at = pp__wire_view(r, n);
    if (at)
        memcpy(dst, at, n);
    else
        memset(dst, 0, n);
}

int64_t pp__wire_get_i64(pp_wire_in *r, int64_t lo, int64_t hi) {
    int64_t x;
    pp__wire_get(r, &x, sizeof x);
    if (x < lo || x > hi) r->bad = 1;
    return r->bad ? lo : x;
}

uint32_t pp__wire_get_u32(pp_wire_in *r, uint32_t lo, uint32_t hi) {
    uint32_t x;
    pp__wire_get(r, &x, sizeof x);
    if (x < lo || x > hi) r->bad = 1;
    return r->bad ? lo : x;
}

uint64_t pp__wire_get_u64(pp_wire_in *r) {
    uint64_t x;
    pp__wire_get(r, &x, sizeof x);
    return r->bad ? 0 : x;
}

double pp__wire_get_f64(pp_wire_in *r) {
    double x;
    pp__wire_get(r, &x, sizeof x);
    if (!isfinite(x)) r->bad = 1;
    return r->bad ? 0 : x;
}

void pp__wire_get_str(pp_wire_in *r, char *dst, size_t cap) {
    uint32_t n = pp__wire_get_u32(r, 0, cap ? (uint32_t)(cap - 1) : 0);
    const unsigned char *at = pp__wire_view(r, n);
    if (!cap) return;
    if (!at) {
        dst[0] = 0;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        unsigned char c = at[i];
        dst[i] = (char)((c < 32 && c != '\n' && c != '\t') || c == 127 ? '?' : c);
    }
    dst[n] = 0;
}
