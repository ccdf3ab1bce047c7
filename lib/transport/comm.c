/* comm.c: pp.h's message and gradient-reduce calls. Checks arguments, keeps groups, hands requests to the
 * transport, and on completion writes the trace and moves virtual time: a received tensor is ready at the
 * sender's ready time plus the comm latency, whenever the program happened to call recv or wait; a reduce moves
 * the clock to its end on its group's lane (reduce.h). */
#include <stdio.h>
#include <string.h>

#include "comm.h"
#include "rank.h"
#include "reduce.h"

const char *pp__op_describe(const char *api, int is_send, int peer, int tag, char *buf, size_t len) {
    char tb[32];
    snprintf(buf, len, "%s(%s=%d, tag %s)", api, is_send ? "dst" : "src", peer, pp__tag_describe(tag, tb, sizeof tb));
    return buf;
}

const char *pp__request_describe(const pp_request *q, char *buf, size_t len) {
    if (q->is_reduce && q->tp_into) {
        snprintf(buf, len, "%s(the shards' sum %d)", q->api, q->red.k);
        return buf;
    }
    if (q->is_reduce) {
        snprintf(buf, len, "%s(chunk %d)", q->api, q->red.chunk);
        return buf;
    }
    const char *api = q->api ? q->api : q->is_send ? "pp_send" : "pp_recv";
    return pp__op_describe(api, q->is_send, q->named_peer, q->tag, buf, len);
}

const char *pp__tensor_released_why(const pp_tensor *t, char *buf, size_t len) {
    char op[96];
    if (t->data) return NULL;
    if (t->released_by_send)
        snprintf(buf, len, "when its %s completed", pp__request_describe(t->released_by_send, op, sizeof op));
    else if (t->released_by_stash)
        snprintf(buf, len, "when the backward of micro-batch %d, chunk %d finished", t->released_by_stash->mb,
                 t->released_by_stash->chunk);
    else
        return NULL;
    return buf;
}

static void check_tag(pp_rank *r, const char *api, int tag, int is_send, int peer);

/* The virtual stage that sends a message of direction dir to virtual stage vs along its path (the one before it
 * for an activation, after it for a gradient), or -1 where vs is no stage or has no such neighbour. */
static int sender_of(const pp_run_config *c, int dir, int vs) {
    if (vs < 0 || vs >= c->P * c->v) return -1;
    return dir == PP_FWD ? pp__config_prev(c, vs) : pp__config_next(c, vs);
}

/* A peer outside 0..P-1. With a tag made by pp_tag(), the tag says what was meant: a boundary the model lacks
 * (the tag's own mistake, named as such by check_tag), or the rank that holds the other side. */
static void check_peer(pp_rank *r, const char *api, int peer, int tag, int is_send) {
    pp__rank_check(r);
    if (peer >= 0 && peer < r->cfg->P) return;
    int dir, mb, vs, P = r->cfg->P;
    /* ranks are addressed within the replica, so another replica's rank has no address: a number past P-1 is
     * what a program that counted ranks over the whole grid would pass */
    if (r->cfg->D > 1 && peer >= P && peer < P * r->cfg->D)
        pp__rank_abort(r, PP_ERR_USAGE, "sends and receives stay within a replica, whose ranks are 0..P-1 "
                       "(pp_rank_id); only pp_grad_reduce crosses replicas", "%s: rank %d does not exist in replica "
                       "%d (P = %d): it would be rank %d of replica %d, which this rank cannot address",
                       api, peer, r->replica, P, peer % P, peer / P);
    if (tag >= 0 && pp__tag_split(tag, &dir, &mb, &vs)) {
        int from = sender_of(r->cfg, dir, vs), other = is_send ? vs : from;
        if (from < 0) check_tag(r, api, tag, is_send, peer);
        pp__rank_abort(r, PP_ERR_USAGE, "ranks are numbered 0..P-1; pp_virtual_stage(r, chunk) says which rank holds "
                       "a stage", "%s: rank %d does not exist (P = %d): virtual stage %d, which %s this %s, is on "
                       "rank %d", api, peer, r->cfg->P, other, is_send ? "receives" : "sends",
                       dir == PP_FWD ? "activation" : "gradient", pp__config_vstage_rank(r->cfg, other));
    }
    pp__rank_abort(r, PP_ERR_USAGE, "ranks are numbered 0..P-1; pp_virtual_stage(r, chunk) says which rank holds a "
                   "stage", "%s: rank %d does not exist (P = %d)", api, peer, r->cfg->P);
}

/* 1 when a message with this direction, micro-batch and receiving virtual stage may travel from rank `from_rank`
 * to rank `to_rank` (the stage exists, its neighbour does, and they live on those two ranks). */
static int boundary_fits(const pp_rank *r, int dir, int mb, int vs, int from_rank, int to_rank) {
    int from = sender_of(r->cfg, dir, vs);
    return from >= 0 && mb < r->cfg->M && pp__config_carries(r->cfg, vs, mb) &&
           pp__config_vstage_rank(r->cfg, from) == from_rank && pp__config_vstage_rank(r->cfg, vs) == to_rank;
}

/* A message's tag that names the sending stage instead of the receiving one, or the wrong direction, is the
 * mistake the labs warn about: say so, with the tag that was meant, rather than what the wrong tag implies. */
static void check_tag_intent(pp_rank *r, const char *call, int dir, int mb, int vs, int sender, int receiver) {
    const char *dname = dir == PP_FWD ? "PP_FWD" : "PP_BWD", *oname = dir == PP_FWD ? "PP_BWD" : "PP_FWD";
    int meant = vs < 0 || vs >= r->cfg->P * r->cfg->v ? -1
                : dir == PP_FWD                      ? pp__config_next(r->cfg, vs)
                                                     : pp__config_prev(r->cfg, vs);
    if (meant >= 0 && boundary_fits(r, dir, mb, meant, sender, receiver))
        pp__rank_abort(r, PP_ERR_USAGE, "tags name the virtual stage that receives the message",
                       "%s: the tag names virtual stage %d, the sender's; tags name the stage that receives, "
                       "pp_tag(%s, %d, %d)", call, vs, dname, mb, meant);
    /* in a V the two directions join the same pairs of ranks, so a reversed tag is more likely a placement taken
     * for the looped one: the caller then says where the stages live */
    if (!pp__config_vshape(r->cfg) && boundary_fits(r, !dir, mb, vs, sender, receiver))
        pp__rank_abort(r, PP_ERR_USAGE, "activations travel with PP_FWD, gradients with PP_BWD",
                       "%s: %s going %s to virtual stage %d is tagged %s: use pp_tag(%s, %d, %d)", call,
                       dir == PP_FWD ? "a gradient" : "an activation", dir == PP_FWD ? "back" : "on", vs, dname, oname,
                       mb, vs);
}

/* A tag made by pp_tag() says which boundary a message crosses, so the pair of ranks it may travel between is
 * known: catch a wrong peer or a wrong stage at the call, with the right answer, instead of as a deadlock. */
static void check_tag(pp_rank *r, const char *api, int tag, int is_send, int peer) {
    char tb[32], call[96];
    int dir, mb, vs, P = r->cfg->P, S = P * r->cfg->v;
    if (tag < 0)
        pp__rank_abort(r, PP_ERR_USAGE, "build tags with pp_tag(PP_FWD or PP_BWD, mb, receiving virtual stage)",
                       "%s: invalid tag %d", api, tag);
    if (!pp__tag_split(tag, &dir, &mb, &vs)) return; /* a raw tag of the program's own: no topology to check */
    pp__tag_describe(tag, tb, sizeof tb);
    int me = r->pipe, sender = is_send ? me : peer, receiver = is_send ? peer : me;
    if (boundary_fits(r, dir, mb, vs, sender, receiver)) return;
    pp__op_describe(api, is_send, peer, tag, call, sizeof call);
    int from = sender_of(r->cfg, dir, vs);
    /* a boundary whose two stages share a rank (the turn of a V) never carries a message: that is the mistake to
     * name, before any guess at what the tag meant */
    int local = from >= 0 && pp__config_vstage_rank(r->cfg, from) == pp__config_vstage_rank(r->cfg, vs);
    if (!local && peer >= 0 && peer < P && peer != me) check_tag_intent(r, call, dir, mb, vs, sender, receiver);
    if (from < 0 && pp__config_dual(r->cfg) && vs >= 0 && vs < S)
        pp__rank_abort(r, PP_ERR_USAGE, "each of DualPipe's pipelines reads tokens at its first virtual stage (0 and "
                       "P) and keeps its loss at its last (P-1 and 2P-1): nothing crosses between them",
                       "%s: tag %s names a boundary the model does not have (virtual stages 0..%d and %d..%d)", api,
                       tb, P - 1, P, S - 1);
    if (from < 0)
        pp__rank_abort(r, PP_ERR_USAGE, dir == PP_FWD ? "the last virtual stage keeps its loss; the first one reads tokens"
                                                        : "virtual stage 0 sends no gradient back; the last one starts from pp_loss_grad",
                       "%s: tag %s names a boundary the model does not have (virtual stages 0..%d)", api, tb, S - 1);
    if (mb >= r->cfg->M)
        pp__rank_abort(r, PP_ERR_USAGE, "micro-batches are numbered 0..M-1", "%s: tag %s names micro-batch %d (M = %d)",
                       api, tb, mb, r->cfg->M);
    if (!pp__config_carries(r->cfg, vs, mb))
        pp__rank_abort(r, PP_ERR_USAGE, "DualPipe's micro-batches 0..M/2-1 travel virtual stages 0..P-1, the others "
                       "P..2P-1", "%s: tag %s sends micro-batch %d through the other pipeline's virtual stage %d", api,
                       tb, mb, vs);
    int from_rank = pp__config_vstage_rank(r->cfg, from), to_rank = pp__config_vstage_rank(r->cfg, vs);
    const char *what = dir == PP_FWD ? "activation" : "gradient";
    const char *hint = pp__config_vshape(r->cfg)
                           ? "in a V rank r holds virtual stages r and 2P-1-r (pp_virtual_stage says which); pp_tag "
                             "names the stage that receives"
                           : "chunk c of rank r is virtual stage c*P + r (pp_virtual_stage says which); pp_tag names "
                             "the stage that receives";
    if (from_rank == to_rank)
        pp__rank_abort(r, PP_ERR_USAGE, pp__config_vshape(r->cfg) ? "in a V rank r holds virtual stages r and 2P-1-r "
                       "(pp_virtual_stage says which): on rank P-1 pass chunk 0's output straight into chunk 1's "
                       "forward, and chunk 1's input gradient into chunk 0's backward" : "pass the output straight "
                       "into the next op on this rank",
                       "%s: virtual stages %d and %d both live on rank %d: that boundary needs no message", call, from,
                       vs, to_rank);
    if (is_send)
        pp__rank_abort(r, PP_ERR_USAGE, hint, "%s: the %s of virtual stage %d (rank %d) for virtual stage %d goes to "
                       "rank %d", call, what, from, from_rank, vs, to_rank);
    pp__rank_abort(r, PP_ERR_USAGE, hint, "%s: virtual stage %d (rank %d) gets this %s from virtual stage %d on rank %d",
                   call, vs, to_rank, what, from, from_rank);
}

static pp_request *request_new(pp_rank *r, int is_send, int peer, int tag, pp_tensor *t, const char *api) {
    pp__rank_charge(r, PP_CHARGE_MESSAGE, api);
    pp_request *q = pp__xcalloc(1, sizeof *q);
    q->is_send = is_send;
    q->rank = r->id;
    q->peer = pp__config_rank_of(r->cfg, r->tp, r->replica, peer); /* the transports address the world's ranks */
    q->named_peer = peer;
    q->tag = tag;
    q->t = t;
    q->api = api;
    q->wall_post = pp__now() - r->wall0;
    q->all_next = r->requests;
    r->requests = q;
    return q;
}

static void post(pp_rank *r, pp_request *q) {
    if (q->is_send) {
        /* the tensor's producer may still be running on the device: the copy must see finished data */
        if (r->be->ops->sync) r->be->ops->sync(r->be->ctx);
        r->sent_msgs++;
        q->t->sent = 1;
        q->t->sends_pending++;
    }
    r->world->tp->post(r->world, q);
}

/* The local chunk a message belongs to on this rank, from its tag (-1 for raw tags). */
static int message_chunk(const pp_rank *r, const pp_request *q) {
    int dir, mb, vs;
    if (!pp__tag_split(q->tag, &dir, &mb, &vs)) return -1;
    int mine = q->is_send ? sender_of(r->cfg, dir, vs) : vs;
    return mine >= 0 && mine < r->cfg->P * r->cfg->v ? pp__config_vstage_chunk(r->cfg, mine) : -1;
}

/* Completion bookkeeping: virtual time, trace. */
static void finish(pp_rank *r, pp_request *q) {
    /* the link the message crosses, from the sender to the receiver (none to itself) */
    double lat = q->is_send ? pp__config_message_cost(r->cfg, r->id, q->peer, (double)q->t->bytes)
                            : pp__config_message_cost(r->cfg, q->peer, r->id, (double)q->t->bytes);
    int dir, mb = -1, vs = -1;
    if (!pp__tag_split(q->tag, &dir, &mb, &vs)) mb = -1;
    pp_event e = {.rank = r->id,
                  .op = q->is_send ? PP_OP_SEND : PP_OP_RECV,
                  .mb = mb,
                  .chunk = message_chunk(r, q),
                  .vstage = q->is_send ? -1 : vs,
                  .peer = q->peer,
                  .tag = q->tag,
                  .timer = -1,
                  .bytes = q->t->bytes,
                  .wall_start = q->wall_post,
                  .wall_end = pp__now() - r->wall0};
    if (q->is_send) {
        e.vstart = q->t->ready;
    } else {
        e.vstart = q->msg_ready;
        q->t->ready = q->msg_ready + lat;
        q->t->pending = 0;
    }
    e.vend = e.vstart + lat;
    pp__trace_add(&r->trace, &e);
    q->waited = 1;
    if (q->is_send) pp__tensor_send_done(q->t, q);
}

/* " of replica d" for world rank w where a run has replicas, "" where it has one: DualPipe's two copies of a stage
 * are one pipeline's ranks, named by rank alone. Returns buf. */
static const char *replica_said(const pp_run_config *c, int w, char *buf, size_t len) {
    buf[0] = 0;
    if (c->D > 1) snprintf(buf, len, " of replica %d", w / c->P % c->D);
    return buf;
}

/* A waited reduce whose group could not complete it: the rank fails with what its verdict names, or, when
 * another member's failure is the cause, stops as a rank that stayed blocked in it (reduce.h's rules). */
static void reduce_check(pp_rank *r, const pp_request *q) {
    const pp_run_config *c = r->cfg;
    char said[32];
    int other = q->red.other < 0 ? -1
                : q->tp_into     ? pp__config_rank_of(c, q->red.other, r->replica, r->pipe)
                                 : pp__reduce_member_rank(c, pp__reduce_group(c, r->id), q->red.other);
    /* the shards run one program on the same data: only a program that behaves differently from run to run
     * (threads of its own, time, uninitialised memory) makes them differ */
    if (q->tp_into && (q->red.verdict == PP_REDUCE_MISMATCH || q->red.verdict == PP_REDUCE_MISSED))
        pp__rank_abort(r, PP_ERR_USAGE, "every shard of a stage runs the same program on the same data: make the "
                       "schedule's choices from pp.h's answers alone", "%s: shard %d of this stage %s where this "
                       "one made its tensor-parallel sum %d of the step", q->api, q->red.other,
                       q->red.verdict == PP_REDUCE_MISSED ? "had returned from its step" : "summed another tensor",
                       q->red.k);
    switch ((pp_reduce_verdict)q->red.verdict) {
    case PP_REDUCE_MISMATCH:
        if (pp__config_dual(c))
            pp__rank_abort(r, PP_ERR_USAGE, "rank r's chunk c and rank P-1-r's chunk 1-c hold the two copies of one "
                           "stage: reduce them in the same order on both (a collective matches by order: NCCL would "
                           "hang)", "%s: chunk %d is this rank's reduce %d of the step, but rank %d%s's reduce %d, "
                           "which holds the other copy, is its chunk %d, a copy of another stage", q->api, q->red.chunk,
                           q->red.k, other % c->P, replica_said(c, other, said, sizeof said), q->red.k,
                           q->red.other_chunk);
        pp__rank_abort(r, PP_ERR_USAGE, "every replica reduces its chunks in the same order (a collective matches "
                       "by order: NCCL would hang)", "%s: chunk %d is this rank's reduce %d of the step, but replica "
                       "%d's reduce %d is chunk %d", q->api, q->red.chunk, q->red.k, other / c->P, q->red.k,
                       q->red.other_chunk);
    case PP_REDUCE_MISSED:
        if (pp__config_dual(c))
            pp__rank_abort(r, PP_ERR_USAGE, "every rank reduces each of its chunks once per step, in the order its "
                           "partner rank P-1-r reduces the other copies", "%s(chunk %d): rank %d%s, which holds the "
                           "other copy, ended its step without joining this reduce (its reduce %d of the step)",
                           q->api, q->red.chunk, other % c->P, replica_said(c, other, said, sizeof said), q->red.k);
        pp__rank_abort(r, PP_ERR_USAGE, "every rank of a stage's data-parallel group reduces each of its chunks once "
                       "per step, in the same order", "%s(chunk %d): replica %d's rank %d ended its step without "
                       "joining this reduce (its reduce %d of the step)", q->api, q->red.chunk, other / c->P,
                       other % c->P, q->red.k);
    case PP_REDUCE_STOPPED:
        pp__rank_bail(r);
    default:
        return;
    }
}

/* A done reduce: its sum lands in the chunk's gradients (with one member there is nothing to sum), its event
 * gets the lane's times and the rank's clock moves to its end. */
static void reduce_finish(pp_rank *r, pp_request *q) {
    if (q->tp_into) { /* a tensor-parallel sum: on the model's tensor; its time is the op's (stage.c) */
        pp__tensor_from_host(q->tp_into, q->red.sum);
        free((void *)q->red.sum);
        q->red.sum = NULL;
        q->waited = 1;
        return;
    }
    if (pp__config_reduce_members(r->cfg) > 1) pp__reduce_grads_in(r, q->red.chunk, q->red.sum);
    pp_event *e = &r->trace.ev[q->red.ev];
    e->vstart = q->red.start, e->vend = q->red.end;
    e->wall_end = pp__now() - r->wall0;
    if (q->red.end > r->clock) r->clock = q->red.end;
    q->waited = 1;
}

static void wait_all(pp_rank *r, pp_request **qs, int n, const char *api) {
    char buf[sizeof r->blocked_buf], one[96];
    if (n == 1 && !strcmp(api, qs[0]->api)) {
        pp__request_describe(qs[0], buf, sizeof buf); /* a blocking call: "pp_send(dst=2, tag F mb3 vs2)" */
    } else if (n == 1) {
        snprintf(buf, sizeof buf, "%s(%s)", api, pp__request_describe(qs[0], one, sizeof one)); /* pp_wait(pp_isend(...)) */
    } else {
        int len = snprintf(buf, sizeof buf, "%s(%d requests:", api, n);
        for (int i = 0; i < n && len < (int)sizeof buf; i++)
            len += snprintf(buf + len, sizeof buf - (size_t)len, " %s", pp__request_describe(qs[i], one, sizeof one));
        if (len < (int)sizeof buf) snprintf(buf + len, sizeof buf - (size_t)len, ")");
    }
    memcpy(r->blocked_buf, buf, sizeof buf);
    r->blocked_since = pp__now();
    pp__rank_set_blocked_in(r, r->blocked_buf);
    /* a blocking receive (alone or in a group) names the input of the op the rank runs next; requests posted
     * ahead and waited with pp_wait/pp_waitall need not */
    r->waiting_tag = -1;
    for (int i = 0; i < n && r->waiting_tag < 0 && (!strcmp(api, "pp_recv") || !strcmp(api, "pp_group_end")); i++)
        if (!qs[i]->is_send && !qs[i]->is_reduce) r->waiting_tag = qs[i]->tag;
    r->world->tp->wait(r->world, r->id, qs, n);
    for (int i = 0; i < n; i++)
        if (qs[i]->error)
            pp__rank_abort(r, (pp_status)qs[i]->error_status, "send exactly the tensor the receiver expects: "
                           "pp_recv() receives one activation (micro-batch size x seq rows, hidden columns), forward "
                           "or backward", "%s", qs[i]->error);
    for (int i = 0; i < n; i++)
        if (qs[i]->is_reduce) reduce_check(r, qs[i]);
    pp__rank_set_blocked_in(r, NULL);
    r->waiting_tag = -1;
    for (int i = 0; i < n; i++)
        if (qs[i]->is_reduce) reduce_finish(r, qs[i]);
        else finish(r, qs[i]);
}

static void group_add(pp_rank *r, pp_request *q) {
    if (r->ngroup == r->group_cap) {
        r->group_cap = r->group_cap ? 2 * r->group_cap : 8;
        r->group = pp__xrealloc(r->group, (size_t)r->group_cap * sizeof *r->group);
    }
    r->group[r->ngroup++] = q;
}

static void check_tensor(pp_rank *r, const char *api, pp_tensor *t) {
    if (!t) pp__rank_abort(r, PP_ERR_USAGE, "send the tensor a stage op returned", "%s: tensor is NULL", api);
    if (t->pending)
        pp__rank_abort(r, PP_ERR_USAGE, "call pp_wait (or pp_group_end) before using a received tensor",
                       "%s: tensor of a receive that has not completed yet", api);
    if (t->owner != r->id)
        pp__rank_abort(r, PP_ERR_USAGE, "each rank only touches its own tensors",
                       "%s: tensor belongs to rank %d", api, t->owner);
    char why[160];
    if (pp__tensor_released_why(t, why, sizeof why))
        pp__rank_abort(r, PP_ERR_USAGE, "send each output once, right after the op that made it",
                       "%s: the tensor was released %s", api, why);
}

static pp_tensor *activation_new(pp_rank *r) {
    /* written whole by the message; unreadable until then (pending) */
    pp_tensor *t = pp__tensor_new_output(r->be, &r->arena, r->cfg->mb_size * r->cfg->seq, r->cfg->hidden, r->id);
    t->pending = 1;
    t->received = t->handed = 1;
    return t;
}

void pp_send(pp_rank *r, pp_tensor *t, int dst, int tag) {
    check_peer(r, "pp_send", dst, tag, 1);
    check_tag(r, "pp_send", tag, 1, dst);
    check_tensor(r, "pp_send", t);
    pp_request *q = request_new(r, 1, dst, tag, t, "pp_send");
    post(r, q);
    if (r->in_group)
        group_add(r, q);
    else
        wait_all(r, &q, 1, "pp_send");
}

pp_tensor *pp_recv(pp_rank *r, int src, int tag) {
    check_peer(r, "pp_recv", src, tag, 0);
    check_tag(r, "pp_recv", tag, 0, src);
    pp_tensor *t = activation_new(r);
    pp_request *q = request_new(r, 0, src, tag, t, "pp_recv");
    post(r, q);
    if (r->in_group)
        group_add(r, q);
    else
        wait_all(r, &q, 1, "pp_recv");
    return t;
}

pp_request *pp_isend(pp_rank *r, pp_tensor *t, int dst, int tag) {
    check_peer(r, "pp_isend", dst, tag, 1);
    check_tag(r, "pp_isend", tag, 1, dst);
    check_tensor(r, "pp_isend", t);
    pp_request *q = request_new(r, 1, dst, tag, t, "pp_isend");
    post(r, q);
    return q;
}

pp_request *pp_irecv(pp_rank *r, int src, int tag, pp_tensor **out) {
    check_peer(r, "pp_irecv", src, tag, 0);
    check_tag(r, "pp_irecv", tag, 0, src);
    if (!out) pp__rank_abort(r, PP_ERR_USAGE, "pass the address of a pp_tensor pointer", "pp_irecv: out is NULL");
    pp_tensor *t = activation_new(r);
    pp_request *q = request_new(r, 0, src, tag, t, "pp_irecv");
    post(r, q);
    *out = t;
    return q;
}

static void check_request(pp_rank *r, const char *api, pp_request *q) {
    pp__rank_check(r);
    if (!q) pp__rank_abort(r, PP_ERR_USAGE, "wait on what pp_isend/pp_irecv returned", "%s: request is NULL", api);
    if (q->rank != r->id)
        pp__rank_abort(r, PP_ERR_USAGE, "each rank waits on its own requests", "%s: request was posted by rank %d",
                       api, q->rank);
    if (q->waited)
        pp__rank_abort(r, PP_ERR_USAGE, "wait on each request exactly once", "%s: request already waited", api);
}

void pp_wait(pp_rank *r, pp_request *req) {
    check_request(r, "pp_wait", req);
    wait_all(r, &req, 1, "pp_wait");
}

void pp_waitall(pp_rank *r, pp_request **reqs, int n) {
    pp__rank_check(r);
    if (n < 0 || (n > 0 && !reqs))
        pp__rank_abort(r, PP_ERR_USAGE, "pass an array of n requests", "pp_waitall: bad request array (n = %d)", n);
    for (int i = 0; i < n; i++) {
        check_request(r, "pp_waitall", reqs[i]);
        for (int j = 0; j < i; j++)
            if (reqs[j] == reqs[i])
                pp__rank_abort(r, PP_ERR_USAGE, "list each request once", "pp_waitall: request %d repeated", i);
    }
    if (n) wait_all(r, reqs, n, "pp_waitall");
}

void pp_group_start(pp_rank *r) {
    pp__rank_check(r);
    if (r->in_group)
        pp__rank_abort(r, PP_ERR_USAGE, "groups do not nest: close the first with pp_group_end()",
                       "pp_group_start called twice");
    r->in_group = 1;
    r->ngroup = 0;
}

void pp_group_end(pp_rank *r) {
    pp__rank_check(r);
    if (!r->in_group)
        pp__rank_abort(r, PP_ERR_USAGE, "call pp_group_start() first", "pp_group_end without pp_group_start");
    r->in_group = 0;
    if (r->ngroup) wait_all(r, r->group, r->ngroup, "pp_group_end");
    r->ngroup = 0;
}

/* ---- the gradient all-reduce (its rules: reduce.h) -------------------------------------------------------- */

/* Starts rank r's next reduce, of chunk: its event where the call is among the rank's ops (so that a backward of
 * the chunk after it shows), its part to the transport. */
static pp_request *reduce_start(pp_rank *r, int chunk, const char *api) {
    pp__rank_check(r);
    const pp_run_config *c = r->cfg;
    if (chunk < 0 || chunk >= c->v)
        pp__rank_abort(r, PP_ERR_USAGE, "chunks are numbered 0..v-1 on every rank", "%s: chunk %d does not exist "
                       "(v = %d)", api, chunk, c->v);
    if (r->in_group)
        pp__rank_abort(r, PP_ERR_USAGE, "call pp_group_end() first: groups hold point-to-point messages only",
                       "%s: called inside pp_group_start()/pp_group_end()", api);
    if (r->reduced[chunk])
        pp__rank_abort(r, PP_ERR_USAGE, "reduce each chunk once per step, after its last backward: a second reduce "
                       "would sum the sums", "%s: chunk %d was already reduced this step", api, chunk);
    size_t n = pp__reduce_chunk_floats(r, chunk);
    pp_request *q = pp__xcalloc(1, sizeof *q);
    q->is_reduce = 1, q->red.chunk = chunk, q->red.k = r->reduces;
    q->rank = r->id, q->peer = -1, q->tag = -1, q->api = api;
    q->wall_post = pp__now() - r->wall0;
    q->all_next = r->requests;
    r->requests = q;
    pp_event e = {.rank = r->id,
                  .op = PP_OP_REDUCE,
                  .mb = -1,
                  .chunk = chunk,
                  .vstage = pp__config_vstage(c, r->pipe, chunk),
                  .peer = -1,
                  .tag = -1,
                  .timer = -1,
                  .bytes = n * sizeof(float),
                  .wall_start = q->wall_post,
                  .wall_end = q->wall_post,
                  .vstart = r->clock,
                  .vend = r->clock};
    q->red.ev = r->trace.n;
    pp__trace_add(&r->trace, &e);
    pp_reduce_part part = {.kind = PP_PART_CALL, .k = q->red.k, .chunk = chunk, .stage = pp__config_stage(c, e.vstage),
                           .floats = n, .clock = r->clock};
    float *grads = NULL;
    if (pp__config_reduce_members(c) > 1) {
        grads = pp__xmalloc(n * sizeof(float) + 1);
        pp__reduce_grads_out(r, chunk, grads);
    }
    r->reduced[chunk]++, r->reduces++;
    r->world->tp->reduce_post(r->world, r->id, q, &part, grads);
    return q;
}

void pp__comm_rank_left(pp_rank *r, int returned) {
    for (int k = r->reduces; k < r->cfg->v; k++) {
        pp_reduce_part part = {.kind = returned ? PP_PART_RETURNED : PP_PART_LEFT, .k = k, .chunk = -1,
                               .clock = r->clock};
        r->world->tp->reduce_post(r->world, r->id, NULL, &part, NULL);
    }
    r->reduces = r->cfg->v;
    /* a shard waiting in the next sum learns that this one will not make it */
    if (r->cfg->T > 1) {
        pp_reduce_part part = {.kind = returned ? PP_PART_RETURNED : PP_PART_LEFT, .k = r->tp_sums, .chunk = -1,
                               .clock = r->clock};
        r->world->tp->tp_post(r->world, r->id, NULL, &part, NULL);
        r->tp_sums++;
    }
}

void pp__comm_tp_allreduce(void *ctx, pp_tensor *t) {
    pp_rank *r = ctx;
    size_t n = (size_t)t->rows * t->cols;
    pp_request *q = pp__xcalloc(1, sizeof *q);
    q->is_reduce = 1, q->tp_into = t, q->red.chunk = -1, q->red.k = r->tp_sums, q->red.ev = -1;
    q->rank = r->id, q->peer = -1, q->tag = -1, q->api = r->tp_api ? r->tp_api : "pp_stage_forward";
    q->wall_post = pp__now() - r->wall0;
    q->all_next = r->requests;
    r->requests = q;
    float *data = pp__xmalloc(n * sizeof(float) + 1);
    pp__tensor_to_host(t, data);
    pp_reduce_part part = {.kind = PP_PART_CALL, .k = r->tp_sums++, .floats = n, .clock = r->clock};
    r->tp_calls++;
    r->tp_bytes += (double)n * sizeof(float);
    r->tp_time += pp__config_tp_sum_cost_bytes(r->cfg, r->id, (double)n * sizeof(float));
    r->world->tp->tp_post(r->world, r->id, q, &part, data);
    wait_all(r, &q, 1, q->api);
}

pp_request *pp_grad_ireduce(pp_rank *r, int chunk) { return reduce_start(r, chunk, "pp_grad_ireduce"); }

void pp_grad_reduce(pp_rank *r, int chunk) {
    pp_request *q = reduce_start(r, chunk, "pp_grad_reduce");
    wait_all(r, &q, 1, "pp_grad_reduce");
}
