/* client.c: pp.h inside the schedule driver. Each call that touches the rank's state is one request to the
 * runtime, which checks it and runs it on the rank's real state, in order. Every call is posted (rpc.h): it
 * returns at once, with the handles the runtime will make for it, so a step costs the driver one wait, at its
 * end; what the schedule shows of itself waits for its thread's posts (pp__drv_settle). Handles pass through
 * as opaque pointers. The facts of the rank (pp_rank_id, ...), pp_tag and pp_version are answered here. Calls
 * from several threads of a schedule are serialised: the rank has one channel, as it has one runtime thread. */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "rpc.h"
#include "tag.h"

pp_chan *pp__drv_chan;

struct pp_rank {
    uint32_t magic;
    int id, P, M, v, recompute, replica, D, tp, T;
    int blocks[16], vstage[16], prev_vstage[16]; /* per chunk, as the runtime placed them (chan.h) */
};

#define RANK_MAGIC 0x72616e6bu
static struct pp_rank the_rank;
static pthread_mutex_t chan_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t chan_seq, chan_posts;
static __thread uint32_t thread_posts; /* posts this thread made: chan_posts after its last one */

/* The handles of the current step as the runtime makes them: per kind, in the order the calls ran. */
static int step_id, handle_rank;
static uint32_t made[4];
static int *stash_chunk; /* the chunk of each stash of this step, the first stash_cap of them */
static uint32_t stash_cap;

void pp__drv_step_begin(int step, int hrank) {
    step_id = step, handle_rank = hrank;
    memset(made, 0, sizeof made);
}

static uint64_t handle_new(pp_handle_kind k) { return pp__handle_make(k, handle_rank, step_id, made[k]++); }

static uint64_t stash_new(int chunk) {
    uint32_t i = made[PP_HANDLE_STASH];
    if (i >= stash_cap) {
        uint32_t cap = stash_cap ? 2 * stash_cap : 256;
        int *p = realloc(stash_chunk, cap * sizeof *p);
        if (p) stash_chunk = p, stash_cap = cap;
    }
    if (i < stash_cap) stash_chunk[i] = chunk;
    return handle_new(PP_HANDLE_STASH);
}

/* dx of a backward on stash h: NULL where its virtual stage reads the tokens (the runtime's placement, told in the
 * facts). A handle that is not one of this step's stashes gets an id: the runtime refuses the call before it
 * compares ids (and it refused the forward of a stash whose chunk does not exist). */
static uint64_t dx_new(const pp_rank *r, uint64_t h) {
    uint32_t i = pp__handle_index(h);
    if (pp__handle_kind(h) == PP_HANDLE_STASH && pp__handle_rank(h) == handle_rank &&
        pp__handle_step(h) == step_id && i < made[PP_HANDLE_STASH] && i < stash_cap && stash_chunk[i] >= 0 &&
        stash_chunk[i] < r->v && stash_chunk[i] < 16 && r->prev_vstage[stash_chunk[i]] < 0)
        return 0;
    return handle_new(PP_HANDLE_TENSOR);
}

pp_rank *pp__drv_rank_init(const pp_chan_facts *f) {
    the_rank = (struct pp_rank){RANK_MAGIC, f->rank, f->P, f->M, f->v, f->recompute, f->replica, f->D, f->tp, f->T,
                                {0}, {0}, {0}};
    memcpy(the_rank.blocks, f->blocks, sizeof the_rank.blocks);
    memcpy(the_rank.vstage, f->vstage, sizeof the_rank.vstage);
    memcpy(the_rank.prev_vstage, f->prev_vstage, sizeof the_rank.prev_vstage);
    return &the_rank;
}

/* ---- requests ------------------------------------------------------------------------------------------ */

void pp__drv_begin(pp_wire *w, int op) {
    pthread_mutex_lock(&chan_lock);
    pp__wire_init_fixed(w, pp__drv_chan->req, PP_CHAN_MSG);
    pp__wire_u32(w, (uint32_t)op);
}

/* Starts a post in the ring's next slot (waiting for one to be free). */
static void begin_post(pp_wire *w, int op) {
    pthread_mutex_lock(&chan_lock);
    pp__wire_init_fixed(w, pp__chan_post_slot(pp__drv_chan, chan_posts), PP_CHAN_POST_MSG);
    pp__wire_u32(w, (uint32_t)op);
}

/* Publishes the post begun with begin_post and unlocks. */
static void post(pp_wire *w) {
    /* every posted request fits its slot; one that did not would reach the runtime cut short and be refused */
    pp__chan_post(pp__drv_chan, chan_posts++, w->len);
    thread_posts = chan_posts;
    pthread_mutex_unlock(&chan_lock);
}

void pp__drv_settle(void) { pp__chan_drain(pp__drv_chan, thread_posts); }

void pp__drv_exit(int status) {
    pp__drv_settle();
    exit(status);
}

pp_wire_in pp__drv_call(pp_wire *w, unsigned *status) {
    size_t n = pp__chan_call(pp__drv_chan, ++chan_seq, w->len);
    pp_wire_in r;
    pp__wire_in_init(&r, pp__drv_chan->rep, n);
    *status = pp__wire_get_u32(&r, 0, 0xffffffffu);
    return r;
}

void pp__drv_end(void) { pthread_mutex_unlock(&chan_lock); }

/* The runtime stopped the run and will end this process: nothing to return to. */
static void __attribute__((noreturn)) wait_to_be_ended(void) {
    for (;;) pause();
}

void pp__drv_fail(const char *msg) {
    pp_wire w;
    unsigned st;
    pp__drv_begin(&w, PP_RPC_FAIL);
    pp__wire_str(&w, msg, PP_RPC_TEXT_MAX);
    pp__drv_call(&w, &st);
    wait_to_be_ended();
}

void pp__drv_stop(int op, int code, long arg, const char *detail) {
    pp_wire w;
    unsigned st;
    pp__drv_begin(&w, op);
    pp__wire_u32(&w, (uint32_t)code);
    pp__wire_i64(&w, arg);
    pp__wire_str(&w, detail ? detail : "", PP_RPC_TEXT_MAX);
    pp__drv_call(&w, &st);
    wait_to_be_ended();
}

/* A pp_rank pointer other than the one the step function received: the runtime reports it like any misuse. */
static void check_rank(const pp_rank *r, const char *api) {
    if (r == &the_rank && r->magic == RANK_MAGIC) return;
    pp__drv_stop(PP_RPC_MISUSE, PP_STOP_FOREIGN_RANK, pp__rpc_api_index(api), NULL);
}

static uint64_t id_of(const void *p) { return (uint64_t)(uintptr_t)p; }
static void *ptr_of(uint64_t id) { return (void *)(uintptr_t)id; }

/* Sends the call built in *w and waits for its reply; a refused call never returns (the run stops). */
static void call(pp_wire *w) {
    unsigned st;
    pp__drv_call(w, &st);
    if (st != PP_REPLY_OK) {
        pp__drv_end();
        wait_to_be_ended();
    }
    pp__drv_end();
}

/* A request with one u64 argument and no results, posted or called. */
static void request_one_arg(pp_rank *r, const char *api, int op, uint64_t a) {
    check_rank(r, api);
    pp_wire w;
    if (pp__rpc_postable((unsigned)op)) {
        begin_post(&w, op);
        pp__wire_u64(&w, a);
        post(&w);
    } else {
        pp__drv_begin(&w, op);
        pp__wire_u64(&w, a);
        call(&w);
    }
}

/* ---- who am I ------------------------------------------------------------------------------------------ */

int pp_rank_id(const pp_rank *r) { return check_rank(r, "pp_rank_id"), r->id; }
int pp_rank_stages(const pp_rank *r) { return check_rank(r, "pp_rank_stages"), r->P; }
int pp_rank_microbatches(const pp_rank *r) { return check_rank(r, "pp_rank_microbatches"), r->M; }
int pp_rank_chunks(const pp_rank *r) { return check_rank(r, "pp_rank_chunks"), r->v; }
int pp_rank_recompute(const pp_rank *r) { return check_rank(r, "pp_rank_recompute"), r->recompute; }
int pp_rank_replica(const pp_rank *r) { return check_rank(r, "pp_rank_replica"), r->replica; }
int pp_rank_replicas(const pp_rank *r) { return check_rank(r, "pp_rank_replicas"), r->D; }
int pp_virtual_stages(const pp_rank *r) { return check_rank(r, "pp_virtual_stages"), r->P * r->v; }
int pp_rank_shard(const pp_rank *r) { return check_rank(r, "pp_rank_shard"), r->tp; }
int pp_rank_shards(const pp_rank *r) { return check_rank(r, "pp_rank_shards"), r->T; }
/* a driver serves one rank: every block it hands out is that rank's */
int pp_block_shard(const pp_block *b) { return b ? the_rank.tp : -1; }

int pp_stage_blocks(const pp_rank *r, int chunk) {
    check_rank(r, "pp_stage_blocks");
    if (chunk >= 0 && chunk < r->v && chunk < 16) return r->blocks[chunk];
    request_one_arg((pp_rank *)r, "pp_virtual_stage", PP_RPC_VIRTUAL_STAGE, (uint64_t)(int64_t)chunk);
    wait_to_be_ended(); /* the runtime refuses it: the chunk does not exist */
}

int pp_virtual_stage(const pp_rank *r, int chunk) {
    check_rank(r, "pp_virtual_stage");
    if (chunk >= 0 && chunk < r->v && chunk < 16) return r->vstage[chunk];
    request_one_arg((pp_rank *)r, "pp_virtual_stage", PP_RPC_VIRTUAL_STAGE, (uint64_t)(int64_t)chunk);
    wait_to_be_ended(); /* the runtime refuses it */
}

/* pp.h's two calls that read no state, as the runtime answers them (lib/schedule/pure_calls.c): the tag from base's
 * layout, which both sides share (tag.h says why it lies there), the version from pp.h. */
_Static_assert(PP_FWD == 0 && PP_BWD == 1 && PP_TAG_MAX_MB == PP__TAG_MAX_MB &&
                   PP_TAG_MAX_VSTAGE == PP__TAG_MAX_VSTAGE && PP_TAG_RAW_MAX == PP__TAG_RAW_MAX,
               "pp.h's tag limits are the layout's (tag.h)");
int pp_tag(pp_dir dir, int mb, int vstage) { return pp__tag_make((int)dir, mb, vstage); }
const char *pp_version(void) { return PP_VERSION; }

/* ---- compute ------------------------------------------------------------------------------------------- */

/* A forward, whole (PP_RPC_FORWARD) or opened layer by layer (PP_RPC_FORWARD_BEGIN): y, and the stash. */
static pp_tensor *forward(pp_rank *r, const char *api, int op, int chunk, int mb, pp_tensor *x, pp_stash **stash) {
    check_rank(r, api);
    pp_wire w;
    begin_post(&w, op);
    uint64_t y = handle_new(PP_HANDLE_TENSOR), st = stash ? stash_new(chunk) : 0;
    pp__wire_i64(&w, chunk);
    pp__wire_i64(&w, mb);
    pp__wire_u64(&w, id_of(x));
    pp__wire_u32(&w, stash != NULL);
    pp__wire_u64(&w, y);
    pp__wire_u64(&w, st);
    post(&w);
    if (stash) *stash = ptr_of(st);
    return ptr_of(y);
}

pp_tensor *pp_stage_forward(pp_rank *r, int chunk, int mb, pp_tensor *x, pp_stash **stash) {
    return forward(r, "pp_stage_forward", PP_RPC_FORWARD, chunk, mb, x, stash);
}

pp_tensor *pp_stage_forward_begin(pp_rank *r, int chunk, int mb, pp_tensor *x, pp_stash **stash) {
    return forward(r, "pp_stage_forward_begin", PP_RPC_FORWARD_BEGIN, chunk, mb, x, stash);
}

/* A call on a stash and a tensor that returns a tensor: y, or dx (NULL where the stash's stage reads tokens). */
static pp_tensor *stash_call(pp_rank *r, const char *api, int op, pp_stash *stash, pp_tensor *t, int dx) {
    check_rank(r, api);
    pp_wire w;
    begin_post(&w, op);
    uint64_t out = dx ? dx_new(r, id_of(stash)) : handle_new(PP_HANDLE_TENSOR);
    pp__wire_u64(&w, id_of(stash));
    pp__wire_u64(&w, id_of(t));
    pp__wire_u64(&w, out);
    post(&w);
    return ptr_of(out);
}

pp_tensor *pp_stage_forward_end(pp_rank *r, pp_stash *stash, pp_tensor *x) {
    return stash_call(r, "pp_stage_forward_end", PP_RPC_FORWARD_END, stash, x, 0);
}
pp_tensor *pp_stage_backward_begin(pp_rank *r, pp_stash *stash, pp_tensor *dy) {
    return stash_call(r, "pp_stage_backward_begin", PP_RPC_BACKWARD_BEGIN, stash, dy, 0);
}
pp_tensor *pp_stage_backward_end(pp_rank *r, pp_stash *stash, pp_tensor *dy) {
    return stash_call(r, "pp_stage_backward_end", PP_RPC_BACKWARD_END, stash, dy, 1);
}

pp_block *pp_stash_block(pp_rank *r, pp_stash *stash, int i) {
    check_rank(r, "pp_stash_block");
    pp_wire w;
    begin_post(&w, PP_RPC_STASH_BLOCK); /* the runtime checks the block exists before any call uses it */
    pp__wire_u64(&w, id_of(stash));
    pp__wire_i64(&w, i);
    post(&w);
    return ptr_of(pp__block_handle(id_of(stash), i));
}

/* A block call (pp_block_api): its block and up to two tensors; a new tensor when `returns`. */
static pp_tensor *block_call(int api, pp_block *b, pp_tensor *t1, pp_tensor *t2, int returns) {
    pp_wire w;
    begin_post(&w, PP_RPC_BLOCK);
    uint64_t out = returns ? handle_new(PP_HANDLE_TENSOR) : 0;
    pp__wire_u32(&w, (uint32_t)api);
    pp__wire_u64(&w, id_of(b));
    pp__wire_u64(&w, id_of(t1));
    pp__wire_u64(&w, id_of(t2));
    pp__wire_u64(&w, out);
    post(&w);
    return ptr_of(out);
}

pp_tensor *pp_block_ln1(pp_block *b, pp_tensor *x) { return block_call(PP_BAPI_LN1, b, x, NULL, 1); }
pp_tensor *pp_block_qkv(pp_block *b, pp_tensor *ln) { return block_call(PP_BAPI_QKV, b, ln, NULL, 1); }
pp_tensor *pp_block_attention(pp_block *b, pp_tensor *qkv) { return block_call(PP_BAPI_ATTENTION, b, qkv, NULL, 1); }
pp_tensor *pp_block_proj(pp_block *b, pp_tensor *a) { return block_call(PP_BAPI_PROJ, b, a, NULL, 1); }
void pp_block_proj_bias(pp_block *b, pp_tensor *y) { block_call(PP_BAPI_PROJ_BIAS, b, y, NULL, 0); }
pp_tensor *pp_block_ln2(pp_block *b, pp_tensor *x) { return block_call(PP_BAPI_LN2, b, x, NULL, 1); }
pp_tensor *pp_block_linear1(pp_block *b, pp_tensor *ln) { return block_call(PP_BAPI_LINEAR1, b, ln, NULL, 1); }
pp_tensor *pp_block_gelu(pp_block *b, pp_tensor *h1) { return block_call(PP_BAPI_GELU, b, h1, NULL, 1); }
pp_tensor *pp_block_linear2(pp_block *b, pp_tensor *a1) { return block_call(PP_BAPI_LINEAR2, b, a1, NULL, 1); }
void pp_block_bias2(pp_block *b, pp_tensor *y) { block_call(PP_BAPI_BIAS2, b, y, NULL, 0); }
void pp_block_residual(pp_block *b, pp_tensor *y, pp_tensor *x) { block_call(PP_BAPI_RESIDUAL, b, y, x, 0); }
void pp_block_allreduce(pp_block *b, pp_tensor *t) { block_call(PP_BAPI_ALLREDUCE, b, t, NULL, 0); }
pp_tensor *pp_block_linear2_backward(pp_block *b, pp_tensor *dy) {
    return block_call(PP_BAPI_LINEAR2_BACKWARD, b, dy, NULL, 1);
}
void pp_block_bias2_backward(pp_block *b, pp_tensor *dy) { block_call(PP_BAPI_BIAS2_BACKWARD, b, dy, NULL, 0); }
pp_tensor *pp_block_gelu_backward(pp_block *b, pp_tensor *da1) {
    return block_call(PP_BAPI_GELU_BACKWARD, b, da1, NULL, 1);
}
pp_tensor *pp_block_linear1_backward(pp_block *b, pp_tensor *dh1) {
    return block_call(PP_BAPI_LINEAR1_BACKWARD, b, dh1, NULL, 1);
}
pp_tensor *pp_block_ln2_backward(pp_block *b, pp_tensor *dln) {
    return block_call(PP_BAPI_LN2_BACKWARD, b, dln, NULL, 1);
}
pp_tensor *pp_block_proj_backward(pp_block *b, pp_tensor *dy) {
    return block_call(PP_BAPI_PROJ_BACKWARD, b, dy, NULL, 1);
}
void pp_block_proj_bias_backward(pp_block *b, pp_tensor *dy) {
    block_call(PP_BAPI_PROJ_BIAS_BACKWARD, b, dy, NULL, 0);
}
pp_tensor *pp_block_attention_backward(pp_block *b, pp_tensor *da) {
    return block_call(PP_BAPI_ATTENTION_BACKWARD, b, da, NULL, 1);
}
pp_tensor *pp_block_qkv_backward(pp_block *b, pp_tensor *dqkv) {
    return block_call(PP_BAPI_QKV_BACKWARD, b, dqkv, NULL, 1);
}
pp_tensor *pp_block_ln1_backward(pp_block *b, pp_tensor *dln) {
    return block_call(PP_BAPI_LN1_BACKWARD, b, dln, NULL, 1);
}

static pp_tensor *backward(pp_rank *r, const char *api, int op, pp_stash *stash, pp_tensor *dy) {
    check_rank(r, api);
    pp_wire w;
    begin_post(&w, op);
    uint64_t dx = dx_new(r, id_of(stash));
    pp__wire_u64(&w, id_of(stash));
    pp__wire_u64(&w, id_of(dy));
    pp__wire_u64(&w, dx);
    post(&w);
    return ptr_of(dx);
}

pp_tensor *pp_stage_backward(pp_rank *r, pp_stash *stash, pp_tensor *dy) {
    return backward(r, "pp_stage_backward", PP_RPC_BACKWARD, stash, dy);
}

pp_tensor *pp_stage_backward_input(pp_rank *r, pp_stash *stash, pp_tensor *dy) {
    return backward(r, "pp_stage_backward_input", PP_RPC_BACKWARD_INPUT, stash, dy);
}

void pp_stage_backward_weight(pp_rank *r, pp_stash *stash) {
    request_one_arg(r, "pp_stage_backward_weight", PP_RPC_BACKWARD_WEIGHT, id_of(stash));
}

pp_tensor *pp_loss_grad(pp_rank *r, float scale) {
    check_rank(r, "pp_loss_grad");
    pp_wire w;
    begin_post(&w, PP_RPC_LOSS_GRAD);
    uint64_t t = handle_new(PP_HANDLE_TENSOR);
    pp__wire_put(&w, &scale, sizeof scale);
    pp__wire_u64(&w, t);
    post(&w);
    return ptr_of(t);
}

/* ---- stashes, optimizer -------------------------------------------------------------------------------- */

void pp_stash_checkpoint(pp_rank *r, pp_stash *stash) {
    request_one_arg(r, "pp_stash_checkpoint", PP_RPC_CHECKPOINT, id_of(stash));
}
void pp_stash_free(pp_rank *r, pp_stash *stash) { request_one_arg(r, "pp_stash_free", PP_RPC_STASH_FREE, id_of(stash)); }
void pp_optimizer_step(pp_rank *r) { request_one_arg(r, "pp_optimizer_step", PP_RPC_OPTIMIZER_STEP, 0); }
void pp_grad_zero(pp_rank *r) { request_one_arg(r, "pp_grad_zero", PP_RPC_GRAD_ZERO, 0); }

/* ---- messages ------------------------------------------------------------------------------------------ */

void pp_send(pp_rank *r, pp_tensor *t, int dst, int tag) {
    check_rank(r, "pp_send");
    pp_wire w;
    begin_post(&w, PP_RPC_SEND);
    pp__wire_u64(&w, id_of(t));
    pp__wire_i64(&w, dst);
    pp__wire_i64(&w, tag);
    post(&w);
}

pp_tensor *pp_recv(pp_rank *r, int src, int tag) {
    check_rank(r, "pp_recv");
    pp_wire w;
    begin_post(&w, PP_RPC_RECV);
    uint64_t t = handle_new(PP_HANDLE_TENSOR);
    pp__wire_u64(&w, 0);
    pp__wire_i64(&w, src);
    pp__wire_i64(&w, tag);
    pp__wire_u64(&w, t);
    post(&w);
    return ptr_of(t);
}

pp_request *pp_isend(pp_rank *r, pp_tensor *t, int dst, int tag) {
    check_rank(r, "pp_isend");
    pp_wire w;
    begin_post(&w, PP_RPC_ISEND);
    uint64_t q = handle_new(PP_HANDLE_REQUEST);
    pp__wire_u64(&w, id_of(t));
    pp__wire_i64(&w, dst);
    pp__wire_i64(&w, tag);
    pp__wire_u64(&w, q);
    post(&w);
    return ptr_of(q);
}

pp_request *pp_irecv(pp_rank *r, int src, int tag, pp_tensor **out) {
    check_rank(r, "pp_irecv");
    pp_wire w;
    begin_post(&w, PP_RPC_IRECV);
    uint64_t q = handle_new(PP_HANDLE_REQUEST), t = out ? handle_new(PP_HANDLE_TENSOR) : 0;
    pp__wire_i64(&w, src);
    pp__wire_i64(&w, tag);
    pp__wire_u32(&w, out != NULL);
    pp__wire_u64(&w, q);
    pp__wire_u64(&w, t);
    post(&w);
    if (out) *out = ptr_of(t);
    return ptr_of(q);
}

void pp_wait(pp_rank *r, pp_request *req) { request_one_arg(r, "pp_wait", PP_RPC_WAIT, id_of(req)); }

void pp_waitall(pp_rank *r, pp_request **reqs, int n) {
    check_rank(r, "pp_waitall");
    int at = 0;
    do {
        /* a bad count or a NULL array goes through as it is, so the runtime names it */
        int part = n - at > PP_RPC_WAITALL_MAX ? PP_RPC_WAITALL_MAX : n - at;
        /* a short list is posted; a long one is a call, which the runtime serves after the posts before it */
        int fits = part <= (int)((PP_CHAN_POST_MSG - 16) / sizeof(uint64_t));
        pp_wire w;
        if (fits) begin_post(&w, PP_RPC_WAITALL);
        else pp__drv_begin(&w, PP_RPC_WAITALL);
        pp__wire_i64(&w, part);
        pp__wire_u32(&w, reqs != NULL);
        for (int i = 0; reqs && i < part; i++) pp__wire_u64(&w, id_of(reqs[at + i]));
        if (fits) post(&w);
        else call(&w);
        at += part > 0 ? part : 1;
    } while (at < n);
}

/* ---- gradient all-reduce ------------------------------------------------------------------------------- */

void pp_grad_reduce(pp_rank *r, int chunk) {
    check_rank(r, "pp_grad_reduce");
    pp_wire w;
    begin_post(&w, PP_RPC_GRAD_REDUCE);
    pp__wire_i64(&w, chunk);
    post(&w);
}

pp_request *pp_grad_ireduce(pp_rank *r, int chunk) {
    check_rank(r, "pp_grad_ireduce");
    pp_wire w;
    begin_post(&w, PP_RPC_GRAD_IREDUCE);
    uint64_t q = handle_new(PP_HANDLE_REQUEST);
    pp__wire_i64(&w, chunk);
    pp__wire_u64(&w, q);
    post(&w);
    return ptr_of(q);
}

void pp_group_start(pp_rank *r) { request_one_arg(r, "pp_group_start", PP_RPC_GROUP_START, 0); }
void pp_group_end(pp_rank *r) { request_one_arg(r, "pp_group_end", PP_RPC_GROUP_END, 0); }

/* ---- misc ---------------------------------------------------------------------------------------------- */

void pp_fail(pp_rank *r, const char *fmt, ...) {
    check_rank(r, "pp_fail");
    char msg[PP_RPC_TEXT_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt ? fmt : "(no message)", ap);
    va_end(ap);
    pp__drv_fail(msg);
}
