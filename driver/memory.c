/* memory.c: the schedule's allocations, seen on their way to libc. The loader's table (symtab.c) hands these
 * out for malloc, calloc, realloc, aligned_alloc and posix_memalign: when one fails, its size goes into the
 * channel, so that a schedule that then crashes is reported as out of memory (its address space is limited)
 * rather than as a bare segmentation fault. */
#include <stdlib.h>

#include "driver.h"

static void *noted(void *p, size_t n) {
    if (!p && n && pp__drv_chan) __atomic_store_n(&pp__drv_chan->oom_bytes, (uint64_t)n, __ATOMIC_SEQ_CST);
    return p;
}

void *pp__drv_malloc(size_t n) { return noted(malloc(n), n); }

void *pp__drv_calloc(size_t n, size_t size) {
    /* an overflowing product is noted as the largest request, which it was */
    size_t bytes = size && n > (size_t)-1 / size ? (size_t)-1 : n * size;
    return noted(calloc(n, size), bytes);
}

void *pp__drv_realloc(void *p, size_t n) { return noted(realloc(p, n), n); }

void *pp__drv_aligned_alloc(size_t align, size_t n) { return noted(aligned_alloc(align, n), n); }

int pp__drv_posix_memalign(void **p, size_t align, size_t n) {
    int rc = posix_memalign(p, align, n);
    noted(rc ? NULL : *p, n);
    return rc;
}
