/* server.c: a rank's requests, answered on its real state. Every request is parsed from a private copy with
 * the bounds-checked reader; a malformed one stops the run (only a driver that tampered with its channel sends
 * one). Nothing is allocated between parsing and the pp.h call, because a refused call leaves through
 * pp__rank_abort's longjmp. */
#include "server.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "rank.h"
#include "rpc.h"
#include "schedules.h"
#include "text.h"
#include "wire.h"
#include "host.h"

#define NKINDS 4
/* Seconds the grid lab's mapping may take to answer where no test sets a time limit (pplab run): it is a few
 * dozen calls that return numbers. */
#define GRID_ANSWER_S 30.0

struct pp_server {
    pp_driver drv;
    int step;                    /* the step whose handles are live */
    int next_pending;            /* the driver's PP_RPC_NEXT waits for its command */
    int ready;                   /* the submission's code may have run (the driver's first PP_RPC_NEXT came, or
                                  * its PP_RPC_GRID_ASK): from then on no stop request is the driver's own */
    double answer_s;             /* how long the grid lab's mapping may take to answer */
    int answer_is_tests;         /* 1: answer_s is the test's time limit; 0: GRID_ANSWER_S (no test set one) */
    void **obj[NKINDS];          /* handle index -> object, per kind, for the current step */
    uint32_t n[NKINDS], cap[NKINDS];
    pp_request *scratch[PP_RPC_WAITALL_MAX];
    /* what a handle of another rank resolves to: the pp.h checks then report it as they do in-process */
    pp_tensor foreign_tensor;
    pp_stash foreign_stash;
    pp_request foreign_request;
    char symbol[64];             /* the lab's step function, as the grader named it */
};

static const char *kind_name[NKINDS] = {"", "tensor", "stash", "request"};

/* Starts the reply to the pending call. */
static void reply_begin(pp_server *s, pp_wire *w, unsigned status) {
    pp__wire_init_fixed(w, s->drv.chan->rep, PP_CHAN_MSG);
    pp__wire_u32(w, status);
}

static void reply_end(pp_server *s, pp_wire *w) { pp__driver_reply(&s->drv, w->len); }

/* Answers the pending call with a status alone. */
static void reply_status(pp_server *s, unsigned status) {
    pp_wire w;
    reply_begin(s, &w, status);
    reply_end(s, &w);
}

pp_server *pp__server_start(const pp_run_config *cfg, const pp_sandbox *sb, const char *symbol, int rank,
                            char *err, size_t len) {
    pp_server *s = pp__xcalloc(1, sizeof *s);
    pp_chan_facts f = {.mode = PP_CHAN_SCHEDULE, .rank = pp__config_rank_pipe(cfg, rank), .P = cfg->P, .M = cfg->M,
                       .v = cfg->v, .recompute = cfg->recompute, .replica = pp__config_rank_replica(cfg, rank), .D = cfg->D,
                       .tp = pp__config_rank_tp(cfg, rank), .T = cfg->T > 1 ? cfg->T : 1,
                       .grid = cfg->schedule->grid && rank == 0}; /* asked once, of rank 0 */
    for (int ch = 0; ch < cfg->v && ch < 16; ch++) {
        f.vstage[ch] = pp__config_vstage(cfg, f.rank, ch);
        f.prev_vstage[ch] = pp__config_prev(cfg, f.vstage[ch]);
        f.blocks[ch] = pp__config_blocks(cfg, f.vstage[ch]);
    }
    snprintf(f.symbol, sizeof f.symbol, "%s", symbol);
    snprintf(s->symbol, sizeof s->symbol, "%s", symbol);
    /* spinning pays only while the two ends of every rank can have a core each */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    f.spin_ns = cpus >= 2L * pp__config_world(cfg) ? 20000 : 0;
    if (pp__driver_start(&s->drv, sb, &f, err, len)) {
        free(s);
        return NULL;
    }
    s->drv.spin_ns = f.spin_ns;
    s->answer_is_tests = sb->cpu_limit_s > 0;
    s->answer_s = s->answer_is_tests ? sb->cpu_limit_s : GRID_ANSWER_S;
    return s;
}

void pp__server_release(pp_server *s) {
    if (!s || !s->next_pending || !s->drv.pending) return;
    reply_status(s, PP_REPLY_EXIT);
}

void pp__server_stop(pp_server *s, int clean) {
    if (!s) return;
    if (clean) pp__server_release(s);
    pp__driver_stop(&s->drv, clean ? 2.0 : 0);
    for (int k = 0; k < NKINDS; k++) free(s->obj[k]);
    free(s);
}

int pp__server_ended(pp_server *s, pp_status *st, char *msg, size_t len) {
    int status;
    if (!pp__driver_ended(&s->drv, &status)) return 0;
    const char *hint;
    char line[800];
    *st = pp__driver_death_of(&s->drv, status, line, sizeof line, &hint);
    snprintf(msg, len, hint ? "%s\nHINT: %s" : "%s", line, hint);
    return 1;
}

long pp__server_hello(pp_server *s, unsigned char *buf, size_t cap, pp_status *st, char *msg, size_t len) {
    const char *hint = NULL;
    char line[1200];
    for (;;) {
        int got = pp__driver_next_within(&s->drv, s->answer_s);
        if (got < 0) {
            *st = PP_ERR_TIMEOUT;
            snprintf(msg, len, "pp_tpgrid_place and pp_tpgrid_group did not answer within %g s%s: does one of them "
                     "loop, sleep or wait?", s->answer_s, s->answer_is_tests ? ", the test's time limit" : "");
            return -1;
        }
        if (!got) {
            if (!pp__server_ended(s, st, msg, len)) *st = PP_ERR_CRASH, snprintf(msg, len, "the driver ended");
            return -1;
        }
        pp_wire_in in;
        pp__wire_in_init(&in, s->drv.req, s->drv.req_len);
        unsigned op = pp__wire_get_u32(&in, 0, 0xffffffffu);
        if (op == PP_RPC_GRID_ASK && !s->ready && !in.bad) {
            /* set up; the submission's functions run next */
            s->ready = 1;
            reply_status(s, PP_REPLY_OK);
            continue;
        }
        if (op == PP_RPC_NEXT && !in.bad) {
            size_t n = pp__wire_left(&in);
            if (n > cap) n = cap;
            memcpy(buf, pp__wire_view(&in, n), n);
            s->next_pending = s->ready = 1;
            return (long)n;
        }
        /* a stop request is the driver's word only while none of the submission's code has run */
        if (s->ready) {
            *st = PP_ERR_SANDBOX;
            snprintf(msg, len, "refused: the schedule's code sent a request (op %u) to pplab while pp_tpgrid_place "
                     "or pp_tpgrid_group ran: those two only return their answers", op);
            return -1;
        }
        if (in.bad || pp__server_stop_reason(op, &in, "the schedule's", s->symbol, st, &hint, line, sizeof line)) {
            *st = PP_ERR_SANDBOX;
            snprintf(line, sizeof line, "the schedule's driver sent request %u before its first step", op);
        }
        snprintf(msg, len, hint ? "%s\nHINT: %s" : "%s", line, hint);
        return -1;
    }
}

/* ---- handles ------------------------------------------------------------------------------------------- */

static uint64_t handle_put(pp_server *s, const pp_rank *r, pp_handle_kind k, void *p) {
    if (!p) return 0;
    if (s->n[k] == s->cap[k]) {
        s->cap[k] = s->cap[k] ? 2 * s->cap[k] : 256;
        s->obj[k] = pp__xrealloc(s->obj[k], s->cap[k] * sizeof *s->obj[k]);
    }
    s->obj[k][s->n[k]] = p;
    return pp__handle_make(k, r->id, s->step, s->n[k]++);
}

/* Hands out p as handle_put does and holds the result to the id the driver predicted for it (rpc.h: the driver
 * returns handles without waiting for the runtime). They differ only when the driver's memory was written to. */
static void handle_expect(pp_server *s, pp_rank *r, pp_handle_kind k, void *p, uint64_t want, const char *api) {
    uint64_t h = handle_put(s, r, k, p);
    if (h != want)
        pp__rank_abort(r, PP_ERR_SANDBOX, "a schedule that writes outside its own arrays can overwrite the driver's "
                       "state: check the array bounds around this call",
                       "%s: the schedule driver handed out %s %#llx where pplab made %#llx", api, kind_name[k],
                       (unsigned long long)want, (unsigned long long)h);
}

/* The object behind handle h, which must be of kind k. api and what name the argument in errors. */
static void *handle_get(pp_server *s, pp_rank *r, pp_handle_kind k, uint64_t h, const char *api, const char *what) {
    if (!h) return NULL;
    int kind = pp__handle_kind(h), rank = pp__handle_rank(h);
    uint32_t idx = pp__handle_index(h);
    if (kind < 1 || kind >= NKINDS || rank >= r->world->P)
        pp__rank_abort(r, PP_ERR_USAGE, "pass only what pplab's calls returned",
                       "%s: %s (%#llx) is not a %s pplab handed out", api, what, (unsigned long long)h, kind_name[k]);
    if (kind != (int)k)
        pp__rank_abort(r, PP_ERR_USAGE, "check the order of the arguments against pp.h",
                       "%s: %s is a %s, not a %s", api, what, kind_name[kind], kind_name[k]);
    if (rank != r->id) {
        /* the pp.h call then refuses it as another rank's, with the message an in-process run gives */
        if (k == PP_HANDLE_TENSOR) {
            memset(&s->foreign_tensor, 0, sizeof s->foreign_tensor);
            s->foreign_tensor.owner = rank;
            return &s->foreign_tensor;
        }
        if (k == PP_HANDLE_STASH) {
            memset(&s->foreign_stash, 0, sizeof s->foreign_stash);
            return &s->foreign_stash;
        }
        memset(&s->foreign_request, 0, sizeof s->foreign_request);
        s->foreign_request.rank = rank;
        return &s->foreign_request;
    }
    if (pp__handle_step(h) != (s->step & 0xffff))
        pp__rank_abort(r, PP_ERR_USAGE, "keep tensors, stashes and requests only within the step that made them",
                       "%s: %s comes from an earlier step; it was released when that step ended", api, what);
    if (idx >= s->n[k])
        pp__rank_abort(r, PP_ERR_USAGE, "pass only what pplab's calls returned",
                       "%s: %s (%#llx) was never handed out", api, what, (unsigned long long)h);
    return s->obj[k][idx];
}

/* ---- requests ------------------------------------------------------------------------------------------ */

static void __attribute__((noreturn)) malformed(pp_rank *r, unsigned op) {
    pp__rank_abort(r, PP_ERR_SANDBOX, "a schedule talks to pplab only through pp.h",
                   "the schedule's channel to pplab carried a malformed request (op %u): was the driver's memory "
                   "overwritten?", op);
}


static int get_int(pp_wire_in *in) { return (int)pp__wire_get_i64(in, INT32_MIN, INT32_MAX); }

/* The driver ended while its rank was running: say how, and stop the run. */
static void __attribute__((noreturn)) driver_ended(pp_rank *r, pp_server *s) {
    char msg[400];
    const char *hint;
    pp_status st = pp__driver_death(&s->drv, msg, sizeof msg, &hint);
    pp__rank_abort(r, st, hint, "%s", msg);
}

/* Runs one request (any but PP_RPC_NEXT) on rank r and answers it: a post is counted served, a call gets
 * PP_REPLY_OK (no results: the driver made the handles itself). A refused one does not return. */
int pp__server_stop_reason(unsigned op, pp_wire_in *in, const char *who, const char *symbol, pp_status *st,
                           const char **hint, char *msg, size_t len) {
    uint32_t code = pp__wire_get_u32(in, 1, PP_STOP_COUNT - 1);
    long long arg = pp__wire_get_i64(in, -1, 1 << 20);
    char text[PP_RPC_TEXT_MAX + 1], detail[3 * PP_RPC_TEXT_MAX];
    pp__wire_get_str(in, text, sizeof text);
    if (in->bad) return -1;
    char *said = text[0] ? pp__text_quote(text, sizeof text) : NULL;
    snprintf(detail, sizeof detail, "%s%s", said ? "; the driver said:\n" : "", said ? said : "");
    free(said);
    const char *api = code == PP_STOP_FOREIGN_RANK ? pp__rpc_api((int)arg) : NULL;
    const char *why = arg > 0 && arg < 4096 ? strerror((int)arg) : "no reason given";
    *hint = NULL;
    if (op == PP_RPC_MISUSE && api) {
        *st = PP_ERR_USAGE;
        snprintf(msg, len, "%s: r is not this rank's handle; pass the pp_rank * your step function received%s", api,
                 detail);
    } else if (op == PP_RPC_MISUSE && code == PP_STOP_NO_STEP) {
        *st = PP_ERR_USAGE;
        snprintf(msg, len, "the lab's file does not define %s(): keep the function name the lab gives%s",
                 arg == 1 ? "pp_tpgrid_place" : arg == 2 ? "pp_tpgrid_group" : symbol, detail);
    } else if (op == PP_RPC_LOAD_FAILED && code == PP_STOP_OBJECT) {
        *st = PP_ERR_SANDBOX;
        snprintf(msg, len, "%s driver refused the lab's object%s", who, detail);
    } else if (op == PP_RPC_SETUP_FAILED && (code == PP_STOP_LOCKDOWN || code == PP_STOP_SEAL)) {
        *st = PP_ERR_SANDBOX;
        *hint = "see docs/design.md, section \"The trust boundary\", for what the sandbox needs";
        snprintf(msg, len, "%s driver could not lock itself down (%s): %s%s", who,
                 code == PP_STOP_SEAL ? "its filter after the lab's object loaded" : "before it read the lab's object",
                 why, detail);
    } else {
        return -1;
    }
    return 0;
}

/* A driver stopped the run for a reason of its own: the rank fails with this side's sentence for it. */
static void __attribute__((noreturn)) driver_stopped(pp_rank *r, pp_server *s, unsigned op, pp_wire_in *in) {
    char msg[4 * PP_RPC_TEXT_MAX];
    const char *hint;
    pp_status st;
    pp_wire_in peek = *in;
    uint32_t code = pp__wire_get_u32(&peek, 0, 0xffffffffu);
    /* a driver stops on its own only while it starts, but for a foreign handle: anything else came from the
     * submission's code writing to the channel, whatever it says */
    if (s->ready && !(op == PP_RPC_MISUSE && code == PP_STOP_FOREIGN_RANK))
        pp__rank_abort(r, PP_ERR_SANDBOX, NULL, "refused: the schedule's code sent its driver's start-up request "
                       "(op %u) while its step function ran: only pp.h's calls may use the channel to pplab", op);
    if (pp__server_stop_reason(op, in, "the schedule's", s->symbol, &st, &hint, msg, sizeof msg)) malformed(r, op);
    pp__rank_abort(r, st, hint, "%s", msg);
}

/* The compute and stash calls, the loss gradient and the optimizer. 1 when op is one of them. */
static int serve_compute(pp_rank *r, pp_server *s, unsigned op, pp_wire_in *in) {
    uint64_t a, b;
    switch (op) {
    case PP_RPC_FORWARD:
    case PP_RPC_FORWARD_BEGIN: { /* a whole forward, or one opened layer by layer (lab 08) */
        const char *api = op == PP_RPC_FORWARD ? "pp_stage_forward" : "pp_stage_forward_begin";
        int chunk = get_int(in), mb = get_int(in);
        a = pp__wire_get_u64(in);
        int want = (int)pp__wire_get_u32(in, 0, 1);
        uint64_t want_y = pp__wire_get_u64(in), want_stash = pp__wire_get_u64(in);
        if (in->bad) malformed(r, op);
        pp_stash *st = NULL;
        pp_tensor *x = handle_get(s, r, PP_HANDLE_TENSOR, a, api, "x");
        pp_tensor *out = op == PP_RPC_FORWARD ? pp_stage_forward(r, chunk, mb, x, want ? &st : NULL)
                                              : pp_stage_forward_begin(r, chunk, mb, x, want ? &st : NULL);
        handle_expect(s, r, PP_HANDLE_TENSOR, out, want_y, api);
        handle_expect(s, r, PP_HANDLE_STASH, st, want_stash, api);
        return 1;
    }
    case PP_RPC_BACKWARD:
    case PP_RPC_BACKWARD_INPUT: {
        const char *api = op == PP_RPC_BACKWARD ? "pp_stage_backward" : "pp_stage_backward_input";
        a = pp__wire_get_u64(in), b = pp__wire_get_u64(in);
        uint64_t want_dx = pp__wire_get_u64(in);
        if (in->bad) malformed(r, op);
        pp_stash *st = handle_get(s, r, PP_HANDLE_STASH, a, api, "stash");
        pp_tensor *dy = handle_get(s, r, PP_HANDLE_TENSOR, b, api, "dy");
        pp_tensor *dx = op == PP_RPC_BACKWARD ? pp_stage_backward(r, st, dy) : pp_stage_backward_input(r, st, dy);
        handle_expect(s, r, PP_HANDLE_TENSOR, dx, want_dx, api);
        return 1;
    }
    case PP_RPC_BACKWARD_WEIGHT:
    case PP_RPC_CHECKPOINT:
    case PP_RPC_STASH_FREE: {
        const char *api = op == PP_RPC_BACKWARD_WEIGHT ? "pp_stage_backward_weight"
                          : op == PP_RPC_CHECKPOINT   ? "pp_stash_checkpoint"
                                                     : "pp_stash_free";
        a = pp__wire_get_u64(in);
        if (in->bad) malformed(r, op);
        pp_stash *st = handle_get(s, r, PP_HANDLE_STASH, a, api, "stash");
        if (op == PP_RPC_BACKWARD_WEIGHT) pp_stage_backward_weight(r, st);
        else if (op == PP_RPC_CHECKPOINT) pp_stash_checkpoint(r, st);
        else pp_stash_free(r, st);
        return 1;
    }
    case PP_RPC_LOSS_GRAD: {
        float scale;
        pp__wire_get(in, &scale, sizeof scale);
        uint64_t want_t = pp__wire_get_u64(in);
        if (in->bad) malformed(r, op);
        handle_expect(s, r, PP_HANDLE_TENSOR, pp_loss_grad(r, scale), want_t, "pp_loss_grad");
        return 1;
    }
    case PP_RPC_OPTIMIZER_STEP:
    case PP_RPC_GRAD_ZERO:
        if (op == PP_RPC_OPTIMIZER_STEP) pp_optimizer_step(r);
        else pp_grad_zero(r);
        return 1;
    default:
        return 0;
    }
}

/* The message calls and their groups. 1 when op is one of them. */
static int serve_message(pp_rank *r, pp_server *s, unsigned op, pp_wire_in *in) {
    uint64_t a;
    int x, y;
    switch (op) {
    case PP_RPC_GROUP_START:
    case PP_RPC_GROUP_END:
        if (op == PP_RPC_GROUP_START) pp_group_start(r);
        else pp_group_end(r);
        return 1;
    case PP_RPC_SEND:
    case PP_RPC_ISEND: {
        const char *api = op == PP_RPC_SEND ? "pp_send" : "pp_isend";
        a = pp__wire_get_u64(in);
        x = get_int(in), y = get_int(in);
        uint64_t want_q = op == PP_RPC_ISEND ? pp__wire_get_u64(in) : 0;
        if (in->bad) malformed(r, op);
        pp_tensor *t = handle_get(s, r, PP_HANDLE_TENSOR, a, api, "tensor");
        if (op == PP_RPC_SEND) pp_send(r, t, x, y);
        else handle_expect(s, r, PP_HANDLE_REQUEST, pp_isend(r, t, x, y), want_q, api);
        return 1;
    }
    case PP_RPC_RECV: {
        (void)pp__wire_get_u64(in);
        x = get_int(in), y = get_int(in);
        uint64_t want_t = pp__wire_get_u64(in);
        if (in->bad) malformed(r, op);
        handle_expect(s, r, PP_HANDLE_TENSOR, pp_recv(r, x, y), want_t, "pp_recv");
        return 1;
    }
    case PP_RPC_IRECV: {
        x = get_int(in), y = get_int(in);
        int want = (int)pp__wire_get_u32(in, 0, 1);
        uint64_t want_q = pp__wire_get_u64(in), want_t = pp__wire_get_u64(in);
        if (in->bad) malformed(r, op);
        pp_tensor *t = NULL;
        pp_request *q = pp_irecv(r, x, y, want ? &t : NULL);
        handle_expect(s, r, PP_HANDLE_REQUEST, q, want_q, "pp_irecv");
        handle_expect(s, r, PP_HANDLE_TENSOR, t, want_t, "pp_irecv");
        return 1;
    }
    case PP_RPC_WAIT:
        a = pp__wire_get_u64(in);
        if (in->bad) malformed(r, op);
        pp_wait(r, handle_get(s, r, PP_HANDLE_REQUEST, a, "pp_wait", "request"));
        return 1;
    case PP_RPC_WAITALL: {
        int n = get_int(in), given = (int)pp__wire_get_u32(in, 0, 1);
        if (in->bad || n > PP_RPC_WAITALL_MAX) malformed(r, op);
        for (int i = 0; given && i < n; i++) {
            s->scratch[i] = handle_get(s, r, PP_HANDLE_REQUEST, pp__wire_get_u64(in), "pp_waitall", "a request");
            if (in->bad) malformed(r, op);
        }
        pp_waitall(r, given ? s->scratch : NULL, n);
        return 1;
    }
    default:
        return 0;
    }
}

/* The gradient reduces. 1 when op is one of them. */
static int serve_reduce(pp_rank *r, pp_server *s, unsigned op, pp_wire_in *in) {
    int x;
    switch (op) {
    case PP_RPC_GRAD_REDUCE:
    case PP_RPC_GRAD_IREDUCE: {
        x = get_int(in);
        uint64_t want_q = op == PP_RPC_GRAD_IREDUCE ? pp__wire_get_u64(in) : 0;
        if (in->bad) malformed(r, op);
        if (op == PP_RPC_GRAD_REDUCE) pp_grad_reduce(r, x);
        else handle_expect(s, r, PP_HANDLE_REQUEST, pp_grad_ireduce(r, x), want_q, "pp_grad_ireduce");
        return 1;
    }
    default:
        return 0;
    }
}

/* The block behind handle h (pp__block_handle): its stash's, checked as any stash is, at its index. */
static pp_block *block_get(pp_server *s, pp_rank *r, uint64_t h, const char *api) {
    uint32_t idx = pp__handle_index(h);
    if (pp__handle_kind(h) != PP_HANDLE_BLOCK)
        pp__rank_abort(r, PP_ERR_USAGE, "pass what pp_stash_block returned",
                       "%s: the block (%#llx) is not one pp_stash_block handed out", api, (unsigned long long)h);
    uint64_t sh = pp__handle_make(PP_HANDLE_STASH, pp__handle_rank(h), pp__handle_step(h), idx >> PP_BLOCK_SHIFT);
    pp_stash *st = handle_get(s, r, PP_HANDLE_STASH, sh, api, "the block's stash");
    int i = (int)(idx & ((1u << PP_BLOCK_SHIFT) - 1));
    if (!st || !st->blocks || i >= st->nblocks)
        pp__rank_abort(r, PP_ERR_USAGE, "pass what pp_stash_block returned, while its forward or backward is open",
                       "%s: block %d of that stash is not open", api, i);
    return &st->blocks[i];
}

/* Block call api (pp_block_api, not an op's end) on b with its tensors; its new tensor, or NULL for the calls
 * without one. */
static pp_tensor *run_block_call(int api, pp_block *b, pp_tensor *t1, pp_tensor *t2) {
    pp_tensor *out = NULL;
    switch (api) {
    case PP_BAPI_LN1: out = pp_block_ln1(b, t1); break;
    case PP_BAPI_QKV: out = pp_block_qkv(b, t1); break;
    case PP_BAPI_ATTENTION: out = pp_block_attention(b, t1); break;
    case PP_BAPI_PROJ: out = pp_block_proj(b, t1); break;
    case PP_BAPI_PROJ_BIAS: pp_block_proj_bias(b, t1); break;
    case PP_BAPI_LN2: out = pp_block_ln2(b, t1); break;
    case PP_BAPI_LINEAR1: out = pp_block_linear1(b, t1); break;
    case PP_BAPI_GELU: out = pp_block_gelu(b, t1); break;
    case PP_BAPI_LINEAR2: out = pp_block_linear2(b, t1); break;
    case PP_BAPI_BIAS2: pp_block_bias2(b, t1); break;
    case PP_BAPI_RESIDUAL: pp_block_residual(b, t1, t2); break;
    case PP_BAPI_ALLREDUCE: pp_block_allreduce(b, t1); break;
    case PP_BAPI_LINEAR2_BACKWARD: out = pp_block_linear2_backward(b, t1); break;
    case PP_BAPI_BIAS2_BACKWARD: pp_block_bias2_backward(b, t1); break;
    case PP_BAPI_GELU_BACKWARD: out = pp_block_gelu_backward(b, t1); break;
    case PP_BAPI_LINEAR1_BACKWARD: out = pp_block_linear1_backward(b, t1); break;
    case PP_BAPI_LN2_BACKWARD: out = pp_block_ln2_backward(b, t1); break;
    case PP_BAPI_PROJ_BACKWARD: out = pp_block_proj_backward(b, t1); break;
    case PP_BAPI_PROJ_BIAS_BACKWARD: pp_block_proj_bias_backward(b, t1); break;
    case PP_BAPI_ATTENTION_BACKWARD: out = pp_block_attention_backward(b, t1); break;
    case PP_BAPI_QKV_BACKWARD: out = pp_block_qkv_backward(b, t1); break;
    default: out = pp_block_ln1_backward(b, t1); break;
    }
    return out;
}

/* A stage run layer by layer and its blocks' calls (lab 08). 1 when op is one of them. */
static int serve_blocks(pp_rank *r, pp_server *s, unsigned op, pp_wire_in *in) {
    switch (op) {
    case PP_RPC_FORWARD_END:
    case PP_RPC_BACKWARD_BEGIN:
    case PP_RPC_BACKWARD_END: {
        const char *api = op == PP_RPC_FORWARD_END ? "pp_stage_forward_end" : op == PP_RPC_BACKWARD_BEGIN
                          ? "pp_stage_backward_begin" : "pp_stage_backward_end";
        uint64_t a = pp__wire_get_u64(in), b = pp__wire_get_u64(in), want = pp__wire_get_u64(in);
        if (in->bad) malformed(r, op);
        pp_stash *st = handle_get(s, r, PP_HANDLE_STASH, a, api, "stash");
        pp_tensor *t = handle_get(s, r, PP_HANDLE_TENSOR, b, api, op == PP_RPC_FORWARD_END ? "x" : "dy");
        pp_tensor *out = op == PP_RPC_FORWARD_END ? pp_stage_forward_end(r, st, t)
                       : op == PP_RPC_BACKWARD_BEGIN ? pp_stage_backward_begin(r, st, t)
                                                     : pp_stage_backward_end(r, st, t);
        handle_expect(s, r, PP_HANDLE_TENSOR, out, want, api);
        return 1;
    }
    case PP_RPC_STASH_BLOCK: {
        uint64_t a = pp__wire_get_u64(in);
        int i = get_int(in);
        if (in->bad) malformed(r, op);
        (void)pp_stash_block(r, handle_get(s, r, PP_HANDLE_STASH, a, "pp_stash_block", "stash"), i);
        return 1;
    }
    case PP_RPC_BLOCK: {
        int api = (int)pp__wire_get_u32(in, 0, PP_BAPI_FORWARD_END - 1); /* the op's ends are no block call */
        uint64_t bh = pp__wire_get_u64(in), a = pp__wire_get_u64(in), c = pp__wire_get_u64(in);
        uint64_t want = pp__wire_get_u64(in);
        if (in->bad) malformed(r, op);
        const char *name = pp__block_api(api);
        pp_block *b = block_get(s, r, bh, name);
        pp_tensor *t1 = handle_get(s, r, PP_HANDLE_TENSOR, a, name, "its tensor");
        pp_tensor *t2 = handle_get(s, r, PP_HANDLE_TENSOR, c, name, "x");
        pp_tensor *out = run_block_call(api, b, t1, t2);
        handle_expect(s, r, PP_HANDLE_TENSOR, out, want, name);
        return 1;
    }
    default:
        return 0;
    }
}

/* What is left: the rank's own calls (pp_virtual_stage, pp_fail) and the driver's word that it stopped; anything
 * else is no request at all. */
static void serve_rank(pp_rank *r, pp_server *s, unsigned op, pp_wire_in *in) {
    char text[PP_RPC_TEXT_MAX + 1];
    int x;
    switch (op) {
    case PP_RPC_VIRTUAL_STAGE:
        x = get_int(in);
        if (in->bad) malformed(r, op);
        (void)pp_virtual_stage(r, x); /* the driver asks only for a chunk it found out of range */
        return;
    case PP_RPC_FAIL:
        pp__wire_get_str(in, text, sizeof text);
        if (in->bad) malformed(r, op);
        pp_fail(r, "%s", text);
    case PP_RPC_MISUSE:
    case PP_RPC_SETUP_FAILED:
    case PP_RPC_LOAD_FAILED:
        driver_stopped(r, s, op, in);
    default:
        malformed(r, op);
    }
}

static void serve(pp_rank *r, pp_server *s, unsigned op, pp_wire_in *in) {
    if (!serve_compute(r, s, op, in) && !serve_message(r, s, op, in) && !serve_reduce(r, s, op, in) &&
        !serve_blocks(r, s, op, in))
        serve_rank(r, s, op, in);
    if (s->drv.posted) {
        pp__driver_reply(&s->drv, 0);
        return;
    }
    reply_status(s, PP_REPLY_OK);
}

/* Waits for the driver's next request; returns its op with the reader over its arguments. */
static unsigned next_request(pp_rank *r, pp_server *s, pp_wire_in *in) {
    pp__rank_alive(r);
    if (!pp__driver_next(&s->drv)) driver_ended(r, s);
    pp__wire_in_init(in, s->drv.req, s->drv.req_len);
    unsigned op = pp__wire_get_u32(in, 0, 0xffffffffu);
    if (in->bad) malformed(r, 0);
    if (s->drv.posted && !pp__rpc_postable(op)) malformed(r, op); /* the step's end and the stops are calls */
    return op;
}

void pp__server_step(pp_rank *r) {
    pp_server *s = r->srv;
    pp_wire_in in;
    s->step = r->step;
    for (int k = 0; k < NKINDS; k++) s->n[k] = 0;
    /* the driver's first request of all, or the one that ended its previous step: ready for a command */
    while (!s->next_pending) {
        unsigned op = next_request(r, s, &in);
        if (op == PP_RPC_NEXT) s->next_pending = s->ready = 1;
        else serve(r, s, op, &in);
    }
    pp_wire w;
    reply_begin(s, &w, PP_REPLY_GO);
    /* what the driver needs to make this step's handles itself */
    pp__wire_i64(&w, s->step & 0xffff);
    pp__wire_i64(&w, r->id);
    s->next_pending = 0;
    reply_end(s, &w);
    for (;;) {
        unsigned op = next_request(r, s, &in);
        if (op == PP_RPC_NEXT) {
            /* the step function returned; the reply (the next step, or exit) comes later */
            s->next_pending = 1;
            return;
        }
        serve(r, s, op, &in);
    }
}
