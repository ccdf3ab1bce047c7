/* objcheck.h: what a compiled lab object may contain, checked in the grader when it is built, so a student
 * reads why a file is refused before anything runs. The driver's loader (driver/loader.c) is the
 * boundary and applies the same rules (sandbox/proto/elfrules.h) again in the jail; this check adds the
 * friendlier, stricter ones: only the sections a C compiler emits for plain code, each with its usual type and
 * flags, and only the lab's functions visible. */
#ifndef PP_OBJCHECK_H
#define PP_OBJCHECK_H

#include <stddef.h>

/* Checks the ELF relocatable object of len bytes at buf (8-byte aligned), compiled from `name` (for messages)
 * and already narrowed by objcopy --keep-global-symbol to the nkeep functions of keep: no constructors,
 * destructors, ifuncs, thread-local, common, unique or weak symbols, section groups or IRELATIVE relocations;
 * every section one that plain C makes, with its usual type and flags; every undefined name one of
 * sandbox/proto/symbols.h; every non-local defined symbol a function of keep in an executable section; and,
 * when require, each function of keep defined (a schedule lab's step function; the warm-up's may be missing
 * one by one). Returns 0, or -1 with one line in err: what was found and what to do. Refusals start with
 * "refused: "; a missing function ("NAME does not define f()") does not. */
int pp__objcheck(const void *buf, size_t len, const char *name, const char *const *keep, int nkeep, int require,
                 char *err, size_t errlen);

#endif /* PP_OBJCHECK_H */
