/* nccl_api.h: what the mpi transport needs of NCCL when its ranks compute on GPUs, as a table of functions: the
 * real one is the CUDA plugin's (transport/nccl.cu exports pp__nccl_api, looked up at run time, so that no C file
 * needs CUDA or NCCL to build); the kit's tests give a stand-in. Plain C: nvcc and the C compiler both read it. */
#ifndef PP_NCCL_API_H
#define PP_NCCL_API_H

#include <stddef.h>

#define PP_NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */

typedef struct pp_nccl_api {
    /* GPUs this process sees; 0 (with the reason in err) when none */
    int (*device_count)(char *err, size_t len);
    /* a fresh communicator id (ncclGetUniqueId); 0, or -1 with the reason */
    int (*unique_id)(unsigned char id[PP_NCCL_ID_BYTES], char *err, size_t len);
    /* this process's member `rank` of the nranks-member communicator id, on GPU device (ncclCommInitRank) */
    int (*comm_init)(void **comm, int nranks, const unsigned char id[PP_NCCL_ID_BYTES], int rank, int device,
                     char *err, size_t len);
    void (*comm_free)(void *comm);
    /* The gradient reduce's data (reduce.h): starts gathering every member's n floats (this one's: mine, host
     * memory) and summing them in member order 0, 1, ..., nranks-1, which every member does alike (the same bits
     * as every other transport); returns the operation, or NULL with the reason */
    void *(*sum_start)(void *comm, int nranks, const float *mine, size_t n, char *err, size_t len);
    /* 1 once done, 0 while running, -1 when it failed */
    int (*sum_test)(void *op);
    /* copies a done operation's sum into sum (n floats, host memory) and frees it */
    void (*sum_end)(void *op, float *sum);
} pp_nccl_api;

#endif /* PP_NCCL_API_H */
