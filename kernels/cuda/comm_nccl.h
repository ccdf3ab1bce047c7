/* comm_nccl.h: the `nccl` transport (comm_nccl.cu): ranks are threads of one process, one GPU each, messages
 * moved by ncclSend/ncclRecv on each rank's CUDA stream. Declared here for the transport registry; defined
 * only when built with NCCL (PP_HAVE_NCCL). */
#ifndef PP_COMM_NCCL_H
#define PP_COMM_NCCL_H

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Needs the cuda backend and P <= GPU count (rank r on GPU r). NCCL has no tags: between two ranks, sends and
 * receives pair up in the order they are posted, and a tag or shape mismatch of a pair stops the run. */
extern const pp_transport_ops pp__transport_nccl;

#ifdef __cplusplus
}
#endif

#endif /* PP_COMM_NCCL_H */
