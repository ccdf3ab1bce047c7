/* runtime_mpi.c: what a run does differently when every rank is its own process (the mpi transport): each
 * process collects its own rank's results as with threads, then rank 0 gathers the others' (traces, counters,
 * gradients and weights) so that its pp_run_result is the one a threads run gives. Also the ping-pong
 * benchmark that measures one message's latency through pp_send/pp_recv on any transport.
 * No MPI call here: the collectives are the transport's (transport.h). */
#include <stdint.h>
#include <string.h>

#include "runtime.h"
#include "transport.h"

/* A growing byte buffer. */
typedef struct blob {
    unsigned char *p;
    size_t len, cap;
} blob;

static void blob_put(blob *b, const void *src, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = 2 * (b->len + n) + 256;
        b->p = pp__xrealloc(b->p, b->cap);
    }
    if (n) memcpy(b->p + b->len, src, n);
    b->len += n;
}

/* One process's counters of step 1, in front of its trace and parameters. */
typedef struct rank_head {
    int32_t rank, opt_calls, peak_stashes, sent_msgs, unfreed_stashes, dloss_calls, loss_count, ntrace, nparams;
    uint64_t peak_bytes, peak_single;
} rank_head;

typedef struct param_head {
    char name[32];
    int32_t vstage, rank, count, pad;
} param_head;

int pp__run_mpi_agree(pp_world *w, int ok) {
    double bad = ok ? 0 : 1;
    pp__mpi_sum(w, &bad, 1);
    return bad == 0;
}

void pp__run_mpi_loss(pp_world *w, float *loss_sum, int *count) {
    /* only the last stage has a loss: the sum adds zeros, so the float survives the trip through double */
    double v[2] = {(double)*loss_sum, (double)*count};
    pp__mpi_sum(w, v, 2);
    *loss_sum = (float)v[0];
    *count = (int)v[1];
}

void pp__run_mpi_merge(pp_world *w, pp_run_result *res) {
    int me = w->local_rank, P = w->P;
    blob b = {0};
    rank_head h = {.rank = me,
                   .opt_calls = res->opt_calls[me],
                   .peak_stashes = res->peak_stashes[me],
                   .sent_msgs = res->sent_msgs[me],
                   .unfreed_stashes = res->unfreed_stashes[me],
                   .dloss_calls = res->dloss_calls_total,
                   .loss_count = res->loss_count,
                   .ntrace = res->traces[me].n,
                   .nparams = res->nparams,
                   .peak_bytes = res->peak_bytes[me],
                   .peak_single = res->peak_single ? res->peak_single[me] : 0};
    blob_put(&b, &h, sizeof h);
    blob_put(&b, res->traces[me].ev, (size_t)h.ntrace * sizeof(pp_event));
    for (int i = 0; i < res->nparams; i++) {
        const pp_param_result *p = &res->params[i];
        param_head ph;
        memset(&ph, 0, sizeof ph);
        snprintf(ph.name, sizeof ph.name, "%s", p->name);
        ph.vstage = p->vstage;
        ph.rank = p->rank;
        ph.count = p->count;
        blob_put(&b, &ph, sizeof ph);
        blob_put(&b, p->weight, (size_t)p->count * sizeof(float));
        blob_put(&b, p->grad, (size_t)p->count * sizeof(float));
    }
    size_t *lens = pp__xcalloc((size_t)P, sizeof *lens);
    unsigned char *all = pp__mpi_gather(w, b.p, b.len, lens);
    free(b.p);
    if (me != 0 || !all) {
        free(lens);
        free(all);
        return;
    }

    /* rank 0: every process's part, its own included, in rank order */
    for (int i = 0; i < res->nparams; i++) free(res->params[i].grad), free(res->params[i].weight);
    free(res->params);
    res->params = NULL;
    res->nparams = 0;
    res->dloss_calls_total = res->loss_count = 0;
    const unsigned char **parts = pp__xcalloc((size_t)P, sizeof *parts);
    int total = 0;
    size_t off = 0;
    for (int q = 0; q < P; q++) {
        const unsigned char *at = all + off;
        off += lens[q];
        rank_head rh;
        memcpy(&rh, at, sizeof rh);
        PP_ASSERT(rh.rank == q);
        res->opt_calls[q] = rh.opt_calls;
        res->peak_stashes[q] = rh.peak_stashes;
        res->sent_msgs[q] = rh.sent_msgs;
        res->unfreed_stashes[q] = rh.unfreed_stashes;
        res->peak_bytes[q] = (size_t)rh.peak_bytes;
        if (res->peak_single) res->peak_single[q] = (size_t)rh.peak_single;
        res->dloss_calls_total += rh.dloss_calls;
        res->loss_count += rh.loss_count;
        at += sizeof rh;
        if (q != me) {
            pp__trace_clear(&res->traces[q]);
            for (int e = 0; e < rh.ntrace; e++) {
                pp_event ev;
                memcpy(&ev, at + (size_t)e * sizeof ev, sizeof ev);
                pp__trace_add(&res->traces[q], &ev);
            }
        }
        parts[q] = at + (size_t)rh.ntrace * sizeof(pp_event);
        total += rh.nparams;
    }
    /* parameters in the model's order: virtual stage by virtual stage, each from the rank that owns it */
    res->params = pp__xcalloc((size_t)total, sizeof *res->params);
    int S = P * w->cfg->v, k = 0;
    for (int s = 0; s < S; s++) {
        int q = s % P;
        off = 0;
        for (int i = 0; i < q; i++) off += lens[i];
        const unsigned char *at = all + off;
        rank_head rh;
        memcpy(&rh, at, sizeof rh);
        at = parts[q];
        for (int i = 0; i < rh.nparams; i++) {
            param_head ph;
            memcpy(&ph, at, sizeof ph);
            at += sizeof ph;
            size_t bytes = (size_t)ph.count * sizeof(float);
            if (ph.vstage == s) {
                pp_param_result *p = &res->params[k++];
                snprintf(p->name, sizeof p->name, "%s", ph.name);
                p->vstage = ph.vstage;
                p->rank = ph.rank;
                p->count = ph.count;
                p->weight = pp__xmalloc(bytes);
                memcpy(p->weight, at, bytes);
                p->grad = pp__xmalloc(bytes);
                memcpy(p->grad, at + bytes, bytes);
            }
            at += 2 * bytes;
        }
    }
    PP_ASSERT(k == total);
    res->nparams = total;
    res->bubble = pp__trace_bubble(res->traces, P);
    res->makespan = pp__trace_makespan(res->traces, P);
    free(parts);
    free(lens);
    free(all);
}

/* ---- ping-pong benchmark ------------------------------------------------------------------------------- */

static int bench_iters;
static double bench_oneway;

/* Rank 0 sends a 1x1 activation to rank 1, which sends it back, bench_iters times; rank 0 times the loop. A
 * few round trips first, untimed, so that connections and caches are warm. Raw tag 7: messages between the
 * same two ranks keep their order, so one tag serves every round. */
static void pingpong_step(pp_rank *r) {
    int warm = bench_iters / 10 + 10;
    if (r->id == 0) {
        pp_stash *st = NULL;
        pp_tensor *x = pp_stage_forward(r, 0, 0, NULL, &st);
        double t0 = 0;
        for (int i = 0; i < warm + bench_iters; i++) {
            if (i == warm) t0 = pp__now();
            pp_send(r, x, 1, 7);
            x = pp_recv(r, 1, 7);
        }
        /* the stash stays alive: the step's end releases it */
        bench_oneway = (pp__now() - t0) / (2.0 * bench_iters);
    } else if (r->id == 1) {
        for (int i = 0; i < warm + bench_iters; i++) {
            pp_tensor *y = pp_recv(r, 0, 7);
            pp_send(r, y, 0, 7);
        }
    }
}

double pp__bench_pingpong(const char *transport, int iters) {
    pp_run_config c;
    pp__config_defaults(&c);
    c.P = 2;
    c.M = 1;
    c.schedule = "gpipe";
    c.mb_size = 1;
    c.seq = 1;
    c.hidden = 1;
    c.vocab = 2;
    c.transport = transport;
    c.eager = 0;
    bench_iters = iters > 0 ? iters : 1;
    bench_oneway = -1;
    pp_run_result res;
    pp_status st = pp__run(&c, pingpong_step, &res);
    pp__result_free(&res);
    /* under MPI only rank 0 timed the loop: the others return -1 like a failure */
    return st == PP_OK ? bench_oneway : -1;
}

double pp__bench_mpi_pingpong(int iters) { return pp__bench_pingpong("mpi", iters); }
