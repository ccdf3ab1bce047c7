/* test_clock.c: the virtual clock on the reference solutions. The expected numbers are computed here, by
 * formulas and by a replay written independently of the grader's (grader/theory/replay.c), so neither the library
 * nor the grader grades itself. Also checks that every reference solution runs the canonical order exactly. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "impl_build.h"
#include "runtime.h"
#include "schedules.h"

static pp_step_fn solution(const char *lab) {
    char err[4096];
    pp_step_fn fn = (pp_step_fn)pp__impl_load("solutions", pp__lab_find(lab), err, sizeof err);
    cr_assert(fn, "%s", err);
    return fn;
}

static void run(const char *lab, int P, int M, int v, double lat, pp_run_result *res) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def(lab), c.P = P, c.M = M, c.v = v, c.comm_latency = lat;
    cr_assert_eq(pp__run(&c, solution(lab), res), PP_OK, "%s", res->error);
}

TestSuite(clock, .timeout = 60);

Test(clock, gpipe_bubble_is_exact) {
    static const struct { int M; double bubble; } cases[] = {{6, 1.0 / 3}, {24, 1.0 / 9}, {1, 3.0 / 4}};
    for (int i = 0; i < 3; i++) {
        pp_run_result res;
        run("gpipe", 4, cases[i].M, 1, 0, &res);
        cr_expect(fabs(res.bubble - cases[i].bubble) < 1e-12, "P=4 M=%d: bubble %.15f, expected %.15f", cases[i].M,
                  res.bubble, cases[i].bubble);
        for (int r = 0; r < 4; r++)
            cr_expect_eq(res.peak_stashes[r], cases[i].M, "M=%d rank %d: peak %d", cases[i].M, r, res.peak_stashes[r]);
        pp__result_free(&res);
    }
}

/* GPipe with one block per stage (F = 1, B = 2) and latency L per message, replayed with its own recurrences:
 * rank s runs F0..F(M-1) then B0..B(M-1); F(s,m) waits for F(s-1,m) + L, B(s,m) for B(s+1,m) + L. */
static double gpipe_replay(int P, int M, double L) {
    double F[16][64], B[16][64];
    for (int s = 0; s < P; s++)
        for (int m = 0; m < M; m++) {
            double t = m ? F[s][m - 1] : 0;
            if (s && F[s - 1][m] + L > t) t = F[s - 1][m] + L;
            F[s][m] = t + 1;
        }
    for (int s = P - 1; s >= 0; s--)
        for (int m = 0; m < M; m++) {
            double t = m ? B[s][m - 1] : F[s][M - 1];
            if (s < P - 1 && B[s + 1][m] + L > t) t = B[s + 1][m] + L;
            B[s][m] = t + 2;
        }
    double span = 0;
    for (int s = 0; s < P; s++) span = B[s][M - 1] > span ? B[s][M - 1] : span;
    return 1 - (3.0 * M * P) / (P * span);
}

Test(clock, comm_latency_raises_the_bubble_as_an_independent_replay_says) {
    double prev = -1;
    for (int i = 0; i < 4; i++) {
        double lat = 0.5 * i;
        pp_run_result res;
        run("gpipe", 4, 6, 1, lat, &res);
        double want = gpipe_replay(4, 6, lat);
        cr_expect(fabs(res.bubble - want) < 1e-12, "latency %.1f: bubble %.6f, replay %.6f", lat, res.bubble, want);
        cr_expect_gt(res.bubble, prev, "the bubble must rise with latency");
        prev = res.bubble;
        pp__result_free(&res);
    }
}

/* The same recurrences with a forward cost per stage (its blocks, plus the edge cost on the first and last):
 * what an uneven layout must give. */
static double gpipe_replay_costs(int P, int M, const double *f) {
    double F[16][64], B[16][64], busy = 0;
    for (int s = 0; s < P; s++) {
        busy += 3 * M * f[s];
        for (int m = 0; m < M; m++) {
            double t = m ? F[s][m - 1] : 0;
            if (s && F[s - 1][m] > t) t = F[s - 1][m];
            F[s][m] = t + f[s];
        }
    }
    for (int s = P - 1; s >= 0; s--)
        for (int m = 0; m < M; m++) {
            double t = m ? B[s][m - 1] : F[s][M - 1];
            if (s < P - 1 && B[s + 1][m] > t) t = B[s + 1][m];
            B[s][m] = t + 2 * f[s];
        }
    double span = 0;
    for (int s = 0; s < P; s++) span = B[s][M - 1] > span ? B[s][M - 1] : span;
    return 1 - busy / (P * span);
}

/* Llama 3's layout (the first and last stage one block fewer, for the embedding and the head) balances the
 * stages when those cost a block each: GPipe's even bubble again. Without the edge cost, or with blocks spread
 * unevenly, the slowest stage sets the pace, and the clock follows the per-stage replay. */
Test(clock, uneven_layouts_cost_what_their_blocks_cost) {
    static const struct {
        const char *layout;
        int layers;
        double edge, f[4];
    } cases[] = {{"first:3,last:3", 14, 1, {4, 4, 4, 4}},
                 {"first:3,last:3", 14, 0, {3, 4, 4, 3}},
                 {"1,2,3,4", 0, 0, {1, 2, 3, 4}},
                 {NULL, 10, 0, {3, 3, 2, 2}},
                 {"last:1", 9, 0.5, {3.5, 3, 2, 1.5}}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_run_config c;
        pp__config_defaults(&c);
        c.schedule = pp__schedule_def("gpipe"), c.P = 4, c.M = 6, c.layers = cases[i].layers, c.layout = cases[i].layout;
        c.edge_cost = cases[i].edge;
        pp_run_result res;
        cr_assert_eq(pp__run(&c, solution("gpipe"), &res), PP_OK, "%s", res.error);
        double want = gpipe_replay_costs(4, 6, cases[i].f);
        cr_expect(fabs(res.bubble - want) < 1e-12, "layout %s layers %d edge %g: bubble %.6f, replay %.6f",
                  cases[i].layout ? cases[i].layout : "(even)", cases[i].layers, cases[i].edge, res.bubble, want);
        pp__result_free(&res);
    }
    double even[4] = {1, 1, 1, 1};
    cr_expect(fabs(gpipe_replay_costs(4, 6, even) - 3.0 / 9) < 1e-12, "the replay itself: GPipe's (P-1)/(M+P-1)");
}

/* Every layout places each block of the model once, on stages of at least one block each; the stages it does
 * not name differ by at most one block, the earlier ones taking the extra. */
Test(clock, layouts_place_every_block_once) {
    static const char *const layouts[] = {NULL, "first:2", "last:3", "first:1,last:5", "last:2,first:2"};
    for (int P = 1; P <= 6; P++)
        for (int v = 1; v <= 3; v++)
            for (int L = 0; L <= 40; L++)
                for (size_t k = 0; k < sizeof layouts / sizeof *layouts; k++) {
                    pp_run_config c;
                    pp__config_defaults(&c);
                    c.schedule = pp__schedule_def(v > 1 ? "interleaved" : "gpipe"), c.P = P, c.M = P, c.v = v, c.layers = L;
                    c.layout = layouts[k];
                    int b[64], S = P * v, sum = 0, lo = 1 << 30, hi = 0, prev = 1 << 30, ok = 1;
                    char err[256];
                    if (pp__config_layout(&c, b, err, sizeof err)) {
                        cr_expect(strstr(err, "--layers") || strstr(err, "--layout"), "P=%d v=%d L=%d %s: %s", P, v,
                                  L, layouts[k] ? layouts[k] : "", err);
                        continue;
                    }
                    int named_first = layouts[k] && strstr(layouts[k], "first:"), named_last = layouts[k] &&
                                                                                             strstr(layouts[k], "last:");
                    for (int s = 0; s < S; s++) {
                        sum += b[s];
                        ok &= b[s] >= 1;
                        if ((s == 0 && named_first) || (s == S - 1 && named_last)) continue;
                        lo = b[s] < lo ? b[s] : lo, hi = b[s] > hi ? b[s] : hi;
                        ok &= b[s] <= prev;
                        prev = b[s];
                    }
                    cr_expect(ok && (hi == 0 || hi - lo <= 1), "P=%d v=%d L=%d %s: uneven or empty stages", P, v, L,
                              layouts[k] ? layouts[k] : "");
                    cr_expect_eq(sum, pp__config_layers(&c), "P=%d v=%d L=%d: %d blocks placed", P, v, L, sum);
                    if (L) cr_expect_eq(sum, L, "P=%d v=%d L=%d %s: %d blocks placed", P, v, L,
                                        layouts[k] ? layouts[k] : "", sum);
                    for (int s = 0; s < S; s++) {
                        cr_expect_eq(pp__config_blocks(&c, s), b[s]);
                        cr_expect_eq(pp__config_first_block(&c, s) + b[s],
                                     s + 1 < S ? pp__config_first_block(&c, s + 1) : sum);
                    }
                }
}

Test(clock, where_recv_is_called_does_not_move_the_clock) {
    /* the eager and rendezvous modes block at different places; the virtual clock must not care */
    pp_run_config c;
    pp_run_result a, b;
    pp__config_defaults(&c);
    c.schedule = pp__schedule_def("1f1b"), c.P = 4, c.M = 8, c.comm_latency = 0.25;
    cr_assert_eq(pp__run(&c, solution("1f1b"), &a), PP_OK);
    c.eager = 1;
    cr_assert_eq(pp__run(&c, solution("1f1b"), &b), PP_OK);
    cr_expect_eq(a.bubble, b.bubble);
    for (int r = 0; r < 4; r++) {
        cr_assert_eq(a.traces[r].n, b.traces[r].n);
        for (int i = 0; i < a.traces[r].n; i++) cr_expect_eq(a.traces[r].ev[i].vstart, b.traces[r].ev[i].vstart);
    }
    pp__result_free(&a), pp__result_free(&b);
}

/* The canonical order of rank r, from the formulas of ARCHITECTURE.md, as "F0.0 B0.0 ..." (micro-batch.chunk). */
static void canonical(const char *lab, int P, int M, int v, int r, char *out, size_t len) {
    int n = 0;
    out[0] = 0;
#define OP(k, mb, ch) n += snprintf(out + n, len - (size_t)n, "%c%d.%d ", k, mb, ch)
    if (!strcmp(lab, "gpipe") || !strcmp(lab, "naive")) {
        for (int m = 0; m < M; m++) OP('F', m, 0);
        for (int m = 0; m < M; m++) OP('B', m, 0);
    } else if (!strcmp(lab, "1f1b")) {
        int w = P - r - 1 < M ? P - r - 1 : M;
        for (int m = 0; m < w; m++) OP('F', m, 0);
        for (int i = 0; i < M - w; i++) OP('F', w + i, 0), OP('B', i, 0);
        for (int i = M - w; i < M; i++) OP('B', i, 0);
    } else {
        int total = v * M, w = 2 * (P - r - 1) + (v - 1) * P;
        if (w > total) w = total;
#define FWD(k) OP('F', ((k) / (P * v)) * P + (k) % P, ((k) % (P * v)) / P)
#define BWD(k) OP('B', ((k) / (P * v)) * P + (k) % P, v - 1 - ((k) % (P * v)) / P)
        for (int k = 0; k < w; k++) FWD(k);
        for (int i = 0; i < total - w; i++) { FWD(w + i); BWD(i); }
        for (int i = total - w; i < total; i++) BWD(i);
    }
}

Test(clock, reference_solutions_run_the_canonical_orders) {
    static const struct { const char *lab; int P, M, v; } cases[] = {
        {"naive", 4, 1, 1}, {"gpipe", 4, 6, 1}, {"1f1b", 4, 8, 1}, {"1f1b", 4, 2, 1}, {"1f1b", 3, 7, 1},
        {"interleaved", 4, 8, 2}, {"interleaved", 2, 4, 3}, {"interleaved", 4, 4, 2}};
    static char want[8192], got[8192];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_run_result res;
        run(cases[i].lab, cases[i].P, cases[i].M, cases[i].v, 0, &res);
        for (int r = 0; r < cases[i].P; r++) {
            canonical(cases[i].lab, cases[i].P, cases[i].M, cases[i].v, r, want, sizeof want);
            int n = 0;
            got[0] = 0;
            for (int e = 0; e < res.traces[r].n; e++) {
                const pp_event *ev = &res.traces[r].ev[e];
                if (ev->op == PP_OP_F || ev->op == PP_OP_B)
                    n += snprintf(got + n, sizeof got - (size_t)n, "%c%d.%d ", ev->op == PP_OP_F ? 'F' : 'B', ev->mb, ev->chunk);
            }
            cr_expect_str_eq(got, want, "%s P=%d M=%d v=%d rank %d", cases[i].lab, cases[i].P, cases[i].M, cases[i].v, r);
        }
        pp__result_free(&res);
    }
}

Test(clock, interleaved_messages_and_peaks) {
    pp_run_result res;
    run("interleaved", 4, 8, 2, 0, &res);
    int sent = 0;
    for (int r = 0; r < 4; r++) sent += res.sent_msgs[r];
    cr_expect_eq(sent, 2 * 8 * (2 * 4 - 1), "2M(vP-1) boundary messages, got %d", sent);
    int peaks[] = {11, 9, 7, 5};
    for (int r = 0; r < 4; r++) cr_expect_eq(res.peak_stashes[r], peaks[r], "rank %d", r);
    cr_expect(fabs(res.bubble - 3.0 / 19) < 1e-12, "bubble %.6f", res.bubble);
    pp__result_free(&res);
    run("1f1b", 4, 8, 1, 0, &res);
    sent = 0;
    for (int r = 0; r < 4; r++) sent += res.sent_msgs[r];
    cr_expect_eq(sent, 2 * 8 * 3, "2M(P-1) without interleaving, got %d", sent);
    pp__result_free(&res);
}
