/* compile.h: building a lab file into a schedule driver, with the student's file treated as hostile. The build
 * runs in a private folder that holds only a copy of the file and of pp.h, as an unprivileged user when pplab
 * is root, with stdin closed, no terminal, a clean environment, and time, memory and output limits. Before the
 * real compile:
 *   - a dependency pass (cc -M -MG, its messages never shown) whose list may name only pp.h and the compiler's
 *     and C library's own headers (no other file's contents can reach the build, or a report);
 *   - no inline assembly in the student's own lines of the preprocessed source (asm can .incbin a file);
 * and after it, no assembler directive that reads files or builds new directives (.incbin, .include, .macro,
 * ...: a section name or an asm label can smuggle one in), and the object check of objcheck.h. Only the lab's
 * own functions stay visible (every other global is made local), so nothing of the student's can stand in for
 * a function of libc or of the driver. Then it links the driver (static) and the in-process shared object. */
#ifndef PP_COMPILE_H
#define PP_COMPILE_H

#include <stddef.h>

#include "error.h"
#include "host.h"

/* The largest lab file the build accepts. */
#define PP_COMPILE_MAX_SOURCE ((size_t)1 << 20)

typedef struct pp_compile {
    const char *src;           /* the student's file */
    const char *rel;           /* the name it is compiled under, which messages show ("02-gpipe/gpipe.c") */
    const char *pp_h;          /* lib/pp.h */
    const char *driver_lib;    /* libppdriver.a */
    const char *const *keep;   /* the lab's functions: they alone stay visible */
    int nkeep;
    int require;               /* 1: each of keep must be defined (a schedule lab's step function) */
    const pp_sandbox *sb;      /* drop_uid, uid and gid: who compiles */
    double time_limit_s;       /* the whole build; 0: 60 s */
} pp_compile;

/* Reads the lab file at src (malloc'd into *text, *n bytes), refusing one over PP_COMPILE_MAX_SOURCE unread.
 * Returns PP_OK, or PP_ERR_SANDBOX / PP_ERR_IO with one line in err. */
pp_status pp__compile_read(const char *src, char **text, size_t *n, char *err, size_t len);

/* Builds c->src into the driver executable out_driver and the shared object out_object (for --in-process).
 * Returns PP_OK; PP_ERR_COMPILE with the compiler's messages (or the missing function) in err; PP_ERR_SANDBOX
 * with one line naming a refused include or construct; PP_ERR_IO when the build itself could not run. */
pp_status pp__compile_lab(const pp_compile *c, const char *out_driver, const char *out_object, char *err,
                          size_t len);

#endif /* PP_COMPILE_H */
