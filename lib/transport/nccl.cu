/* nccl.cu: the `nccl` transport. Ranks are threads of one process, rank r on GPU r (ncclCommInitAll, one
 * communicator per rank); bytes move with ncclSend/ncclRecv on the rank's own backend stream, so a received
 * tensor is ordered before the kernels that read it without any host synchronisation.
 *
 * Matching. NCCL has no tags: between two ranks, the k-th send of A to B meets the k-th receive of B from A. So
 * this transport pairs requests per (source, destination) in post order, on the host, before anything reaches
 * NCCL, and checks each pair's tag and shape there: a mismatch stops the run naming both ops instead of
 * corrupting data or hanging the GPU. A program that relies on tags to reorder messages between the same two
 * ranks (legal with the threads transport) is refused here with a hint.
 *
 * Progress. A request is issued to NCCL by its own rank, in wait(), once it is paired: every paired and not yet
 * issued request of the rank goes out in one ncclGroupStart/End, in post order (so the per-pair order NCCL
 * relies on is kept, and grouped isend/irecv pairs cannot block each other). wait() returns when its requests
 * are paired and issued, which is NCCL's rendezvous as the host sees it. A request whose partner is never
 * posted is reported when the partner rank returns from its step, or after the run's deadline.
 *
 * Several ranks on one GPU are not supported by NCCL (ncclCommInitAll refuses duplicate devices); for that
 * case the threads transport copies between the ranks' buffers with the cuda backend's copy(). */
#include "cuda/cuda_common.h"


#include <errno.h>
#include <nccl.h>
#include <pthread.h>
#include <setjmp.h>
#include <string.h>
#include <time.h>

extern "C" {
#include "comm.h"
#include "rank.h"
#include "reduce.h"
#include "tensor.h"
#include "transport.h"
#include "transport/nccl_api.h"
}

/* A FIFO of unpaired requests of one kind for one (source, destination), linked through pp_request.next. */
typedef struct nc_queue {
    pp_request *head, *tail;
} nc_queue;

typedef struct nc_rank {
    pthread_cond_t cv;
    int exited;
    pp_request **posted;     /* this step's requests in post order */
    int nposted, cap;
    int first_unissued;      /* posted[0..first_unissued) are all issued */
} nc_rank;

typedef struct nc_ctx {
    pthread_mutex_t mu;
    int P;
    ncclComm_t *comms;
    nc_rank *ranks;
    nc_queue *sends, *recvs; /* [src * P + dst] */
} nc_ctx;

/* pp_request.tp: the paired partner while unissued, or this marker once the request went to NCCL. */
static pp_request nc_issued_mark;

static nc_ctx *ctx_of(pp_world *w) { return (nc_ctx *)w->tp_ctx; }


static void queue_push(nc_queue *q, pp_request *r)
{
    r->next = NULL;
    if (q->tail) q->tail->next = r;
    else q->head = r;
    q->tail = r;
}

static pp_request *queue_pop(nc_queue *q)
{
    pp_request *r = q->head;
    if (!r) return NULL;
    q->head = r->next;
    if (!q->head) q->tail = NULL;
    r->next = NULL;
    return r;
}

/* The stream and communicator rank r uses; aborts r unless its backend is cuda on GPU r. */
static cudaStream_t rank_stream(pp_world *w, int r)
{
    pp_backend *be = w->ranks[r].be;
    if (!be || be->ops != &pp__backend_cuda_ops || ((pp_cuda_ctx *)be->ctx)->dev != r)
        pp__rank_abort(&w->ranks[r], PP_ERR_CONFIG, "run the nccl transport with --backend cuda",
                       "the nccl transport needs rank %d's tensors on GPU %d", r, r);
    return ((pp_cuda_ctx *)be->ctx)->stream;
}

/* ---- transport ops ----------------------------------------------------------------------------------- */

static int nccl_init(pp_world *w)
{
    int P = w->P, ndev = 0;
    if (w->local_rank != -1) {
        snprintf(w->error, sizeof w->error,
                 "the nccl transport runs ranks as threads of one process: do not start it under mpirun");
        return -1;
    }
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < P) {
        (void)cudaGetLastError();
        snprintf(w->error, sizeof w->error,
                 "the nccl transport needs one GPU per rank: %d ranks but %d GPU%s here; use --transport threads "
                 "(several ranks per GPU) or fewer ranks (--stages x --dp x --tp)",
                 P, e == cudaSuccess ? ndev : 0, ndev == 1 ? "" : "s");
        return -1;
    }
    nc_ctx *c = (nc_ctx *)pp__xcalloc(1, sizeof *c);
    c->P = P;
    c->comms = (ncclComm_t *)pp__xcalloc((size_t)P, sizeof *c->comms);
    int *devs = (int *)pp__xcalloc((size_t)P, sizeof *devs);
    for (int i = 0; i < P; i++) devs[i] = i;
    ncclResult_t nr = ncclCommInitAll(c->comms, P, devs);
    free(devs);
    if (nr != ncclSuccess) {
        snprintf(w->error, sizeof w->error, "ncclCommInitAll failed for %d GPUs: %s; check nvidia-smi, or use "
                 "--transport threads", P, ncclGetErrorString(nr));
        free(c->comms);
        free(c);
        return -1;
    }
    pthread_mutex_init(&c->mu, NULL);
    c->ranks = (nc_rank *)pp__xcalloc((size_t)P, sizeof *c->ranks);
    for (int i = 0; i < P; i++) pthread_cond_init(&c->ranks[i].cv, NULL);
    c->sends = (nc_queue *)pp__xcalloc((size_t)P * P, sizeof *c->sends);
    c->recvs = (nc_queue *)pp__xcalloc((size_t)P * P, sizeof *c->recvs);
    w->tp_ctx = c;
    return 0;
}

/* Pairs req with the oldest unpaired opposite request of the same two ranks, or queues it. */
static void nccl_post(pp_world *w, pp_request *req)
{
    nc_ctx *c = ctx_of(w);
    int src = req->is_send ? req->rank : req->peer, dst = req->is_send ? req->peer : req->rank;
    req->done = 0;
    req->next = NULL;
    req->tp = NULL;
    pthread_mutex_lock(&c->mu);
    nc_rank *nr = &c->ranks[req->rank];
    if (nr->nposted == nr->cap) {
        nr->cap = nr->cap ? 2 * nr->cap : 64;
        nr->posted = (pp_request **)pp__xrealloc(nr->posted, (size_t)nr->cap * sizeof *nr->posted);
    }
    nr->posted[nr->nposted++] = req;
    nc_queue *other = req->is_send ? &c->recvs[src * c->P + dst] : &c->sends[src * c->P + dst];
    pp_request *peer = queue_pop(other);
    if (!peer) {
        queue_push(req->is_send ? &c->sends[src * c->P + dst] : &c->recvs[src * c->P + dst], req);
        pthread_mutex_unlock(&c->mu);
        return;
    }
    pp_request *s = req->is_send ? req : peer, *v = req->is_send ? peer : req;
    int bad_tag = s->tag != v->tag;
    int bad_shape = s->t->rows != v->t->rows || s->t->cols != v->t->cols || s->t->dtype != v->t->dtype;
    if (bad_tag || bad_shape) {
        char so[96], vo[96], sd[48], vd[48];
        pp__request_describe(s, so, sizeof so);
        pp__request_describe(v, vo, sizeof vo);
        pp__tensor_describe(s->t, sd, sizeof sd);
        pp__tensor_describe(v->t, vd, sizeof vd);
        pthread_mutex_unlock(&c->mu);
        if (bad_tag)
            pp__rank_abort(&w->ranks[req->rank], PP_ERR_USAGE,
                           "NCCL pairs messages between two ranks in posting order: post the receives in the "
                           "order the sends are posted, or use --transport threads",
                           "rank %d %s is paired with rank %d %s (nccl has no tags)", s->rank, so, v->rank, vo);
        pp__rank_abort(&w->ranks[req->rank], PP_ERR_SHAPE,
                       "send exactly the tensor the receiver expects: pp_recv() receives one activation "
                       "(micro-batch size x seq rows, hidden columns), forward or backward",
                       "rank %d %s sent %s but rank %d %s expects %s", s->rank, so, sd, v->rank, vo, vd);
    }
    s->tp = v;
    v->tp = s;
    s->msg_ready = v->msg_ready = s->t->ready;
    pthread_cond_signal(&c->ranks[peer->rank].cv);
    pthread_mutex_unlock(&c->mu);
}

/* Issues every paired, unissued request of rank r in post order, in one NCCL group. Called without the lock
 * (NCCL may block while it connects two GPUs the first time); only rank r's thread touches these requests. */
static void issue_paired(pp_world *w, nc_ctx *c, int r)
{
    nc_rank *nr = &c->ranks[r];
    pthread_mutex_lock(&c->mu);
    int n = 0, first = nr->first_unissued, count = nr->nposted;
    pp_request **todo = (pp_request **)pp__xcalloc((size_t)(count - first) + 1, sizeof *todo);
    for (int k = first; k < count; k++) {
        pp_request *q = nr->posted[k];
        if (q->tp && q->tp != &nc_issued_mark) todo[n++] = q;
    }
    pthread_mutex_unlock(&c->mu);
    if (n) {
        cudaStream_t st = rank_stream(w, r);
        PP_CUDA_CHECK(cudaSetDevice(r));
        ncclResult_t res = ncclGroupStart();
        for (int k = 0; k < n && res == ncclSuccess; k++) {
            pp_request *q = todo[k];
            if (q->is_send) res = ncclSend(q->t->data, q->t->bytes, ncclUint8, q->peer, c->comms[r], st);
            else res = ncclRecv(q->t->data, q->t->bytes, ncclUint8, q->peer, c->comms[r], st);
        }
        ncclResult_t end = ncclGroupEnd();
        if (res == ncclSuccess) res = end;
        if (res != ncclSuccess)
            pp__rank_abort(&w->ranks[r], PP_ERR_BACKEND, "check the GPUs with nvidia-smi; NCCL_DEBUG=INFO says more",
                           "NCCL send/receive of rank %d failed: %s", r, ncclGetErrorString(res));
    }
    pthread_mutex_lock(&c->mu);
    for (int k = 0; k < n; k++) {
        todo[k]->tp = &nc_issued_mark;
        __atomic_store_n(&todo[k]->done, 1, __ATOMIC_RELEASE);
    }
    while (nr->first_unissued < nr->nposted && nr->posted[nr->first_unissued]->tp == &nc_issued_mark)
        nr->first_unissued++;
    pthread_mutex_unlock(&c->mu);
    free(todo);
}

static void nccl_wait(pp_world *w, int r, pp_request **reqs, int n)
{
    nc_ctx *c = ctx_of(w);
    double limit = w->cfg->deadline_s > 0 ? w->cfg->deadline_s : 60.0;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)limit;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if (__atomic_load_n(&w->failed, __ATOMIC_ACQUIRE)) {
            pthread_mutex_unlock(&c->mu);
            pp__rank_bail(&w->ranks[r]);
        }
        /* a message is ready once paired; a gradient reduce (decided in memory, reduce.c) once done */
        const pp_request *missing = NULL;
        for (int k = 0; k < n && !missing; k++)
            if (reqs[k]->is_reduce ? !__atomic_load_n(&reqs[k]->done, __ATOMIC_ACQUIRE) : !reqs[k]->tp)
                missing = reqs[k];
        if (!missing) break;
        int peer_now = missing->is_reduce ? __atomic_load_n(&missing->peer, __ATOMIC_ACQUIRE) : missing->peer;
        int gone = peer_now >= 0 && c->ranks[peer_now].exited;
        int timeout = !gone && pthread_cond_timedwait(&c->ranks[r].cv, &c->mu, &until) == ETIMEDOUT;
        if (gone || timeout) {
            char op[96];
            pp__request_describe(missing, op, sizeof op);
            int peer = peer_now;
            pthread_mutex_unlock(&c->mu);
            if (gone)
                pp__rank_abort(&w->ranks[r], PP_ERR_DEADLOCK,
                               "every send needs a matching receive on the peer, posted in the same order",
                               "deadlock: rank %d waits in %s but rank %d returned from its step without posting "
                               "the matching op", r, op, peer);
            pp__rank_abort(&w->ranks[r], PP_ERR_DEADLOCK,
                           "each rank must post its receives in the order its peer posts the sends; pair "
                           "neighbouring sends and receives with isend/irecv and one wait",
                           "deadlock: rank %d waited %.0f s in %s and rank %d never posted the matching op", r,
                           limit, op, peer);
        }
    }
    pthread_mutex_unlock(&c->mu);
    issue_paired(w, c, r);
}

static void nccl_rank_exit(pp_world *w, int r)
{
    nc_ctx *c = ctx_of(w);
    pthread_mutex_lock(&c->mu);
    c->ranks[r].exited = 1;
    for (int i = 0; i < c->P; i++) pthread_cond_broadcast(&c->ranks[i].cv);
    pthread_mutex_unlock(&c->mu);
}

/* Reports unpaired requests (messages sent and never received, or receives never fed), then lets every
 * issued transfer finish and resets the step's state. */
static int nccl_step_end(pp_world *w)
{
    nc_ctx *c = ctx_of(w);
    int P = c->P, bad = 0;
    char msg[1024];
    size_t len = 0;
    msg[0] = '\0';
    for (int i = 0; i < P * P; i++)
        for (int kind = 0; kind < 2; kind++)
            for (pp_request *q = (kind ? c->recvs : c->sends)[i].head; q; q = q->next) {
                char op[96];
                if (!bad)
                    len += (size_t)snprintf(msg + len, sizeof msg - len,
                                            "ops never paired by the end of the step (nccl):");
                bad++;
                if (len < sizeof msg - 120)
                    len += (size_t)snprintf(msg + len, sizeof msg - len, " rank %d %s %s;", q->rank,
                                            kind ? "receive" : "send", pp__request_describe(q, op, sizeof op));
            }
    if (bad) pp__world_fail(w, PP_ERR_UNCONSUMED, msg);
    for (int r = 0; r < P; r++) {
        pp_backend *be = w->ranks[r].be;
        if (be && be->ops->sync) be->ops->sync(be->ctx);
        c->ranks[r].nposted = 0;
        c->ranks[r].first_unissued = 0;
        c->ranks[r].exited = 0;
    }
    memset(c->sends, 0, (size_t)P * P * sizeof *c->sends);
    memset(c->recvs, 0, (size_t)P * P * sizeof *c->recvs);
    return bad ? -1 : 0;
}

static void nccl_wake_all(pp_world *w)
{
    nc_ctx *c = ctx_of(w);
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < c->P; i++) pthread_cond_broadcast(&c->ranks[i].cv);
    pthread_mutex_unlock(&c->mu);
}

/* A reduce decided in memory: done under the lock that the waiter sleeps on. */
static void nccl_complete(pp_world *w, pp_request *q)
{
    nc_ctx *c = ctx_of(w);
    pthread_mutex_lock(&c->mu);
    __atomic_store_n(&q->done, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&c->ranks[q->rank].cv);
    pthread_mutex_unlock(&c->mu);
}

/* The ranks share this process: the parts meet in memory, and the sum is taken on the host (reduce.c). */
static void nccl_reduce_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *grads)
{
    pp__reduce_local_post(w, rank, q, part, grads, nccl_complete);
}

/* A shards' sum (--tp), the same way: in memory, added in shard order on the host, as every transport adds it. */
static void nccl_tp_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *data)
{
    pp__reduce_tp_post(w, rank, q, part, data, nccl_complete);
}

static void nccl_fini(pp_world *w)
{
    nc_ctx *c = ctx_of(w);
    if (!c) return;
    for (int i = 0; i < c->P; i++) {
        ncclCommDestroy(c->comms[i]);
        pthread_cond_destroy(&c->ranks[i].cv);
        free(c->ranks[i].posted);
    }
    pthread_mutex_destroy(&c->mu);
    free(c->comms);
    free(c->ranks);
    free(c->sends);
    free(c->recvs);
    free(c);
    w->tp_ctx = NULL;
}

const pp_transport_ops pp__transport_nccl = {
    /* name */ "nccl",
    /* caps */ PP_TRANSPORT_NCCL_CAPS,
    /* init */ nccl_init,
    /* post */ nccl_post,
    /* wait */ nccl_wait,
    /* rank_exit */ nccl_rank_exit,
    /* step_end */ nccl_step_end,
    /* wake_all */ nccl_wake_all,
    /* fini */ nccl_fini,
    /* rank_failed: NCCL cannot cancel a posted operation, so the first failure stops the run */ nullptr,
    /* reduce_post */ nccl_reduce_post,
    /* tp_post */ nccl_tp_post,
    /* launched_rank, sum, gather: every rank is a thread of this process */ nullptr, nullptr, nullptr,
};

/* ---- NCCL across processes: the table the mpi transport uses with the cuda backend (nccl_api.h) ------------ */

static_assert(sizeof(ncclUniqueId) == PP_NCCL_ID_BYTES, "ncclUniqueId changed size: update PP_NCCL_ID_BYTES");

static int api_device_count(char *err, size_t len)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1) {
        (void)cudaGetLastError();
        snprintf(err, len, "no CUDA device: use --backend cpu (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices");
        return 0;
    }
    return n;
}

static int api_unique_id(unsigned char id[PP_NCCL_ID_BYTES], char *err, size_t len)
{
    ncclUniqueId u;
    ncclResult_t r = ncclGetUniqueId(&u);
    if (r != ncclSuccess) {
        snprintf(err, len, "ncclGetUniqueId failed: %s (NCCL_DEBUG=INFO says more)", ncclGetErrorString(r));
        return -1;
    }
    memcpy(id, &u, sizeof u);
    return 0;
}

/* A member's communicator, with the device and the stream its reduces run on. */
typedef struct api_comm {
    ncclComm_t comm;
    int device;
    cudaStream_t stream;
} api_comm;

static int api_comm_init(void **out, int nranks, const unsigned char id[PP_NCCL_ID_BYTES], int rank, int device,
                         char *err, size_t len)
{
    api_comm *c = (api_comm *)pp__xcalloc(1, sizeof *c);
    c->device = device;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(err, len, "GPU %d: %s", device, cudaGetErrorString(e));
        free(c);
        return -1;
    }
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    ncclResult_t r = ncclCommInitRank(&c->comm, nranks, u, rank);
    if (r != ncclSuccess) {
        snprintf(err, len, "ncclCommInitRank (member %d of %d, GPU %d) failed: %s; NCCL_DEBUG=INFO says why, "
                 "NCCL_SOCKET_IFNAME picks the network", rank, nranks, device, ncclGetErrorString(r));
        cudaStreamDestroy(c->stream);
        free(c);
        return -1;
    }
    *out = c;
    return 0;
}

static void api_comm_free(void *p)
{
    api_comm *c = (api_comm *)p;
    if (!c) return;
    cudaSetDevice(c->device);
    ncclCommDestroy(c->comm);
    cudaStreamDestroy(c->stream);
    free(c);
}

/* sum[i] = all[0][i] + all[1][i] + ... in member order, one rounding per addition (no contraction, no
 * reassociation): the bits the CPU's loop gives. */
__global__ void sum_in_order(const float *all, int nranks, size_t n, float *sum)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float s = all[i];
        for (int d = 1; d < nranks; d++) s = __fadd_rn(s, all[(size_t)d * n + i]);
        sum[i] = s;
    }
}

/* One reduce's data on its way: the member's floats, everyone's, the sum, and the event that says it is done. */
typedef struct api_sum {
    api_comm *c;
    size_t n;
    float *mine, *all, *sum;
    cudaEvent_t done;
} api_sum;

static void *api_sum_start(void *comm, int nranks, const float *mine, size_t n, char *err, size_t len)
{
    api_comm *c = (api_comm *)comm;
    api_sum *s = (api_sum *)pp__xcalloc(1, sizeof *s);
    s->c = c, s->n = n;
    cudaSetDevice(c->device);
    cudaError_t e = cudaMalloc(&s->mine, n * sizeof(float));
    if (e == cudaSuccess) e = cudaMalloc(&s->all, (size_t)nranks * n * sizeof(float));
    if (e == cudaSuccess) e = cudaMalloc(&s->sum, n * sizeof(float));
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaMemcpyAsync(s->mine, mine, n * sizeof(float), cudaMemcpyHostToDevice, c->stream);
    ncclResult_t r = ncclSuccess;
    if (e == cudaSuccess) r = ncclAllGather(s->mine, s->all, n, ncclFloat32, c->comm, c->stream);
    if (e == cudaSuccess && r == ncclSuccess) {
        sum_in_order<<<(unsigned)((n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024), 256, 0, c->stream>>>(s->all, nranks, n,
                                                                                                    s->sum);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess && r == ncclSuccess) e = cudaEventRecord(s->done, c->stream);
    if (e != cudaSuccess || r != ncclSuccess) {
        snprintf(err, len, "the gradient reduce on NCCL failed: %s",
                 r != ncclSuccess ? ncclGetErrorString(r) : cudaGetErrorString(e));
        cudaFree(s->mine), cudaFree(s->all), cudaFree(s->sum);
        free(s);
        return NULL;
    }
    return s;
}

static int api_sum_test(void *op)
{
    api_sum *s = (api_sum *)op;
    cudaSetDevice(s->c->device);
    cudaError_t e = cudaEventQuery(s->done);
    return e == cudaSuccess ? 1 : e == cudaErrorNotReady ? 0 : -1;
}

static void api_sum_end(void *op, float *sum)
{
    api_sum *s = (api_sum *)op;
    cudaSetDevice(s->c->device);
    PP_CUDA_CHECK(cudaMemcpy(sum, s->sum, s->n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaEventDestroy(s->done);
    cudaFree(s->mine), cudaFree(s->all), cudaFree(s->sum);
    free(s);
}

extern "C" const pp_nccl_api pp__nccl_api = {
    api_device_count, api_unique_id, api_comm_init, api_comm_free, api_sum_start, api_sum_test, api_sum_end,
};
