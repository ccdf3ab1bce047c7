/* transport.c: the transport registry; the one place that knows which transports were compiled in. */
#include "transport.h"

#include <stdlib.h>
#include <string.h>

#include "plugin.h"

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

/* ---- MPI launch environment ---------------------------------------------------------------------------- */

/* The value of an integer environment variable, or -1 when unset or not a number. */
static int env_int(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return (*end || x < 0 || x > 1 << 20) ? -1 : (int)x;
}

/* srun alone counts only with several tasks: a one-task step (or a batch script) runs ranks as threads. */
static int slurm_tasks(void) {
    int n = env_int("SLURM_STEP_NUM_TASKS");
    return n > 1 && env_int("SLURM_PROCID") >= 0 ? n : 0;
}

int pp__mpi_env_size(void) {
    int n = env_int("OMPI_COMM_WORLD_SIZE");
    if (n >= 0) return n;
    if ((n = slurm_tasks()) > 0) return n;
    if ((n = env_int("PMI_SIZE")) >= 0) return n;
    return env_int("PMIX_RANK") >= 0 ? -1 : 0;
}

int pp__mpi_env_rank(void) {
    int r = env_int("OMPI_COMM_WORLD_RANK");
    if (r < 0 && slurm_tasks()) r = env_int("SLURM_PROCID");
    if (r < 0) r = env_int("PMI_RANK");
    if (r < 0) r = env_int("PMIX_RANK");
    return r < 0 ? 0 : r;
}

const char *pp__mpi_env_launcher(void) {
    if (env_int("OMPI_COMM_WORLD_SIZE") >= 0) return "mpirun";
    if (slurm_tasks()) return "srun";
    if (env_int("PMI_SIZE") >= 0 || env_int("PMIX_RANK") >= 0) return "mpirun";
    return NULL;
}

#ifdef PP_HAVE_MPI
int pp__mpi_built(void) { return 1; }
#else
int pp__mpi_built(void) { return 0; }
void pp__mpi_sum(pp_world *w, double *v, int n) {}
void *pp__mpi_gather(pp_world *w, const void *buf, size_t len, size_t *lens) { return NULL; }
#endif
