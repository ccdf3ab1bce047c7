/* fuzz_warmup.c: the warm-up's answers, which a student's functions write and the grader scores. Three ways in,
 * chosen by the input's first byte, after a header that names the part and its cases:
 *   grade:  the rest of the input as a part's recorded answers (pp__warmup_grade), the bytes a test's
 *           supervisor hands the grader after a driver of the student's file answered;
 *   call:   the rest as one call's arguments (pp__warmup_call, the driver's decoder), answered by stand-ins;
 *   record: stand-in student functions whose answers (any double, any bytes in the order buffers, any ints in
 *           the cut and the idle list, missing functions) come from the rest of the input, recorded in process
 *           by pp__warmup_record and then graded.
 * Every graded result must be the part's: its checks by name and weight as pp__warmup_fail lists them, points
 * within [0, max] and equal to max exactly when passed, a message on every failed check, a score that is their
 * sum; a recording the kit made itself must grade without running out. No read past the record or the call. */
#include "chan.h"
#include "fuzz.h"
#include "grade.h"
#include "rpc.h"
#include "warmup_call.h"
#include "wire.h"

/* header: mode, part, flags (bit 0: drawn cases; bit 1: the mask applies), seed (u32, little-endian), the mask
 * of missing functions (u16, bit k: the k-th of PP_WARMUP_FUNCTIONS) */
enum { HDR = 9, MODE_GRADE = 0, MODE_CALL, MODE_RECORD, NMODES };

/* ---- the stand-ins' answers: the rest of the input, read in order, zeros once it runs out ------------------ */

static struct {
    const uint8_t *p;
    size_t n, at;
} feed;

static unsigned take(void) { return feed.at < feed.n ? feed.p[feed.at++] : 0; }

static void take_bytes(void *dst, size_t n) {
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++) d[i] = (unsigned char)take();
}

static int take_int(void) {
    uint32_t x;
    take_bytes(&x, sizeof x);
    return (int)(int32_t)x;
}

/* Any double (NaN, inf, -0), or a formula's answer, or a small fraction: what students return. */
static double answer_double(double formula) {
    unsigned k = take() % 4;
    if (k == 0) return formula;
    if (k == 1) return (double)(take() % 64) / 8.0;
    double x;
    take_bytes(&x, sizeof x);
    return x;
}

static int answer_int(long long formula) {
    unsigned k = take() % 4;
    if (k == 0) return formula > INT32_MAX ? INT32_MAX : formula < INT32_MIN ? INT32_MIN : (int)formula;
    if (k == 1) return (int)(take() % 16) - 2;
    return take_int();
}

/* GPipe's order of a rank (every forward, then every backward) into out within cap bytes: the answer of a
 * student who got GPipe right and applies it to every schedule; -1 when it does not fit. */
static int gpipe_order(int M, char *out, int cap) {
    int used = 0;
    for (int i = 0; i < 2 * M; i++) {
        int w = snprintf(out + used, (size_t)(cap - used), "%s%c%d", i ? " " : "", i < M ? 'F' : 'B', i % M);
        if (w < 0 || w >= cap - used) return -1;
        used += w;
    }
    return 2 * M;
}

/* An order buffer: the gpipe list, bytes of the input (with or without a NUL, up to a little past cap, into the
 * guard the grader keeps there to catch exactly that), or nothing. */
static int answer_order(int M, char *out, int cap) {
    unsigned k = take() % 4;
    if (k == 0 && cap > 0) return answer_int(gpipe_order(M, out, cap));
    if (k == 1 && cap >= 0) {
        unsigned lo = take(), hi = take();
        int n = (int)((lo | hi << 8) % (unsigned)(cap + 16 + 1));
        take_bytes(out, (size_t)n);
        return answer_int(n);
    }
    return answer_int(-1);
}

/* ---- record: stand-ins that answer from the input ------------------------------------------------------ */

static double rec_bubble(const char *schedule, int P, int M, int v) {
    (void)schedule;
    return answer_double((double)(P - 1) / (v * M + P - 1));
}

static int rec_peak(const char *schedule, int P, int M, int v, int rank) {
    (void)v;
    long long one_f_one_b = P - rank < M ? P - rank : M;
    return answer_int(strcmp(schedule, "gpipe") ? one_f_one_b : M);
}

static int rec_order(const char *schedule, int P, int M, int rank, char *out, int cap) {
    (void)schedule, (void)P, (void)rank;
    return answer_order(M, out, cap);
}

static int rec_chunk_order(const char *schedule, int P, int M, int v, int rank, char *out, int cap) {
    (void)schedule, (void)P, (void)v, (void)rank;
    return answer_order(M, out, cap);
}

/* a cut of P + 1 entries, as the handout's contract says: even, or any ints */
static int rec_partition(int nlayers, const double *cost, int P, int *first) {
    (void)cost;
    int raw = take() % 2;
    for (int i = 0; i <= P; i++) first[i] = raw ? take_int() : (int)((long long)i * nlayers / P);
    return answer_int(nlayers < P ? -1 : P);
}

static int rec_idle(const char *schedule, int P, int M, int v, int t, int *idle) {
    (void)schedule, (void)M, (void)v, (void)t;
    int n = 0;
    for (int r = 0; r < P; r++) {
        idle[r] = (int)(take() % 3);
        if (take() == 0xff) idle[r] = -1;
        n += idle[r] == 1;
    }
    return answer_int(n);
}

static double rec_uneven(int P, int M, const double *f) {
    double worst = 0, sum = 0;
    for (int i = 0; i < P; i++) sum += f[i], worst = f[i] > worst ? f[i] : worst;
    return answer_double(worst > 0 ? 1 - sum / (P * worst) * M / (M + P - 1) : 0);
}

static int rec_chunks(int P, int M, int blocks, double latency) {
    (void)P, (void)M, (void)latency;
    return answer_int(blocks);
}

static double rec_traffic(const char *schedule, int P, int M, int v, int b, int s, int h) {
    (void)schedule;
    return answer_double(2.0 * (P - 1) * v * M * b * s * h * 4);
}

static double rec_memory(const char *schedule, int P, int M, int v, int rank, int b, int s, int h) {
    (void)schedule, (void)v;
    return answer_double((double)(P - rank < M ? P - rank : M) * b * s * h * 4);
}

static int rec_grid_gpus(int T, int P, int D) { return answer_int((long long)T * P * D); }

static double rec_grid_pp(int P, int D, int M, int v, int b, int s, int h, int elem) {
    (void)D, (void)v;
    return answer_double(2.0 * (P - 1) * M * b * s * h * elem);
}

static double rec_grid_dp(int T, int P, int D, double params, int elem) {
    return answer_double(D > 1 && T * P > 0 ? 2.0 * (D - 1) / D * params / (T * P) * elem : 0);
}

static int rec_grid_link(const char *traffic, int G, int T, int P, int D) {
    (void)G, (void)P, (void)D;
    return answer_int(strcmp(traffic, "tp") == 0 ? T > 1 : 0);
}

/* lab 09's scheduler, which no warm-up part asks: it writes no order */
static int rec_scheduler(int P, int M, int v, const double *f, const double *i, const double *w, double latency,
                         int cap, char *out, int outcap) {
    (void)P, (void)M, (void)v, (void)f, (void)i, (void)w, (void)latency, (void)cap, (void)out, (void)outcap;
    return -1;
}

#define STAND_IN(prefix, field) .field = prefix##_##field,
#define STAND_INS(prefix)                                                                                      \
    {STAND_IN(prefix, bubble) STAND_IN(prefix, peak) STAND_IN(prefix, order) STAND_IN(prefix, partition)       \
     STAND_IN(prefix, chunk_order) STAND_IN(prefix, idle) STAND_IN(prefix, uneven) STAND_IN(prefix, chunks)    \
     STAND_IN(prefix, traffic) STAND_IN(prefix, memory) STAND_IN(prefix, grid_gpus) STAND_IN(prefix, grid_pp) \
     STAND_IN(prefix, grid_dp) STAND_IN(prefix, grid_link) STAND_IN(prefix, scheduler)}

static const pp_warmup_fns record_fns = STAND_INS(rec);

/* ---- call: stand-ins for arguments nobody checked ---------------------------------------------------------- */
/* The decoder hands a function buffers of the sizes the call says; a real grader's call says sizes that match its
 * counts (cap within the order buffer, P entries in the cut). Here the counts are the input's, so these touch
 * only the first element, which the decoder always allocates, and read the schedule, which it terminates. Their
 * arithmetic is unsigned: the arguments are any int. */

static unsigned mix(const char *s, unsigned a, unsigned b) { return (s ? (unsigned)strlen(s) : 0u) * 31u + a * 7u + b; }

static double any_bubble(const char *schedule, int P, int M, int v) {
    return (double)mix(schedule, (unsigned)P, (unsigned)M + (unsigned)v) / 16;
}
static int any_peak(const char *schedule, int P, int M, int v, int rank) {
    return (int)mix(schedule, (unsigned)P ^ (unsigned)rank, (unsigned)M + (unsigned)v);
}
static int any_order(const char *schedule, int P, int M, int rank, char *out, int cap) {
    if (cap > 0) out[0] = 0;
    return (int)mix(schedule, (unsigned)P + (unsigned)M, (unsigned)rank);
}
static int any_partition(int nlayers, const double *cost, int P, int *first) {
    first[0] = cost[0] > 0 ? 1 : 0;
    return (int)mix(NULL, (unsigned)nlayers, (unsigned)P);
}
static int any_chunk_order(const char *schedule, int P, int M, int v, int rank, char *out, int cap) {
    if (cap > 0) out[0] = 0;
    return (int)mix(schedule, (unsigned)P + (unsigned)M + (unsigned)v, (unsigned)rank);
}
static int any_idle(const char *schedule, int P, int M, int v, int t, int *idle) {
    idle[0] = 1;
    return (int)mix(schedule, (unsigned)P + (unsigned)M, (unsigned)v + (unsigned)t);
}
static double any_uneven(int P, int M, const double *f) { return f[0] + (double)mix(NULL, (unsigned)P, (unsigned)M); }
static int any_chunks(int P, int M, int blocks, double latency) {
    return (int)mix(NULL, (unsigned)P + (unsigned)M, (unsigned)blocks) + (latency > 1);
}
static double any_traffic(const char *schedule, int P, int M, int v, int b, int s, int h) {
    return (double)mix(schedule, (unsigned)P + (unsigned)M + (unsigned)v, (unsigned)b + (unsigned)s + (unsigned)h);
}
static double any_memory(const char *schedule, int P, int M, int v, int rank, int b, int s, int h) {
    return (double)mix(schedule, (unsigned)P + (unsigned)M + (unsigned)v + (unsigned)rank,
                       (unsigned)b + (unsigned)s + (unsigned)h);
}
static int any_grid_gpus(int T, int P, int D) { return (int)mix(NULL, (unsigned)T * (unsigned)P, (unsigned)D); }
static double any_grid_pp(int P, int D, int M, int v, int b, int s, int h, int elem) {
    return (double)mix(NULL, (unsigned)P + (unsigned)D + (unsigned)M + (unsigned)v,
                       (unsigned)b + (unsigned)s + (unsigned)h + (unsigned)elem);
}
static double any_grid_dp(int T, int P, int D, double params, int elem) {
    return params + (double)mix(NULL, (unsigned)T + (unsigned)P + (unsigned)D, (unsigned)elem);
}
static int any_grid_link(const char *traffic, int G, int T, int P, int D) {
    return (int)mix(traffic, (unsigned)G + (unsigned)T, (unsigned)P + (unsigned)D);
}

static int any_scheduler(int P, int M, int v, const double *f, const double *i, const double *w, double latency,
                         int cap, char *out, int outcap) {
    if (outcap > 0) out[0] = 0;
    return (int)mix(NULL, (unsigned)P + (unsigned)M + (unsigned)v, (unsigned)cap) + (f[0] > i[0]) + (w[0] > latency);
}

static const pp_warmup_fns call_fns = STAND_INS(any);

/* fns without the functions mask names (bit k: the k-th of PP_WARMUP_FUNCTIONS), as a file that does not define
 * them */
static pp_warmup_fns without(const pp_warmup_fns *fns, unsigned mask) {
    pp_warmup_fns f = *fns;
    int k = 0;
#define DROP(field, symbol, type)                                                                              \
    if (mask >> k++ & 1) f.field = NULL;
    PP_WARMUP_FUNCTIONS(DROP)
#undef DROP
    return f;
}

/* ---- the property ---------------------------------------------------------------------------------------- */

/* out must be part cfg->part's result, graded: the checks pp__warmup_fail lists for it (names and weights), each
 * consistent, the score their sum. */
static void check_result(const pp_test_config *cfg, const pp_test_result *out, const char *how) {
    static pp_test_result want;
    memset(&want, 0, sizeof want);
    pp__warmup_fail(cfg, PP_ERR_IO, "", &want);
    fuzz_require(out->nchecks == want.nchecks, "%s %s: %d checks, the part has %d", how, cfg->part, out->nchecks,
                 want.nchecks);
    double score = 0, max = 0;
    for (int i = 0; i < out->nchecks; i++) {
        const pp_check *c = &out->checks[i];
        fuzz_require(memchr(c->name, 0, sizeof c->name) && memchr(c->msg, 0, sizeof c->msg),
                     "%s %s: check %d is not terminated", how, cfg->part, i);
        fuzz_require(!strcmp(c->name, want.checks[i].name) && c->max == want.checks[i].max,
                     "%s %s: check %d is '%s' (max %g), the part's is '%s' (max %g)", how, cfg->part, i, c->name,
                     c->max, want.checks[i].name, want.checks[i].max);
        fuzz_require(c->points >= 0 && c->points <= c->max && c->points == (c->passed ? c->max : 0),
                     "%s %s: check '%s' has %g of %g points (passed %d)", how, cfg->part, c->name, c->points, c->max,
                     c->passed);
        fuzz_require(c->passed || c->msg[0], "%s %s: check '%s' failed without a message", how, cfg->part, c->name);
        score += c->points, max += c->max;
    }
    fuzz_require(out->score == score && out->max == max, "%s %s: score %g/%g, checks sum to %g/%g", how, cfg->part,
                 out->score, out->max, score, max);
    fuzz_require(out->status == PP_OK || out->status == PP_ERR_IO, "%s %s: status %s", how, cfg->part,
                 pp__status_name(out->status));
    fuzz_require(out->status == PP_OK || out->error[0], "%s %s: status %s without an error", how, cfg->part,
                 pp__status_name(out->status));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < HDR) return 0;
    static pp_test_config cfg;
    memset(&cfg, 0, sizeof cfg);
    snprintf(cfg.lab, sizeof cfg.lab, "warmup");
    snprintf(cfg.part, sizeof cfg.part, "%s", pp__warmup_part(data[1] % pp__warmup_nparts()));
    cfg.drawn = data[2] & 1;
    cfg.seed = (unsigned)data[3] | (unsigned)data[4] << 8 | (unsigned)data[5] << 16 | (unsigned)data[6] << 24;
    /* flags bit 1: some functions are missing (most files define them all) */
    unsigned missing = data[2] & 2 ? (unsigned)data[7] | (unsigned)data[8] << 8 : 0;
    const uint8_t *rest = data + HDR;
    size_t len = size - HDR;

    static pp_test_result out;
    memset(&out, 0, sizeof out);
    switch (data[0] % NMODES) {
    case MODE_GRADE:
        pp__warmup_grade(&cfg, rest, len, &out);
        check_result(&cfg, &out, "grading a record");
        break;
    case MODE_CALL: {
        /* the call's bytes after PP_REPLY_CALL, into a reply slot of the driver's size, as the driver answers */
        static unsigned char answer[PP_CHAN_MSG];
        pp_warmup_fns fns = without(&call_fns, missing);
        pp_wire_in r;
        pp_wire w;
        pp__wire_in_init(&r, rest, len);
        pp__wire_init_fixed(&w, answer, sizeof answer);
        pp__warmup_call(&fns, &r, &w);
        fuzz_require(w.len <= sizeof answer, "an answer of %zu bytes in a slot of %zu", w.len, sizeof answer);
        if (!w.bad && w.len >= sizeof(uint32_t)) {
            uint32_t defined;
            memcpy(&defined, answer, sizeof defined);
            fuzz_require(defined <= 1, "an answer whose 'defined' flag is %u", (unsigned)defined);
        }
        break;
    }
    case MODE_RECORD: {
        pp_warmup_fns fns = without(&record_fns, missing);
        feed.p = rest, feed.n = len, feed.at = 0;
        pp_wire rec;
        pp__wire_init(&rec);
        char err[600] = "";
        pp_status st = pp__warmup_record(&cfg, NULL, &fns, &rec, err, sizeof err);
        fuzz_require(st == PP_OK && !rec.bad, "recording %s in process: %s (%s)", cfg.part, pp__status_name(st), err);
        pp__warmup_grade(&cfg, rec.p, rec.len, &out);
        check_result(&cfg, &out, "grading what the kit recorded");
        fuzz_require(out.status == PP_OK, "the kit's own record of %s ran out: %s", cfg.part, out.error);
        pp__wire_free(&rec);
        break;
    }
    }
    return 0;
}
