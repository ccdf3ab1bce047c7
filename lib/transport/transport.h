/* transport.h: the registry of message transports (threads always; mpi when built with Open MPI; nccl with NCCL):
 * a caller asks a transport's capabilities (caps.h), never its name. */
#ifndef PP_TRANSPORT_H
#define PP_TRANSPORT_H

#include <stdio.h>

#include "comm.h"
#include "launcher.h"

/* The transports, one file each in lib/transport/ (mpi's in several); transport.c is the one file that knows which
 * were built, and caps.h says what each one can do. */
/* threads.c: ranks are threads of one process; exact deadlock detection. Always built; the default. */
extern const pp_transport_ops pp__transport_threads;
/* mpi.c and mpi_*.c: one process per rank under mpirun or srun; built with Open MPI (PP_HAVE_MPI). */
extern const pp_transport_ops pp__transport_mpi;
/* nccl.cu: ranks are threads of one process, rank r on GPU r, messages by ncclSend/ncclRecv on each rank's stream;
 * built with NCCL (PP_HAVE_NCCL). Needs the cuda backend and P <= GPU count. NCCL has no tags: between two ranks,
 * sends and receives pair up in the order they are posted, and a tag or shape mismatch of a pair stops the run. */
extern const pp_transport_ops pp__transport_nccl;

/* The transport called name ("threads", "mpi", "nccl"; NULL means threads), or NULL with a one-line reason in
 * err when it is unknown or not compiled in. */
const pp_transport_ops *pp__transport_find(const char *name, char *err, size_t errlen);
/* 1 when the transport called name (NULL: the default) is compiled in. */
int pp__transport_built(const char *name);
/* One line per transport for `pplab info`. */
void pp__transport_describe_all(FILE *out);

/* ---- the runtime's collectives, where every rank is its own process (PP_TRANSPORT_PROCESSES) ------------ */

/* Sums v[0..n) over all processes of w, in place; a no-op where one process holds every rank. */
void pp__transport_sum(pp_world *w, double *v, int n);
/* Gathers len bytes from every process on rank 0, which gets a malloc'd concatenation in rank order (the caller
 * frees it) and each part's length in lens[0..P); NULL elsewhere, and where one process holds every rank. Both fail
 * the run instead (PP_ERR_LOST, v untouched, NULL) when rank 0 lost ranks meanwhile. */
void *pp__transport_gather(pp_world *w, const void *buf, size_t len, size_t *lens);

#endif /* PP_TRANSPORT_H */
