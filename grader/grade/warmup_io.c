/* warmup_io.c: the warm-up's calls and their answers (warmup_io.h): recorded from a live driver or the file
 * loaded in this process, or replayed from the record; and the answer keys they are scored against. */
#include "warmup_io.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rpc.h"
#include "sched_problem.h"
#include "warmup_keys.h"

/* Sends the call in args (built after call_begin) and returns the answer, after its "defined" flag. */
static pp_wire_in call_answer(pp_warmup_io *io, pp_wire *args) {
    pp_wire_in ans;
    static unsigned char answer[PP_CHAN_MSG];
    if (io->fns) {
        pp_wire_in call;
        pp_wire out;
        pp__wire_in_init(&call, args->p + sizeof(uint32_t), args->len - sizeof(uint32_t));
        pp__wire_init_fixed(&out, answer, sizeof answer);
        pp__warmup_call(io->fns, &call, &out);
        pp__wire_u64(io->rec, out.len);
        pp__wire_put(io->rec, answer, out.len);
        pp__wire_in_init(&ans, answer, out.len);
    } else if (io->d) {
        pp__driver_reply(io->d, args->len);
        if (!pp__driver_next(io->d)) {
            const char *hint;
            io->st = pp__driver_death(io->d, io->err, sizeof io->err, &hint);
            longjmp(io->failed, 1);
        }
        pp__wire_in_init(&ans, io->d->req, io->d->req_len);
        if (pp__wire_get_u32(&ans, 0, 0xffffffffu) != PP_RPC_NEXT) {
            io->st = PP_ERR_SANDBOX;
            snprintf(io->err, sizeof io->err, "the warm-up's driver sent a request that is not an answer: a warm-up "
                     "function calls no pp.h function");
            longjmp(io->failed, 1);
        }
        pp__wire_u64(io->rec, pp__wire_left(&ans));
        pp__wire_put(io->rec, ans.p, pp__wire_left(&ans));
    } else {
        uint64_t n = pp__wire_get_u64(&io->in);
        const void *at = pp__wire_view(&io->in, n);
        if (io->in.bad) {
            io->st = PP_ERR_IO;
            snprintf(io->err, sizeof io->err, "the warm-up's recorded answers ran out: this is a bug in pplab");
            longjmp(io->failed, 1);
        }
        pp__wire_in_init(&ans, at, n);
    }
    if (!pp__wire_get_u32(&ans, 0, 1)) longjmp(io->missing, 1);
    return ans;
}

/* Starts a call: on a live driver the arguments go straight into its reply slot. */
static void call_begin(pp_warmup_io *io, pp_wire *w, pp_warmup_fn fn, unsigned char *scratch, size_t cap) {
    if (io->d) pp__wire_init_fixed(w, io->d->chan->rep, PP_CHAN_MSG);
    else pp__wire_init_fixed(w, scratch, cap);
    io->fn = fn;
    /* the same bytes whoever answers: the driver reads them after the reply's status */
    pp__wire_u32(w, PP_REPLY_CALL);
    pp__wire_u32(w, fn);
}

static unsigned char scratch[PP_CHAN_MSG];

/* The call's answer as a double (NaN when it is missing) or an int. */
static double answer_double(pp_warmup_io *io, pp_wire *args) {
    pp_wire_in a = call_answer(io, args);
    double x;
    pp__wire_get(&a, &x, sizeof x);
    return a.bad ? NAN : x;
}

static int answer_int(pp_warmup_io *io, pp_wire *args) {
    pp_wire_in a = call_answer(io, args);
    return (int)pp__wire_get_i64(&a, INT32_MIN, INT32_MAX);
}

/* ---- answer keys -------------------------------------------------------------------------------------- */

/* Where the keys asked are written as they are found (answers.rec's lines, for the recorder); NULL: nowhere. */
static FILE *keys_log;

void pp__warmup_keys_log(FILE *f) { keys_log = f; }

/* The key's answer: one buffer, which the next call reuses (a caller that needs two copies one). */
static char keyval[16384];

const char *pp__warmup_io_key(pp_warmup_io *io, const char *fmt, ...) {
    static char key[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(key, sizeof key, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof key || pp__warmup_key(key, keyval, sizeof keyval)) {
        io->st = PP_ERR_CONFIG;
        snprintf(io->err, sizeof io->err, "this build holds no answer key for the warm-up case \"%.120s\": a "
                 "handout grades the public cases it records, the kit every case", key);
        longjmp(io->failed, 1);
    }
    if (keys_log) fprintf(keys_log, "warmup %s = %s\n", key, keyval);
    return keyval;
}

double pp__warmup_ask_bubble(pp_warmup_io *io, const char *sched, int P, int M, int v) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_BUBBLE, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, v);
    return answer_double(io, &w);
}

int pp__warmup_ask_peak(pp_warmup_io *io, const char *sched, int P, int M, int v, int rank) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_PEAK, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, v), pp__wire_i64(&w, rank);
    return answer_int(io, &w);
}

/* The order of `rank` into buf (n bytes, cap of them offered to the function; the rest is a guard): through
 * pp_warmup_order when v < 0, else through pp_warmup_chunk_order with v chunks. */
int pp__warmup_ask_order(pp_warmup_io *io, const char *sched, int P, int M, int v, int rank, char *buf, size_t n, int cap) {
    pp_wire w;
    call_begin(io, &w, v < 0 ? PP_WARMUP_ORDER : PP_WARMUP_CHUNK_ORDER, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M);
    if (v >= 0) pp__wire_i64(&w, v);
    pp__wire_i64(&w, rank), pp__wire_i64(&w, cap);
    pp__wire_u32(&w, (uint32_t)n);
    pp__wire_put(&w, buf, n);
    pp_wire_in a = call_answer(io, &w);
    int ret = (int)pp__wire_get_i64(&a, INT32_MIN, INT32_MAX);
    uint32_t got = pp__wire_get_u32(&a, (uint32_t)n, (uint32_t)n);
    pp__wire_get(&a, buf, got);
    return a.bad ? -2 : ret;
}

/* A cut of nlayers layers of the given costs into P stages, into first (n entries: P + 1 and a guard). */
int pp__warmup_ask_partition(pp_warmup_io *io, int nlayers, const double *cost, int P, int *first, int n) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_PARTITION, scratch, sizeof scratch);
    pp__wire_i64(&w, nlayers);
    pp__wire_u32(&w, (uint32_t)nlayers);
    pp__wire_put(&w, cost, (size_t)nlayers * sizeof *cost);
    pp__wire_i64(&w, P);
    pp__wire_u32(&w, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        int32_t x = first[i];
        pp__wire_put(&w, &x, sizeof x);
    }
    pp_wire_in a = call_answer(io, &w);
    int rc = (int)pp__wire_get_i64(&a, INT32_MIN, INT32_MAX);
    uint32_t got = pp__wire_get_u32(&a, (uint32_t)n, (uint32_t)n);
    for (uint32_t i = 0; i < got; i++) {
        int32_t x;
        pp__wire_get(&a, &x, sizeof x);
        first[i] = x;
    }
    return a.bad ? -2 : rc;
}

/* Which of P ranks are idle in time unit t, into idle (n entries: P and a guard). */
int pp__warmup_ask_idle(pp_warmup_io *io, const char *sched, int P, int M, int v, int t, int *idle, int n) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_IDLE, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, v), pp__wire_i64(&w, t);
    pp__wire_u32(&w, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        int32_t x = idle[i];
        pp__wire_put(&w, &x, sizeof x);
    }
    pp_wire_in a = call_answer(io, &w);
    int ret = (int)pp__wire_get_i64(&a, INT32_MIN, INT32_MAX);
    uint32_t got = pp__wire_get_u32(&a, (uint32_t)n, (uint32_t)n);
    for (uint32_t i = 0; i < got; i++) {
        int32_t x;
        pp__wire_get(&a, &x, sizeof x);
        idle[i] = x;
    }
    return a.bad ? -2 : ret;
}

double pp__warmup_ask_uneven(pp_warmup_io *io, int P, int M, const double *f) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_UNEVEN, scratch, sizeof scratch);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M);
    pp__wire_u32(&w, (uint32_t)P);
    pp__wire_put(&w, f, (size_t)P * sizeof *f);
    return answer_double(io, &w);
}

int pp__warmup_ask_chunks(pp_warmup_io *io, int P, int M, int blocks, double latency) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_CHUNKS, scratch, sizeof scratch);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, blocks);
    pp__wire_put(&w, &latency, sizeof latency);
    return answer_int(io, &w);
}

double pp__warmup_ask_traffic(pp_warmup_io *io, const char *sched, int P, int M, int v, int b, int s, int h) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_TRAFFIC, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, v);
    pp__wire_i64(&w, b), pp__wire_i64(&w, s), pp__wire_i64(&w, h);
    return answer_double(io, &w);
}

double pp__warmup_ask_memory(pp_warmup_io *io, const char *sched, int P, int M, int v, int rank, int b, int s, int h) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_MEMORY, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, v), pp__wire_i64(&w, rank);
    pp__wire_i64(&w, b), pp__wire_i64(&w, s), pp__wire_i64(&w, h);
    return answer_double(io, &w);
}

int pp__warmup_ask_grid_gpus(pp_warmup_io *io, int T, int P, int D) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_GRID_GPUS, scratch, sizeof scratch);
    pp__wire_i64(&w, T), pp__wire_i64(&w, P), pp__wire_i64(&w, D);
    return answer_int(io, &w);
}

double pp__warmup_ask_grid_pp(pp_warmup_io *io, int P, int D, int M, int v, int b, int s, int h, int elem) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_GRID_PP, scratch, sizeof scratch);
    pp__wire_i64(&w, P), pp__wire_i64(&w, D), pp__wire_i64(&w, M), pp__wire_i64(&w, v);
    pp__wire_i64(&w, b), pp__wire_i64(&w, s), pp__wire_i64(&w, h), pp__wire_i64(&w, elem);
    return answer_double(io, &w);
}

double pp__warmup_ask_grid_dp(pp_warmup_io *io, int T, int P, int D, double params, int elem) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_GRID_DP, scratch, sizeof scratch);
    pp__wire_i64(&w, T), pp__wire_i64(&w, P), pp__wire_i64(&w, D);
    pp__wire_put(&w, &params, sizeof params);
    pp__wire_i64(&w, elem);
    return answer_double(io, &w);
}

int pp__warmup_ask_grid_link(pp_warmup_io *io, const char *traffic, int G, int T, int P, int D) {
    pp_wire w;
    call_begin(io, &w, PP_WARMUP_GRID_LINK, scratch, sizeof scratch);
    pp__wire_str(&w, traffic, 31);
    pp__wire_i64(&w, G), pp__wire_i64(&w, T), pp__wire_i64(&w, P), pp__wire_i64(&w, D);
    return answer_int(io, &w);
}

int pp__warmup_ask_scheduler(pp_warmup_io *io, const pp_sched_problem *pb, char *buf, size_t n, int cap) {
    pp_wire w;
    int S = pb->P * pb->v;
    call_begin(io, &w, PP_WARMUP_SCHEDULER, scratch, sizeof scratch);
    pp__wire_i64(&w, pb->P), pp__wire_i64(&w, pb->M), pp__wire_i64(&w, pb->v);
    const double *costs[3] = {pb->f, pb->i, pb->w};
    for (int k = 0; k < 3; k++) {
        pp__wire_u32(&w, (uint32_t)S);
        pp__wire_put(&w, costs[k], (size_t)S * sizeof(double));
    }
    pp__wire_put(&w, &pb->latency, sizeof pb->latency);
    pp__wire_i64(&w, pb->cap), pp__wire_i64(&w, cap);
    memset(buf, 0, n);
    pp__wire_u32(&w, (uint32_t)n);
    pp__wire_put(&w, buf, n);
    pp_wire_in a = call_answer(io, &w);
    int ret = (int)pp__wire_get_i64(&a, INT32_MIN, INT32_MAX);
    uint32_t got = pp__wire_get_u32(&a, 0, (uint32_t)n);
    pp__wire_get(&a, buf, got);
    buf[n - 1] = 0;
    return a.bad || got != n ? -2 : ret;
}
