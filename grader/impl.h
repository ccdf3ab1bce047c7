/* impl.h: finding, compiling and loading a lab implementation (labs/, solutions/ or any folder with the same
 * layout). Every lab is its own shared object, so one lab's compile error never stops the others. */
#ifndef PP_IMPL_H
#define PP_IMPL_H

#include <stddef.h>

/* The labs, in order: name used on the command line, folder, and the symbol of its step function. */
typedef struct pp_lab_info {
    const char *name;     /* "gpipe" */
    const char *folder;   /* "02-gpipe" */
    const char *symbol;   /* "pp_gpipe_step"; NULL for the warm-up (several functions) */
} pp_lab_info;

extern const pp_lab_info pp__labs[];
extern const int pp__nlabs;

/* The lab called name (also accepts the folder name), or NULL. */
const pp_lab_info *pp__lab_find(const char *name);
/* The lab whose step function runs `schedule` (naive, gpipe, 1f1b, interleaved). */
const pp_lab_info *pp__lab_for_schedule(const char *schedule);

/* Resolves an --impl value ("labs", "solutions" or a folder) to the folder holding the lab folders; 0 or -1. */
int pp__impl_dir(const char *impl, char *dir, size_t len);

/* Makes sure the shared object of `lab` from implementation folder `dir` is built and up to date, compiling it
 * (to a temporary name, renamed into place under a lock, so processes starting together never load a half-
 * written file) when it is missing or older than its source. Writes its path into so_path. Returns 0, or -1
 * with the reason (for a compile error: the compiler's message) in err. Must run before threads or MPI_Init. */
int pp__impl_build(const char *dir, const pp_lab_info *lab, char *so_path, size_t pathlen, char *err, size_t errlen);

/* Loads so_path and returns the address of `symbol`, or NULL with the reason in err. The object stays loaded. */
void *pp__impl_symbol(const char *so_path, const char *symbol, char *err, size_t errlen);

/* Convenience: build + load the step function of `lab` from --impl value `impl`. */
void *pp__impl_load(const char *impl, const pp_lab_info *lab, char *err, size_t errlen);

#endif /* PP_IMPL_H */
