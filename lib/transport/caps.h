/* caps.h: what each transport can do (its capabilities), known by its name whether or not it was built, so that a
 * caller asks what a transport can do, and a refusal can name the transports that can, before anything is built.
 * Includes nothing: the configuration's check (lib/run/config.c) asks it from below the transports. */
#ifndef PP_CAPS_H
#define PP_CAPS_H

#include <stddef.h>

/* What a transport can do, bits of pp_transport_ops.caps: every caller asks these, never the transport's name. */
enum {
    PP_TRANSPORT_TP_SUMS = 1 << 0,    /* the shards' sums of --tp (tp_post is set) */
    PP_TRANSPORT_DP_REDUCES = 1 << 1, /* the replicas' gradient reduces of --dp (reduce_post is set) */
    PP_TRANSPORT_GRID = 1 << 2,       /* the grid lab: rank 0 reads the submission's placement before the run and
                                       * every rank runs where it says */
    PP_TRANSPORT_PROCESSES = 1 << 3,  /* one process per rank, started by a launcher (mpirun, srun), which says the
                                       * process's rank (launched_rank is set; sum and gather merge the results) */
    PP_TRANSPORT_GRADES = 1 << 4,     /* pplab grade runs its tests on it (--transport) */
    PP_TRANSPORT_ORDERS = 1 << 5,     /* pplab run --order runs a file's order on it */
};

/* Each transport's capabilities; its table (pp_transport_ops.caps) says the same (tests/test_comm.c holds both). */
/* threads.c: the default */
#define PP_TRANSPORT_THREADS_CAPS                                                                                    \
    (PP_TRANSPORT_TP_SUMS | PP_TRANSPORT_DP_REDUCES | PP_TRANSPORT_GRID | PP_TRANSPORT_GRADES | PP_TRANSPORT_ORDERS)
/* mpi.c and mpi_*.c */
#define PP_TRANSPORT_MPI_CAPS                                                                                        \
    (PP_TRANSPORT_TP_SUMS | PP_TRANSPORT_DP_REDUCES | PP_TRANSPORT_GRID | PP_TRANSPORT_PROCESSES | PP_TRANSPORT_GRADES)
/* nccl.cu */
#define PP_TRANSPORT_NCCL_CAPS (PP_TRANSPORT_TP_SUMS | PP_TRANSPORT_DP_REDUCES)

/* The i-th transport the kit knows, built or not, threads (the default) first; NULL past the last. */
const char *pp__transport_name(int i);
/* What the transport called name can do (PP_TRANSPORT_* bits; NULL: the default), built or not; 0 for a name no
 * transport has. */
unsigned pp__transport_caps(const char *name);
/* The names of the transports that can do all of caps (0: every transport), built or not, in the kit's order,
 * joined by sep and the last one by last ("threads, mpi and nccl") into buf, which it returns. */
const char *pp__transport_names(unsigned caps, char *buf, size_t len, const char *sep, const char *last);
/* Under a launcher (mpirun, srun): the transport a process runs when asked for name (NULL: the default): name
 * itself when its ranks are processes, the first transport whose ranks are processes when name is the default;
 * NULL when name keeps its ranks as threads of one process (nccl) or is unknown. */
const char *pp__transport_launched(const char *name);

#endif /* PP_CAPS_H */
