/* HOSTILE ON PURPOSE (dlopen-solution): loads the reference solution's build and runs it in its place.
 * tests/test_hostile.c asserts what stops it. */
/* declared here, not through <dlfcn.h>, which the build refuses first: this one gets to the object check */
void *dlopen(const char *file, int mode);
void *dlsym(void *handle, const char *name);
#define RTLD_NOW 2

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    void *h = dlopen("build/impl/solutions/gpipe.so", RTLD_NOW);
    void (*step)(pp_rank *) = h ? (void (*)(pp_rank *))dlsym(h, "pp_gpipe_step") : NULL;
    if (step) step(r);
}
