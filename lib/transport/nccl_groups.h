/* nccl_groups.h: the CPU half of NCCL across processes, for the mpi transport with the cuda backend: which GPU a
 * process takes, and its data-parallel group's communicator, whose id the group agrees on over MPI. NCCL itself is
 * behind nccl_api.h's table, so the kit's tests run this half with a stand-in on machines without a GPU. */
#ifndef PP_NCCL_GROUPS_H
#define PP_NCCL_GROUPS_H

#include <mpi.h>

#include "nccl_api.h"


/* This process's rank among the processes of its node, and their count: the launcher's word where it gives one
 * (OMPI_COMM_WORLD_LOCAL_RANK from mpirun, SLURM_LOCALID from srun, MPI_LOCALRANKID from MPICH), else its rank in
 * a shared-memory split of world. Collective over world. */
void pp__nccl_node_rank(MPI_Comm world, int *rank, int *size);

/* The NCCL communicator of this process's data-parallel group (dp: the MPI communicator of the D processes that
 * hold its stage, ranked by replica, as the mpi transport makes it): the group's replica 0 asks for an id and
 * sends it to the others over dp, and each joins as member `replica` on GPU device. Collective over dp: every
 * member learns whether all of them joined. 0 with *comm set, or -1 with the reason (the first member's that
 * failed). */
int pp__nccl_group_init(MPI_Comm dp, int replica, int D, int device, const pp_nccl_api *api, void **comm,
                        char *err, size_t len);

#endif /* PP_NCCL_GROUPS_H */
