/* test_comm.c: the threads transport seen through pp.h: matching on (source, destination, tag) in FIFO order,
 * rendezvous versus eager sends, groups, and the failures a student meets (deadlock cycles and chains with
 * near-miss tags, shape mismatches, messages never received), each checked on its message. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "pp.h"
#include "runtime.h"
#include "schedules.h"
#include "tag.h"
#include "tensor.h"
#include "transport.h"

/* Each Criterion test runs in its own process, so step functions and the test body share plain globals. */
static _Atomic int g_fail;           /* a step function saw a wrong value */
static double g_t_send_returned;     /* wall time pp_send returned on the sender */
static double g_t_recv_posted;       /* wall time the receiver was about to post */
static double g_rtt_us;              /* ping-pong round trip */

static void config(pp_run_config *c, int P, int eager) {
    pp__config_defaults(c);
    c->P = P;
    c->M = 1;
    c->eager = eager;
    c->steps = 1;
}

/* An activation-shaped tensor (what pp_recv returns) filled with value. */
static pp_tensor *act(pp_rank *r, float value) {
    const pp_run_config *c = r->cfg;
    int rows = c->mb_size * c->seq, cols = c->hidden;
    pp_tensor *t = pp__tensor_new(r->be, &r->arena, rows, cols, PP_F32, r->id);
    size_t n = (size_t)rows * (size_t)cols;
    float *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) h[i] = value;
    pp__tensor_from_host(t, h);
    free(h);
    return t;
}

/* The value every element of t holds, or NAN when they differ (a torn or misplaced copy). */
static float value_of(const pp_tensor *t) {
    size_t n = (size_t)t->rows * (size_t)t->cols;
    float *h = malloc(n * sizeof *h);
    pp__tensor_to_host(t, h);
    float v = h[0];
    for (size_t i = 1; i < n; i++)
        if (h[i] != v) v = NAN;
    free(h);
    return v;
}

static void expect_value(const pp_tensor *t, float want) {
    if (value_of(t) != want) atomic_store(&g_fail, 1);
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static pp_status run(const pp_run_config *c, pp_step_fn fn, pp_run_result *res) {
    atomic_store(&g_fail, 0);
    memset(res, 0, sizeof *res);
    return pp__run(c, fn, res);
}

#define ASSERT_OK(res) cr_assert_eq((res).status, PP_OK, "run failed: %s", (res).error)
#define ASSERT_HAS(res, text)                                                                                  \
    cr_assert(strstr((res).error, (text)) != NULL, "expected \"%s\" in the error, got:\n%s", (text), (res).error)

/* Raw tags: these tests exercise the transport on its own, including exchanges no pipeline makes (both ranks
 * sending forward, rings). Tags made by pp_tag() are also checked against the pipeline's topology (lib/transport/comm.c);
 * the last tests below cover that. */
#define T(dir, mb, vs) ((dir) * 100000 + (mb) * 100 + (vs))

/* ---- matching ---------------------------------------------------------------------------------------- */

/* Two messages with different tags, received in the opposite order: tags pick the message, not arrival. */
static void step_tags_reversed(pp_rank *r) {
    if (r->id == 0) {
        pp_request *q[2];
        q[0] = pp_isend(r, act(r, 1.0f), 1, T(PP_FWD, 0, 1));
        q[1] = pp_isend(r, act(r, 2.0f), 1, T(PP_FWD, 1, 1));
        pp_waitall(r, q, 2);
    } else {
        expect_value(pp_recv(r, 0, T(PP_FWD, 1, 1)), 2.0f);
        expect_value(pp_recv(r, 0, T(PP_FWD, 0, 1)), 1.0f);
    }
}

Test(comm, tags_select_the_message, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    for (int eager = 0; eager <= 1; eager++) {
        config(&c, 2, eager);
        run(&c, step_tags_reversed, &res);
        ASSERT_OK(res);
        cr_assert_eq(g_fail, 0, "a message landed in the receive of the other tag (eager=%d)", eager);
        pp__result_free(&res);
    }
}

/* Receives posted first (tag A, then B), sends arriving in the other order (B, then A). */
static void step_out_of_order(pp_rank *r) {
    if (r->id == 0) {
        sleep_ms(20); /* let both receives be posted first */
        pp_send(r, act(r, 2.0f), 1, T(PP_FWD, 1, 1));
        pp_send(r, act(r, 1.0f), 1, T(PP_FWD, 0, 1));
    } else {
        pp_tensor *a, *b;
        pp_request *q[2];
        q[0] = pp_irecv(r, 0, T(PP_FWD, 0, 1), &a);
        q[1] = pp_irecv(r, 0, T(PP_FWD, 1, 1), &b);
        pp_waitall(r, q, 2);
        expect_value(a, 1.0f);
        expect_value(b, 2.0f);
    }
}

Test(comm, out_of_order_arrival, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 0);
    run(&c, step_out_of_order, &res);
    ASSERT_OK(res);
    cr_assert_eq(g_fail, 0, "out-of-order sends were delivered into the wrong receives");
    pp__result_free(&res);
}

/* Three messages with one tag arrive in the order they were sent. */
static void step_fifo(pp_rank *r) {
    int tag = T(PP_BWD, 2, 0);
    if (r->id == 0) {
        pp_request *q[3];
        for (int i = 0; i < 3; i++) q[i] = pp_isend(r, act(r, (float)(10 + i)), 1, tag);
        pp_waitall(r, q, 3);
    } else {
        for (int i = 0; i < 3; i++) expect_value(pp_recv(r, 0, tag), (float)(10 + i));
    }
}

Test(comm, fifo_for_equal_tags, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    for (int eager = 0; eager <= 1; eager++) {
        config(&c, 2, eager);
        run(&c, step_fifo, &res);
        ASSERT_OK(res);
        cr_assert_eq(g_fail, 0, "messages of one tag overtook each other (eager=%d)", eager);
        pp__result_free(&res);
    }
}

/* ---- rendezvous and eager ---------------------------------------------------------------------------- */

static void step_send_then_late_recv(pp_rank *r) {
    int tag = T(PP_FWD, 0, 1);
    if (r->id == 0) {
        pp_send(r, act(r, 5.0f), 1, tag);
        g_t_send_returned = pp__now();
    } else {
        sleep_ms(50);
        g_t_recv_posted = pp__now();
        expect_value(pp_recv(r, 0, tag), 5.0f);
    }
}

Test(comm, rendezvous_send_waits_for_the_receive, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 0);
    run(&c, step_send_then_late_recv, &res);
    ASSERT_OK(res);
    cr_assert_eq(g_fail, 0);
    cr_assert_geq(g_t_send_returned, g_t_recv_posted,
                  "rendezvous pp_send returned %.1f ms before the receive was posted",
                  1e3 * (g_t_recv_posted - g_t_send_returned));
    pp__result_free(&res);
}

Test(comm, eager_send_returns_at_once, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 1);
    run(&c, step_send_then_late_recv, &res);
    ASSERT_OK(res);
    cr_assert_eq(g_fail, 0, "the eager message arrived changed");
    cr_assert_lt(g_t_send_returned, g_t_recv_posted, "eager pp_send waited %.1f ms for the receive",
                 1e3 * (g_t_send_returned - g_t_recv_posted));
    pp__result_free(&res);
}

/* The eager transport copies at send time: overwriting the tensor afterwards must not change the message. */
static void step_eager_copy(pp_rank *r) {
    if (r->id == 0) {
        pp_tensor *t = act(r, 3.0f);
        pp_send(r, t, 1, T(PP_FWD, 0, 1));
        float *h = calloc((size_t)t->rows * (size_t)t->cols, sizeof *h);
        pp__tensor_from_host(t, h);
        free(h);
    } else {
        sleep_ms(20);
        expect_value(pp_recv(r, 0, T(PP_FWD, 0, 1)), 3.0f);
    }
}

Test(comm, eager_send_copies_the_tensor, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 1);
    run(&c, step_eager_copy, &res);
    ASSERT_OK(res);
    cr_assert_eq(g_fail, 0, "changing a tensor after an eager pp_send changed the message");
    pp__result_free(&res);
}

/* ---- deadlocks --------------------------------------------------------------------------------------- */

/* Both neighbours send first: a deadlock under rendezvous (as with NCCL), fine in eager mode. */
static void step_both_send_first(pp_rank *r) {
    int peer = 1 - r->id;
    pp_send(r, act(r, (float)r->id), peer, T(PP_FWD, 0, peer));
    expect_value(pp_recv(r, peer, T(PP_FWD, 0, r->id)), (float)peer);
}

Test(comm, deadlock_cycle_reported, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 0);
    double t0 = pp__now();
    run(&c, step_both_send_first, &res);
    double took = pp__now() - t0;
    cr_assert_eq(res.status, PP_ERR_DEADLOCK, "expected a deadlock, got status %d: %s", res.status, res.error);
    ASSERT_HAS(res, "deadlock: every rank is blocked and no posted operation can match");
    ASSERT_HAS(res, "rank 0 blocked in pp_send(dst=1");
    ASSERT_HAS(res, "rank 1 blocked in pp_send(dst=0");
    ASSERT_HAS(res, "cycle: rank 0 -> rank 1 -> rank 0");
    ASSERT_HAS(res, "HINT: two neighbours both blocked in a send");
    cr_assert(strstr(res.error, "near miss") == NULL, "no near miss expected:\n%s", res.error);
    cr_assert_lt(took, 1.0, "the deadlock took %.2f s to be reported", took);
    pp__result_free(&res);
}

Test(comm, same_cycle_completes_in_eager_mode, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 1);
    run(&c, step_both_send_first, &res);
    ASSERT_OK(res);
    cr_assert_eq(g_fail, 0);
    pp__result_free(&res);
}

/* The same exchange posted as a group (as NCCL's group calls) or as isend/irecv never deadlocks. */
static void step_grouped(pp_rank *r) {
    int peer = 1 - r->id;
    pp_group_start(r);
    pp_send(r, act(r, (float)r->id), peer, T(PP_FWD, 0, peer));
    pp_tensor *x = pp_recv(r, peer, T(PP_FWD, 0, r->id));
    pp_group_end(r);
    expect_value(x, (float)peer);
}

static void step_nonblocking(pp_rank *r) {
    int peer = 1 - r->id;
    pp_tensor *x;
    pp_request *q[2];
    q[0] = pp_isend(r, act(r, (float)r->id), peer, T(PP_FWD, 0, peer));
    q[1] = pp_irecv(r, peer, T(PP_FWD, 0, r->id), &x);
    pp_wait(r, q[1]);
    pp_wait(r, q[0]);
    expect_value(x, (float)peer);
}

Test(comm, groups_and_nonblocking_avoid_the_deadlock, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 0);
    run(&c, step_grouped, &res);
    ASSERT_OK(res);
    cr_assert_eq(g_fail, 0, "grouped exchange delivered wrong data");
    pp__result_free(&res);
    run(&c, step_nonblocking, &res);
    ASSERT_OK(res);
    cr_assert_eq(g_fail, 0, "isend/irecv exchange delivered wrong data");
    pp__result_free(&res);
}

/* Rank 0 waits for a message rank 1 never sends: a chain that ends at an exited rank. */
static void step_missing_send(pp_rank *r) {
    if (r->id == 0) pp_recv(r, 1, T(PP_BWD, 3, 0));
}

Test(comm, deadlock_chain_to_exited_rank, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 0);
    run(&c, step_missing_send, &res);
    cr_assert_eq(res.status, PP_ERR_DEADLOCK, "expected a deadlock, got status %d: %s", res.status, res.error);
    ASSERT_HAS(res, "rank 0 blocked in pp_recv(src=1");
    ASSERT_HAS(res, "chain: rank 0 -> rank 1 (exited: its step function returned without the matching pp_send");
    ASSERT_HAS(res, "HINT: rank 1 returned without the matching pp_send");
    pp__result_free(&res);
}

/* A 4-rank chain: 0 waits on 1, 1 on 2, 2 on 3, and 3 returns. */
static void step_long_chain(pp_rank *r) {
    if (r->id < 3) pp_recv(r, r->id + 1, T(PP_BWD, 0, r->id));
    else sleep_ms(20);
}

Test(comm, deadlock_long_chain, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 4, 0);
    run(&c, step_long_chain, &res);
    cr_assert_eq(res.status, PP_ERR_DEADLOCK, "expected a deadlock, got status %d: %s", res.status, res.error);
    ASSERT_HAS(res, "chain: rank 0 -> rank 1 -> rank 2 -> rank 3 (exited");
    pp__result_free(&res);
}

/* Sender and receiver disagree on the tag: both block, and the report names the two ops side by side. */
static void step_wrong_tag(pp_rank *r) {
    if (r->id == 0) pp_send(r, act(r, 1.0f), 1, T(PP_FWD, 1, 1));
    else pp_recv(r, 0, T(PP_BWD, 1, 0));
}

Test(comm, deadlock_reports_near_miss, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 0);
    run(&c, step_wrong_tag, &res);
    cr_assert_eq(res.status, PP_ERR_DEADLOCK, "expected a deadlock, got status %d: %s", res.status, res.error);
    char want[256], ts[32], tr[32];
    snprintf(want, sizeof want, "near miss: rank 1 posted pp_recv(src=0, tag %s) but rank 0 posted pp_send(dst=1, "
             "tag %s)", pp__tag_describe(T(PP_BWD, 1, 0), tr, sizeof tr),
             pp__tag_describe(T(PP_FWD, 1, 1), ts, sizeof ts));
    ASSERT_HAS(res, want);
    ASSERT_HAS(res, "HINT:");
    pp__result_free(&res);
}

/* A forward and a backward message are never the same message: no near miss pairs them, and the hint does not
 * blame the tags. Rank 1 sends the activation of virtual stage 1 forward to stage 2 (rank 0, chunk 1) while rank
 * 0 waits for stage 1's gradient: both block. */
static void step_fwd_vs_bwd(pp_rank *r) {
    if (r->id == 1) pp_send(r, act(r, 1.0f), 0, pp_tag(PP_FWD, 0, 2));
    else pp_recv(r, 1, pp_tag(PP_BWD, 0, 0));
}

/* The same two ranks, both with micro-batch tags of one direction that disagree on the micro-batch: that is a
 * near miss, and the hint names the tags. */
static void step_fwd_wrong_mb(pp_rank *r) {
    if (r->id == 0) pp_send(r, act(r, 1.0f), 1, pp_tag(PP_FWD, 1, 1));
    else pp_recv(r, 0, pp_tag(PP_FWD, 0, 1));
}

Test(comm, near_misses_never_pair_directions, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 0);
    c.v = 2, c.M = 2, c.schedule = pp__schedule_def("interleaved");
    run(&c, step_fwd_vs_bwd, &res);
    cr_assert_eq(res.status, PP_ERR_DEADLOCK, "expected a deadlock, got status %d: %s", res.status, res.error);
    cr_expect(!strstr(res.error, "near miss"), "a forward send and a backward receive are no near miss: %s", res.error);
    cr_expect(!strstr(res.error, "disagree on the tag"), "the tags do not disagree: %s", res.error);
    pp__result_free(&res);
    config(&c, 2, 0);
    c.M = 2;
    run(&c, step_fwd_wrong_mb, &res);
    cr_assert_eq(res.status, PP_ERR_DEADLOCK, "expected a deadlock, got status %d: %s", res.status, res.error);
    ASSERT_HAS(res, "near miss: rank 1 posted pp_recv(src=0, tag F mb0 vs1) but rank 0 posted pp_send(dst=1, tag F mb1 vs1)");
    ASSERT_HAS(res, "disagree on the tag");
    pp__result_free(&res);
}

/* Three ranks each send to the next before receiving from the previous: a ring that deadlocks. */
static void step_ring(pp_rank *r) {
    int P = pp_rank_stages(r), next = (r->id + 1) % P, prev = (r->id + P - 1) % P;
    pp_send(r, act(r, (float)r->id), next, T(PP_FWD, 0, next));
    expect_value(pp_recv(r, prev, T(PP_FWD, 0, r->id)), (float)prev);
}

Test(comm, ring_of_three_deadlocks, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 3, 0);
    run(&c, step_ring, &res);
    cr_assert_eq(res.status, PP_ERR_DEADLOCK, "expected a deadlock, got status %d: %s", res.status, res.error);
    ASSERT_HAS(res, "cycle: rank 0 -> rank 1 -> rank 2 -> rank 0");
    ASSERT_HAS(res, "rank 2 blocked in pp_send(dst=0");
    pp__result_free(&res);
    config(&c, 3, 1);
    run(&c, step_ring, &res);
    ASSERT_OK(res);
    cr_assert_eq(g_fail, 0);
    pp__result_free(&res);
}

/* ---- other failures ---------------------------------------------------------------------------------- */

/* Rank 0 sends a 1x(hidden) row where rank 1 expects an activation, which rank 1 receives g_recv_delay_ms late. */
static int g_recv_delay_ms;

static void step_wrong_shape(pp_rank *r) {
    int tag = T(PP_FWD, 2, 1);
    if (r->id == 0) {
        pp_tensor *t = pp__tensor_new(r->be, &r->arena, 1, r->cfg->hidden, PP_F32, r->id);
        pp_send(r, t, 1, tag);
    } else {
        if (g_recv_delay_ms) sleep_ms(g_recv_delay_ms);
        pp_recv(r, 0, tag);
    }
}

/* The mismatch's one line, whichever of the two posted first, from a run of P = 2 (eager or not). */
static void expect_shape_mismatch(int eager) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, eager);
    run(&c, step_wrong_shape, &res);
    cr_assert_eq(res.status, PP_ERR_SHAPE, "expected a shape mismatch, got status %d: %s", res.status, res.error);
    char want[256], tag[32];
    pp__tag_describe(T(PP_FWD, 2, 1), tag, sizeof tag);
    snprintf(want, sizeof want, "rank 0 pp_send(dst=1, tag %s) sent 1x%d f32 but rank 1 pp_recv(src=0, tag %s) "
             "expects %dx%d f32", tag, c.hidden, tag, c.mb_size * c.seq, c.hidden);
    ASSERT_HAS(res, want);
    pp__result_free(&res);
}

Test(comm, shape_mismatch_names_both_sides, .timeout = 10) { expect_shape_mismatch(0); }

/* An eager send posted well before the receive: the mismatch is found against the transport's own copy, which
 * it frees (make asan holds the order: the copy was once read after its free, which fuzz_server found). */
Test(comm, eager_shape_mismatch_names_both_sides, .timeout = 10) {
    g_recv_delay_ms = 30;
    expect_shape_mismatch(1);
}

/* An eager send nobody receives completes on the sender's side, and is reported when the step ends. */
static void step_unreceived(pp_rank *r) {
    if (r->id == 0) pp_send(r, act(r, 1.0f), 1, T(PP_FWD, 3, 1));
}

Test(comm, unconsumed_message_reported, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 1);
    run(&c, step_unreceived, &res);
    cr_assert_eq(res.status, PP_ERR_UNCONSUMED, "expected an unconsumed message, got status %d: %s", res.status,
                 res.error);
    char want[256], tag[32];
    snprintf(want, sizeof want, "message never received: rank 0 pp_send(dst=1, tag %s), %dx%d f32",
             pp__tag_describe(T(PP_FWD, 3, 1), tag, sizeof tag), c.mb_size * c.seq, c.hidden);
    ASSERT_HAS(res, want);
    pp__result_free(&res);
}

/* A GPipe-shaped pipeline with blocking calls in a deadlock-free order: exact detection must never fire on it,
 * however the threads interleave. */
static void step_pipeline(pp_rank *r) {
    int P = pp_rank_stages(r), M = pp_rank_microbatches(r), id = r->id;
    for (int mb = 0; mb < M; mb++) {
        if (id > 0) expect_value(pp_recv(r, id - 1, T(PP_FWD, mb, id)), (float)(100 * mb + id - 1));
        if (id < P - 1) pp_send(r, act(r, (float)(100 * mb + id)), id + 1, T(PP_FWD, mb, id + 1));
    }
    for (int mb = 0; mb < M; mb++) {
        if (id < P - 1) expect_value(pp_recv(r, id + 1, T(PP_BWD, mb, id)), (float)(-100 * mb - id - 1));
        if (id > 0) pp_send(r, act(r, (float)(-100 * mb - id)), id - 1, T(PP_BWD, mb, id - 1));
    }
}

Test(comm, no_false_deadlock_in_a_pipeline, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    for (int rep = 0; rep < 20; rep++) {
        config(&c, 4, 0);
        c.M = 8;
        c.steps = 2;
        c.mb_size = 1;
        c.seq = 2;
        c.hidden = 8;
        c.vocab = 8;
        run(&c, step_pipeline, &res);
        ASSERT_OK(res);
        cr_assert_eq(g_fail, 0, "pipeline messages delivered wrong data");
        pp__result_free(&res);
    }
}

/* ---- several steps, and speed ------------------------------------------------------------------------ */

/* Per-step state is reset: the same tags are reused in every step. */
Test(comm, steps_start_clean, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    for (int eager = 0; eager <= 1; eager++) {
        config(&c, 2, eager);
        c.steps = 3;
        run(&c, step_grouped, &res);
        ASSERT_OK(res);
        cr_assert_eq(g_fail, 0);
        pp__result_free(&res);
    }
}

/* 1000 round trips of one small message each way; the mean round trip is logged. */
static void step_ping_pong(pp_rank *r) {
    const int n = 1000;
    pp_tensor *t = act(r, (float)r->id);
    double t0 = pp__now();
    for (int i = 0; i < n; i++) {
        if (r->id == 0) {
            pp_send(r, t, 1, T(PP_FWD, 0, 1));
            pp_recv(r, 1, T(PP_BWD, 0, 0));
        } else {
            pp_recv(r, 0, T(PP_FWD, 0, 1));
            pp_send(r, t, 0, T(PP_BWD, 0, 0));
        }
    }
    if (r->id == 0) g_rtt_us = 1e6 * (pp__now() - t0) / n;
}

Test(comm, ping_pong_latency, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 0);
    /* a small message, so that the round trip measures the transport rather than the copy */
    c.mb_size = 1;
    c.seq = 1;
    c.hidden = 8;
    c.vocab = 8;
    c.uncapped = 1; /* 2000 messages in one step, on purpose */
    run(&c, step_ping_pong, &res);
    ASSERT_OK(res);
    /* the figure is logged, not held to a bound: a loaded machine (a container on two busy cores) took 1.4 ms. A
     * lost wake-up hangs the waiter's untimed wait instead, which the test's timeout catches; bench/bench_comm.c
     * measures the round trip against a baseline. */
    cr_log_info("threads transport: ping-pong round trip %.1f us (mean of 1000)", g_rtt_us);
    cr_expect_gt(g_rtt_us, 0.0, "no round trip was timed");
    pp__result_free(&res);
}

/* ---- tags from pp_tag() name a boundary: wrong peers and missing stages are refused at the call ----------- */

static int g_case;

static void step_topology(pp_rank *r) {
    pp_tensor *t = act(r, 1.0f);
    if (r->id != 0) return;
    switch (g_case) {
    case 0: pp_send(r, t, 2, pp_tag(PP_FWD, 0, 1)); break;    /* stage 1 lives on rank 1 */
    case 1: pp_recv(r, 2, pp_tag(PP_BWD, 0, 0)); break;       /* stage 0's gradient comes from rank 1 */
    case 2: pp_send(r, t, 1, pp_tag(PP_FWD, 0, 3)); break;    /* only 3 virtual stages */
    default: pp_send(r, t, 1, pp_tag(PP_FWD, 7, 1)); break;   /* M = 2 */
    }
}

Test(comm, pp_tag_topology_checked_at_the_call, .timeout = 10) {
    static const char *want[] = {
        "pp_send(dst=2, tag F mb0 vs1): the activation of virtual stage 0 (rank 0) for virtual stage 1 goes to rank 1",
        "pp_recv(src=2, tag B mb0 vs0): virtual stage 0 (rank 0) gets this gradient from virtual stage 1 on rank 1",
        "tag F mb0 vs3 names a boundary the model does not have (virtual stages 0..2)",
        "tag F mb7 vs1 names micro-batch 7 (M = 2)"};
    for (g_case = 0; g_case < 4; g_case++) {
        pp_run_config c;
        pp_run_result res;
        config(&c, 3, 0);
        c.M = 2;
        run(&c, step_topology, &res);
        cr_expect_eq(res.status, PP_ERR_USAGE, "case %d: status %d: %s", g_case, res.status, res.error);
        cr_expect(strstr(res.error, want[g_case]) != NULL, "case %d: expected \"%s\" in:\n%s", g_case, want[g_case],
                  res.error);
        pp__result_free(&res);
    }
}

/* ---- early release ------------------------------------------------------------------------------------ */

/* A sent tensor is the receiver's: a second send of it stops the run, naming the send that released it. */
static void step_send_twice(pp_rank *r) {
    if (r->id == 0) {
        pp_tensor *t = act(r, 1.0f);
        t->handed = 1; /* as a stage op's output */
        pp_send(r, t, 1, T(PP_FWD, 0, 1));
        if (t->data || !t->released_by_send) atomic_store(&g_fail, 1); /* its memory went at once */
        pp_send(r, t, 1, T(PP_FWD, 1, 1));
    } else {
        pp_recv(r, 0, T(PP_FWD, 0, 1));
        pp_recv(r, 0, T(PP_FWD, 1, 1));
    }
}

Test(comm, a_sent_tensor_is_released_and_a_second_send_says_so, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 0);
    run(&c, step_send_twice, &res);
    cr_expect_eq(atomic_load(&g_fail), 0, "the sent tensor kept its memory after its send completed");
    cr_assert_eq(res.status, PP_ERR_USAGE, "expected a usage error, got status %d: %s", res.status, res.error);
    char want[160], tag[32];
    pp__tag_describe(T(PP_FWD, 0, 1), tag, sizeof tag);
    snprintf(want, sizeof want, "pp_send: the tensor was released when its pp_send(dst=1, tag %s) completed", tag);
    ASSERT_HAS(res, want);
    pp__result_free(&res);
}

/* A tensor posted to two sends keeps its memory until both completed: the second copy is whole. */
static void step_two_isends(pp_rank *r) {
    if (r->id == 0) {
        pp_tensor *t = act(r, 4.0f);
        t->handed = 1;
        pp_request *q[2] = {pp_isend(r, t, 1, T(PP_FWD, 0, 1)), pp_isend(r, t, 2, T(PP_FWD, 0, 2))};
        pp_waitall(r, q, 2);
        if (t->data) atomic_store(&g_fail, 1);
    } else {
        expect_value(pp_recv(r, 0, T(PP_FWD, 0, r->id)), 4.0f);
    }
}

Test(comm, a_tensor_in_two_sends_goes_after_both, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 3, 0);
    run(&c, step_two_isends, &res);
    ASSERT_OK(res);
    cr_expect_eq(atomic_load(&g_fail), 0, "a receiver got a torn copy, or the tensor outlived both sends");
    pp__result_free(&res);
}

/* A received x goes when its micro-batch's backward ends; using it for another forward says when it went. */
static void step_reuse_received(pp_rank *r) {
    int P = pp_rank_stages(r), me = pp_rank_id(r);
    pp_stash *s0, *s1;
    if (me == 0) {
        pp_send(r, pp_stage_forward(r, 0, 0, NULL, &s0), 1, pp_tag(PP_FWD, 0, 1));
        pp_tensor *dx = pp_stage_backward(r, s0, pp_recv(r, 1, pp_tag(PP_BWD, 0, 0)));
        (void)dx;
        pp_stash_free(r, s0);
    } else {
        pp_tensor *x = pp_recv(r, 0, pp_tag(PP_FWD, 0, 1));
        pp_stage_forward(r, 0, 0, x, &s0);
        pp_tensor *dx = pp_stage_backward(r, s0, pp_loss_grad(r, 1.0f));
        pp_send(r, dx, 0, pp_tag(PP_BWD, 0, 0));
        pp_stash_free(r, s0);
        if (x->data) atomic_store(&g_fail, 1);
        pp_stage_forward(r, 0, 0, x, &s1); /* the mistake */
    }
    (void)P;
}

Test(comm, a_received_tensor_goes_with_its_backward, .timeout = 10) {
    pp_run_config c;
    pp_run_result res;
    config(&c, 2, 0);
    run(&c, step_reuse_received, &res);
    cr_expect_eq(atomic_load(&g_fail), 0, "the received x kept its memory after its backward");
    cr_assert_eq(res.status, PP_ERR_USAGE, "expected a usage error, got status %d: %s", res.status, res.error);
    ASSERT_HAS(res, "pp_stage_forward: x was released when the backward of micro-batch 0, chunk 0 finished");
    pp__result_free(&res);
}

/* pp.h's promises about tags, to the letter: -1 for anything a tag cannot name, the limits it states reachable,
 * and every pp_tag above the raw tags a program may use itself; the version macro is the library's. */
Test(comm, tags_keep_what_pp_h_promises) {
    cr_expect_eq(pp_tag(PP_FWD, -1, 0), -1);
    cr_expect_eq(pp_tag(PP_BWD, 0, -1), -1);
    cr_expect_eq(pp_tag((pp_dir)2, 0, 0), -1);
    cr_expect_eq(pp_tag(PP_FWD, PP_TAG_MAX_MB + 1, 0), -1);
    cr_expect_eq(pp_tag(PP_FWD, 0, PP_TAG_MAX_VSTAGE + 1), -1);
    int dir, mb, vs;
    int dirs[] = {PP_FWD, PP_BWD}, mbs[] = {0, 1, PP_TAG_MAX_MB}, vss[] = {0, 7, PP_TAG_MAX_VSTAGE};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 3; c++) {
                int t = pp_tag((pp_dir)dirs[a], mbs[b], vss[c]);
                cr_expect_gt(t, PP_TAG_RAW_MAX, "pp_tag(%d, %d, %d) = %d is a raw tag", dirs[a], mbs[b], vss[c], t);
                cr_expect(pp__tag_split(t, &dir, &mb, &vs) && dir == dirs[a] && mb == mbs[b] && vs == vss[c]);
            }
    cr_expect(!pp__tag_split(PP_TAG_RAW_MAX, &dir, &mb, &vs), "the largest raw tag reads as a boundary");
    cr_expect(!pp__tag_split(0, &dir, &mb, &vs));
    cr_expect_str_eq(pp_version(), PP_VERSION);
}

/* Every transport built here says in its table what the registry says of it (transport.h's PP_TRANSPORT_*_CAPS),
 * and has the entries its capabilities promise: the callers ask the capabilities and then call those entries. */
Test(comm, each_transport_has_what_its_capabilities_say, .timeout = 30) {
    int built = 0;
    for (int i = 0; pp__transport_name(i); i++) {
        const char *name = pp__transport_name(i);
        unsigned caps = pp__transport_caps(name);
        cr_expect(caps & PP_TRANSPORT_DP_REDUCES, "%s: every transport reduces the replicas' gradients", name);
        if (!pp__transport_built(name)) continue;
        char err[512];
        const pp_transport_ops *t = pp__transport_find(name, err, sizeof err);
        cr_assert(t, "%s is built but not found: %s", name, err);
        built++;
        cr_expect_str_eq(t->name, name);
        cr_expect_eq(t->caps, caps, "%s: its table says %#x, the registry %#x", name, t->caps, caps);
        cr_expect_eq(!!(caps & PP_TRANSPORT_TP_SUMS), t->tp_post != NULL, "%s: tp_post against its caps", name);
        cr_expect_eq(!!(caps & PP_TRANSPORT_DP_REDUCES), t->reduce_post != NULL, "%s: reduce_post", name);
        int procs = !!(caps & PP_TRANSPORT_PROCESSES);
        cr_expect(procs == (t->launched_rank != NULL) && procs == (t->sum != NULL) && procs == (t->gather != NULL),
                  "%s: launched_rank, sum and gather go with PP_TRANSPORT_PROCESSES", name);
    }
    cr_expect_geq(built, 1, "not even the threads transport is built");
    cr_expect_null(pp__transport_launched("nccl"));
    cr_expect_eq(pp__transport_caps("carrier-pigeon"), 0u);
}
