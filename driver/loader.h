/* loader.h: the schedule driver's loader of a lab object. The driver never links student code: once it has
 * mapped its channel, locked itself down and closed its descriptors, it reads the lab's relocatable object (.o,
 * built by the kit with -fPIC) into memory of its own, resolves what the object leaves undefined against the
 * fixed table of sandbox/proto/symbols.h only, and calls the lab's function. Nothing of the object runs while
 * it loads (no constructors, no ifunc resolvers), and nothing of it can stand in for a function of the driver:
 * the object's symbols are looked up by the driver, never the other way round.
 *
 * The loader runs on bytes that may be hostile; it reads only inside the object and writes only inside the
 * image, and refuses what it does not know (the rules shared with the build's check are in elfrules.h). */
#ifndef PP_LOADER_H
#define PP_LOADER_H

#include <stddef.h>

#include "elfrules.h"

/* One function the image defines, for lookups; the name lives in the image. */
typedef struct pp_image_fn {
    void *addr;
    const char *name;
} pp_image_fn;

/* A loaded object: one mapping of three page-aligned regions, text (read and execute), read-only data (with
 * the GOT and the lookup table, read-only once relocated) and writable data (with the zeroed bss). The fields
 * are the loader's; a zeroed pp_image holds nothing. */
typedef struct pp_image {
    unsigned char *base;
    size_t size;
    unsigned char *text; /* where the code starts, and how long it is: for a crash report's "in the lab's code" */
    size_t text_size;
    const pp_image_fn *fns;
    size_t nfns;
} pp_image;

/* Loads the x86-64 ET_REL object of len bytes at obj (8-byte aligned; the caller may free it afterwards) into
 * fresh anonymous memory of at most max_image bytes, bss included: its executable, read-only and writable
 * SHF_ALLOC sections (.eh_frame, notes, debug info and other unloaded sections are skipped, with their
 * relocations), relocated against the object itself and against table (ntable names, as symbols.h lists them,
 * with their addresses in this process). Calls to a table function go through a stub of the image's own
 * (jmp *slot(%rip)), since the table's functions lie too far from the image for a 32-bit displacement.
 * Returns 0 with *img filled, or -1 with one line in err naming what was refused ("refused: the lab file calls
 * fopen(), which ..."; "refused: the lab's code and data need N KiB; a lab file may have at most M KiB") and
 * *img zeroed. Runs no code of the object. */
int pp__loader_load(pp_image *img, const void *obj, size_t len, const pp_loader_symbol *table, size_t ntable,
                    size_t max_image, char *err, size_t errlen);

/* The address of the global function `name` that the loaded object defines in an executable section, or
 * NULL. */
void *pp__loader_symbol(const pp_image *img, const char *name);

/* Unmaps the image and zeroes *img (nothing happens for a zeroed one). No pointer into it may be used again. */
void pp__loader_unload(pp_image *img);

/* The driver's table (symtab.c): every name of symbols.h with its address in the driver, allocations through
 * the driver's noting wrappers. *n receives the count. */
const pp_loader_symbol *pp__drv_symbols(size_t *n);

#endif /* PP_LOADER_H */
