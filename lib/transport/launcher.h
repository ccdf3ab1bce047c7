/* launcher.h: the launcher that started this process (mpirun, srun, a PMI), as its environment tells before
 * MPI_Init: the runtime decides from it whether ranks are processes, and the mpi transport names it in messages. */
#ifndef PP_LAUNCHER_H
#define PP_LAUNCHER_H

/* The number of processes a launcher started this one with, read from the environment before MPI_Init:
 * mpirun (OMPI_COMM_WORLD_SIZE), MPICH-style PMI (PMI_SIZE), srun (SLURM_STEP_NUM_TASKS when above 1). -1 when a
 * launcher is evident but says no size (PMIx alone: the mpi transport checks after MPI_Init); 0 when none. */
int pp__mpi_env_size(void);
/* This process's rank from the same variables; 0 when there is no launcher. */
int pp__mpi_env_rank(void);
/* "mpirun" or "srun" (the launcher to name in messages), or NULL when there is none. */
const char *pp__mpi_env_launcher(void);

#endif /* PP_LAUNCHER_H */
