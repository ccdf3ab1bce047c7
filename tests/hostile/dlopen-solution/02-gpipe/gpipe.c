/* HOSTILE ON PURPOSE (dlopen-solution): loads the reference solution's build and runs it in its place.
 * tests/test_hostile.c asserts what stops it. */
#include <dlfcn.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    void *h = dlopen("build/impl/solutions/gpipe.so", RTLD_NOW);
    void (*step)(pp_rank *) = h ? (void (*)(pp_rank *))dlsym(h, "pp_gpipe_step") : NULL;
    if (step) step(r);
}
