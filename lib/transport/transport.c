/* transport.c: the transport registry; the one place that knows which transports were compiled in. */
#include "transport.h"

#include <stdlib.h>
#include <string.h>

#include "plugin.h"
#include "rank.h"

#ifdef PP_HAVE_MPI
#define MPI_BUILT 1
#else
#define MPI_BUILT 0
#endif
#ifdef PP_HAVE_NCCL
#define NCCL_BUILT 1
#else
#define NCCL_BUILT 0
#endif

const pp_transport_ops *pp__transport_find(const char *name, char *err, size_t errlen) {
    if (!name || !strcmp(name, "threads")) return &pp__transport_threads;
#ifdef PP_HAVE_MPI
    if (!strcmp(name, "mpi")) return &pp__transport_mpi;
#else
    if (!strcmp(name, "mpi")) {
        snprintf(err, errlen, "the mpi transport is not compiled in: install libopenmpi-dev and rebuild");
        return NULL;
    }
#endif
#ifdef PP_HAVE_NCCL
    /* in libpp_cuda.so with the cuda backend, opened on first use (plugin.h) */
    if (!strcmp(name, "nccl")) return (const pp_transport_ops *)pp__plugin_symbol("pp__transport_nccl", err, errlen);
#endif
    snprintf(err, errlen, "unknown transport '%s': use threads, mpi or nccl (nccl needs a CUDA build with NCCL)", name);
    return NULL;
}

int pp__transport_built(const char *name) {
    if (!name || !strcmp(name, "threads")) return 1;
    if (!strcmp(name, "mpi")) return MPI_BUILT;
    return !strcmp(name, "nccl") && NCCL_BUILT;
}

void pp__transport_describe_all(FILE *out) {
    fprintf(out, "  threads     usable   ranks are threads of one process; exact deadlock detection\n");
#ifdef PP_HAVE_MPI
    fprintf(out, "  mpi         usable   one process per rank under mpirun/srun (Open MPI)\n");
#else
    fprintf(out, "  mpi         missing  not compiled in: install libopenmpi-dev and rebuild\n");
#endif
#ifdef PP_HAVE_NCCL
    fprintf(out, "  nccl        built    one GPU per rank (--backend cuda --transport nccl); needs P GPUs\n");
#else
    fprintf(out, "  nccl        missing  not compiled in: needs nvcc and NCCL\n");
#endif
    fprintf(out, "  cuda-local  =threads  with --backend cuda: ranks share one GPU, messages copy between their streams\n");
}

void pp__transport_sum(pp_world *w, double *v, int n) {
    if (w->tp && w->tp->sum && n > 0) w->tp->sum(w, v, n);
}

void *pp__transport_gather(pp_world *w, const void *buf, size_t len, size_t *lens) {
    return w->tp && w->tp->gather ? w->tp->gather(w, buf, len, lens) : NULL;
}
