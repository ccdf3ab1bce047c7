/* mpi_p2p.c: the mpi transport's messages. A boundary tensor travels as one MPI message (a small header: shape,
 * dtype, the sender's call, the virtual time the data was ready; then the bytes, staged through host memory).
 * Matching is MPI's own: (source, tag, communicator), oldest posted first, the same rule as the threads transport.
 * Rendezvous mode sends with MPI_Issend, which completes only once the receiver has posted the matching receive, as
 * NCCL; eager mode sends with MPI_Isend and lets the pp_send return at once (the packed copy belongs to the transport
 * until the step ends). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_ctx.h"
#include "tensor.h"

static const char *const api_names[] = {"pp_send", "pp_isend"};

const char *pp__mpi_api_name(int api) { return api_names[api == 1]; }

const char *pp__mpi_shape_describe(int rows, int cols, int dtype, char *buf, size_t len) {
    pp_tensor t;
    memset(&t, 0, sizeof t);
    t.rows = rows;
    t.cols = cols;
    t.dtype = (pp_dtype)dtype;
    return pp__tensor_describe(&t, buf, len);
}

/* The MPI tag carrying pp tag `tag`: itself when the library's tag bound allows (Open MPI's ob1: 2^31-1),
 * else a dense code (direction, virtual stage < 1024, micro-batch < 1024 in 21 bits; raw tags above them).
 * -1 when this MPI cannot carry it. */
static int mpi_tag(const mp_ctx *c, int tag) {
    if (tag <= c->tag_ub) return tag;
    int dir, mb, vs;
    if (pp__tag_split(tag, &dir, &mb, &vs)) {
        if (mb < 1024 && vs < 1024) return (dir << 20) | (vs << 10) | mb;
        return -1;
    }
    long raw = (1L << 21) + tag;
    return raw <= c->tag_ub ? (int)raw : -1;
}

/* ---- posting and completing -------------------------------------------------------------------------- */

static mp_req *req_track(mp_ctx *c, pp_request *req, size_t len) {
    mp_req *m = pp__xcalloc(1, sizeof *m);
    m->req = req;
    m->len = len;
    m->buf = pp__xmalloc(len);
    m->mq = MPI_REQUEST_NULL;
    m->next = c->reqs;
    c->reqs = m;
    req->tp = m;
    return m;
}

/* Posts a send (header + bytes packed into one buffer) or a receive of the expected shape. A tag this MPI cannot
 * carry aborts the posting rank. */
void pp__mpi_post(pp_world *w, pp_request *req) {
    mp_ctx *c = ctx_of(w);
    pp_rank *r = &w->ranks[req->rank];
    req->done = 0;
    req->next = NULL;
    int mtag = mpi_tag(c, req->tag);
    if (mtag < 0) {
        char tb[32];
        pp__rank_abort(r, PP_ERR_USAGE, "use pp_tag() with micro-batches and virtual stages below 1024",
                       "%s: tag %s does not fit this MPI's tag range (MPI_TAG_UB = %d)", req->api,
                       pp__tag_describe(req->tag, tb, sizeof tb), c->tag_ub);
    }
    pp_tensor *t = req->t;
    mp_req *m = req_track(c, req, sizeof(mp_header) + t->bytes);
    if (req->is_send) {
        mp_header h = {.rows = t->rows, .cols = t->cols, .dtype = (int32_t)t->dtype,
                       .api = req->api && !strcmp(req->api, "pp_isend") ? 1 : 0, .tag = req->tag,
                       .ready = t->ready};
        memcpy(m->buf, &h, sizeof h);
        if (t->bytes) pp__tensor_to_host(t, m->buf + sizeof h);
        int rc = w->cfg->eager ? MPI_Isend(m->buf, (int)m->len, MPI_BYTE, req->peer, mtag, c->data, &m->mq)
                               : MPI_Issend(m->buf, (int)m->len, MPI_BYTE, req->peer, mtag, c->data, &m->mq);
        if (rc != MPI_SUCCESS)
            pp__rank_abort(r, PP_ERR_BACKEND, "check the MPI installation (ompi_info) and the launcher's log",
                           "%s: MPI refused the send (error %d)", req->api, rc);
        m->active = 1;
        c->progress++;
        c->sent_to[req->peer]++;
        if (w->cfg->eager) {
            /* the packed copy is the transport's: the caller may reuse its tensor now */
            req->msg_ready = t->ready;
            req->done = 1;
        }
    } else {
        int rc = MPI_Irecv(m->buf, (int)m->len, MPI_BYTE, req->peer, mtag, c->data, &m->mq);
        if (rc != MPI_SUCCESS)
            pp__rank_abort(r, PP_ERR_BACKEND, "check the MPI installation (ompi_info) and the launcher's log",
                           "%s: MPI refused the receive (error %d)", req->api, rc);
        m->active = 1;
        c->progress++;
    }
}

/* A receive completed with status st: checks the sender's header against the expected tensor and unpacks it.
 * A mismatch aborts this rank naming both ranks and both ops. */
static void recv_finish(pp_world *w, mp_ctx *c, pp_request *req, mp_req *m, const MPI_Status *st, int rc) {
    pp_rank *r = &w->ranks[req->rank];
    c->recv_from[req->peer]++;
    char mine[96], theirs[96], want[48], got[48], sender[48], receiver[48];
    int local = req->rank % w->cfg->P; /* the receiver as the sender's program names it */
    pp__request_describe(req, mine, sizeof mine);
    pp__rank_label(w, req->peer, sender, sizeof sender);
    pp__rank_label(w, req->rank, receiver, sizeof receiver);
    pp__tensor_describe(req->t, want, sizeof want);
    int count = 0;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (rc == MPI_ERR_TRUNCATE || (rc == MPI_SUCCESS && (size_t)count < sizeof(mp_header))) {
        pp__op_describe("pp_send", 1, local, req->tag, theirs, sizeof theirs);
        pp__rank_abort(r, PP_ERR_SHAPE,
                       "send exactly the tensor the receiver expects: pp_recv() receives one activation "
                       "(micro-batch size x seq rows, hidden columns), forward or backward",
                       "%s %s sent %d bytes but %s %s expects %s (%zu bytes)", sender, theirs,
                       count > (int)sizeof(mp_header) ? count - (int)sizeof(mp_header) : count, receiver, mine,
                       want, req->t->bytes);
    }
    if (rc != MPI_SUCCESS)
        pp__rank_abort(r, PP_ERR_BACKEND, "check the MPI installation (ompi_info) and the launcher's log",
                       "%s: MPI failed the receive (error %d)", req->api, rc);
    mp_header h;
    memcpy(&h, m->buf, sizeof h);
    if (h.rows != req->t->rows || h.cols != req->t->cols || h.dtype != (int32_t)req->t->dtype) {
        pp__op_describe(pp__mpi_api_name(h.api == 1), 1, local, h.tag, theirs, sizeof theirs);
        pp__rank_abort(r, PP_ERR_SHAPE,
                       "send exactly the tensor the receiver expects: pp_recv() receives one activation "
                       "(micro-batch size x seq rows, hidden columns), forward or backward",
                       "%s %s sent %s but %s %s expects %s", sender, theirs,
                       pp__mpi_shape_describe(h.rows, h.cols, h.dtype, got, sizeof got), receiver, mine, want);
    }
    if (req->t->bytes) pp__tensor_from_host(req->t, m->buf + sizeof h);
    req->msg_ready = h.ready;
}

/* Tests one request; completes it (and its pp_request) when MPI says it is done. */
void pp__mpi_req_test(pp_world *w, mp_ctx *c, pp_request *req) {
    mp_req *m = req->tp;
    if (!m || !m->active) return;
    int flag = 0;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc = MPI_Test(&m->mq, &flag, &st);
    if (!flag && rc == MPI_SUCCESS) return;
    m->active = 0;
    c->progress++;
    if (req->is_send) {
        req->msg_ready = req->t->ready;
    } else {
        recv_finish(w, c, req, m, &st, rc);
    }
    req->done = 1;
}
