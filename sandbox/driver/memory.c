/* memory.c: the schedule's allocations, seen on their way to libc (the driver is linked with --wrap for each):
 * when one fails, its size goes into the channel, so that a schedule that then crashes is reported as out of
 * memory (its address space is limited) rather than as a bare segmentation fault. */
#include <stddef.h>

#include "driver.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);

static void *noted(void *p, size_t n) {
    if (!p && n && pp__drv_chan) __atomic_store_n(&pp__drv_chan->oom_bytes, (uint64_t)n, __ATOMIC_SEQ_CST);
    return p;
}

void *__wrap_malloc(size_t n) { return noted(__real_malloc(n), n); }
void *__wrap_calloc(size_t n, size_t size) { return noted(__real_calloc(n, size), n * size); }
void *__wrap_realloc(void *p, size_t n) { return noted(__real_realloc(p, n), n); }
void *__wrap_aligned_alloc(size_t align, size_t n) { return noted(__real_aligned_alloc(align, n), n); }
int __wrap_posix_memalign(void **p, size_t align, size_t n) {
    int rc = __real_posix_memalign(p, align, n);
    noted(rc ? NULL : *p, n);
    return rc;
}
