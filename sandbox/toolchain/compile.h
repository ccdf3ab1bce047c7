/* compile.h: building a lab file into an object the schedule driver loads, with the student's file treated as
 * hostile: its bytes may be anything. The build runs in a folder of its own that holds only a copy of the file and
 * of pp.h, as a uid of the build's own when pplab is root, with stdin closed, no terminal, a clean environment,
 * time, memory, file-size and process limits, and a view of the file system that shows only the toolchain and
 * that folder (policy.h, view.h). Checks, each on structure rather than text:
 *   - the raw file, tokenized after translation phases 1-3 (tokens.h): only include, define, undef, the
 *     conditionals and error as directives; no asm, _Pragma, __has_include, or attribute off a short list;
 *   - a dependency pass (cc -M -MG, its messages never shown) whose list may name only pp.h and the compiler's
 *     and C library's own headers;
 *   - the preprocessed text's own lines, by tokens again (a macro may paste a forbidden word together);
 *   - the object's symbol and section tables (objcheck.h), once in the build and again by the parent on the
 *     bytes it keeps: only the lab's functions global, every undefined name on the loader's table.
 * The text checks of the assembly stay as a first, friendly message; no grade rests on them. */
#ifndef PP_COMPILE_H
#define PP_COMPILE_H

#include <stddef.h>

#include "error.h"
#include "policy.h"

/* The largest lab file the build accepts. */
#define PP_COMPILE_MAX_SOURCE ((size_t)1 << 20)

typedef struct pp_compile {
    const char *src;           /* the student's file, as messages name it */
    const char *text;          /* its bytes, as pp__compile_read read them: what is checked is what is built */
    size_t ntext;
    const char *rel;           /* the name it is compiled under, which messages show ("02-gpipe/gpipe.c") */
    const char *pp_h;          /* lib/pp.h */
    const char *const *keep;   /* the lab's functions: they alone stay visible */
    int nkeep;
    int require;               /* 1: each of keep must be defined (a schedule lab's step function) */
    const pp_sandbox *sb;      /* lockdown, drop_uid (a uid of the build's own is taken) and view: the jail */
    double time_limit_s;       /* the whole build; 0: 60 s */
} pp_compile;

/* Reads the lab file root/rel (rel being "02-gpipe/gpipe.c") malloc'd into *text, *n bytes, as
 * pp__file_read_plain does: refused unread when it, or anything in its folder, is a link, FIFO, socket or device,
 * or it is over PP_COMPILE_MAX_SOURCE. Returns PP_OK, or PP_ERR_SANDBOX / PP_ERR_IO with one line in err. */
pp_status pp__compile_read(const char *root, const char *rel, char **text, size_t *n, char *err, size_t len);

/* Builds c->text (the file c->src) into the checked relocatable object out_object, which the schedule driver loads, and the shared
 * object out_shared (for --in-process), both mode 0600.
 * Returns PP_OK; PP_ERR_COMPILE with the compiler's messages (or the missing function) in err; PP_ERR_SANDBOX
 * with one line naming a refused include or construct; PP_ERR_IO when the build itself could not run. */
pp_status pp__compile_lab(const pp_compile *c, const char *out_object, const char *out_shared, char *err,
                          size_t len);

#endif /* PP_COMPILE_H */
