/* rpc.h: what a schedule driver asks of the runtime, and how handles look on the wire. One request per pp.h
 * call that touches a rank's state; queries that never change (pp_rank_id, pp_tag, ...) are answered in the
 * driver. Every message is built and parsed with wire.h.
 *
 * Request: u32 op, then the op's arguments, then the handles the call returns as the driver predicts them.
 * Every pp.h call is posted (pp__rpc_postable): the driver returns from it at once, and the runtime serves the
 * posts in order, blocking where the call blocks, before the next call. What waits for a reply is the step's
 * end (PP_RPC_NEXT) and the requests that stop the run: u32 status (PP_REPLY_OK, or PP_REPLY_GO/EXIT/CALL for
 * PP_RPC_NEXT; GO carries i64 step (mod 2^16) and i64 the rank's handle id), then results. A request that fails
 * never gets a reply, nor is a post counted served: the runtime stops the run, and the driver waits until it is
 * ended, as pp.h promises ("the function does not return to you").
 *
 * Handles are 64-bit ids: kind (4 bits), rank (12), step (16, modulo), index + 1 (32), the index counting the
 * step's handles of that kind in the order the calls made them. So the driver, which knows which calls return
 * NULL (a stash not asked for, dx on virtual stage 0), makes the same ids the runtime does, and the runtime
 * checks every one. Their high bits make them non-canonical addresses, so a schedule that dereferences one
 * crashes at once instead of reading something. 0 is NULL. */
#ifndef PP_RPC_H
#define PP_RPC_H

#include <stdint.h>

typedef enum {
    PP_RPC_NEXT = 1,      /* the driver is ready for its next command; carries the previous call's answer */
    PP_RPC_FORWARD,       /* chunk, mb, x, want stash -> y, stash */
    PP_RPC_BACKWARD,      /* stash, dy -> dx */
    PP_RPC_BACKWARD_INPUT,
    PP_RPC_BACKWARD_WEIGHT, /* stash */
    PP_RPC_LOSS_GRAD,     /* f32 scale (raw bits) -> t */
    PP_RPC_CHECKPOINT,    /* stash */
    PP_RPC_STASH_FREE,    /* stash */
    PP_RPC_OPTIMIZER_STEP,
    PP_RPC_GRAD_ZERO,
    PP_RPC_SEND,          /* t, dst, tag */
    PP_RPC_RECV,          /* src, tag -> t */
    PP_RPC_ISEND,         /* t, dst, tag -> req */
    PP_RPC_IRECV,         /* src, tag, want t -> req, t */
    PP_RPC_WAIT,          /* req */
    PP_RPC_WAITALL,       /* n, n x req */
    PP_RPC_GROUP_START,
    PP_RPC_GROUP_END,
    PP_RPC_GRAD_REDUCE,   /* chunk */
    PP_RPC_GRAD_IREDUCE,  /* chunk -> req */
    PP_RPC_FORWARD_BEGIN, /* chunk, mb, x, want stash -> y, stash */
    PP_RPC_FORWARD_END,   /* stash, x -> y */
    PP_RPC_BACKWARD_BEGIN, /* stash, dy -> t */
    PP_RPC_BACKWARD_END,  /* stash, dy -> dx */
    PP_RPC_STASH_BLOCK,   /* stash, i: pp_stash_block, whose block handle the driver makes itself (pp__block_handle) */
    PP_RPC_BLOCK,         /* u32 call (pp_block_api), block, tensor, tensor -> tensor (0 for the calls without one) */
    PP_RPC_VIRTUAL_STAGE, /* chunk: only for a chunk the driver found out of range, so the runtime says why */
    PP_RPC_FAIL,          /* message: pp_fail */
    PP_RPC_MISUSE,        /* code, arg, detail (pp_stop_code): a misuse the driver saw itself */
    PP_RPC_SETUP_FAILED,  /* code, arg, detail: the driver could not lock itself down */
    PP_RPC_LOAD_FAILED,   /* code, arg, detail: the driver's loader refused the lab's object */
    PP_RPC_GRID_ASK,      /* the grid lab's driver is set up and calls the submission's mapping next (a call, OK):
                           * from here on its code runs, so no stop request can be the driver's own */
    PP_RPC_COUNT
} pp_rpc_op;

/* 1 for the requests a driver may post: every pp.h call's (a waitall too, when its handles fit a post). The
 * rest are the step's end and the requests that stop the run. */
static inline int pp__rpc_postable(unsigned op) { return op > PP_RPC_NEXT && op < PP_RPC_VIRTUAL_STAGE; }

enum { PP_REPLY_OK = 0, PP_REPLY_GO = 1, PP_REPLY_EXIT = 2, PP_REPLY_CALL = 3 };

/* The warm-up functions a PP_REPLY_CALL names. Arguments follow the function's signature (strings with
 * pp__wire_str, ints as i64, arrays as u32 count + elements); an in-out buffer travels both ways whole, so the
 * grader sees every byte the function wrote. The answer (in the next PP_RPC_NEXT) is u32 1 when the function
 * exists (0: not defined, nothing follows), then its return value and the buffer. */
typedef enum {
    PP_WARMUP_BUBBLE = 1, /* sched, P, M, v -> f64 */
    PP_WARMUP_PEAK,       /* sched, P, M, v, rank -> i64 */
    PP_WARMUP_ORDER,      /* sched, P, M, rank, cap, buffer -> i64, buffer */
    PP_WARMUP_PARTITION,  /* nlayers, cost[], P, first[] -> i64, first[] */
    PP_WARMUP_CHUNK_ORDER, /* sched, P, M, v, rank, cap, buffer -> i64, buffer */
    PP_WARMUP_IDLE,       /* sched, P, M, v, t, idle[] -> i64, idle[] */
    PP_WARMUP_UNEVEN,     /* P, M, f[] -> f64 */
    PP_WARMUP_CHUNKS,     /* P, M, blocks, latency (f64) -> i64 */
    PP_WARMUP_TRAFFIC,    /* sched, P, M, v, b, s, h -> f64 */
    PP_WARMUP_MEMORY,     /* sched, P, M, v, rank, b, s, h -> f64 */
    PP_WARMUP_GRID_GPUS,  /* T, P, D -> i64 */
    PP_WARMUP_GRID_PP,    /* P, D, M, v, b, s, h, elem -> f64 */
    PP_WARMUP_GRID_DP,    /* T, P, D, params (f64), elem -> f64 */
    PP_WARMUP_GRID_LINK,  /* traffic, G, T, P, D -> i64 */
    PP_WARMUP_SCHEDULER,  /* P, M, v, f[], i[], w[], latency (f64), cap, outcap, buffer -> i64, buffer (lab 09) */
} pp_warmup_fn;

/* Why a driver stops a run on its own (PP_RPC_MISUSE, PP_RPC_SETUP_FAILED, PP_RPC_LOAD_FAILED), as the request's
 * u32 code, then i64 arg and the driver's detail text. A driver runs the student's code, so every byte it sends
 * may be the student's: the runtime picks its own sentence from the code (naming a pp.h call from pp__rpc_apis by
 * arg, or an errno's meaning), and shows the detail, if any, as the submission's output, on marked lines. */
typedef enum {
    PP_STOP_FOREIGN_RANK = 1, /* MISUSE: pp__rpc_apis[arg] was handed a pp_rank * other than its step function's */
    PP_STOP_NO_STEP,          /* MISUSE: the lab's object does not define the lab's step function */
    PP_STOP_LOCKDOWN,         /* SETUP_FAILED: locking down before the object's bytes are read failed; arg: errno */
    PP_STOP_SEAL,             /* SETUP_FAILED: the filter after the object's loading failed; arg: errno */
    PP_STOP_OBJECT,           /* LOAD_FAILED: the driver's loader refused the object (the detail says why) */
    PP_STOP_COUNT
} pp_stop_code;

/* The pp.h calls a driver checks its rank argument in, by the index PP_STOP_FOREIGN_RANK carries: the name of
 * index i (NULL past the last), and the index of a name (-1 when it is none of them). */
static inline const char *pp__rpc_api(int i) {
    static const char *const apis[] = {
        "pp_rank_id", "pp_rank_stages", "pp_rank_microbatches", "pp_rank_chunks", "pp_rank_recompute",
        "pp_rank_replica", "pp_rank_replicas", "pp_virtual_stage", "pp_virtual_stages", "pp_stage_forward",
        "pp_loss_grad", "pp_send", "pp_recv", "pp_isend", "pp_irecv", "pp_waitall", "pp_grad_reduce",
        "pp_grad_ireduce", "pp_fail", "pp_rank_shard", "pp_rank_shards", "pp_stage_blocks",
        "pp_stage_forward_begin", "pp_stage_forward_end", "pp_stage_backward_begin", "pp_stage_backward_end",
        "pp_stash_block",
    };
    return i >= 0 && i < (int)(sizeof apis / sizeof *apis) ? apis[i] : NULL;
}
static inline int pp__rpc_api_index(const char *name) {
    for (int i = 0; pp__rpc_api(i); i++) {
        const char *a = pp__rpc_api(i), *b = name;
        while (*a && *a == *b) a++, b++;
        if (!*a && !*b) return i;
    }
    return -1;
}

/* The most requests one PP_RPC_WAITALL carries (a driver splits longer lists: waiting for all of them in parts
 * is waiting for all of them). */
#define PP_RPC_WAITALL_MAX 4096
/* The longest pp_fail message that crosses. */
#define PP_RPC_TEXT_MAX 1000

/* The block calls (pp.h, lab 08) as PP_RPC_BLOCK numbers them, and as the runtime's notes and the grader's
 * reports name them (pp__block_api): the attention half's forward, the MLP half's, the two that serve both, the
 * MLP half's backward, the attention half's; the last two are the op's ends, named only in notes. */
typedef enum {
    PP_BAPI_LN1, PP_BAPI_QKV, PP_BAPI_ATTENTION, PP_BAPI_PROJ, PP_BAPI_PROJ_BIAS,
    PP_BAPI_LN2, PP_BAPI_LINEAR1, PP_BAPI_GELU, PP_BAPI_LINEAR2, PP_BAPI_BIAS2,
    PP_BAPI_RESIDUAL, PP_BAPI_ALLREDUCE,
    PP_BAPI_LINEAR2_BACKWARD, PP_BAPI_BIAS2_BACKWARD, PP_BAPI_GELU_BACKWARD, PP_BAPI_LINEAR1_BACKWARD,
    PP_BAPI_LN2_BACKWARD,
    PP_BAPI_PROJ_BACKWARD, PP_BAPI_PROJ_BIAS_BACKWARD, PP_BAPI_ATTENTION_BACKWARD, PP_BAPI_QKV_BACKWARD,
    PP_BAPI_LN1_BACKWARD,
    PP_BAPI_FORWARD_END, PP_BAPI_BACKWARD_END, PP_BAPI_COUNT
} pp_block_api;

typedef enum { PP_HANDLE_TENSOR = 1, PP_HANDLE_STASH = 2, PP_HANDLE_REQUEST = 3, PP_HANDLE_BLOCK = 4 } pp_handle_kind;

static inline uint64_t pp__handle_make(pp_handle_kind kind, int rank, int step, uint32_t index) {
    return ((uint64_t)kind << 60) | ((uint64_t)(rank & 0xfff) << 48) | ((uint64_t)(step & 0xffff) << 32) |
           (uint64_t)(index + 1);
}
static inline int pp__handle_kind(uint64_t h) { return (int)(h >> 60); }
static inline int pp__handle_rank(uint64_t h) { return (int)((h >> 48) & 0xfff); }
static inline int pp__handle_step(uint64_t h) { return (int)((h >> 32) & 0xffff); }
/* The index, or UINT32_MAX for an id with index field 0 (never handed out). */
static inline uint32_t pp__handle_index(uint64_t h) { return (uint32_t)h - 1u; }

/* A block (pp_stash_block) is named by its stash and its index, which both ends compute: a block handle's index is
 * the stash's index times 4096 plus the block's (a stage has fewer than 4096 blocks; a step fewer than 2^20
 * stashes). */
#define PP_BLOCK_SHIFT 12
static inline uint64_t pp__block_handle(uint64_t stash, int i) {
    return pp__handle_make(PP_HANDLE_BLOCK, pp__handle_rank(stash), pp__handle_step(stash),
                           (pp__handle_index(stash) << PP_BLOCK_SHIFT) | ((uint32_t)i & ((1u << PP_BLOCK_SHIFT) - 1)));
}

#endif /* PP_RPC_H */
