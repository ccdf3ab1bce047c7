/* impl_build.h: finding, building and loading a lab implementation (labs/, solutions/ or any folder with the same
 * layout). Every lab is built on its own, so one lab's compile error never stops the others. */
#ifndef PP_IMPL_BUILD_H
#define PP_IMPL_BUILD_H

#include <stddef.h>

#include "error.h"

/* The labs, in order: the warm-up, then one per row of the schedule table (lib/schedule/schedules.c). */
#include "labs.h"

/* Resolves an --impl value ("labs", "solutions" or a folder) to the folder holding the lab folders; 0 or -1. */
int pp__impl_dir(const char *impl, char *dir, size_t len);

/* A lab built from a student's file (sandbox/toolchain/compile.c): the checked object that the kit's one schedule
 * driver loads in sandboxed runs, one process per rank; the driver itself; and the same code as a shared object
 * for `pplab run --in-process`. */
/* The schedule driver every sandboxed run starts: build/pplab-driver beside this pplab. */
void pp__impl_driver(char *path, size_t len);
/* 1 in the kit, which has the reference solutions; 0 in a handout. */
int pp__impl_have_solutions(void);
/* What --impl may name here, in words for help and errors: "the implementation: labs (your files), solutions
 * (the reference) or a folder with the labs' layout" in the kit, without solutions in a handout. */
const char *pp__impl_choices(void);

typedef struct pp_impl {
    char driver[4096];   /* build/pplab-driver: the same for every submission */
    char object[4096];   /* the lab's relocatable object */
    char shared[4096];   /* the lab's shared object (in-process only) */
    unsigned char sha256[32]; /* the lab file's bytes as read and built, hashed (the warm-up's draw is keyed by it) */
} pp_impl;

typedef struct pp_sandbox pp_sandbox;

/* Makes sure the build of `lab` from implementation folder dir is up to date: reused when the file, pp.h, the
 * compiler and the build's rules are those it was built from, else rebuilt (into temporary names renamed into
 * place under a lock, so processes starting together never load a half-written file). sb says who compiles
 * (its uid when root). Returns PP_OK, or PP_ERR_COMPILE / PP_ERR_SANDBOX / PP_ERR_IO with the reason in err (a
 * compile error carries the compiler's message). Must run before threads or MPI_Init. */
pp_status pp__impl_build(const char *dir, const pp_lab_info *lab, const pp_sandbox *sb, pp_impl *out, char *err,
                         size_t errlen);

/* Wall-clock limit of one build (0: the default, 60 s). */
void pp__impl_set_compile_limit(double seconds);

/* Loads a built lab's shared object (in-process: its pp.h calls bind to this process's runtime) and returns
 * the address of `symbol`, or NULL with the reason in err. The object stays loaded. */
void *pp__impl_symbol(const char *so_path, const char *symbol, char *err, size_t errlen);

typedef struct pp_program pp_program;
/* An in-process run's program from a built lab: its step function into prog->fn and, for the grid lab, the two
 * functions that map the grid into prog->grid_place and prog->grid_group (the runtime asks them before the first
 * step, as a sandboxed run asks the driver). 0, or -1 with the reason in err. */
int pp__impl_program(const pp_impl *impl, const pp_lab_info *lab, pp_program *prog, char *err, size_t errlen);

/* Convenience for in-process runs: build (with the default sandbox) and load the step function of `lab` from
 * --impl value `impl`. */
void *pp__impl_load(const char *impl, const pp_lab_info *lab, char *err, size_t errlen);

/* The build folder (the one holding the schedule driver) and the project root above it. */
void pp__impl_dirs(char *build, char *root, size_t len);

#endif /* PP_IMPL_BUILD_H */
