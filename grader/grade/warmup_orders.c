/* warmup_orders.c: the warm-up parts that ask each rank's order, of whole stages and of chunks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedules.h"
#include "warmup_parts.h"

/* ---- orders -------------------------------------------------------------------------------------------- */

#define ORDER_CAP 4096
#define ORDER_GUARD 64

/* The orders checked; the fourth check asks a rank of the first again, into too few bytes (rank 0, 10 bytes). */
static const pp_warmup_case order_cases[] = {{"gpipe", 4, 8, 1}, {"1f1b", 4, 8, 1}, {"1f1b", 4, 2, 1}};

/* Drawn orders: GPipe with M >= 2 (so that its list never fits the short buffer's few bytes), 1F1B with M >= P
 * and with M < P (a warm-up cut short), P up to 8. */
static void draw_orders(pp_warmup_draw *d, pp_warmup_case out[3]) {
    for (int k = 0; k < 3; k++)
        do {
            /* one draw per statement: the order of the draws is the cases, on every compiler */
            int P = pp__warmup_draw_int(d, k == 2 ? 3 : 2, 8);
            int M = k == 0 ? pp__warmup_draw_int(d, 2, 16) : k == 1 ? pp__warmup_draw_int(d, P, 3 * P) : pp__warmup_draw_int(d, 1, P - 1);
            out[k] = (pp_warmup_case){order_cases[k].schedule, P, M, 1};
        } while (pp__warmup_case_same(&out[k], &order_cases[k]));
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
static int check_orders(pp_warmup_io *io, const pp_warmup_draw *draw, const char *sched, int P, int M, int v, char *msg,
                        size_t msglen) {
    char where[64];
    if (draw && v) snprintf(where, sizeof where, "%s P=%d M=%d v=%d", sched, P, M, v);
    else snprintf(where, sizeof where, "%s P=%d M=%d", sched, P, M);
    static char buf[ORDER_CAP + ORDER_GUARD], canon[ORDER_CAP];
    int ok = 1;
    for (int r = 0; r < P && ok; r++) {
        snprintf(canon, sizeof canon, "%s", pp__warmup_io_key(io, "order %s %d %d %d %d", sched, P, M, v, r));
        int nwant = count_tokens(canon);
        memset(buf, 0x5a, sizeof buf);
        int ret = pp__warmup_ask_order(io, sched, P, M, v ? v : -1, r, buf, sizeof buf, ORDER_CAP);
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
static void order_verdict(pp_test_result *out, const pp_warmup_check *pc, const pp_warmup_draw *draw, int ok, const char *msg,
                          const char *hint, const char *drawn_hint) {
    if (draw && !ok && !strstr(msg, "HINT:"))
        pp__check_add(out, pc->name, pc->points, 0, "%s; HINT: %s", msg, hint ? hint : drawn_hint);
    else if (!draw && !ok && hint && strstr(msg, " op "))
        pp__check_add(out, pc->name, pc->points, 0, "%s; HINT: %s", msg, hint);
    else
        pp__check_add(out, pc->name, pc->points, ok, "%s", msg);
}

/* The bytes rank r's canonical list takes as tokens with single spaces and its NUL. */
static int order_bytes(pp_warmup_io *io, const char *sched, int P, int M, int r) {
    return (int)strlen(pp__warmup_io_key(io, "order %s %d %d 0 %d", sched, P, M, r)) + 1;
}

void pp__warmup_grade_orders(pp_warmup_io *io, pp_warmup_draw *draw,
                             const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    (void)nchecks; /* the checks are taken by their place in the table */
    pp_warmup_case drawn[3];
    const pp_warmup_case *cases = order_cases;
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
    const pp_warmup_case *g = &cases[0];
    int rank = draw ? pp__warmup_draw_int(draw, 0, g->P - 1) : 0, need = order_bytes(io, g->schedule, g->P, g->M, rank);
    int cap = draw ? pp__warmup_draw_int(draw, 3, need - 1 < 40 ? need - 1 : 40) : 10;
    static char small[40 + ORDER_GUARD];
    memset(small, 0x5a, sizeof small);
    int ret = pp__warmup_ask_order(io, g->schedule, g->P, g->M, -1, rank, small, (size_t)cap + ORDER_GUARD, cap);
    int clean = 1;
    for (int i = cap; i < cap + ORDER_GUARD; i++) clean &= small[i] == 0x5a;
    char what[80];
    snprintf(what, sizeof what, "gpipe P=%d M=%d rank %d with cap=%d", g->P, g->M, rank, cap);
    const pp_warmup_check *pc = &checks[3];
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

static const pp_warmup_case chunk_order_cases[] = {{"interleaved", 4, 8, 2}, {"interleaved", 2, 4, 3},
                                                {"interleaved", 4, 4, 2}};

/* Drawn chunk orders, M a multiple of P as the handout promises: two chunks over two to four rounds of P
 * micro-batches; three or four chunks on two or three ranks; M = P, where the warm-up is cut to the vM
 * chunk-forwards there are. */
static void draw_chunk_orders(pp_warmup_draw *d, pp_warmup_case out[3]) {
    for (int k = 0; k < 3; k++)
        do {
            int P = k == 0 ? pp__warmup_draw_int(d, 2, 6) : k == 1 ? pp__warmup_draw_int(d, 2, 3) : pp__warmup_draw_int(d, 3, 6);
            int v = k == 0 ? 2 : k == 1 ? pp__warmup_draw_int(d, 3, 4) : pp__warmup_draw_int(d, 2, 3);
            int M = k == 0 ? P * pp__warmup_draw_int(d, 2, 4) : k == 1 ? P * pp__warmup_draw_int(d, 1, 3) : P;
            out[k] = (pp_warmup_case){"interleaved", P, M, v};
        } while (pp__warmup_case_same(&out[k], &chunk_order_cases[k]));
}

void pp__warmup_grade_chunk_orders(pp_warmup_io *io, pp_warmup_draw *draw,
                                   const pp_warmup_check *checks, int nchecks, pp_test_result *out) {
    pp_warmup_case drawn[3];
    const pp_warmup_case *cases = chunk_order_cases;
    if (draw) draw_chunk_orders(draw, drawn), cases = drawn;
    static const char *hint = "the k-th chunk-forward of a rank walks P micro-batches through one chunk before the "
                              "next chunk, and its warm-up lasts until the first gradient of the last chunk can come "
                              "back (docs/04-interleaved.md)";
    for (int k = 0; k < nchecks; k++) {
        char msg[400];
        int ok = check_orders(io, draw, "interleaved", cases[k].P, cases[k].M, cases[k].v, msg, sizeof msg);
        order_verdict(out, &checks[k], draw, ok, msg, hint, hint);
    }
}
