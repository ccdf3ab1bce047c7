/* warmup.c: grades the warm-up lab (labs/00-warmup): calls one exercise function per part (bubble, peaks,
 * orders, partition, ...) over its public table of cases, or on a graded run over cases of the same kinds drawn
 * from the hidden configuration's seed ("drawn cases" below), and adds one check per schedule or cost model.
 * Answer keys come from warmup_keys.h (computed by the kit, recorded for the public cases in a handout), never from
 * the code under test.
 *
 * The functions run in a sandboxed driver, and the grading runs twice over the same calls: in the test's
 * supervisor, each call goes to the driver and its answer is recorded; in the grader, the same code reads the
 * recorded answers in order and scores them. The driver never sees an answer key; the supervisor's verdict is
 * never used. */
#include "grade.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "hash.h"
#include "rpc.h"
#include "server.h"
#include "host.h"
#include "warmup_call.h"
#include "warmup_keys.h"
#include "wire.h"

/* ---- calls ------------------------------------------------------------------------------------------- */

/* Where answers come from: the live driver (recording them), or a record (replaying them). */
typedef struct wu_io {
    pp_driver *d;            /* live, else NULL */
    const pp_warmup_fns *fns; /* live in this process (the unsandboxed debugging mode), else NULL */
    pp_wire *rec;            /* live: the record */
    pp_wire_in in;           /* replay: the record being read */
    jmp_buf missing;         /* the part's function is not defined */
    pp_warmup_fn fn;         /* the function of the call in flight: names the missing one of a part with several */
    jmp_buf failed;          /* the driver ended (live) or the record ran out (replay) */
    pp_status st;
    char err[600];
} wu_io;

/* Sends the call in args (built after wu_begin) and returns the answer, after its "defined" flag. */
static pp_wire_in wu_call(wu_io *io, pp_wire *args) {
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
static void wu_begin(wu_io *io, pp_wire *w, pp_warmup_fn fn, unsigned char *scratch, size_t cap) {
    if (io->d) pp__wire_init_fixed(w, io->d->chan->rep, PP_CHAN_MSG);
    else pp__wire_init_fixed(w, scratch, cap);
    io->fn = fn;
    /* the same bytes whoever answers: the driver reads them after the reply's status */
    pp__wire_u32(w, PP_REPLY_CALL);
    pp__wire_u32(w, fn);
}

static unsigned char scratch[PP_CHAN_MSG];

/* The call's answer as a double (NaN when it is missing) or an int. */
static double wu_call_double(wu_io *io, pp_wire *args) {
    pp_wire_in a = wu_call(io, args);
    double x;
    pp__wire_get(&a, &x, sizeof x);
    return a.bad ? NAN : x;
}

static int wu_call_int(wu_io *io, pp_wire *args) {
    pp_wire_in a = wu_call(io, args);
    return (int)pp__wire_get_i64(&a, INT32_MIN, INT32_MAX);
}

/* ---- answer keys -------------------------------------------------------------------------------------- */

/* Where the keys asked are written as they are found (answers.rec's lines, for the recorder); NULL: nowhere. */
static FILE *keys_log;

void pp__warmup_keys_log(FILE *f) { keys_log = f; }

/* The answer key of the case the format names (warmup_keys.h) into val. A build without it ends the part as not
 * graded, saying which case: only a handout lacks keys, and it grades its recorded public cases alone. */
static const char *wu_key(wu_io *io, char *val, size_t len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static const char *wu_key(wu_io *io, char *val, size_t len, const char *fmt, ...) {
    static char key[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(key, sizeof key, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof key || pp__warmup_key(key, val, len)) {
        io->st = PP_ERR_CONFIG;
        snprintf(io->err, sizeof io->err, "this build holds no answer key for the warm-up case \"%.120s\": a "
                 "handout grades the public cases it records, the kit every case", key);
        longjmp(io->failed, 1);
    }
    if (keys_log) fprintf(keys_log, "warmup %s = %s\n", key, val);
    return val;
}

static char keyval[16384];

#define WU_KEY(io, ...) wu_key(io, keyval, sizeof keyval, __VA_ARGS__)
#define WU_KEY_NUM(io, ...) strtod(WU_KEY(io, __VA_ARGS__), NULL)
#define WU_KEY_INT(io, ...) atoi(WU_KEY(io, __VA_ARGS__))

static double wu_bubble(wu_io *io, const char *sched, int P, int M, int v) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_BUBBLE, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, v);
    return wu_call_double(io, &w);
}

static int wu_peak(wu_io *io, const char *sched, int P, int M, int v, int rank) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_PEAK, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, v), pp__wire_i64(&w, rank);
    return wu_call_int(io, &w);
}

/* The order of `rank` into buf (n bytes, cap of them offered to the function; the rest is a guard): through
 * pp_warmup_order when v < 0, else through pp_warmup_chunk_order with v chunks. */
static int wu_order(wu_io *io, const char *sched, int P, int M, int v, int rank, char *buf, size_t n, int cap) {
    pp_wire w;
    wu_begin(io, &w, v < 0 ? PP_WARMUP_ORDER : PP_WARMUP_CHUNK_ORDER, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M);
    if (v >= 0) pp__wire_i64(&w, v);
    pp__wire_i64(&w, rank), pp__wire_i64(&w, cap);
    pp__wire_u32(&w, (uint32_t)n);
    pp__wire_put(&w, buf, n);
    pp_wire_in a = wu_call(io, &w);
    int ret = (int)pp__wire_get_i64(&a, INT32_MIN, INT32_MAX);
    uint32_t got = pp__wire_get_u32(&a, (uint32_t)n, (uint32_t)n);
    pp__wire_get(&a, buf, got);
    return a.bad ? -2 : ret;
}

/* A cut of nlayers layers of the given costs into P stages, into first (n entries: P + 1 and a guard). */
static int wu_partition(wu_io *io, int nlayers, const double *cost, int P, int *first, int n) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_PARTITION, scratch, sizeof scratch);
    pp__wire_i64(&w, nlayers);
    pp__wire_u32(&w, (uint32_t)nlayers);
    pp__wire_put(&w, cost, (size_t)nlayers * sizeof *cost);
    pp__wire_i64(&w, P);
    pp__wire_u32(&w, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        int32_t x = first[i];
        pp__wire_put(&w, &x, sizeof x);
    }
    pp_wire_in a = wu_call(io, &w);
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
static int wu_idle(wu_io *io, const char *sched, int P, int M, int v, int t, int *idle, int n) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_IDLE, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, v), pp__wire_i64(&w, t);
    pp__wire_u32(&w, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        int32_t x = idle[i];
        pp__wire_put(&w, &x, sizeof x);
    }
    pp_wire_in a = wu_call(io, &w);
    int ret = (int)pp__wire_get_i64(&a, INT32_MIN, INT32_MAX);
    uint32_t got = pp__wire_get_u32(&a, (uint32_t)n, (uint32_t)n);
    for (uint32_t i = 0; i < got; i++) {
        int32_t x;
        pp__wire_get(&a, &x, sizeof x);
        idle[i] = x;
    }
    return a.bad ? -2 : ret;
}

static double wu_uneven(wu_io *io, int P, int M, const double *f) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_UNEVEN, scratch, sizeof scratch);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M);
    pp__wire_u32(&w, (uint32_t)P);
    pp__wire_put(&w, f, (size_t)P * sizeof *f);
    return wu_call_double(io, &w);
}

static int wu_chunks(wu_io *io, int P, int M, int blocks, double latency) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_CHUNKS, scratch, sizeof scratch);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, blocks);
    pp__wire_put(&w, &latency, sizeof latency);
    return wu_call_int(io, &w);
}

static double wu_traffic(wu_io *io, const char *sched, int P, int M, int v, int b, int s, int h) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_TRAFFIC, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, v);
    pp__wire_i64(&w, b), pp__wire_i64(&w, s), pp__wire_i64(&w, h);
    return wu_call_double(io, &w);
}

static double wu_memory(wu_io *io, const char *sched, int P, int M, int v, int rank, int b, int s, int h) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_MEMORY, scratch, sizeof scratch);
    pp__wire_str(&w, sched, 31);
    pp__wire_i64(&w, P), pp__wire_i64(&w, M), pp__wire_i64(&w, v), pp__wire_i64(&w, rank);
    pp__wire_i64(&w, b), pp__wire_i64(&w, s), pp__wire_i64(&w, h);
    return wu_call_double(io, &w);
}

static int wu_grid_gpus(wu_io *io, int T, int P, int D) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_GRID_GPUS, scratch, sizeof scratch);
    pp__wire_i64(&w, T), pp__wire_i64(&w, P), pp__wire_i64(&w, D);
    return wu_call_int(io, &w);
}

static double wu_grid_pp(wu_io *io, int P, int D, int M, int v, int b, int s, int h, int elem) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_GRID_PP, scratch, sizeof scratch);
    pp__wire_i64(&w, P), pp__wire_i64(&w, D), pp__wire_i64(&w, M), pp__wire_i64(&w, v);
    pp__wire_i64(&w, b), pp__wire_i64(&w, s), pp__wire_i64(&w, h), pp__wire_i64(&w, elem);
    return wu_call_double(io, &w);
}

static double wu_grid_dp(wu_io *io, int T, int P, int D, double params, int elem) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_GRID_DP, scratch, sizeof scratch);
    pp__wire_i64(&w, T), pp__wire_i64(&w, P), pp__wire_i64(&w, D);
    pp__wire_put(&w, &params, sizeof params);
    pp__wire_i64(&w, elem);
    return wu_call_double(io, &w);
}

static int wu_grid_link(wu_io *io, const char *traffic, int G, int T, int P, int D) {
    pp_wire w;
    wu_begin(io, &w, PP_WARMUP_GRID_LINK, scratch, sizeof scratch);
    pp__wire_str(&w, traffic, 31);
    pp__wire_i64(&w, G), pp__wire_i64(&w, T), pp__wire_i64(&w, P), pp__wire_i64(&w, D);
    return wu_call_int(io, &w);
}

/* A check of a part, declared up front so that a part whose function is missing still reports its full max. */
typedef struct part_check {
    const char *name;
    double points;
} part_check;

#define NCASES(a) ((int)(sizeof a / sizeof *a))

/* A check's verdict over its n cases: the first wrong one, how many were, and the hint at the idea behind them
 * (tolerance: a note after the count, "" for exact answers); or how many matched, with an example when given
 * (never for drawn cases: the example is the answer key's). */
static void part_verdict(pp_test_result *out, const part_check *pc, int bad, int n, const char *noun,
                         const char *tolerance, const char *first_bad, const char *hint, const char *example) {
    if (bad)
        pp__check_add(out, pc->name, pc->points, 0, "%s (%d of %d %s wrong%s); HINT: %s", first_bad, bad, n, noun,
                      tolerance, hint);
    else if (example && example[0])
        pp__check_add(out, pc->name, pc->points, 1, "%d %s match (e.g. %s)", n, noun, example);
    else
        pp__check_add(out, pc->name, pc->points, 1, "%d %s match", n, noun);
}

/* ---- drawn cases ------------------------------------------------------------------------------------------ */

/* A graded run (a hidden configuration with a warmup-seed line) grades each part on cases drawn for it instead
 * of its public table, so that a table of the public answers earns nothing there. Each part draws from its own
 * splitmix64 stream, started from HMAC-SHA-256 keyed by the instructor's seed over the part's name and the graded
 * file's SHA-256. The seed never leaves the hidden configuration and the instructor's JSON report, so the cases
 * cannot be computed from the handout; and a file that holds a table of the cases it was asked is a new file,
 * asked new ones. The same file and seed give the same cases on every run and machine and in both halves of the
 * grading (each draws from cfg alone), and one part's cases say nothing about another's. Every generator sits
 * next to its part's public table, draws the same checks over the same schedules, and stays where the answer
 * keys and the handout's rules hold (interleaved M a multiple of P, the zero-bubble bubbles at M >= P); no drawn
 * case is a public one. A grade function's draw is NULL for the public cases, and a drawn case's messages never
 * show the answer key's value, only the hint. */
typedef struct wu_draw {
    uint64_t s;
} wu_draw;

static uint64_t draw_next(wu_draw *d) {
    uint64_t z = (d->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void draw_init(wu_draw *d, const pp_test_config *cfg, const char *part) {
    char key[64];
    int nkey = snprintf(key, sizeof key, "pplab warm-up seed %u", cfg->seed);
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, (const unsigned char *)key, (size_t)nkey);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)part, strlen(part) + 1);
    crypto_auth_hmacsha256_update(&st, cfg->file_sha256, sizeof cfg->file_sha256);
    crypto_auth_hmacsha256_final(&st, mac);
    d->s = 0;
    for (int i = 0; i < 8; i++) d->s = d->s << 8 | mac[i];
}

/* Uniform in lo..hi. */
static int draw_int(wu_draw *d, int lo, int hi) { return lo + (int)(draw_next(d) % (uint64_t)(hi - lo + 1)); }

/* ---- bubble -------------------------------------------------------------------------------------------- */

typedef struct bubble_case {
    const char *schedule;
    int P, M, v;
} bubble_case;

/* naive ignores M (the whole batch is one micro-batch), so one of its cases passes M = 8 */
static const bubble_case bubble_cases[] = {
    {"naive", 4, 1, 1},        {"naive", 8, 1, 1},        {"naive", 4, 8, 1},
    {"gpipe", 4, 6, 1},        {"gpipe", 4, 24, 1},       {"gpipe", 8, 32, 1},      {"gpipe", 2, 1, 1},
    {"1f1b", 4, 8, 1},         {"1f1b", 4, 6, 1},         {"1f1b", 8, 16, 1},
    {"interleaved", 4, 8, 2},  {"interleaved", 4, 16, 4}, {"interleaved", 2, 4, 2}, {"interleaved", 8, 16, 2},
    {"zbh1", 4, 8, 1},         {"zbh1", 4, 16, 1},        {"zbh1", 8, 8, 1},        {"zbh2", 4, 8, 1},
    {"zbh2", 3, 9, 1},
};

static int same_case(const bubble_case *a, const bubble_case *b) {
    return !strcmp(a->schedule, b->schedule) && a->P == b->P && a->M == b->M && a->v == b->v;
}

static int case_in(const bubble_case *c, const bubble_case *list, int n) {
    for (int i = 0; i < n; i++)
        if (same_case(c, &list[i])) return 1;
    return 0;
}

/* A drawn sibling of public case pub: its schedule, P in 2..8, M on pub's side of P (1 where pub's naive case
 * has 1; a short pipeline stays short) and a multiple of P for interleaved, v in 2..4 where pub has chunks (2 in
 * a V). The zero-bubble cases' M stays >= P with pub's, where their closed formula holds. */
static bubble_case draw_like(wu_draw *d, const bubble_case *pub) {
    bubble_case c = {pub->schedule, draw_int(d, 2, 8), 1, 1};
    if (!strcmp(c.schedule, "interleaved")) c.v = draw_int(d, 2, 4), c.M = c.P * draw_int(d, 1, 4);
    else if (pub->M == 1 && !strcmp(c.schedule, "naive")) c.M = 1;
    else if (pub->M < pub->P) c.M = draw_int(d, 1, c.P - 1);
    else c.M = draw_int(d, c.P, 4 * c.P);
    if (!strcmp(c.schedule, "zbv")) c.v = 2;
    return c;
}

/* One drawn sibling of each of the n public cases into out, none of them public or a repeat. */
static void draw_siblings(wu_draw *d, const bubble_case *pub, int n, bubble_case *out) {
    for (int i = 0; i < n; i++)
        do out[i] = draw_like(d, &pub[i]);
        while (case_in(&out[i], pub, n) || case_in(&out[i], out, i));
}

static const part_check bubble_checks[] = {{"bubble naive", 1},       {"bubble gpipe", 1}, {"bubble 1f1b", 1},
                                           {"bubble interleaved", 2}, {"bubble zbh1", 2},  {"bubble zbh2", 1}};

static void grade_bubble(wu_io *io, wu_draw *draw, pp_test_result *out) {
    const int ncases = NCASES(bubble_cases);
    bubble_case drawn[NCASES(bubble_cases)];
    const bubble_case *cases = bubble_cases;
    if (draw) draw_siblings(draw, bubble_cases, ncases, drawn), cases = drawn;
    for (int k = 0; k < NCASES(bubble_checks); k++) {
        const char *sched = bubble_checks[k].name + strlen("bubble ");
        int n = 0, bad = 0;
        char first_bad[200] = "", example[120] = "";
        for (int i = 0; i < ncases; i++) {
            const bubble_case *bc = &cases[i];
            if (strcmp(bc->schedule, sched)) continue;
            double want = WU_KEY_NUM(io, "bubble %s %d %d %d", bc->schedule, bc->P, bc->M, bc->v);
            double got = wu_bubble(io, bc->schedule, bc->P, bc->M, bc->v);
            n++;
            if (!example[0]) snprintf(example, sizeof example, "P=%d M=%d v=%d: %.4f", bc->P, bc->M, bc->v, want);
            if (!(fabs(got - want) <= 1e-9)) {
                if (!bad && draw)
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d: got %.6f", sched, bc->P, bc->M,
                             bc->v, got);
                else if (!bad)
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d: expected %.6f, got %.6f", sched,
                             bc->P, bc->M, bc->v, want, got);
                bad++;
            }
        }
        part_verdict(out, &bubble_checks[k], bad, n, "cases", ", tolerance 1e-9", first_bad,
                     !strncmp(sched, "zbh", 3)
                         ? "with the backward split, F = B = W = 1: when can the last rank start at the earliest, "
                           "and how much work does it have? (docs/05-zerobubble.md, the floor)"
                         : "count the idle slots of each rank on the staircase with F=1, B=2 and divide by P times "
                           "the length of the step",
                     draw ? NULL : example);
    }
}

/* ---- peaks --------------------------------------------------------------------------------------------- */

static const bubble_case peak_cases[] = {
    {"gpipe", 4, 8, 1},       {"gpipe", 4, 6, 1},       {"gpipe", 2, 3, 1},
    {"1f1b", 4, 8, 1},        {"1f1b", 4, 2, 1},        {"1f1b", 8, 16, 1},
    {"interleaved", 4, 8, 2}, {"interleaved", 4, 4, 2}, {"interleaved", 2, 4, 3},
    {"zbh1", 4, 8, 1},        {"zbh1", 4, 2, 1},        {"zbh2", 4, 8, 1},        {"zbh2", 4, 4, 1},
};

static const part_check peak_checks[] = {{"peaks gpipe", 1},      {"peaks 1f1b", 2}, {"peaks interleaved", 2},
                                         {"peaks zbh1", 1},       {"peaks zbh2", 1}};

static void grade_peaks(wu_io *io, wu_draw *draw, pp_test_result *out) {
    const int ncases = NCASES(peak_cases);
    bubble_case drawn[NCASES(peak_cases)];
    const bubble_case *cases = peak_cases;
    if (draw) draw_siblings(draw, peak_cases, ncases, drawn), cases = drawn;
    for (int k = 0; k < NCASES(peak_checks); k++) {
        const char *sched = peak_checks[k].name + strlen("peaks ");
        int n = 0, bad = 0;
        char first_bad[200] = "", example[120] = "";
        for (int i = 0; i < ncases; i++) {
            const bubble_case *pc = &cases[i];
            if (strcmp(pc->schedule, sched)) continue;
            char list[80] = "";
            for (int r = 0; r < pc->P; r++) {
                int want = WU_KEY_INT(io, "peak %s %d %d %d %d", pc->schedule, pc->P, pc->M, pc->v, r);
                int got = wu_peak(io, pc->schedule, pc->P, pc->M, pc->v, r);
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s%d", r ? " " : "", want);
                n++;
                if (got != want) {
                    if (!bad && draw)
                        snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d rank %d: got %d", sched, pc->P,
                                 pc->M, pc->v, r, got);
                    else if (!bad)
                        snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d rank %d: expected %d, got %d",
                                 sched, pc->P, pc->M, pc->v, r, want, got);
                    bad++;
                }
            }
            if (!example[0]) snprintf(example, sizeof example, "P=%d M=%d v=%d: %s", pc->P, pc->M, pc->v, list);
        }
        part_verdict(out, &peak_checks[k], bad, n, "ranks", "", first_bad,
                     !strncmp(sched, "zbh", 3) ? "a forward makes a stash, and only its weight half frees it: count the "
                                                 "weight halves a rank holds back besides the forwards of its warm-up"
                                               : "a forward makes a stash, its backward frees it: count the forwards "
                                                 "the rank has run before its first backward",
                     draw ? NULL : example);
    }
}

/* ---- orders -------------------------------------------------------------------------------------------- */

#define ORDER_CAP 4096
#define ORDER_GUARD 64

/* The orders checked; the fourth check asks a rank of the first again, into too few bytes (rank 0, 10 bytes). */
static const bubble_case order_cases[] = {{"gpipe", 4, 8, 1}, {"1f1b", 4, 8, 1}, {"1f1b", 4, 2, 1}};

static const part_check order_checks[] = {
    {"orders gpipe P=4 M=8", 1}, {"orders 1f1b P=4 M=8", 2}, {"orders 1f1b P=4 M=2", 1}, {"orders short buffer", 1}};
/* the same checks on drawn P and M, which the messages name */
static const part_check order_drawn_checks[] = {
    {"orders gpipe", 1}, {"orders 1f1b M >= P", 2}, {"orders 1f1b M < P", 1}, {"orders short buffer", 1}};

/* Drawn orders: GPipe with M >= 2 (so that its list never fits the short buffer's few bytes), 1F1B with M >= P
 * and with M < P (a warm-up cut short), P up to 8. */
static void draw_orders(wu_draw *d, bubble_case out[3]) {
    for (int k = 0; k < 3; k++)
        do {
            /* one draw per statement: the order of the draws is the cases, on every compiler */
            int P = draw_int(d, k == 2 ? 3 : 2, 8);
            int M = k == 0 ? draw_int(d, 2, 16) : k == 1 ? draw_int(d, P, 3 * P) : draw_int(d, 1, P - 1);
            out[k] = (bubble_case){order_cases[k].schedule, P, M, 1};
        } while (same_case(&out[k], &order_cases[k]));
}

/* Next whitespace-separated token of s at *pos into tok (truncated to cap); 0 at the end of s. */
static int next_token(const char *s, size_t *pos, char *tok, size_t cap) {
    while (s[*pos] == ' ' || s[*pos] == '\t' || s[*pos] == '\n') (*pos)++;
    if (!s[*pos]) return 0;
    size_t n = 0;
    while (s[*pos] && s[*pos] != ' ' && s[*pos] != '\t' && s[*pos] != '\n') {
        if (n + 1 < cap) tok[n++] = s[*pos];
        (*pos)++;
    }
    tok[n] = 0;
    return 1;
}

/* The number of whitespace-separated tokens of s. */
static int count_tokens(const char *s) {
    size_t pos = 0;
    int n = 0;
    char tok[32];
    while (next_token(s, &pos, tok, sizeof tok)) n++;
    return n;
}

/* Compares the student's order of every rank with the canonical one (its key: tokens F<mb>, or F<mb>.<chunk> when
 * v > 0); on the first difference writes it to msg and returns 0. v > 0: through pp_warmup_chunk_order; v = 0:
 * pp_warmup_order. A drawn case's message says where the lists part and what the student wrote there, never the
 * canonical op. */
static int check_orders(wu_io *io, const wu_draw *draw, const char *sched, int P, int M, int v, char *msg,
                        size_t msglen) {
    char where[64];
    if (draw && v) snprintf(where, sizeof where, "%s P=%d M=%d v=%d", sched, P, M, v);
    else snprintf(where, sizeof where, "%s P=%d M=%d", sched, P, M);
    static char buf[ORDER_CAP + ORDER_GUARD], canon[ORDER_CAP];
    int ok = 1;
    for (int r = 0; r < P && ok; r++) {
        snprintf(canon, sizeof canon, "%s", WU_KEY(io, "order %s %d %d %d %d", sched, P, M, v, r));
        int nwant = count_tokens(canon);
        memset(buf, 0x5a, sizeof buf);
        int ret = wu_order(io, sched, P, M, v ? v : -1, r, buf, sizeof buf, ORDER_CAP);
        if (ret < 0) {
            if (draw)
                snprintf(msg, msglen, "%s rank %d: returned %d with %d bytes of room, enough for the rank's ops (-1 "
                         "only when they do not fit)", where, r, ret, ORDER_CAP);
            else
                snprintf(msg, msglen, "%s rank %d: returned %d with %d bytes of room; expected the %d ops of the "
                         "rank (-1 only when they do not fit)", where, r, ret, ORDER_CAP, nwant);
            ok = 0;
            break;
        }
        if (!memchr(buf, 0, ORDER_CAP)) {
            snprintf(msg, msglen, "%s rank %d: out holds no terminating NUL within the %d bytes given "
                     "(returned %d); HINT: end the string with '\\0'", where, r, ORDER_CAP, ret);
            ok = 0;
            break;
        }
        for (int i = ORDER_CAP; i < ORDER_CAP + ORDER_GUARD; i++)
            if (buf[i] != 0x5a) {
                snprintf(msg, msglen, "%s rank %d: wrote past the %d bytes of out", where, r, ORDER_CAP);
                ok = 0;
                break;
            }
        if (!ok) break;
        size_t pos = 0, cpos = 0;
        char tok[32], want[32];
        for (int i = 0;; i++) {
            int have = next_token(buf, &pos, tok, sizeof tok);
            if (i < nwant) next_token(canon, &cpos, want, sizeof want);
            if (i >= nwant && !have) break;
            if (i >= nwant && draw) {
                snprintf(msg, msglen, "%s rank %d op %d: got %s past the rank's last op (ops counted from 0)", where,
                         r, i, tok);
                ok = 0;
            } else if (i >= nwant) {
                snprintf(msg, msglen, "%s rank %d op %d: expected the end of the list, got %s (ops counted from 0; "
                         "%d ops in all)", where, r, i, tok, nwant);
                ok = 0;
            } else if (!have && draw) {
                snprintf(msg, msglen, "%s rank %d op %d: the list ends here, but the rank has more ops (ops counted "
                         "from 0)", where, r, i);
                ok = 0;
            } else if (!have) {
                snprintf(msg, msglen, "%s rank %d op %d: expected %s, got the end of the list (ops counted from 0; "
                         "%d ops in all)", where, r, i, want, nwant);
                ok = 0;
            } else if (strcmp(tok, want) && draw) {
                snprintf(msg, msglen, "rank %d op %d: got %s, not the op the canonical order runs there (%s, ops "
                         "counted from 0)", r, i, tok, where);
                ok = 0;
            } else if (strcmp(tok, want)) {
                snprintf(msg, msglen, "rank %d op %d: expected %s, got %s (%s, ops counted from 0)", r, i, want, tok,
                         where);
                ok = 0;
            }
            if (!ok) break;
        }
        if (ok && ret != nwant) {
            if (draw)
                snprintf(msg, msglen, "%s rank %d: the list is right but the function returned %d, not the number "
                         "of ops in it", where, r, ret);
            else
                snprintf(msg, msglen, "%s rank %d: the list is right but the function returned %d instead of the "
                         "number of ops, %d", where, r, ret, nwant);
            ok = 0;
        }
    }
    if (ok) snprintf(msg, msglen, "%s: every rank's order matches", where);
    return ok;
}

/* A check of orders: passed, or failed with its message and a hint. A public case gets its hint (NULL: none)
 * only where the lists part at an op, next to the op it expected; a drawn case, whose message shows no canonical
 * op, always gets one (its own, else drawn_hint). */
static void order_verdict(pp_test_result *out, const part_check *pc, const wu_draw *draw, int ok, const char *msg,
                          const char *hint, const char *drawn_hint) {
    if (draw && !ok && !strstr(msg, "HINT:"))
        pp__check_add(out, pc->name, pc->points, 0, "%s; HINT: %s", msg, hint ? hint : drawn_hint);
    else if (!draw && !ok && hint && strstr(msg, " op "))
        pp__check_add(out, pc->name, pc->points, 0, "%s; HINT: %s", msg, hint);
    else
        pp__check_add(out, pc->name, pc->points, ok, "%s", msg);
}

/* The bytes rank r's canonical list takes as tokens with single spaces and its NUL. */
static int order_bytes(wu_io *io, const char *sched, int P, int M, int r) {
    return (int)strlen(WU_KEY(io, "order %s %d %d 0 %d", sched, P, M, r)) + 1;
}

static void grade_orders(wu_io *io, wu_draw *draw, pp_test_result *out) {
    bubble_case drawn[3];
    const bubble_case *cases = order_cases;
    const part_check *checks = draw ? order_drawn_checks : order_checks;
    if (draw) draw_orders(draw, drawn), cases = drawn;
    static const char *const hints[] = {
        NULL, NULL, "with fewer micro-batches than stages the warm-up is cut to M forwards"};
    static const char *const drawn_hints[] = {
        "GPipe runs every forward in micro-batch order, then every backward in the same order",
        "a warm-up of forwards, then one forward and one backward in turn, then the remaining backwards: how "
        "long is rank r's warm-up? (docs/00-warmup.md section 3)",
        NULL};
    char msg[400];
    int ok[3];
    for (int k = 0; k < 3; k++) {
        ok[k] = check_orders(io, draw, cases[k].schedule, cases[k].P, cases[k].M, 0, msg, sizeof msg);
        order_verdict(out, &checks[k], draw, ok[k], msg, hints[k], drawn_hints[k]);
    }
    /* The gpipe order again into a few bytes (10 hold three tokens of rank 0 at P=4 M=8, whose list takes 48;
     * a drawn case asks another rank into fewer bytes than its list takes). Gated on a right order, so a stub
     * that always returns -1 earns nothing here. */
    const bubble_case *g = &cases[0];
    int rank = draw ? draw_int(draw, 0, g->P - 1) : 0, need = order_bytes(io, g->schedule, g->P, g->M, rank);
    int cap = draw ? draw_int(draw, 3, need - 1 < 40 ? need - 1 : 40) : 10;
    static char small[40 + ORDER_GUARD];
    memset(small, 0x5a, sizeof small);
    int ret = wu_order(io, g->schedule, g->P, g->M, -1, rank, small, (size_t)cap + ORDER_GUARD, cap);
    int clean = 1;
    for (int i = cap; i < cap + ORDER_GUARD; i++) clean &= small[i] == 0x5a;
    char what[80];
    snprintf(what, sizeof what, "gpipe P=%d M=%d rank %d with cap=%d", g->P, g->M, rank, cap);
    const part_check *pc = &checks[3];
    if (!ok[0])
        pp__check_add(out, pc->name, pc->points, 0, "not graded until the gpipe order is right");
    else if (!clean)
        pp__check_add(out, pc->name, pc->points, 0, "%s: wrote past the %d bytes of out; HINT: snprintf(out + "
                      "used, cap - used, ...) never writes more than it is given", what, cap);
    else if (!draw)
        pp__check_add(out, pc->name, pc->points, ret == -1, "%s (%d bytes needed): expected -1, got %d", what, need,
                      ret);
    else if (ret == -1)
        pp__check_add(out, pc->name, pc->points, 1, "%s, too few bytes for the rank's ops: returned -1", what);
    else
        pp__check_add(out, pc->name, pc->points, 0, "%s, too few bytes for the rank's ops: got %d; HINT: when the "
                      "ops do not fit in cap bytes, return -1 (and never write past cap)", what, ret);
}

/* ---- chunk orders: interleaved 1F1B's timeline --------------------------------------------------------- */

static const bubble_case chunk_order_cases[] = {{"interleaved", 4, 8, 2}, {"interleaved", 2, 4, 3},
                                                {"interleaved", 4, 4, 2}};

static const part_check chunk_order_checks[] = {{"chunk-orders interleaved P=4 M=8 v=2", 2},
                                                {"chunk-orders interleaved P=2 M=4 v=3", 1},
                                                {"chunk-orders interleaved P=4 M=4 v=2", 1}};
/* the same checks on drawn P, M and v, which the messages name */
static const part_check chunk_order_drawn_checks[] = {{"chunk-orders interleaved M > P", 2},
                                                      {"chunk-orders interleaved v > 2", 1},
                                                      {"chunk-orders interleaved M = P", 1}};

/* Drawn chunk orders, M a multiple of P as the handout promises: two chunks over two to four rounds of P
 * micro-batches; three or four chunks on two or three ranks; M = P, where the warm-up is cut to the vM
 * chunk-forwards there are. */
static void draw_chunk_orders(wu_draw *d, bubble_case out[3]) {
    for (int k = 0; k < 3; k++)
        do {
            int P = k == 0 ? draw_int(d, 2, 6) : k == 1 ? draw_int(d, 2, 3) : draw_int(d, 3, 6);
            int v = k == 0 ? 2 : k == 1 ? draw_int(d, 3, 4) : draw_int(d, 2, 3);
            int M = k == 0 ? P * draw_int(d, 2, 4) : k == 1 ? P * draw_int(d, 1, 3) : P;
            out[k] = (bubble_case){"interleaved", P, M, v};
        } while (same_case(&out[k], &chunk_order_cases[k]));
}

static void grade_chunk_orders(wu_io *io, wu_draw *draw, pp_test_result *out) {
    bubble_case drawn[3];
    const bubble_case *cases = chunk_order_cases;
    const part_check *checks = draw ? chunk_order_drawn_checks : chunk_order_checks;
    if (draw) draw_chunk_orders(draw, drawn), cases = drawn;
    static const char *hint = "the k-th chunk-forward of a rank walks P micro-batches through one chunk before the "
                              "next chunk, and its warm-up lasts until the first gradient of the last chunk can come "
                              "back (docs/04-interleaved.md)";
    for (int k = 0; k < 3; k++) {
        char msg[400];
        int ok = check_orders(io, draw, "interleaved", cases[k].P, cases[k].M, cases[k].v, msg, sizeof msg);
        order_verdict(out, &checks[k], draw, ok, msg, hint, hint);
    }
}

/* ---- idle ranks: where the bubble is ------------------------------------------------------------------- */

typedef struct idle_case {
    const char *schedule;
    int P, M, v, t;
} idle_case;

/* instants in the fill, the steady state, the drain and after the end */
static const idle_case idle_cases[] = {
    {"gpipe", 4, 6, 1, 0},        {"gpipe", 4, 6, 1, 4},        {"gpipe", 4, 6, 1, 10},
    {"gpipe", 4, 6, 1, 24},       {"gpipe", 4, 6, 1, 40},       {"1f1b", 4, 8, 1, 2},
    {"1f1b", 4, 8, 1, 6},         {"1f1b", 4, 8, 1, 15},        {"1f1b", 4, 8, 1, 27},
    {"1f1b", 4, 8, 1, 30},        {"interleaved", 4, 8, 2, 1},  {"interleaved", 4, 8, 2, 11},
    {"interleaved", 4, 8, 2, 30}, {"interleaved", 4, 8, 2, 50}, {"interleaved", 2, 4, 2, 5},
};

static const part_check idle_checks[] = {{"idle gpipe", 1}, {"idle 1f1b", 1}, {"idle interleaved", 1}};

/* Drawn instants: for each configuration of the public table a drawn one of its schedule (P up to 6, interleaved
 * M a multiple of P), and as many instants in it, in turn in the fill, the steady state, the drain, after the
 * end and anywhere in the step. */
static void draw_idle(wu_io *io, wu_draw *d, idle_case *out) {
    int P = 0, M = 0, v = 1, span = 0, kind = 0;
    for (int i = 0; i < NCASES(idle_cases); i++) {
        const idle_case *pub = &idle_cases[i];
        if (i == 0 || strcmp(pub->schedule, pub[-1].schedule) || pub->P != pub[-1].P || pub->M != pub[-1].M) {
            do {
                int inter = !strcmp(pub->schedule, "interleaved");
                P = draw_int(d, 2, inter ? 4 : 6), v = inter ? draw_int(d, 2, 3) : 1;
                M = inter ? P * draw_int(d, 1, 3) : draw_int(d, 2, 12);
            } while (P == pub->P && M == pub->M && v == pub->v);
            span = (int)WU_KEY_NUM(io, "span %s %d %d %d", pub->schedule, P, M, v);
            kind = 0;
        }
        int t = kind == 0 ? draw_int(d, 0, P - 2)                                      /* the fill */
                : kind == 1 ? draw_int(d, P - 1, span - P > P - 1 ? span - P : P - 1) /* the steady state */
                : kind == 2 ? draw_int(d, span - P + 1, span - 1)                      /* the drain */
                : kind == 3 ? draw_int(d, span, span + 4)                              /* after the end */
                            : draw_int(d, 0, span - 1);
        out[i] = (idle_case){pub->schedule, P, M, v, t};
        kind++;
    }
}

static void grade_idle(wu_io *io, wu_draw *draw, pp_test_result *out) {
    const int ncases = NCASES(idle_cases);
    idle_case drawn[NCASES(idle_cases)];
    const idle_case *cases = idle_cases;
    if (draw) draw_idle(io, draw, drawn), cases = drawn;
    for (int k = 0; k < 3; k++) {
        const char *sched = idle_checks[k].name + strlen("idle ");
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const idle_case *ic = &cases[i];
            if (strcmp(ic->schedule, sched)) continue;
            /* per rank 1 when idle on the canonical timeline, one block per virtual stage (what --canonical
             * --timeline draws) */
            const char *key = WU_KEY(io, "idle %s %d %d %d %d", ic->schedule, ic->P, ic->M, ic->v, ic->t);
            int want[PP_MAX_RANKS], got[PP_MAX_RANKS + 4], nwant = 0;
            char wl[80] = "", gl[80] = "", *end;
            for (int r = 0; r < ic->P; r++, key = end) {
                want[r] = (int)strtol(key, &end, 10) != 0, nwant += want[r];
                if (want[r]) snprintf(wl + strlen(wl), sizeof wl - strlen(wl), "%s%d", nwant > 1 ? " " : "", r);
            }
            for (int r = 0; r < ic->P + 4; r++) got[r] = -7;
            int ret = wu_idle(io, ic->schedule, ic->P, ic->M, ic->v, ic->t, got, ic->P + 4);
            int same = ret == nwant, ngot = 0;
            for (int r = 0; r < ic->P; r++) {
                same &= (got[r] != 0) == want[r] && (got[r] == 0 || got[r] == 1);
                if (got[r] == 1) snprintf(gl + strlen(gl), sizeof gl - strlen(gl), "%s%d", ngot++ ? " " : "", r);
            }
            for (int r = ic->P; r < ic->P + 4; r++) same &= got[r] == -7;
            n++;
            if (!same && !bad++) {
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d, time unit %d..%d: got ranks {%s} idle "
                             "(returned %d)", sched, ic->P, ic->M, ic->v, ic->t, ic->t + 1, gl, ret);
                else
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d, time unit %d..%d: ranks {%s} idle (%d), "
                             "got {%s} (returned %d)", sched, ic->P, ic->M, ic->v, ic->t, ic->t + 1, wl, nwant, gl,
                             ret);
            }
        }
        part_verdict(out, &idle_checks[k], bad, n, "instants", "", first_bad,
                     "a rank idles while its next op waits for an input that another rank has not produced yet (the "
                     "fill at the start, the drain at the end): replay the order, each op starting when its rank is "
                     "free and its input exists",
                     NULL);
    }
}

/* ---- uneven stages: the slowest one sets the pace ------------------------------------------------------- */

#define UNEVEN_MAX_P 6

typedef struct uneven_case {
    const char *what;
    int P, M;
    double f[UNEVEN_MAX_P];
} uneven_case;

static const uneven_case uneven_cases[] = {
    {"a faster first stage", 4, 8, {0.5, 1, 1, 1}}, {"a faster first stage", 4, 2, {0.25, 1, 1, 1}},
    {"a slower last stage", 4, 8, {1, 1, 1, 2}},    {"a slower last stage", 3, 4, {1, 1, 3}},
    {"mixed stages", 4, 8, {1, 1.5, 0.5, 1}},       {"mixed stages", 2, 6, {2, 1}},
};

static const part_check uneven_checks[] = {{"uneven: a faster first stage", 1}, {"uneven: a slower last stage", 1},
                                           {"uneven: mixed stages", 1}};

/* Drawn stages, one per public case of its kind: P in 2..6, M in 1..12, costs in quarters (exact sums): a first
 * stage at 1/4..3/4 of the others, a last one 5/4..4 times as slow, or every stage anywhere in 1/4..3. */
static void draw_uneven(wu_draw *d, uneven_case *out) {
    for (int i = 0; i < NCASES(uneven_cases); i++) {
        const uneven_case *pub = &uneven_cases[i];
        uneven_case c;
        do {
            memset(&c, 0, sizeof c);
            c.what = pub->what, c.P = draw_int(d, 2, UNEVEN_MAX_P), c.M = draw_int(d, 1, 12);
            for (int s = 0; s < c.P; s++) c.f[s] = 1;
            if (pub->f[0] < 1) c.f[0] = 0.25 * draw_int(d, 1, 3);
            else if (pub->f[pub->P - 1] > 1) c.f[c.P - 1] = 0.25 * draw_int(d, 5, 16);
            else
                for (int s = 0; s < c.P; s++) c.f[s] = 0.25 * draw_int(d, 1, 12);
        } while (c.P == pub->P && c.M == pub->M && !memcmp(c.f, pub->f, sizeof c.f));
        out[i] = c;
    }
}

static void grade_uneven(wu_io *io, wu_draw *draw, pp_test_result *out) {
    const int ncases = NCASES(uneven_cases);
    uneven_case drawn[NCASES(uneven_cases)];
    const uneven_case *cases = uneven_cases;
    if (draw) draw_uneven(draw, drawn), cases = drawn;
    for (int k = 0; k < 3; k++) {
        const char *what = uneven_checks[k].name + strlen("uneven: ");
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const uneven_case *uc = &cases[i];
            if (strcmp(uc->what, what)) continue;
            /* GPipe's canonical order replayed with these forward costs (backward twice each) */
            char costs[UNEVEN_MAX_P * 26] = "";
            for (int r = 0; r < uc->P; r++) snprintf(costs + strlen(costs), sizeof costs - strlen(costs), " %.17g", uc->f[r]);
            double want = WU_KEY_NUM(io, "uneven %d %d%s", uc->P, uc->M, costs), copy[UNEVEN_MAX_P];
            memcpy(copy, uc->f, sizeof copy);
            double got = wu_uneven(io, uc->P, uc->M, copy);
            n++;
            if (!(fabs(got - want) <= 1e-9) && !bad++) {
                char fs[64] = "";
                for (int r = 0; r < uc->P; r++) snprintf(fs + strlen(fs), sizeof fs - strlen(fs), "%s%g", r ? ", " : "", uc->f[r]);
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "gpipe P=%d M=%d, forward costs {%s}: got %.6f", uc->P,
                             uc->M, fs, got);
                else
                    snprintf(first_bad, sizeof first_bad, "gpipe P=%d M=%d, forward costs {%s}: expected %.6f, got "
                             "%.6f", uc->P, uc->M, fs, want, got);
            }
        }
        part_verdict(out, &uneven_checks[k], bad, n, "cases", ", tolerance 1e-9", first_bad,
                     "every micro-batch passes every stage, so in the steady state all ranks wait for the slowest "
                     "one; a change to any other stage only moves the fill and the drain",
                     NULL);
    }
}

/* ---- chunks: interleaving's messages against its bubble -------------------------------------------------- */

typedef struct chunks_case {
    int P, M, blocks;
    double latency;
} chunks_case;

static const chunks_case chunks_cases[] = {
    {4, 8, 4, 0},   {2, 4, 6, 0},    {8, 8, 2, 0},    {4, 8, 4, 0.25}, {4, 8, 4, 1},
    {4, 8, 4, 8},   {2, 4, 6, 0.25}, {2, 4, 6, 1.5},  {8, 16, 4, 0.5}, {4, 4, 8, 3},
};

static const part_check chunks_checks[] = {{"chunks without latency", 1}, {"chunks with latency", 2}};

static int chunks_in(const chunks_case *c, const chunks_case *list, int n) {
    for (int i = 0; i < n; i++)
        if (c->P == list[i].P && c->M == list[i].M && c->blocks == list[i].blocks && c->latency == list[i].latency)
            return 1;
    return 0;
}

/* Drawn choices, one per public case, without latency where it has none: P in 2..8, M a multiple of P, blocks
 * 2, 3, 4, 6 or 8 with at most 128 chunk-forwards per rank and 64 virtual stages (the most chunks a replay of
 * the handout's size holds), a latency in quarters up to 8, so that ties between two v are exact ties. */
static void draw_chunks(wu_draw *d, chunks_case *out) {
    static const int blocks[] = {2, 3, 4, 6, 8};
    for (int i = 0; i < NCASES(chunks_cases); i++) {
        chunks_case c;
        do {
            c.P = draw_int(d, 2, 8), c.M = c.P * draw_int(d, 1, 4), c.blocks = blocks[draw_int(d, 0, 4)];
            c.latency = chunks_cases[i].latency > 0 ? 0.25 * draw_int(d, 1, 32) : 0;
        } while (c.blocks * c.M > 128 || c.P * c.blocks > 64 || chunks_in(&c, chunks_cases, NCASES(chunks_cases)) ||
                 chunks_in(&c, out, i));
        out[i] = c;
    }
}

static void grade_chunks(wu_io *io, wu_draw *draw, pp_test_result *out) {
    const int ncases = NCASES(chunks_cases);
    chunks_case drawn[NCASES(chunks_cases)];
    const chunks_case *cases = chunks_cases;
    if (draw) draw_chunks(draw, drawn), cases = drawn;
    for (int k = 0; k < 2; k++) {
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const chunks_case *cc = &cases[i];
            if ((cc->latency > 0) != k) continue;
            double bb;
            int want;
            sscanf(WU_KEY(io, "chunks %d %d %d %.17g", cc->P, cc->M, cc->blocks, cc->latency), "%d %lf", &want, &bb);
            int got = wu_chunks(io, cc->P, cc->M, cc->blocks, cc->latency);
            n++;
            if (got != want && !bad++) {
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "P=%d M=%d, %d blocks per rank, latency %g: got v = %d",
                             cc->P, cc->M, cc->blocks, cc->latency, got);
                else
                    snprintf(first_bad, sizeof first_bad, "P=%d M=%d, %d blocks per rank, latency %g: expected v = %d "
                             "(bubble %.4f), got %d", cc->P, cc->M, cc->blocks, cc->latency, want, bb, got);
            }
        }
        part_verdict(out, &chunks_checks[k], bad, n, "cases", "", first_bad,
                     k ? "more chunks shrink the fill and the drain but multiply the boundaries each micro-batch "
                         "crosses, each costing the latency: replay each v with its latency and compare"
                       : "without latency messages are free: what do more chunks do to the fill and the drain?",
                     NULL);
    }
}

/* ---- sizes of an activation: b sequences x s tokens x h hidden values ------------------------------------ */

typedef struct act_size {
    int b, s, h;
} act_size;

static const act_size public_size = {4, 16, 64};

/* A drawn size, one per part: b up to 16, s up to 512, h up to 1024. */
static act_size draw_size(wu_draw *d) {
    act_size z;
    do z.b = draw_int(d, 1, 16), z.s = 16 * draw_int(d, 1, 32), z.h = 32 * draw_int(d, 1, 32);
    while (z.b == public_size.b && z.s == public_size.s && z.h == public_size.h);
    return z;
}

/* ---- traffic: the messages of a step ------------------------------------------------------------------- */

static const bubble_case traffic_cases[] = {
    {"gpipe", 4, 8, 1},       {"1f1b", 8, 16, 1}, {"naive", 4, 4, 1}, {"zbh1", 4, 8, 1}, /* naive: M is one */
    {"interleaved", 4, 8, 2}, {"interleaved", 2, 4, 3}, {"zbv", 4, 8, 2}, {"zbv", 2, 6, 2},
};

static const part_check traffic_checks[] = {{"traffic: one chunk per rank", 1}, {"traffic: interleaved", 1},
                                            {"traffic: V-shaped", 1}};

static void grade_traffic(wu_io *io, wu_draw *draw, pp_test_result *out) {
    const int ncases = NCASES(traffic_cases);
    bubble_case drawn[NCASES(traffic_cases)];
    const bubble_case *cases = traffic_cases;
    act_size z = public_size;
    if (draw) draw_siblings(draw, traffic_cases, ncases, drawn), cases = drawn, z = draw_size(draw);
    const int b = z.b, s = z.s, h = z.h;
    for (int k = 0; k < 3; k++) {
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const bubble_case *tc = &cases[i];
            int kind = !strcmp(tc->schedule, "interleaved") ? 1 : !strcmp(tc->schedule, "zbv") ? 2 : 0;
            if (kind != k) continue;
            double want;
            int messages;
            sscanf(WU_KEY(io, "traffic %s %d %d %d %d %d %d", tc->schedule, tc->P, tc->M, tc->v, b, s, h), "%lf %d",
                   &want, &messages);
            double got = wu_traffic(io, tc->schedule, tc->P, tc->M, tc->v, b, s, h);
            n++;
            if (!(fabs(got - want) <= 1e-9 * want) && !bad++) {
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d, b=%d s=%d h=%d: got %.0f bytes",
                             tc->schedule, tc->P, tc->M, tc->v, b, s, h, got);
                else
                    snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d, b=%d s=%d h=%d: expected %.0f bytes "
                             "(%d messages), got %.0f", tc->schedule, tc->P, tc->M, tc->v, b, s, h, want,
                             messages, got);
            }
        }
        part_verdict(out, &traffic_checks[k], bad, n, "cases", "", first_bad,
                     "per micro-batch one activation crosses each boundary between two ranks forward and one gradient "
                     "back, each b x s x h fp32 values (4 bytes); count the boundaries between virtual stages that "
                     "live on different ranks",
                     NULL);
    }
}

/* ---- memory: the bytes recomputation keeps -------------------------------------------------------------- */

static const bubble_case memory_cases[] = {
    {"gpipe", 4, 8, 1}, {"1f1b", 4, 8, 1}, {"1f1b", 4, 2, 1}, {"interleaved", 4, 8, 2}, {"interleaved", 2, 4, 3},
};

static const part_check memory_checks[] = {{"memory gpipe", 1}, {"memory 1f1b", 1}, {"memory interleaved", 1}};

static void grade_memory(wu_io *io, wu_draw *draw, pp_test_result *out) {
    const int ncases = NCASES(memory_cases);
    bubble_case drawn[NCASES(memory_cases)];
    const bubble_case *cases = memory_cases;
    act_size z = public_size;
    if (draw) draw_siblings(draw, memory_cases, ncases, drawn), cases = drawn, z = draw_size(draw);
    const int b = z.b, s = z.s, h = z.h;
    for (int k = 0; k < 3; k++) {
        const char *sched = memory_checks[k].name + strlen("memory ");
        int n = 0, bad = 0;
        char first_bad[300] = "";
        for (int i = 0; i < ncases; i++) {
            const bubble_case *mc = &cases[i];
            if (strcmp(mc->schedule, sched)) continue;
            for (int r = 0; r < mc->P; r++) {
                double want;
                int stashes;
                sscanf(WU_KEY(io, "memory %s %d %d %d %d %d %d %d", mc->schedule, mc->P, mc->M, mc->v, r, b, s, h),
                       "%lf %d", &want, &stashes);
                double got = wu_memory(io, mc->schedule, mc->P, mc->M, mc->v, r, b, s, h);
                n++;
                if (!(fabs(got - want) <= 1e-9 * want) && !bad++) {
                    if (draw)
                        snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d rank %d, b=%d s=%d h=%d: got %.0f "
                                 "bytes", sched, mc->P, mc->M, mc->v, r, b, s, h, got);
                    else
                        snprintf(first_bad, sizeof first_bad, "%s P=%d M=%d v=%d rank %d, b=%d s=%d h=%d: expected "
                                 "%.0f bytes (%d stashes), got %.0f", sched, mc->P, mc->M, mc->v, r, b, s, h, want,
                                 stashes, got);
                }
            }
        }
        part_verdict(out, &memory_checks[k], bad, n, "ranks", "", first_bad,
                     "a checkpointed stash keeps only its input, one activation of b x s x h fp32 values, whatever "
                     "part of the model its stage or chunk holds; the peak counts the stashes alive at once",
                     NULL);
    }
}

/* ---- grid: a pipeline among tensor and data parallelism -------------------------------------------------- */

/* Llama 3 405B's grid (the Llama 3 paper: TP 8 inside each 8-GPU server, 16 pipeline stages, 128 replicas) with
 * its hidden size (16384) and pre-training sequence length (8192), and smaller grids. Ranks are
 * placed tensor-parallel index innermost, then the stage, then the replica: rank = t + T (p + P d), and server
 * = rank / G. */
typedef struct grid_case {
    int G, T, P, D;          /* GPUs per server, tensor-parallel ways, stages, replicas */
    int M, v, b, s, h, elem; /* pipeline traffic: micro-batches, chunks, activation sizes, bytes per value */
    double params;           /* data-parallel traffic: the model's parameters (elem bytes per gradient) */
    const char *traffic;     /* links: "tp", "pp" or "dp" */
} grid_case;

static const grid_case grid_gpus_cases[] = {
    {8, 8, 16, 128, 0, 0, 0, 0, 0, 0, 0, NULL}, {8, 8, 16, 64, 0, 0, 0, 0, 0, 0, 0, NULL},
    {8, 4, 4, 2, 0, 0, 0, 0, 0, 0, 0, NULL},    {8, 1, 8, 1, 0, 0, 0, 0, 0, 0, 0, NULL},
    {8, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0, NULL},
};

/* v = 1: one chunk per rank (1F1B); v > 1: interleaved, M a multiple of P */
static const grid_case grid_pp_cases[] = {
    {8, 8, 16, 128, 16, 1, 1, 8192, 16384, 2, 0, NULL}, {8, 4, 4, 2, 8, 1, 4, 16, 64, 4, 0, NULL},
    {8, 1, 2, 1, 4, 1, 2, 32, 128, 4, 0, NULL},         {8, 8, 16, 128, 16, 2, 1, 8192, 16384, 2, 0, NULL},
    {8, 4, 4, 2, 8, 2, 4, 16, 64, 4, 0, NULL},          {8, 2, 2, 3, 4, 3, 2, 32, 128, 2, 0, NULL},
};

static const grid_case grid_dp_cases[] = {
    {8, 8, 16, 128, 0, 0, 0, 0, 0, 4, 405e9, NULL}, {8, 8, 16, 64, 0, 0, 0, 0, 0, 2, 405e9, NULL},
    {8, 2, 4, 1, 0, 0, 0, 0, 0, 4, 1e6, NULL},      {8, 1, 1, 2, 0, 0, 0, 0, 0, 4, 1e6, NULL},
    {8, 4, 2, 3, 0, 0, 0, 0, 0, 2, 12e6, NULL},
};

/* the first three: Llama 3's placement (T = G); then placements where a pipeline or a replica group shares a
 * server, and one whose tensor-parallel group spans two servers */
static const grid_case grid_link_cases[] = {
    {8, 8, 16, 128, 0, 0, 0, 0, 0, 0, 0, "tp"}, {8, 8, 16, 128, 0, 0, 0, 0, 0, 0, 0, "pp"},
    {8, 8, 16, 128, 0, 0, 0, 0, 0, 0, 0, "dp"}, {8, 4, 4, 2, 0, 0, 0, 0, 0, 0, 0, "pp"},
    {8, 4, 4, 2, 0, 0, 0, 0, 0, 0, 0, "dp"},    {8, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, "pp"},
    {8, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, "dp"},    {8, 1, 2, 4, 0, 0, 0, 0, 0, 0, 0, "tp"},
    {8, 1, 2, 4, 0, 0, 0, 0, 0, 0, 0, "dp"},    {8, 16, 2, 1, 0, 0, 0, 0, 0, 0, 0, "tp"},
    {8, 16, 2, 1, 0, 0, 0, 0, 0, 0, 0, "dp"},   {4, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, "pp"},
};
#define GRID_LLAMA_LINKS 3

static const part_check grid_checks[] = {{"grid gpus", 1},
                                         {"grid pipeline bytes: one chunk", 1},
                                         {"grid pipeline bytes: interleaved", 1},
                                         {"grid data-parallel bytes", 1},
                                         {"grid links: Llama 3's placement", 1},
                                         {"grid links: other placements", 1}};

static int grid_same(const grid_case *a, const grid_case *b) {
    return a->G == b->G && a->T == b->T && a->P == b->P && a->D == b->D && a->M == b->M && a->v == b->v &&
           a->b == b->b && a->s == b->s && a->h == b->h && a->elem == b->elem && a->params == b->params &&
           (a->traffic == b->traffic || (a->traffic && b->traffic && !strcmp(a->traffic, b->traffic)));
}

static int grid_in(const grid_case *c, const grid_case *list, int n) {
    for (int i = 0; i < n; i++)
        if (grid_same(c, &list[i])) return 1;
    return 0;
}

/* A drawn sibling of public case pub, of the same kind: tensor parallelism 1, 2, 4, 8 or 16 ways on servers of 4
 * or 8 GPUs (T = G = 8 where pub is Llama 3's placement), up to 32 stages and 128 replicas; activations up to 8
 * sequences of 4096 tokens of hidden size 8192, in bf16 or fp32; up to 10^12 parameters. */
static grid_case grid_draw_like(wu_draw *d, const grid_case *pub, int llama) {
    static const int ways[] = {1, 2, 4, 8, 16};
    grid_case c = *pub;
    c.G = llama ? 8 : 4 * draw_int(d, 1, 2);
    c.T = llama ? 8 : ways[draw_int(d, 0, 4)];
    c.P = draw_int(d, pub->P > 1 ? 2 : 1, 32), c.D = draw_int(d, pub->D > 1 ? 2 : 1, 128);
    if (pub->M) {
        c.v = pub->v > 1 ? draw_int(d, 2, 4) : 1;
        c.P = draw_int(d, 2, 16);
        c.M = pub->v > 1 ? c.P * draw_int(d, 1, 4) : draw_int(d, 1, 64);
        c.b = draw_int(d, 1, 8), c.s = 256 * draw_int(d, 1, 16), c.h = 512 * draw_int(d, 1, 16);
        c.elem = 2 * draw_int(d, 1, 2);
    }
    if (pub->params > 0) c.params = 1e9 * draw_int(d, 1, 1000), c.elem = 2 * draw_int(d, 1, 2);
    return c;
}

static void grid_draw(wu_draw *d, const grid_case *pub, int n, int nllama, grid_case *out) {
    for (int i = 0; i < n; i++)
        do out[i] = grid_draw_like(d, &pub[i], i < nllama);
        while (grid_in(&out[i], pub, n) || grid_in(&out[i], out, i));
}

static const char *link_name(int k) {
    static const char *const names[] = {"0 (no such traffic)", "1 (within servers)", "2 (between servers)",
                                        "3 (both)"};
    return k >= 0 && k <= 3 ? names[k] : "a value other than 0..3";
}

static void grade_grid(wu_io *io, wu_draw *draw, pp_test_result *out) {
    grid_case gpus[NCASES(grid_gpus_cases)], pp[NCASES(grid_pp_cases)], dp[NCASES(grid_dp_cases)],
        link[NCASES(grid_link_cases)];
    memcpy(gpus, grid_gpus_cases, sizeof gpus), memcpy(pp, grid_pp_cases, sizeof pp);
    memcpy(dp, grid_dp_cases, sizeof dp), memcpy(link, grid_link_cases, sizeof link);
    if (draw) {
        grid_draw(draw, grid_gpus_cases, NCASES(grid_gpus_cases), 2, gpus);
        grid_draw(draw, grid_pp_cases, NCASES(grid_pp_cases), 0, pp);
        grid_draw(draw, grid_dp_cases, NCASES(grid_dp_cases), 2, dp);
        grid_draw(draw, grid_link_cases, NCASES(grid_link_cases), GRID_LLAMA_LINKS, link);
    }
    /* the number of GPUs */
    int bad = 0;
    char first_bad[300] = "";
    for (int i = 0; i < NCASES(gpus); i++) {
        const grid_case *g = &gpus[i];
        int want = WU_KEY_INT(io, "grid-gpus %d %d %d", g->T, g->P, g->D), got = wu_grid_gpus(io, g->T, g->P, g->D);
        if (got != want && !bad++) {
            if (draw) snprintf(first_bad, sizeof first_bad, "T=%d P=%d D=%d: got %d", g->T, g->P, g->D, got);
            else snprintf(first_bad, sizeof first_bad, "T=%d P=%d D=%d: expected %d GPUs, got %d", g->T, g->P, g->D,
                          want, got);
        }
    }
    part_verdict(out, &grid_checks[0], bad, NCASES(gpus), "cases", "", first_bad,
                 "how many GPUs does one stage take, how many stages does one replica have, and how many replicas "
                 "are there?", NULL);
    /* the pipeline's bytes, one chunk per rank and interleaved */
    for (int k = 0; k < 2; k++) {
        int n = 0;
        bad = 0, first_bad[0] = 0;
        for (int i = 0; i < NCASES(pp); i++) {
            const grid_case *g = &pp[i];
            if ((g->v > 1) != k) continue;
            double want = WU_KEY_NUM(io, "grid-pp %d %d %d %d %d %d %d %d", g->P, g->D, g->M, g->v, g->b, g->s,
                                     g->h, g->elem);
            double got = wu_grid_pp(io, g->P, g->D, g->M, g->v, g->b, g->s, g->h, g->elem);
            n++;
            if (!(fabs(got - want) <= 1e-9 * want) && !bad++) {
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "P=%d D=%d M=%d v=%d, b=%d s=%d h=%d, %d bytes a value: got "
                             "%.0f bytes", g->P, g->D, g->M, g->v, g->b, g->s, g->h, g->elem, got);
                else
                    snprintf(first_bad, sizeof first_bad, "P=%d D=%d M=%d v=%d, b=%d s=%d h=%d, %d bytes a value: "
                             "expected %.0f bytes, got %.0f", g->P, g->D, g->M, g->v, g->b, g->s, g->h, g->elem, want,
                             got);
            }
        }
        part_verdict(out, &grid_checks[1 + k], bad, n, "cases", "", first_bad,
                     k ? "with v chunks per rank, how many virtual stages does a micro-batch pass through, and how "
                         "many of the boundaries between them join two different ranks? Every replica has its own "
                         "pipeline"
                       : "what crosses one stage boundary per micro-batch, in which directions, and how large is it? "
                         "How many boundaries has one replica's pipeline, and how many replicas send?",
                     NULL);
    }
    /* the data-parallel bytes */
    bad = 0, first_bad[0] = 0;
    for (int i = 0; i < NCASES(dp); i++) {
        const grid_case *g = &dp[i];
        double want = WU_KEY_NUM(io, "grid-dp %d %d %d %.17g %d", g->T, g->P, g->D, g->params, g->elem);
        double got = wu_grid_dp(io, g->T, g->P, g->D, g->params, g->elem);
        if (!(fabs(got - want) <= 1e-9 * want) && !bad++) {
            if (draw)
                snprintf(first_bad, sizeof first_bad, "T=%d P=%d D=%d, %.6g parameters, %d bytes a gradient: got %.0f "
                         "bytes", g->T, g->P, g->D, g->params, g->elem, got);
            else
                snprintf(first_bad, sizeof first_bad, "T=%d P=%d D=%d, %.6g parameters, %d bytes a gradient: expected "
                         "%.0f bytes, got %.0f", g->T, g->P, g->D, g->params, g->elem, want, got);
        }
    }
    part_verdict(out, &grid_checks[3], bad, NCASES(dp), "cases", "", first_bad,
                 "how many bytes of gradients does one rank hold, and how many does it send in a ring all-reduce "
                 "over D ranks (a reduce-scatter, then an all-gather)? How many ranks do that? And with one "
                 "replica, what is there to reduce?", NULL);
    /* which links */
    for (int k = 0; k < 2; k++) {
        int n = 0;
        bad = 0, first_bad[0] = 0;
        for (int i = 0; i < NCASES(link); i++) {
            const grid_case *g = &link[i];
            if ((i >= GRID_LLAMA_LINKS) != k) continue;
            int want = WU_KEY_INT(io, "grid-link %s %d %d %d %d", g->traffic, g->G, g->T, g->P, g->D);
            int got = wu_grid_link(io, g->traffic, g->G, g->T, g->P, g->D);
            n++;
            if (got != want && !bad++) {
                if (draw)
                    snprintf(first_bad, sizeof first_bad, "%s traffic, G=%d T=%d P=%d D=%d: got %s", g->traffic, g->G,
                             g->T, g->P, g->D, link_name(got));
                else
                    snprintf(first_bad, sizeof first_bad, "%s traffic, G=%d T=%d P=%d D=%d: expected %s, got %s",
                             g->traffic, g->G, g->T, g->P, g->D, link_name(want), link_name(got));
            }
        }
        part_verdict(out, &grid_checks[4 + k], bad, n, "cases", "", first_bad,
                     "number the ranks tensor-parallel index first, then the stage, then the replica, and put G "
                     "consecutive ranks in a server: do two neighbours of the traffic's group sit in one server, in "
                     "two, or both?", NULL);
    }
}

/* ---- partition ----------------------------------------------------------------------------------------- */

#define PART_LAYERS 64
#define PART_P 4
#define PART_MAX_LAYERS 80
#define PART_MAX_P 8

typedef struct cost_model {
    char name[100];
    int n, P;
    double cost[PART_MAX_LAYERS];
} cost_model;

/* The three cost vectors, in units of one transformer block's forward, each cut into P = 4 stages:
 *  "64-layer LM": embedding 3.0 (layer 0), 62 blocks 1.0, LM head 5.0 (layer 63); best slowest stage 18.
 *  "uneven blocks": embedding 2.5, blocks 0.5 + ((7i + 3) mod 11) / 4 (deterministic, between 0.5 and 3.0),
 *      head 9.0 (a large vocabulary).
 *  "deepening": blocks growing with depth, 0.5 + i / 32, embedding 1.0, head 4.0.
 * Equal layer counts (16 per stage) are not optimal for any of them. */
static void cost_models(cost_model m[3]) {
    snprintf(m[0].name, sizeof m[0].name, "64-layer LM (embedding 3.0, 62 blocks 1.0, head 5.0)");
    snprintf(m[1].name, sizeof m[1].name, "uneven blocks (embedding 2.5, blocks 0.5..3.0, head 9.0)");
    snprintf(m[2].name, sizeof m[2].name, "deepening (embedding 1.0, blocks 0.5 + i/32, head 4.0)");
    for (int k = 0; k < 3; k++) m[k].n = PART_LAYERS, m[k].P = PART_P;
    for (int i = 1; i < PART_LAYERS - 1; i++) {
        m[0].cost[i] = 1.0;
        m[1].cost[i] = 0.5 + ((7 * i + 3) % 11) / 4.0;
        m[2].cost[i] = 0.5 + i / 32.0;
    }
    m[0].cost[0] = 3.0, m[0].cost[PART_LAYERS - 1] = 5.0;
    m[1].cost[0] = 2.5, m[1].cost[PART_LAYERS - 1] = 9.0;
    m[2].cost[0] = 1.0, m[2].cost[PART_LAYERS - 1] = 4.0;
}

/* Drawn cost models of the same three kinds, each on its own P in 3..8, costs in 1/64ths so that every sum is
 * exact: the 64-layer LM with another embedding and head; 40..80 uneven blocks of 0.5..3.0 (drawn one by one)
 * between an embedding and a large head; 40..80 blocks growing by 1/64..4/64 per layer. */
static void draw_cost_models(wu_draw *d, cost_model m[3]) {
    double emb, head;
    do {
        m[0].n = PART_LAYERS, m[0].P = draw_int(d, 3, PART_MAX_P);
        emb = 0.5 * draw_int(d, 2, 12), head = 0.5 * draw_int(d, 2, 20);
    } while (m[0].P == PART_P && emb == 3.0 && head == 5.0);
    for (int i = 1; i < PART_LAYERS - 1; i++) m[0].cost[i] = 1.0;
    m[0].cost[0] = emb, m[0].cost[PART_LAYERS - 1] = head;
    snprintf(m[0].name, sizeof m[0].name, "64-layer LM (embedding %.1f, 62 blocks 1.0, head %.1f)", emb, head);

    m[1].n = draw_int(d, 40, PART_MAX_LAYERS), m[1].P = draw_int(d, 3, PART_MAX_P);
    emb = 0.25 * draw_int(d, 4, 16), head = 0.5 * draw_int(d, 6, 24);
    for (int i = 1; i < m[1].n - 1; i++) m[1].cost[i] = 0.25 * draw_int(d, 2, 12);
    m[1].cost[0] = emb, m[1].cost[m[1].n - 1] = head;
    snprintf(m[1].name, sizeof m[1].name, "uneven blocks (%d layers: embedding %.2f, blocks 0.5..3.0, head %.1f)",
             m[1].n, emb, head);

    m[2].n = draw_int(d, 40, PART_MAX_LAYERS), m[2].P = draw_int(d, 3, PART_MAX_P);
    double base = 0.25 * draw_int(d, 1, 4);
    double step = draw_int(d, 1, 4) / 64.0;
    emb = 0.5 * draw_int(d, 1, 6), head = 0.5 * draw_int(d, 4, 12);
    for (int i = 1; i < m[2].n - 1; i++) m[2].cost[i] = base + i * step;
    m[2].cost[0] = emb, m[2].cost[m[2].n - 1] = head;
    snprintf(m[2].name, sizeof m[2].name, "deepening (%d layers: embedding %.1f, blocks %g + i x %g, head %.1f)",
             m[2].n, emb, base, step, head);
}

static double span_cost(const double *cost, int a, int b) {
    double s = 0;
    for (int i = a; i < b; i++) s += cost[i];
    return s;
}

static const part_check partition_checks[] = {{"partition valid", 1},
                                              {"partition optimal: 64-layer LM", 1},
                                              {"partition optimal: uneven", 1},
                                              {"partition optimal: deepening", 1},
                                              {"partition impossible", 1}};

static void first_str(const int *first, int P, char *s, size_t len) {
    size_t used = 0;
    for (int i = 0; i <= P && used < len; i++)
        used += (size_t)snprintf(s + used, len - used, "%s%d%s", i ? ", " : "{", first[i], i == P ? "}" : "");
}

/* Returns 1 when first[] (returned rc) is a valid cut of n layers into P stages, else 0 with the reason. */
static int partition_valid(int rc, const int *first, int guard_ok, int n, int P, char *msg, size_t len) {
    char fs[200];
    first_str(first, P, fs, sizeof fs);
    if (rc != 0) return snprintf(msg, len, "returned %d for a cut that exists (expected 0)", rc), 0;
    if (!guard_ok) return snprintf(msg, len, "wrote past first[%d] (first has P+1 = %d entries)", P, P + 1), 0;
    if (first[0] != 0) return snprintf(msg, len, "first[0] must be 0, got first = %s", fs), 0;
    if (first[P] != n) return snprintf(msg, len, "first[%d] must be %d (every layer placed), got first = %s", P, n, fs), 0;
    for (int s = 0; s < P; s++) {
        if (first[s + 1] == first[s])
            return snprintf(msg, len, "stage %d is empty (first[%d] = first[%d] = %d): first = %s; every stage needs "
                            "at least one layer", s, s, s + 1, first[s], fs), 0;
        if (first[s + 1] < first[s])
            return snprintf(msg, len, "stages overlap (first[%d] = %d < first[%d] = %d): first = %s; first[] must "
                            "increase, stage s holding layers first[s]..first[s+1]-1", s + 1, first[s + 1], s,
                            first[s], fs), 0;
    }
    return 1;
}

static void grade_partition(wu_io *io, wu_draw *draw, pp_test_result *out) {
    cost_model m[3];
    memset(m, 0, sizeof m);
    if (draw) draw_cost_models(draw, m);
    else cost_models(m);
    /* the impossible case: fewer layers than stages */
    int few_P = draw ? draw_int(draw, 3, PART_MAX_P) : PART_P;
    int few_n = draw ? draw_int(draw, 1, few_P - 1) : 3;
    int valid[3], first[3][PART_MAX_P + 1 + 4];
    char why[400] = "";
    int all_valid = 1;
    for (int k = 0; k < 3; k++) {
        int P = m[k].P, nf = P + 1 + 4;
        for (int i = 0; i < nf; i++) first[k][i] = -7777;
        double copy[PART_MAX_LAYERS];
        memcpy(copy, m[k].cost, sizeof copy);
        int rc = wu_partition(io, m[k].n, copy, P, first[k], nf);
        int guard = 1;
        for (int i = P + 1; i < nf; i++) guard &= first[k][i] == -7777;
        char msg[300];
        valid[k] = partition_valid(rc, first[k], guard, m[k].n, P, msg, sizeof msg);
        if (!valid[k] && all_valid) snprintf(why, sizeof why, "%s, P=%d: %s", m[k].name, P, msg);
        all_valid &= valid[k];
    }
    if (all_valid && draw)
        pp__check_add(out, partition_checks[0].name, partition_checks[0].points, 1,
                      "3 cost models: every cut is contiguous, non-empty and covers its layers");
    else if (all_valid)
        pp__check_add(out, partition_checks[0].name, partition_checks[0].points, 1,
                      "3 cost models: every cut is contiguous, non-empty and covers the %d layers", PART_LAYERS);
    else if (draw)
        pp__check_add(out, partition_checks[0].name, partition_checks[0].points, 0, "invalid partition: %s; HINT: a "
                      "cut is first[0] = 0 < first[1] < ... < first[P] = nlayers, every stage contiguous and "
                      "non-empty", why);
    else
        pp__check_add(out, partition_checks[0].name, partition_checks[0].points, 0, "invalid partition: %s", why);
    for (int k = 0; k < 3; k++) {
        const part_check *pc = &partition_checks[1 + k];
        int P = m[k].P;
        char costs[PART_MAX_LAYERS * 26] = "";
        for (int i = 0; i < m[k].n; i++) snprintf(costs + strlen(costs), sizeof costs - strlen(costs), " %.17g", m[k].cost[i]);
        double opt = WU_KEY_NUM(io, "partition %d %d%s", m[k].n, P, costs);
        if (!valid[k] && draw) {
            pp__check_add(out, pc->name, pc->points, 0, "%s, P=%d: not graded, the partition is invalid", m[k].name,
                          P);
            continue;
        } else if (!valid[k]) {
            pp__check_add(out, pc->name, pc->points, 0, "%s: not graded, the partition is invalid (best slowest "
                          "stage: %.6g)", m[k].name, opt);
            continue;
        }
        char stages[200] = "";
        double worst = 0;
        for (int s = 0; s < P; s++) {
            double c = span_cost(m[k].cost, first[k][s], first[k][s + 1]);
            size_t len = strlen(stages);
            snprintf(stages + len, sizeof stages - len, "%s%.6g", s ? " " : "", c);
            if (c > worst) worst = c;
        }
        /* the costs are multiples of 1/64, so every sum here is exact; 1e-9 relative only covers a student's
         * prefix-sum differences on other inputs */
        int ok = fabs(worst - opt) <= 1e-9 * (1.0 + opt);
        char fs[200];
        first_str(first[k], P, fs, sizeof fs);
        if (ok && draw)
            pp__check_add(out, pc->name, pc->points, 1, "%s, P=%d: the cut is optimal (first = %s)", m[k].name, P, fs);
        else if (ok)
            pp__check_add(out, pc->name, pc->points, 1, "%s: slowest stage %.6g is optimal (first = %s, stage costs %s)",
                          m[k].name, worst, fs, stages);
        else if (draw)
            pp__check_add(out, pc->name, pc->points, 0,
                          "%s, P=%d: the slowest stage costs %.6g, more than the best cut's (first = %s, stage costs "
                          "%s); HINT: equal layer counts are not enough when the embedding and the head add cost: "
                          "search the cuts exactly",
                          m[k].name, P, worst, fs, stages);
        else
            pp__check_add(out, pc->name, pc->points, 0,
                          "%s: expected the slowest stage to cost %.6g (the optimum), got %.6g (first = %s, stage "
                          "costs %s); HINT: equal layer counts are not enough when the embedding and the head add "
                          "cost: search the cuts exactly",
                          m[k].name, opt, worst, fs, stages);
    }
    /* Fewer layers than stages (3 on P=4 in the public case). Gated on valid cuts, so a stub that always returns
     * -1 earns nothing. */
    int few[PART_MAX_P + 1] = {0};
    double ones[PART_MAX_P] = {1, 1, 1, 1, 1, 1, 1, 1};
    int rc = wu_partition(io, few_n, ones, few_P, few, few_P + 1);
    if (!all_valid)
        pp__check_add(out, partition_checks[4].name, partition_checks[4].points, 0,
                      "not graded until the partitions above are valid");
    else if (!draw)
        pp__check_add(out, partition_checks[4].name, partition_checks[4].points, rc == -1,
                      "3 layers on P=4 (a stage would be empty): expected -1, got %d", rc);
    else if (rc == -1)
        pp__check_add(out, partition_checks[4].name, partition_checks[4].points, 1,
                      "%d layers on P=%d (a stage would be empty): returned -1", few_n, few_P);
    else
        pp__check_add(out, partition_checks[4].name, partition_checks[4].points, 0,
                      "%d layers on P=%d (a stage would be empty): got %d; HINT: with fewer layers than stages no "
                      "cut exists: return -1", few_n, few_P, rc);
}

/* ---- entry --------------------------------------------------------------------------------------------- */

typedef struct warmup_part {
    const char *part, *symbol;
    void (*grade)(wu_io *io, wu_draw *draw, pp_test_result *out);
    const part_check *checks, *drawn_checks; /* drawn: the names on drawn cases, where they differ */
    int nchecks;
} warmup_part;

#define PART(name, sym, fn, tbl, drawn) {name, sym, fn, tbl, drawn, (int)(sizeof tbl / sizeof *tbl)}
static const warmup_part parts[] = {
    PART("bubble", "pp_warmup_bubble", grade_bubble, bubble_checks, NULL),
    PART("peaks", "pp_warmup_peak_stashes", grade_peaks, peak_checks, NULL),
    PART("orders", "pp_warmup_order", grade_orders, order_checks, order_drawn_checks),
    PART("partition", "pp_warmup_partition", grade_partition, partition_checks, NULL),
    PART("chunk-orders", "pp_warmup_chunk_order", grade_chunk_orders, chunk_order_checks, chunk_order_drawn_checks),
    PART("idle", "pp_warmup_idle_ranks", grade_idle, idle_checks, NULL),
    PART("uneven", "pp_warmup_uneven_bubble", grade_uneven, uneven_checks, NULL),
    PART("chunks", "pp_warmup_best_chunks", grade_chunks, chunks_checks, NULL),
    PART("traffic", "pp_warmup_traffic", grade_traffic, traffic_checks, NULL),
    PART("memory", "pp_warmup_checkpoint_bytes", grade_memory, memory_checks, NULL),
    PART("grid", "pp_warmup_grid_gpus", grade_grid, grid_checks, NULL),
};

/* The symbol of each pp_warmup_fn (the X list runs in the enum's order, from PP_WARMUP_BUBBLE = 1): a part that
 * calls several functions names the one that is missing. */
#define PP_WU_SYMBOL(field, symbol, type) #symbol,
static const char *const wu_symbols[] = {NULL, PP_WARMUP_FUNCTIONS(PP_WU_SYMBOL)};
#undef PP_WU_SYMBOL
_Static_assert(sizeof wu_symbols / sizeof *wu_symbols == PP_WARMUP_GRID_LINK + 1, "one symbol per pp_warmup_fn");

int pp__warmup_nparts(void) { return (int)(sizeof parts / sizeof *parts); }

const char *pp__warmup_part(int i) { return i >= 0 && i < pp__warmup_nparts() ? parts[i].part : NULL; }

/* "bubble, peaks, ... or traffic" */
static const char *part_list(void) {
    static char buf[256];
    size_t n = 0;
    for (int i = 0; i < pp__warmup_nparts() && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i == 0 ? "" : i + 1 == pp__warmup_nparts() ? " or " : ", ",
                              parts[i].part);
    return buf;
}

static const warmup_part *part_named(const char *name) {
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (!strcmp(name, parts[i].part)) return &parts[i];
    return NULL;
}

/* The checks of p as cfg grades them: their names on drawn cases where those differ. */
static const part_check *checks_of(const warmup_part *p, const pp_test_config *cfg) {
    return cfg->drawn && p->drawn_checks ? p->drawn_checks : p->checks;
}

/* Runs part p's calls through io into out, on the cases cfg asks for. Returns 0, or -1 when io failed (io->st,
 * io->err say why). */
static int grade_part(const warmup_part *p, const pp_test_config *cfg, wu_io *io, pp_test_result *out) {
    if (setjmp(io->failed)) return -1;
    if (setjmp(io->missing)) {
        /* the first call found the function missing: every check of the part says so */
        const part_check *checks = checks_of(p, cfg);
        const char *symbol = (int)io->fn > 0 && (int)io->fn < NCASES(wu_symbols) ? wu_symbols[io->fn] : p->symbol;
        out->nchecks = 0;
        for (int i = 0; i < p->nchecks; i++)
            pp__check_add(out, checks[i].name, checks[i].points, 0, "00-warmup/warmup.c (in the graded folder) does not define "
                          "%s: keep the function's name and signature from the handout", symbol);
        return 0;
    }
    /* each half of the grading draws its own stream from cfg alone: the same cases in both */
    wu_draw draw;
    if (cfg->drawn) draw_init(&draw, cfg, p->part);
    p->grade(io, cfg->drawn ? &draw : NULL, out);
    return 0;
}

pp_status pp__warmup_record(const pp_test_config *cfg, const pp_sandbox *sb, const pp_warmup_fns *fns, pp_wire *rec,
                            char *err, size_t len) {
    const warmup_part *p = part_named(cfg->part);
    if (!p) {
        snprintf(err, len, "unknown warm-up part '%s': use %s", cfg->part, part_list());
        return PP_ERR_CONFIG;
    }
    wu_io *io = pp__xcalloc(1, sizeof *io);
    pp_test_result *discard = pp__xcalloc(1, sizeof *discard);
    io->rec = rec;
    io->st = PP_OK;
    pp_status st = PP_OK;
    if (fns) {
        io->fns = fns;
        if (grade_part(p, cfg, io, discard)) st = io->st, snprintf(err, len, "%s", io->err);
        free(discard);
        free(io);
        return st;
    }
    pp_driver *d = pp__xcalloc(1, sizeof *d);
    pp_chan_facts f = {.mode = PP_CHAN_WARMUP};
    if (pp__driver_start(d, sb, &f, err, len)) {
        free(d), free(io), free(discard);
        return PP_ERR_SANDBOX;
    }
    io->d = d;
    const char *hint;
    if (!pp__driver_next(d)) {
        st = pp__driver_death(d, err, len, &hint);
    } else {
        pp_wire_in first;
        pp__wire_in_init(&first, d->req, d->req_len);
        unsigned op = pp__wire_get_u32(&first, 0, 0xffffffffu);
        if (op != PP_RPC_NEXT) {
            /* the warm-up has no step function: a reason is the driver's own, a sentence of this side's */
            char why[4 * PP_RPC_TEXT_MAX];
            const char *hint;
            st = PP_ERR_SANDBOX;
            if ((op == PP_RPC_SETUP_FAILED || op == PP_RPC_LOAD_FAILED) &&
                pp__server_stop_reason(op, &first, "the warm-up's", "", &st, &hint, why, sizeof why) == 0)
                snprintf(err, len, "%s", why);
            else
                snprintf(err, len, "the warm-up's driver did not start cleanly");
        }
    }
    if (st == PP_OK && grade_part(p, cfg, io, discard)) st = io->st, snprintf(err, len, "%s", io->err);
    if (st == PP_OK && d->pending) {
        pp_wire w;
        pp__wire_init_fixed(&w, d->chan->rep, PP_CHAN_MSG);
        pp__wire_u32(&w, PP_REPLY_EXIT);
        pp__driver_reply(d, w.len);
    }
    pp__driver_stop(d, st == PP_OK ? 1.0 : 0);
    free(d), free(io), free(discard);
    return st;
}

void pp__warmup_fail(const pp_test_config *cfg, pp_status st, const char *msg, pp_test_result *out) {
    const warmup_part *p = part_named(cfg->part);
    out->status = st;
    snprintf(out->error, sizeof out->error, "%s", msg);
    out->nchecks = 0;
    if (!p) {
        pp__check_add(out, "warm-up answers", 1, 0, "not graded: %s", pp__status_str(st));
    } else {
        /* every check of the part, so that the part keeps its full weight in the total */
        const part_check *checks = checks_of(p, cfg);
        for (int i = 0; i < p->nchecks; i++)
            pp__check_add(out, checks[i].name, checks[i].points, 0, "not graded: %s", pp__status_str(st));
    }
    out->score = out->max = 0;
    for (int i = 0; i < out->nchecks; i++) out->max += out->checks[i].max;
}

void pp__warmup_grade(const pp_test_config *cfg, const void *rec, size_t len, pp_test_result *out) {
    const warmup_part *p = part_named(cfg->part);
    out->cfg = *cfg;
    if (!out->name[0]) snprintf(out->name, sizeof out->name, "warmup %s", cfg->part);
    out->status = PP_OK;
    if (!p) {
        out->status = PP_ERR_CONFIG;
        snprintf(out->error, sizeof out->error,
                 "unknown warm-up part '%s': use %s in the config", cfg->part, part_list());
        pp__check_add(out, "warmup part", 1, 0, "%s", out->error);
    } else {
        wu_io *io = pp__xcalloc(1, sizeof *io);
        pp__wire_in_init(&io->in, rec, len);
        if (grade_part(p, cfg, io, out)) {
            const part_check *checks = checks_of(p, cfg);
            out->status = io->st;
            snprintf(out->error, sizeof out->error, "%s", io->err);
            out->nchecks = 0;
            for (int i = 0; i < p->nchecks; i++)
                pp__check_add(out, checks[i].name, checks[i].points, 0, "not graded: %s", io->err);
        }
        free(io);
    }
    /* the score is the checks', each worth 0 or its max: nothing else can move it */
    out->score = out->max = 0;
    for (int i = 0; i < out->nchecks; i++) {
        pp_check *c = &out->checks[i];
        c->points = c->passed ? c->max : 0;
        out->score += c->points, out->max += c->max;
    }
}
