/* hash.h: FNV-1a, 64 bits: a fingerprint of bytes, for comparing what is too big to send whole (replicas'
 * weights across processes) and for naming things by their contents (build caches, seeds). Not for security:
 * anyone can make two inputs collide on purpose. */
#ifndef PP_HASH_H
#define PP_HASH_H

#include <stddef.h>
#include <stdint.h>

#define PP_HASH_INIT 1469598103934665603ull

/* h with the n bytes at p folded in; start from PP_HASH_INIT. */
static inline uint64_t pp__hash_bytes(uint64_t h, const void *p, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

/* h with the string s folded in, up to its end or max bytes. */
static inline uint64_t pp__hash_text(uint64_t h, const char *s, size_t max) {
    size_t n = 0;
    while (n < max && s[n]) n++;
    return pp__hash_bytes(h, s, n);
}

#endif /* PP_HASH_H */
