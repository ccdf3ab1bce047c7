/* launcher.c: what the environment says of the launcher that started this process (launcher.h), read before
 * MPI_Init and whether or not MPI is built in. */
#include "launcher.h"

#include <stdlib.h>

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
