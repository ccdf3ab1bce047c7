/* objcheck.h: what a compiled lab object may contain before it is linked into a schedule driver. The driver
 * locks itself down in main(); code the object would run earlier (constructors, .preinit_array entries, ifunc
 * resolvers, which the loader runs while it relocates) must not exist, so it is refused here. Sections are
 * checked against the short list a C compiler emits for ordinary code; anything else came from an
 * __attribute__((section)) and is refused too. */
#ifndef PP_OBJCHECK_H
#define PP_OBJCHECK_H

#include <stddef.h>

/* Checks the ELF relocatable object of len bytes at buf, compiled from `name` (for messages), and that it
 * defines each of the nreq functions in req (a lab's step function; none for the warm-up, whose functions may
 * be missing one by one). Returns 0, or -1 with one line in err: what was found and what to do. */
int pp__objcheck(const void *buf, size_t len, const char *name, const char *const *req, int nreq, char *err,
                 size_t errlen);

#endif /* PP_OBJCHECK_H */
