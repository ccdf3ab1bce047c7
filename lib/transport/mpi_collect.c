/* mpi_collect.c: the runtime's collectives on the mpi transport (comm.h's launched_rank, sum and gather), with which
 * rank 0 merges every process's results into the one a threads run gives. */
#include <stdlib.h>

#include "launcher.h"
#include "mpi_ctx.h"

/* launched_rank: the launcher's environment says it (launcher.h). */
int pp__mpi_launched_rank(void) { return pp__mpi_env_rank(); }

void pp__mpi_collect_sum(pp_world *w, double *v, int n) {
    mp_ctx *c = ctx_of(w);
    if (!c || n <= 0) return;
    MPI_Request q;
    MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, c->ctl, &q);
    if (pp__mpi_waitall(c, 1, &q, MPI_STATUSES_IGNORE)) pp__world_fail(w, PP_ERR_LOST, watch_lost(c));
}

void *pp__mpi_collect_gather(pp_world *w, const void *buf, size_t len, size_t *lens) {
    mp_ctx *c = ctx_of(w);
    if (!c) return NULL;
    int P = c->size, mylen = (int)len;
    PP_ASSERT(len < (size_t)1 << 30);
    int *counts = c->rank == 0 ? pp__xcalloc((size_t)P, sizeof *counts) : NULL;
    MPI_Request q;
    MPI_Igather(&mylen, 1, MPI_INT, counts, 1, MPI_INT, 0, c->ctl, &q);
    if (pp__mpi_waitall(c, 1, &q, MPI_STATUSES_IGNORE)) {
        pp__world_fail(w, PP_ERR_LOST, watch_lost(c));
        free(counts);
        return NULL;
    }
    int *displs = NULL;
    unsigned char *all = NULL;
    if (c->rank == 0) {
        displs = pp__xcalloc((size_t)P, sizeof *displs);
        size_t total = 0;
        for (int q = 0; q < P; q++) {
            displs[q] = (int)total;
            total += (size_t)counts[q];
            lens[q] = (size_t)counts[q];
        }
        PP_ASSERT(total < (size_t)1 << 31);
        all = pp__xmalloc(total ? total : 1);
    }
    MPI_Igatherv(buf, mylen, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, c->ctl, &q);
    int lost = pp__mpi_waitall(c, 1, &q, MPI_STATUSES_IGNORE);
    free(counts);
    free(displs);
    if (lost) {
        pp__world_fail(w, PP_ERR_LOST, watch_lost(c));
        free(all);
        return NULL;
    }
    return all;
}
