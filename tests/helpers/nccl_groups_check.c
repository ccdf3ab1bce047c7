/* nccl_groups_check.c: the CPU half of NCCL across processes (lib/transport/nccl_groups.c) under mpirun, with a
 * stand-in for NCCL; test_mpi and test_hosts start it and read what it prints. Each process prints one line:
 *   rank R stage S replica D node N/NS device G group H member M/MS
 * (its world rank, the stage and replica that rank holds, its rank among its node's processes and their count,
 * the GPU it takes, the fingerprint of its group's communicator id, and its place in the communicator as
 * comm_init was given it), or `rank R error: ...` when its group could not agree. The stand-in refuses comm_init
 * on the world rank named by PPLAB_TEST_NCCL_REFUSE.
 *   mpirun -np P*D nccl_groups_check P D DEVICES */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "nccl_groups.h"

static int devices;

typedef struct stand_in_comm {
    int nranks, rank, device;
    uint64_t id;
} stand_in_comm;

static int count(char *err, size_t len) { return devices; }

static int unique_id(unsigned char id[PP_NCCL_ID_BYTES], char *err, size_t len) {
    FILE *f = fopen("/dev/urandom", "rb");
    size_t got = f ? fread(id, 1, PP_NCCL_ID_BYTES, f) : 0;
    if (f) fclose(f);
    if (got != PP_NCCL_ID_BYTES) snprintf(err, len, "no /dev/urandom");
    return got == PP_NCCL_ID_BYTES ? 0 : -1;
}

static int comm_init(void **comm, int nranks, const unsigned char id[PP_NCCL_ID_BYTES], int rank, int device,
                     char *err, size_t len) {
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *refuse = getenv("PPLAB_TEST_NCCL_REFUSE");
    if (refuse && atoi(refuse) == me) {
        snprintf(err, len, "the stand-in refused world rank %d", me);
        return -1;
    }
    stand_in_comm *c = malloc(sizeof *c);
    *c = (stand_in_comm){nranks, rank, device, pp__hash_bytes(PP_HASH_INIT, id, PP_NCCL_ID_BYTES)};
    *comm = c;
    return 0;
}

static void comm_free(void *comm) { free(comm); }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) {
        if (me == 0) fprintf(stderr, "usage: mpirun -np P*D nccl_groups_check P D DEVICES\n");
        MPI_Finalize();
        return 2;
    }
    int P = atoi(argv[1]), D = atoi(argv[2]);
    devices = atoi(argv[3]);
    const pp_nccl_api api = {.device_count = count, .unique_id = unique_id, .comm_init = comm_init,
                             .comm_free = comm_free};
    /* the mpi transport's layout: world rank d*P + p holds stage p of replica d; its group is its stage's */
    MPI_Comm dp;
    MPI_Comm_split(MPI_COMM_WORLD, me % P, me / P, &dp);
    int node = -1, nodes = 0;
    pp__nccl_node_rank(MPI_COMM_WORLD, &node, &nodes);
    int device = node % api.device_count(NULL, 0);
    void *comm = NULL;
    char err[512];
    if (pp__nccl_group_init(dp, me / P, D, device, &api, &comm, err, sizeof err) == 0) {
        const stand_in_comm *c = comm;
        printf("rank %d stage %d replica %d node %d/%d device %d group %016llx member %d/%d\n", me, me % P, me / P,
               node, nodes, c->device, (unsigned long long)c->id, c->rank, c->nranks);
        api.comm_free(comm);
    } else {
        printf("rank %d error: %s\n", me, err);
    }
    fflush(stdout);
    MPI_Comm_free(&dp);
    MPI_Finalize();
    return size == P * D ? 0 : 1;
}
