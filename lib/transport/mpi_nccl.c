/* mpi_nccl.c: NCCL groups for the mpi transport with the cuda backend: the replicas' reduces and the shards' sums
 * travel between their GPUs on communicators of their own, agreed over MPI (nccl_groups.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_ctx.h"
#include "nccl_groups.h"
#include "plugin.h"

/* With the cuda backend, when the plugin has NCCL: the reduce's gradients travel between the group's GPUs on a
 * communicator of their own (nccl_groups.c agrees on it over MPI). Without NCCL, or when two members of a group
 * share a GPU (NCCL refuses that), they go over MPI through host memory, as on the CPU: the same bits either way.
 * 0, or -1 with the reason in w->error. */
/* An NCCL communicator for the group of n members that comm ranks (this rank its `member`), into *out, when no
 * two members share a GPU; else *out stays NULL and the group's sums go over MPI through host memory. 0, or -1
 * with the reason in w->error. */
static int nccl_group(pp_world *w, mp_ctx *c, MPI_Comm comm, int member, int n, int ndev, void **out) {
    char err[512] = "";
    /* a member's GPU: its host (by name) and device; the group uses NCCL only when no two are the same */
    struct {
        char host[64];
        int device;
    } mine, *group = pp__xcalloc((size_t)n, sizeof *group);
    memset(&mine, 0, sizeof mine);
    snprintf(mine.host, sizeof mine.host, "%s", c->hosts[c->rank]);
    mine.device = w->node_rank % ndev;
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, group, (int)sizeof mine, MPI_BYTE, comm);
    int shared = 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < a; b++) shared |= group[a].device == group[b].device && !strcmp(group[a].host, group[b].host);
    free(group);
    if (shared) return 0;
    if (pp__nccl_group_init(comm, member, n, mine.device, c->nccl, out, err, sizeof err)) {
        snprintf(w->error, sizeof w->error, "%s", err);
        return -1;
    }
    return 0;
}

/* With the cuda backend: NCCL for the replicas' reduces and for the shards' sums, each group whose members have
 * GPUs of their own. */
int pp__mpi_nccl_start(pp_world *w, mp_ctx *c) {
    c->nccl = (const pp_nccl_api *)pp__plugin_symbol("pp__nccl_api", NULL, 0);
    if (!c->nccl || (c->D < 2 && c->T < 2)) return 0;
    char err[512] = "";
    int ndev = c->nccl->device_count(err, sizeof err), ok = ndev > 0, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c->ctl);
    if (!all) {
        snprintf(w->error, sizeof w->error, "%s", err[0] ? err : "another process sees no GPU: use --backend cpu");
        return -1;
    }
    if (c->D > 1 && nccl_group(w, c, c->dp_grads, c->replica, c->D, ndev, &c->nccl_dp)) return -1;
    if (c->T > 1 && nccl_group(w, c, c->tp_data, c->shard, c->T, ndev, &c->nccl_tp)) return -1;
    return 0;
}
