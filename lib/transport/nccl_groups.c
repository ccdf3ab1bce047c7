/* nccl_groups.c: the CPU half of NCCL across processes (nccl_groups.h): the node rank that picks a process's GPU,
 * and a data-parallel group's communicator, its id agreed over MPI. */
#include "nccl_groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A launcher's local rank, or -1 when none says. */
static int env_local_rank(void) {
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = getenv(names[i]);
        char *end;
        long r = v && *v ? strtol(v, &end, 10) : -1;
        if (v && *v && !*end && r >= 0 && r < 1 << 20) return (int)r;
    }
    return -1;
}

void pp__nccl_node_rank(MPI_Comm world, int *rank, int *size) {
    MPI_Comm node;
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, rank);
    MPI_Comm_size(node, size);
    MPI_Comm_free(&node);
    int r = env_local_rank();
    if (r >= 0 && r < *size) *rank = r;
}

int pp__nccl_group_init(MPI_Comm dp, int replica, int D, int device, const pp_nccl_api *api, void **comm,
                        char *err, size_t len) {
    /* the id, or replica 0's reason why there is none, in one broadcast */
    struct {
        int ok;
        unsigned char id[PP_NCCL_ID_BYTES];
        char why[256];
    } head;
    memset(&head, 0, sizeof head);
    if (replica == 0) head.ok = api->unique_id(head.id, head.why, sizeof head.why) == 0;
    MPI_Bcast(&head, (int)sizeof head, MPI_BYTE, 0, dp);
    char mine[256] = "";
    *comm = NULL;
    int ok = head.ok && api->comm_init(comm, D, head.id, replica, device, mine, sizeof mine) == 0;
    if (!head.ok) snprintf(mine, sizeof mine, "%s", head.why);
    /* all join or none: the lowest member that failed says why */
    int failed = ok ? D : replica, first = D;
    MPI_Allreduce(&failed, &first, 1, MPI_INT, MPI_MIN, dp);
    if (first == D) return 0;
    char why[256];
    memcpy(why, mine, sizeof why);
    MPI_Bcast(why, (int)sizeof why, MPI_CHAR, first, dp);
    if (*comm) api->comm_free(*comm), *comm = NULL;
    snprintf(err, len, "NCCL for the gradient reduce: replica %d of the group: %s", first, why);
    return -1;
}
