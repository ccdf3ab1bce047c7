/* mpi.c: the `mpi` transport: one process per rank (under mpirun or srun). Its setup and its table are here; its
 * messages in mpi_p2p.c, its reduces and the shards' sums in mpi_reduce.c, its waits in mpi_wait.c, the watch and the
 * deadlock confirmation in mpi_watch.c, its step end in mpi_step.c, its NCCL groups in mpi_nccl.c and the runtime's
 * collectives in mpi_collect.c; mpi_ctx.h holds the state they share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launcher.h"
#include "mpi_ctx.h"
#include "nccl_groups.h"

static void mpi_fini(pp_world *w);

static int mpi_init(pp_world *w) {
    int inited = 0, finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
        snprintf(w->error, sizeof w->error,
                 "MPI was already finalized in this process: the mpi transport runs once per process (start a "
                 "new mpirun for each run)");
        return -1;
    }
    MPI_Initialized(&inited);
    int owns = 0;
    if (!inited) {
        int provided = 0;
        /* one thread calls MPI for the run; the watch, a second one, needs MPI_THREAD_MULTIPLE */
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
            snprintf(w->error, sizeof w->error,
                     "MPI_Init failed: start pplab with mpirun -np P (or srun) and check the MPI installation");
            return -1;
        }
        owns = 1;
    }
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != w->P) {
        const char *launcher = pp__mpi_env_launcher();
        snprintf(w->error, sizeof w->error, "%s started %d processes but --stages %s%sis %d: use %s %d",
                 launcher ? launcher : "mpirun", size, w->cfg->D > 1 ? "x --dp " : "", w->cfg->T > 1 ? "x --tp " : "",
                 w->P,
                 launcher && !strcmp(launcher, "srun") ? "srun -n" : "mpirun -np", w->P);
        if (owns) MPI_Finalize();
        return -1;
    }
    mp_ctx *c = pp__xcalloc(1, sizeof *c);
    c->rank = rank;
    c->size = size;
    c->owns_mpi = owns;
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    c->tag_ub = flag && ub ? *ub : 32767; /* 32767: the least the MPI standard guarantees */
    MPI_Comm_dup(MPI_COMM_WORLD, &c->data);
    MPI_Comm_dup(MPI_COMM_WORLD, &c->ctl);
    MPI_Comm_dup(MPI_COMM_WORLD, &c->quiet);
    /* the reduce group (reduce.h) is the color, its members ranked in the summation order */
    c->D = pp__config_reduce_members(w->cfg);
    c->replica = pp__reduce_member(w->cfg, rank);
    MPI_Comm_split(MPI_COMM_WORLD, pp__reduce_group(w->cfg, rank), c->replica, &c->dp_parts);
    MPI_Comm_dup(c->dp_parts, &c->dp_grads);
    c->slots = pp__xcalloc((size_t)w->cfg->v, sizeof *c->slots);
    /* the tensor-parallel group: the shards of this rank's stage, ranked by shard (the sums' order) */
    c->T = w->cfg->T > 1 ? w->cfg->T : 1;
    c->shard = pp__config_rank_tp(w->cfg, rank);
    if (c->T > 1) {
        int tg = pp__config_rank_replica(w->cfg, rank) * w->cfg->P + pp__config_rank_pipe(w->cfg, rank);
        MPI_Comm_split(MPI_COMM_WORLD, tg, c->shard, &c->tp_parts);
        MPI_Comm_dup(c->tp_parts, &c->tp_data);
        MPI_Comm_dup(c->tp_parts, &c->tp_ctl);
    }
    /* a receive shorter than the message must come back as an error we can report, not abort the job */
    MPI_Comm_set_errhandler(c->data, MPI_ERRORS_RETURN);
    c->sent_to = pp__xcalloc((size_t)size, sizeof *c->sent_to);
    c->recv_from = pp__xcalloc((size_t)size, sizeof *c->recv_from);
    c->notice_from = pp__xcalloc((size_t)size, sizeof *c->notice_from);
    w->tp_ctx = c;
    w->local_rank = rank;
    /* a process's GPU follows its rank on its node, not in the world */
    pp__nccl_node_rank(MPI_COMM_WORLD, &w->node_rank, &w->node_size);
    int threads = MPI_THREAD_SINGLE;
    MPI_Query_thread(&threads);
    pp__mpi_watch_start(w, c, threads);
    if (w->cfg->backend && !strcmp(w->cfg->backend, "cuda") && pp__mpi_nccl_start(w, c)) {
        mpi_fini(w);
        return -1;
    }
    return 0;
}

/* How long a process that lost ranks waits at its exit for the launcher to end the job. */
static double exit_wait_s;

/* At the exit of a process that lost ranks, once its report is out: an mpirun whose rank exits while a node is
 * lost holds on to that node until its own keepalive gives the node up (oob_tcp_keepalive_*), and then ends the
 * job, this process with it; if it has not done so after exit_wait_s, this process ends anyway. */
static void wait_for_launcher_end(void) {
    fflush(NULL);
    struct timespec ts = {(time_t)exit_wait_s, 0};
    nanosleep(&ts, NULL);
}

static void mpi_fini(pp_world *w) {
    mp_ctx *c = ctx_of(w);
    if (!c) return;
    int lost = watch_lost(c) != NULL;
    pp__mpi_watch_stop(c);
    if (lost) {
        /* MPI cannot end without the lost ranks: this process leaves it unfinished, and the launcher ends the
         * job once the node is given up (see wait_for_launcher_end) */
        free(c->slots), free(c->ts), free(c->sent_to), free(c->recv_from), free(c->notice_from), free(c);
        w->tp_ctx = NULL;
        exit_wait_s = 3 * (w->cfg->deadline_s > 0 ? w->cfg->deadline_s : 10.0);
        atexit(wait_for_launcher_end);
        return;
    }
    if (c->nccl_dp) c->nccl->comm_free(c->nccl_dp);
    if (c->nccl_tp) c->nccl->comm_free(c->nccl_tp);
    MPI_Comm_free(&c->data);
    MPI_Comm_free(&c->ctl);
    MPI_Comm_free(&c->quiet);
    MPI_Comm_free(&c->dp_parts);
    MPI_Comm_free(&c->dp_grads);
    if (c->T > 1) MPI_Comm_free(&c->tp_parts), MPI_Comm_free(&c->tp_data), MPI_Comm_free(&c->tp_ctl);
    free(c->ts);
    free(c->slots);
    free(c->sent_to);
    free(c->recv_from);
    free(c->notice_from);
    int owns = c->owns_mpi;
    free(c);
    w->tp_ctx = NULL;
    /* after this, fork() (gnuplot, compilers) is safe again */
    if (owns) MPI_Finalize();
}

/* The mpi transport (see comm.h for each op's contract). The world owns the context from init to fini; the
 * transport owns each request's packed buffer (pp_request.tp) until step_end. */
const pp_transport_ops pp__transport_mpi = {
    .name = "mpi",
    .caps = PP_TRANSPORT_MPI_CAPS,
    .init = mpi_init,
    .post = pp__mpi_post,
    .wait = pp__mpi_wait,
    .rank_exit = pp__mpi_rank_exit,
    .step_end = pp__mpi_step_end,
    .wake_all = pp__mpi_wake_all,
    .fini = mpi_fini,
    .rank_failed = pp__mpi_rank_failed,
    .reduce_post = pp__mpi_reduce_post,
    .tp_post = pp__mpi_tp_post,
    .launched_rank = pp__mpi_launched_rank,
    .sum = pp__mpi_collect_sum,
    .gather = pp__mpi_collect_gather,
};
