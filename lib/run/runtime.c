/* runtime.c: runs a step function on P ranks for K steps and collects what the grader needs.
 * With the threads transport every rank is a thread of this process; a rank that fails (misuse, mismatch, a
 * crash of its driver) leaves its step function through its abort point (longjmp to the rank's entry), the
 * others run on until they return, fail or wait on what never comes, and the run reports the failure earliest
 * on the virtual clock (rank.c, pp__world_settle); a deadlock is the failure when no rank failed. */
#include "runtime.h"

#include <math.h>
#include <string.h>

#include "grid.h"
#include "reduce.h"
#include "schedules.h"
#include "server.h"
#include "host.h"
#include "transport.h"

/* ---- setup --------------------------------------------------------------------------------------------- */

/* pp_world.driver_death: a rank whose driver died is not blocked but gone. */
static int driver_death(pp_world *w, int i, pp_status *st, char *msg, size_t len) {
    pp_rank *r = &w->ranks[i];
    return r->cfg && r->srv && pp__server_ended(r->srv, st, msg, len);
}

static void wake_all(pp_world *w) {
    if (w->tp && w->tp->wake_all) w->tp->wake_all(w);
}

static int rank_failed(pp_world *w, int i) { return w->tp && w->tp->rank_failed && w->tp->rank_failed(w, i); }

static int rank_setup(pp_world *w, pp_rank *r, int id, char *err, size_t errlen) {
    const pp_run_config *c = w->cfg;
    memset(r, 0, sizeof *r);
    r->id = id;
    r->pipe = pp__config_rank_pipe(c, id), r->replica = pp__config_rank_replica(c, id), r->tp = pp__config_rank_tp(c, id);
    r->cfg = c;
    r->world = w;
    /* a GPU per rank of the node: all of them with threads, this process's under MPI */
    r->be = w->node_rank >= 0 ? pp__backend_open(c->backend, w->node_rank, w->node_size, err, errlen)
                              : pp__backend_open(c->backend, id, w->P, err, errlen);
    if (!r->be) return -1;
    pp_model_dims d;
    pp__config_model_dims(c, &d);
    r->chunks = pp__xcalloc((size_t)c->v, sizeof *r->chunks);
    pp__reduce_rank_init(r);
    /* parameters are initialised from their names, so DualPipe's two copies of a stage start equal, and a
     * shard's slices are the whole stage's */
    pp_tp_shard tp = {.size = c->T > 1 ? c->T : 1, .rank = r->tp, .allreduce = pp__comm_tp_allreduce, .ctx = r};
    for (int ch = 0; ch < c->v; ch++) {
        int s = pp__config_vstage(c, r->pipe, ch);
        pp__model_init_shard(&r->chunks[ch], &d, pp__config_first_block(c, s), pp__config_blocks(c, s),
                             pp__config_prev(c, s) < 0, pp__config_next(c, s) < 0, r->be, &tp);
    }
    return 0;
}

static void stash_list_free(pp_rank *r) {
    pp__stash_release(r->forming);
    r->forming = NULL;
    pp_stash *s = r->stashes;
    while (s) {
        pp_stash *next = s->next;
        pp__stash_release(s->ms);
        free(s->blocks);
        free(s);
        s = next;
    }
    r->stashes = NULL;
}

static void requests_free(pp_rank *r) {
    pp_request *q = r->requests;
    while (q) {
        pp_request *next = q->all_next;
        free(q->error);
        if (q->tp_into) free((void *)q->red.sum); /* a sum the rank never took (it was stopped first) */
        free(q);
        q = next;
    }
    r->requests = NULL;
    free(r->group);
    r->group = NULL;
    r->ngroup = r->group_cap = 0;
    r->in_group = 0;
}

static void rank_step_reset(pp_rank *r, int step, double wall0) {
    stash_list_free(r);
    requests_free(r);
    pp__arena_clear(&r->arena);
    pp__trace_clear(&r->trace);
    r->step = step;
    r->clock = 0;
    r->wall0 = wall0;
    r->live_bytes = r->peak_bytes = r->peak_single_bytes = 0;
    r->live_stashes = r->peak_stashes = 0;
    r->sent_msgs = 0;
    pp__rank_set_blocked_in(r, NULL);
    r->waiting_tag = -1;
    r->failed = 0;
    r->fail_msg[0] = 0;
    r->opt_calls = 0;
    pp__reduce_rank_reset(r);
    memset(r->made, 0, sizeof r->made);
    r->dloss_calls = r->zero_scales = r->backwards = r->late_grad_zero = 0;
    r->open_op = NULL;
    memset(r->tp_notes, 0, sizeof r->tp_notes);
    r->last_loss_sum = 0;
    r->loss_count = 0;
    for (int ch = 0; ch < r->cfg->v; ch++) pp__model_zero_grad(&r->chunks[ch]);
    if (r->be->ops->timer_epoch) r->be->ops->timer_epoch(r->be->ctx);
}

static void rank_teardown(pp_rank *r) {
    stash_list_free(r);
    requests_free(r);
    pp__arena_clear(&r->arena);
    pp__trace_clear(&r->trace);
    if (r->grad_snapshot) {
        for (int i = 0; i < pp__rank_nparams(r); i++) free(r->grad_snapshot[i]); /* NULL once a result took it */
        free(r->grad_snapshot);
    }
    if (r->chunks)
        for (int ch = 0; ch < r->cfg->v; ch++) pp__model_free(&r->chunks[ch]);
    free(r->chunks);
    pp__reduce_rank_free(r);
    pp__backend_close(r->be);
}

/* ---- one step ------------------------------------------------------------------------------------------ */

typedef struct rank_job {
    pp_rank *r;
    pp_step_fn fn;
} rank_job;

/* Runs the step function on one rank; returns normally whether the function returned or the run aborted. */
static void rank_run_step(pp_rank *r, pp_step_fn fn) {
    pp_world *w = r->world;
    pp__rank_set_current(r->id);
    volatile int returned = 0;
    if (setjmp(r->abort_jmp) == 0) {
        fn(r);
        if (r->in_group)
            pp__rank_abort(r, PP_ERR_USAGE, "close every pp_group_start() with pp_group_end()",
                           "step returned inside a group (pp_group_start without pp_group_end)");
        if (r->open_op) {
            const pp_stash *s = r->open_op;
            r->open_op = NULL;
            pp__rank_abort(r, PP_ERR_USAGE, "end each pp_stage_forward_begin with pp_stage_forward_end and each "
                           "pp_stage_backward_begin with pp_stage_backward_end", "step returned with the %s of "
                           "micro-batch %d, chunk %d open", s->state == PP__STASH_FWD_OPEN ? "forward" : "backward",
                           s->mb, s->chunk);
        }
        int unwaited = 0;
        for (pp_request *q = r->requests; q; q = q->all_next) unwaited += !q->waited;
        if (unwaited)
            pp__rank_abort(r, PP_ERR_USAGE, "every pp_isend/pp_irecv needs a pp_wait or pp_waitall",
                           "step returned with %d request(s) never waited", unwaited);
        /* the gradient the optimizer would have seen, if the schedule never stepped it */
        pp__rank_snapshot_grads(r);
        returned = 1;
    }
    if (r->be->ops->sync) r->be->ops->sync(r->be->ctx);
    /* before the transport hears of the exit: a member waiting on this rank's reduces must be answered first */
    pp__comm_rank_left(r, returned);
    w->tp->rank_exit(w, r->id);
    pp__rank_set_current(-1);
}

static void *rank_thread(void *arg) {
    rank_job *job = arg;
    rank_run_step(job->r, job->fn);
    return NULL;
}

/* Device timestamps, once the step's streams are idle, replace the host ones. */
static void trace_read_timers(pp_rank *r) {
    const pp_backend_ops *o = r->be->ops;
    if (!o->timer_read) return;
    for (int i = 0; i < r->trace.n; i++) {
        pp_event *e = &r->trace.ev[i];
        if (e->timer < 0 || !pp__op_is_compute(e->op)) continue;
        double s, t;
        if (o->timer_read(r->be->ctx, e->timer, &s, &t) == 0) e->wall_start = s, e->wall_end = t;
    }
}

static void run_threads_step(pp_world *w, pp_step_fn fn) {
    int P = w->P;
    pthread_t *th = pp__xcalloc((size_t)P, sizeof *th);
    rank_job *jobs = pp__xcalloc((size_t)P, sizeof *jobs);
    for (int i = 0; i < P; i++) {
        jobs[i] = (rank_job){&w->ranks[i], fn};
        if (pthread_create(&th[i], NULL, rank_thread, &jobs[i]))
            PP_DIE("lower --stages or raise the thread limit (ulimit -u)", "cannot start thread for rank %d", i);
    }
    for (int i = 0; i < P; i++) pthread_join(th[i], NULL);
    free(th);
    free(jobs);
}

/* ---- results ------------------------------------------------------------------------------------------- */

/* Whether rank i runs in this process: all of them with threads, one under MPI. */
static int rank_is_local(const pp_world *w, int i) { return w->local_rank < 0 || w->local_rank == i; }

/* The first note of the block calls (lab 08) over the world's ranks: the earliest on the virtual clock, ties to the
 * lowest rank, then to the rank's first note. A bias or the residual added to a partial tensor is right on one
 * shard (the sum then holds it once), so that note counts only where more of a stage's shards did it in the same
 * half, and a half's missing residual only where every shard's is missing. */
static pp_tp_note first_tp_note(const pp_run_config *c, const pp_tp_note *notes, int N) {
    pp_tp_note best = {0};
    int T = c->T > 1 ? c->T : 1;
    for (int i = 0; i < N; i++)
        for (int k = 1; k < PP_TPN_COUNT; k++) {
            pp_tp_note n = notes[i * PP_TPN_COUNT + k];
            if (!n.code) continue;
            if (k == PP_TPN_ADD_PARTIAL || k == PP_TPN_NO_RESIDUAL) {
                /* how many of the stage's shards did the same: a residual added on one shard is enough */
                n.shards = 0;
                for (int t = 0; t < T; t++) {
                    const pp_tp_note *m = &notes[pp__config_rank_of(c, t, pp__config_rank_replica(c, i),
                                                                   pp__config_rank_pipe(c, i)) * PP_TPN_COUNT + k];
                    n.shards += m->code && m->api == n.api && m->half == n.half;
                }
                if (k == PP_TPN_ADD_PARTIAL ? n.shards < 2 : n.shards < T) continue;
            }
            /* an addition to a partial tensor that the same op then read unsummed: the missing sum is the cause */
            const pp_tp_note *read = &notes[i * PP_TPN_COUNT + PP_TPN_READ_PARTIAL];
            if (k == PP_TPN_ADD_PARTIAL && read->code && read->mb == n.mb && read->chunk == n.chunk &&
                read->backward == n.backward)
                n = *read, n.other = 1;
            if (!best.code || n.clock < best.clock || (n.clock == best.clock && n.rank == best.rank &&
                                                       n.order < best.order))
                best = n;
        }
    return best;
}

/* Step 1's figures of the ranks the result describes: shard 0's, the whole grid without --tp (every shard runs
 * the same ops at the same times). */
static void collect_step0(pp_world *w, pp_run_result *res) {
    int P = res->P;
    pp__result_alloc_ranks(res, P);
    for (int i = 0; i < P; i++) {
        if (!rank_is_local(w, i)) continue;
        pp_rank *r = &w->ranks[i];
        trace_read_timers(r);
        res->traces[i] = r->trace;
        r->trace = (pp_trace){0};
        res->opt_calls[i] = r->opt_calls;
        res->peak_stashes[i] = r->peak_stashes;
        res->peak_bytes[i] = r->peak_bytes;
        res->peak_single[i] = r->peak_single_bytes;
        res->sent_msgs[i] = r->sent_msgs;
        res->unfreed_stashes[i] = r->live_stashes;
        res->zero_scales[i] = r->zero_scales;
        res->late_grad_zero[i] = r->late_grad_zero;
        res->tp_sums[i] = r->tp_calls;
        res->tp_bytes[i] = r->tp_bytes;
        res->dloss_calls_total += r->dloss_calls;
        res->loss_count += r->loss_count;
    }
    /* the other shards' traces, for the views: the figures above are shard 0's, as a result's are */
    if (w->P > P) {
        res->tp_ranks = w->P - P;
        res->tp_traces = pp__xcalloc((size_t)res->tp_ranks, sizeof *res->tp_traces);
        for (int i = P; i < w->P; i++) {
            if (!rank_is_local(w, i)) continue;
            trace_read_timers(&w->ranks[i]);
            res->tp_traces[i - P] = w->ranks[i].trace;
            w->ranks[i].trace = (pp_trace){0};
        }
    }
    res->bubble = pp__trace_bubble(res->traces, P);
    res->makespan = pp__trace_makespan(res->traces, P);
    res->step_time = pp__trace_step_time(res->traces, P);
    /* the notes of every rank, gathered on rank 0 under MPI (each process holds its own) */
    pp_tp_note *notes = NULL;
    if (w->local_rank < 0) {
        notes = pp__xcalloc((size_t)w->P * PP_TPN_COUNT, sizeof *notes);
        for (int i = 0; i < w->P; i++)
            memcpy(&notes[i * PP_TPN_COUNT], w->ranks[i].tp_notes, sizeof w->ranks[i].tp_notes);
    } else {
        size_t *lens = pp__xcalloc((size_t)w->P, sizeof *lens);
        notes = pp__transport_gather(w, w->ranks[w->local_rank].tp_notes, sizeof w->ranks[w->local_rank].tp_notes, lens);
        free(lens);
    }
    if (notes) res->tp_note = first_tp_note(w->cfg, notes, w->P);
    free(notes);
}

/* The world rank whose chunk's parameters a result carries for stage s: replica 0's, in shard 0, or under MPI with
 * shards the shard this process runs (each process sends its own slices; rank 0 puts them together). */
static int params_rank(const pp_world *w, int s) {
    const pp_run_config *c = w->cfg;
    int t = w->local_rank >= 0 && c->T > 1 ? pp__config_rank_tp(c, w->local_rank) : 0;
    return pp__config_rank_of(c, t, 0, pp__config_vstage_rank(c, s));
}

/* The parameters of the model, stage by stage: DualPipe's first copies (the second ones are compared with them,
 * compare_replicas), a cut parameter put together from its shards (under MPI, its slice alone). */
static void collect_params(pp_world *w, pp_run_result *res) {
    const pp_run_config *c = w->cfg;
    int S = pp__config_model_stages(c), n = 0, T = c->T > 1 && w->local_rank < 0 ? c->T : 1;
    for (int s = 0; s < S; s++)
        if (rank_is_local(w, params_rank(w, s)))
            n += w->ranks[params_rank(w, s)].chunks[pp__config_vstage_chunk(c, s)].nparams;
    res->params = pp__xcalloc((size_t)n, sizeof *res->params);
    res->nparams = n;
    int k = 0;
    for (int s = 0; s < S; s++) {
        if (!rank_is_local(w, params_rank(w, s))) continue;
        pp_rank *r = &w->ranks[params_rank(w, s)];
        int ch = pp__config_vstage_chunk(c, s), base = 0;
        for (int j = 0; j < ch; j++) base += r->chunks[j].nparams;
        pp_stage_model *m = &r->chunks[ch];
        for (int i = 0; i < m->nparams; i++, k++) {
            pp_param_result *p = &res->params[k];
            const pp_param *q = &m->params[i];
            int rows = q->w->rows, cols = q->w->cols, shards = q->split == PP_SPLIT_NONE ? 1 : T;
            snprintf(p->name, sizeof p->name, "%s", q->name);
            p->vstage = s;
            p->rank = pp__config_rank_of(c, 0, r->replica, r->pipe); /* the rank the result describes */
            p->count = rows * cols * shards;
            p->rows = rows, p->cols = cols, p->split = q->split;
            p->weight = pp__xmalloc((size_t)p->count * sizeof(float));
            if (shards == 1) {
                pp__tensor_to_host(q->w, p->weight);
                p->grad = r->grad_snapshot[base + i]; /* taken, not copied: at hidden 1024 a copy is 30 MB a block */
                r->grad_snapshot[base + i] = NULL;
                continue;
            }
            /* the shards of rank r, one per tensor-parallel rank, hold the slices in shard order */
            p->grad = pp__xmalloc((size_t)p->count * sizeof(float));
            float *part = pp__xmalloc((size_t)rows * cols * sizeof(float) + 1);
            for (int t = 0; t < T; t++) {
                pp_rank *sh = &w->ranks[pp__config_rank_of(c, t, r->replica, r->pipe)];
                pp__tensor_to_host(sh->chunks[ch].params[i].w, part);
                pp__shard_into(p->weight, part, rows, cols, q->split, T, t);
                pp__shard_into(p->grad, sh->grad_snapshot[base + i], rows, cols, q->split, T, t);
            }
            free(part);
        }
    }
}

/* The weights of the model's stages this process holds (all of them where ranks are threads), stage by stage as
 * collect_params orders them, grad NULL; their count in *n. Without shards (a reporting run has none). */
static pp_param_result *weights_local(pp_world *w, int *n) {
    const pp_run_config *c = w->cfg;
    int S = pp__config_model_stages(c), k = 0;
    *n = 0;
    for (int s = 0; s < S; s++)
        if (rank_is_local(w, params_rank(w, s)))
            *n += w->ranks[params_rank(w, s)].chunks[pp__config_vstage_chunk(c, s)].nparams;
    pp_param_result *out = pp__xcalloc((size_t)*n + 1, sizeof *out);
    for (int s = 0; s < S; s++) {
        if (!rank_is_local(w, params_rank(w, s))) continue;
        const pp_stage_model *m = &w->ranks[params_rank(w, s)].chunks[pp__config_vstage_chunk(c, s)];
        for (int i = 0; i < m->nparams; i++, k++) {
            const pp_tensor *t = m->params[i].w;
            pp_param_result *p = &out[k];
            snprintf(p->name, sizeof p->name, "%s", m->params[i].name);
            p->vstage = s, p->rank = params_rank(w, s);
            p->rows = t->rows, p->cols = t->cols, p->count = t->rows * t->cols;
            p->weight = pp__xmalloc((size_t)p->count * sizeof(float) + 1);
            pp__tensor_to_host(t, p->weight);
        }
    }
    return out;
}

void pp__weights_free(pp_param_result *p, int n) {
    for (int i = 0; p && i < n; i++) free(p[i].weight), free(p[i].grad);
    free(p);
}

/* The report of step `step` to a program that asked for one (pp_program.on_step): its loss and time, and the whole
 * model's weights when it asked for them now. Where ranks are processes the weights' gather is collective: every
 * process decides alike whether to join it, and rank 0's alone reports. */
static void step_report(pp_world *w, const pp_program *prog, int step, const pp_run_result *res) {
    int every = prog->weights_every, n = 0, total = 0;
    pp_param_result *weights = NULL;
    if (step == w->cfg->steps - 1 || (every > 0 && (step + 1) % every == 0)) {
        weights = weights_local(w, &n);
        total = n;
        if (w->local_rank >= 0) {
            pp_param_result *all = pp__run_procs_weights(w, weights, n, &total);
            pp__weights_free(weights, n);
            weights = all;
            if (pp__world_failed(w)) { /* ranks lost during the gather */
                pp__weights_free(weights, total);
                return;
            }
        }
    }
    if (w->local_rank <= 0) prog->on_step(prog->step_arg, step, res->loss[step], res->step_s[step], weights, total);
    pp__weights_free(weights, total);
}

/* 1 when two chunks' weights differ (only in their uncut parameters with uncut_only, for two shards), the first
 * differing parameter's name into param. */
static int chunk_weights_differ(pp_stage_model *a, pp_stage_model *b, int uncut_only, char *param, size_t len) {
    for (int i = 0; i < a->nparams; i++) {
        if (uncut_only && a->params[i].split != PP_SPLIT_NONE) continue;
        pp_tensor *wa = a->params[i].w, *wb = b->params[i].w;
        float *ha = pp__xmalloc(wa->bytes), *hb = pp__xmalloc(wb->bytes);
        pp__tensor_to_host(wa, ha);
        pp__tensor_to_host(wb, hb);
        int differ = memcmp(ha, hb, wa->bytes) != 0;
        free(ha), free(hb);
        if (differ) return snprintf(param, len, "%s", a->params[i].name), 1;
    }
    return 0;
}

/* The index of chunk ch's first parameter among rank r's (a gradient snapshot runs over its chunks in order). */
static int chunk_base(const pp_rank *r, int ch) {
    int base = 0;
    for (int j = 0; j < ch; j++) base += r->chunks[j].nparams;
    return base;
}

/* Every rank's gradients of step 1 against the ones the result carries (pp_run_result.grad_differs): a shard's
 * uncut parameters against shard 0's, and every replica's against replica 0's, bit for bit, since the same sums
 * and the same reduce make the same bits. The first that differs, in world rank order, with its norm's ratio. */
static void compare_grads(pp_world *w, pp_run_result *res) {
    const pp_run_config *c = w->cfg;
    res->grad_differs = 0;
    for (int q = 0; q < pp__config_world(c) && !res->grad_differs; q++) {
        const pp_rank *b = &w->ranks[q];
        int t = pp__config_rank_tp(c, q), p = pp__config_rank_pipe(c, q);
        for (int ch = 0; ch < c->v && !res->grad_differs && b->grad_snapshot; ch++)
            for (int i = 0; i < b->chunks[ch].nparams && !res->grad_differs; i++) {
                const pp_param *prm = &b->chunks[ch].params[i];
                const pp_rank *a = &w->ranks[pp__config_rank_of(c, prm->split == PP_SPLIT_NONE ? 0 : t, 0, p)];
                int k = chunk_base(b, ch) + i;
                if (a == b || !a->grad_snapshot || !a->grad_snapshot[k] || !b->grad_snapshot[k]) continue;
                size_t n = prm->g->bytes / sizeof(float);
                if (!memcmp(a->grad_snapshot[k], b->grad_snapshot[k], n * sizeof(float))) continue;
                double na = 0, nb = 0;
                for (size_t e = 0; e < n; e++)
                    na += (double)a->grad_snapshot[k][e] * a->grad_snapshot[k][e],
                        nb += (double)b->grad_snapshot[k][e] * b->grad_snapshot[k][e];
                res->grad_differs = 1, res->grad_rank = q;
                res->grad_ratio = na > 0 ? sqrt(nb / na) : 0;
                snprintf(res->grad_param, sizeof res->grad_param, "%s", prm->name);
            }
    }
}

/* Replicas 1..D-1 against replica 0, and DualPipe's second copy of each stage against its first: the same
 * summed gradients make the same weights, bit for bit, so the first replica or copy (and parameter) that
 * differs names a reduce that did not happen or did not sum the same. */
static void compare_replicas(pp_world *w, pp_run_result *res) {
    const pp_run_config *c = w->cfg;
    res->replica_differs = res->copy_differs = res->shard_differs = 0;
    /* under MPI each process holds one rank: the weights are compared by their fingerprints on rank 0 */
    if (w->local_rank >= 0) {
        pp__run_procs_replicas(w, res);
        return;
    }
    compare_grads(w, res);
    for (int s = 0; pp__config_dual(c) && s < c->P && !res->copy_differs; s++)
        if (chunk_weights_differ(&w->ranks[s].chunks[0], &w->ranks[c->P - 1 - s].chunks[1], 0, res->copy_param,
                                 sizeof res->copy_param))
            res->copy_differs = 1, res->copy_stage = s;
    for (int d = 1; d < c->D && !res->replica_differs; d++)
        for (int p = 0; p < c->P && !res->replica_differs; p++)
            for (int ch = 0; ch < c->v && !res->replica_differs; ch++)
                if (chunk_weights_differ(&w->ranks[p].chunks[ch], &w->ranks[d * c->P + p].chunks[ch], 0,
                                         res->replica_param, sizeof res->replica_param))
                    res->replica_differs = d, res->replica_rank = p;
    /* the shards of a stage hold its uncut parameters (LayerNorm, b2, embedding, head) whole: the same sums and
     * the same steps keep them equal, or the run is not the whole model's */
    for (int t = 1; t < c->T && !res->shard_differs; t++)
        for (int i = 0; i < c->D * c->P && !res->shard_differs; i++)
            for (int ch = 0; ch < c->v && !res->shard_differs; ch++)
                if (chunk_weights_differ(&w->ranks[i].chunks[ch], &w->ranks[t * c->D * c->P + i].chunks[ch], 1,
                                         res->shard_param, sizeof res->shard_param))
                    res->shard_differs = t, res->shard_rank = i;
}

/* What one run holds from its check to its teardown, besides the world. */
typedef struct run_state {
    const pp_run_config *cfg; /* the run's configuration; &placed once a grid lab's mapping placed it */
    const pp_program *prog;
    const pp_transport_ops *tp;
    int N;                    /* the world's ranks: D replicas of the P-stage pipeline, per shard */
    int me;                   /* the rank this process runs where ranks are processes (its launcher says which), else -1 */
    pp_server **srv;          /* [N]: the drivers this process started */
    int grid, grid_ok, place[PP_GRID_MAX];
    pp_run_config placed;
} run_state;

/* The checks a run passes before anything starts: the configuration, and a transport that is there (refused before
 * any driver starts). 0, or -1 with the run's failure in res. */
static int run_refused(const pp_run_config *cfg, run_state *s, pp_run_result *res) {
    char err[512];
    if (pp__config_check(cfg, err, sizeof err) || pp__config_runnable(cfg, err, sizeof err) ||
        !(s->tp = pp__transport_find(cfg->transport, err, sizeof err)) ||
        (s->prog->on_step && cfg->T > 1 && snprintf(err, sizeof err, "a run that reports its weights after its "
                                                    "steps (pplab train) cuts no stage over shards: drop --tp"))) {
        res->status = PP_ERR_CONFIG;
        snprintf(res->error, sizeof res->error, "%s", err);
        return -1;
    }
    return 0;
}

/* Stops the drivers this process started (ok: the run succeeded, so they may end gently) and frees the list. */
static void drivers_stop(pp_server **srv, int N, int ok) {
    for (int i = 0; i < N; i++) pp__server_stop(srv[i], ok);
    free(srv);
}

/* One driver per rank this process runs (all of them where ranks are threads, its own where they are processes),
 * before the transport starts: MPI forbids fork() after MPI_Init. 0, or -1 with the run's failure in res. */
static int drivers_start(run_state *s, pp_run_result *res) {
    char err[512];
    s->srv = pp__xcalloc((size_t)s->N, sizeof *s->srv);
    for (int i = 0; s->prog->sandbox && i < s->N; i++) {
        if (s->me >= 0 && i != s->me) continue;
        if (!(s->srv[i] = pp__server_start(s->cfg, s->prog->sandbox, s->prog->symbol, i, err, sizeof err))) {
            drivers_stop(s->srv, s->N, 0);
            res->status = PP_ERR_SANDBOX;
            snprintf(res->error, sizeof res->error, "%s", err);
            return -1;
        }
    }
    return 0;
}

/* The grid lab's mapping (grid.h) into place: asked of rank 0's driver, or of the in-process functions. 0, or -1
 * with the run's failure in res. */
static int grid_place(const pp_run_config *cfg, const pp_program *prog, pp_server **srv, int *place,
                      pp_run_result *res) {
    static unsigned char answer[64 * 1024];
    long n = -1;
    if (srv[0]) {
        n = pp__server_hello(srv[0], answer, sizeof answer, &res->status, res->error, sizeof res->error);
    } else if (prog->grid_place && prog->grid_group) {
        pp_wire w;
        pp__wire_init_fixed(&w, answer, sizeof answer);
        pp__grid_ask(cfg->T > 1 ? cfg->T : 1, cfg->P, cfg->D, prog->grid_place, prog->grid_group, &w);
        n = w.bad ? -1 : (long)w.len;
        if (n < 0) res->status = PP_ERR_USAGE, snprintf(res->error, sizeof res->error, "the grid's answer is too long");
    } else {
        res->status = PP_ERR_USAGE;
        snprintf(res->error, sizeof res->error, "the %s schedule places its ranks by pp_tpgrid_place and "
                 "pp_tpgrid_group, which this program does not give", cfg->schedule->name);
    }
    if (n < 0) return -1;
    pp_wire_in in;
    pp__wire_in_init(&in, answer, (size_t)n);
    char err[1024];
    if (pp__grid_read(cfg, &in, place, err, sizeof err)) {
        res->status = PP_ERR_USAGE;
        snprintf(res->error, sizeof res->error, "%s", err);
        return -1;
    }
    return 0;
}

/* The grid lab's run sits on the nodes where its mapping puts each rank: rank 0's driver says it (where ranks are
 * processes, rank 0's reads it and gives it to the others once the transport is up, grid_share). -1 when the run
 * ends here, its failure in res. */
static int grid_setup(run_state *s, pp_run_result *res) {
    s->grid = s->cfg->schedule->grid, s->grid_ok = 1;
    if (!s->grid) return 0;
    if (s->me <= 0) s->grid_ok = grid_place(s->cfg, s->prog, s->srv, s->place, res) == 0;
    if (!s->grid_ok && s->me < 0) {
        drivers_stop(s->srv, s->N, 0);
        return -1;
    }
    s->placed = *s->cfg;
    s->placed.place = s->place;
    s->cfg = &s->placed;
    return 0;
}

/* The world of the run, before its transport starts. */
static void world_init(pp_world *w, const run_state *s, pp_run_result *res) {
    const pp_run_config *cfg = s->cfg;
    memset(w, 0, sizeof *w);
    w->cfg = cfg;
    w->P = s->N;
    w->local_rank = -1;
    w->node_rank = w->node_size = -1;
    w->no_params = s->prog->no_params;
    w->wake_all = wake_all;
    w->driver_death = driver_death;
    w->rank_failed = rank_failed;
    pthread_mutex_init(&w->fail_lock, NULL);
    w->tp = s->tp;
    w->ranks = pp__xcalloc((size_t)s->N, sizeof *w->ranks);
    pp__reduce_world_init(w);
    res->loss = pp__xcalloc((size_t)cfg->steps, sizeof(float));
    res->step_s = pp__xcalloc((size_t)cfg->steps, sizeof(double));
    res->act_bytes = (size_t)cfg->mb_size * cfg->seq * cfg->hidden * sizeof(float);
}

/* Sets up every rank this process runs, each with its driver; where ranks are processes, every process must start
 * the steps or none. 1 when the steps may start; 0 with the failure in res. */
static int ranks_setup(pp_world *w, const run_state *s, pp_run_result *res) {
    char err[512];
    int ready = 1;
    for (int i = 0; i < s->N && ready; i++)
        if (rank_is_local(w, i) && rank_setup(w, &w->ranks[i], i, err, sizeof err)) {
            res->status = strncmp(err, "no CUDA device", 14) ? PP_ERR_BACKEND : PP_ERR_NODEVICE;
            snprintf(res->error, sizeof res->error, "%s", err);
            ready = 0;
        } else if (rank_is_local(w, i)) {
            w->ranks[i].srv = s->srv[i];
        }
    if (w->local_rank >= 0 && !pp__run_procs_agree(w, ready) && ready) {
        res->status = PP_ERR_BACKEND;
        snprintf(res->error, sizeof res->error,
                 "another process could not set up its rank: see the messages of the other ranks");
        ready = 0;
    }
    return ready;
}

/* Where ranks are processes, the grid's places go from rank 0 to every process (a sum to which only rank 0 adds).
 * Returns ready, 0 when rank 0 refused the grid. */
static int grid_share(pp_world *w, run_state *s, int ready, pp_run_result *res) {
    if (!s->grid || w->local_rank < 0) return ready;
    double v[PP_GRID_MAX + 1] = {0};
    if (w->local_rank == 0) {
        v[0] = s->grid_ok ? 1 : -1;
        for (int i = 0; i < s->N && s->grid_ok; i++) v[i + 1] = s->place[i];
    }
    pp__transport_sum(w, v, s->N + 1);
    for (int i = 0; i < s->N; i++) s->place[i] = (int)v[i + 1];
    if (v[0] < 0 && ready && w->local_rank > 0) {
        res->status = PP_ERR_USAGE;
        snprintf(res->error, sizeof res->error, "rank 0 refused the submission's grid: see its message");
    }
    return v[0] < 0 ? 0 : ready;
}

/* Starts the transport and the ranks. 1 when the steps may start; 0 with the failure in res. *up: the transport
 * started (fini is owed). */
static int world_start(pp_world *w, run_state *s, pp_run_result *res, int *up) {
    *up = 0;
    if (w->tp->init(w)) {
        res->status = PP_ERR_CONFIG;
        snprintf(res->error, sizeof res->error, "%s", w->error[0] ? w->error : "transport setup failed");
        return 0;
    }
    *up = 1;
    int ready = grid_share(w, s, ranks_setup(w, s, res), res);
    if (s->grid && ready) {
        res->nplace = s->N;
        res->place = pp__xmalloc((size_t)s->N * sizeof *res->place);
        memcpy(res->place, s->place, (size_t)s->N * sizeof *s->place);
    }
    return ready;
}

/* Runs the steps, as long as none fails. */
static void steps_run(pp_world *w, const pp_program *prog, pp_step_fn fn, pp_run_result *res) {
    for (int step = 0; step < w->cfg->steps; step++) {
        double wall0 = pp__now();
        for (int i = 0; i < w->P; i++)
            if (rank_is_local(w, i)) rank_step_reset(&w->ranks[i], step, wall0);
        if (w->local_rank >= 0) {
            rank_run_step(&w->ranks[w->local_rank], fn);
        } else {
            run_threads_step(w, fn);
            /* every rank returned, failed or stopped waiting: the run's failure is chosen now (where ranks are
             * processes step_end chooses it, from every process's part) */
            pp__world_settle(w);
        }
        /* where ranks are processes step_end is collective: every process joins it, failed or not, to agree on
         * the outcome */
        if (!pp__world_failed(w) || w->local_rank >= 0) w->tp->step_end(w);
        if (pp__world_failed(w)) break;
        res->step_s[step] = pp__now() - wall0;
        double loss = 0;
        int count = 0;
        for (int i = 0; i < w->P; i++)
            if (rank_is_local(w, i)) loss += w->ranks[i].last_loss_sum, count += w->ranks[i].loss_count;
        if (w->local_rank >= 0) pp__run_procs_loss(w, &loss, &count);
        if (pp__world_failed(w)) break; /* ranks lost, where ranks are processes */
        res->loss[step] = count ? (float)(loss / count) : 0.0f;
        if (step == 0) collect_step0(w, res);
        if (prog->on_step) step_report(w, prog, step, res);
    }
}

/* The run's outcome into res: its failure with what each rank ran of the step that failed (a diagnosis compares it
 * with the canonical order), or, when it ran, its replicas' comparison, parameters and merged results. */
static void results_collect(pp_world *w, int ready, pp_run_result *res) {
    if (pp__world_failed(w)) {
        res->status = w->status;
        snprintf(res->error, sizeof res->error, "%s", w->error);
        if (!res->traces) pp__result_alloc_ranks(res, res->P);
        for (int i = 0; i < res->P; i++)
            if (rank_is_local(w, i) && w->ranks[i].cfg) {
                pp__trace_clear(&res->traces[i]);
                res->traces[i] = w->ranks[i].trace;
                w->ranks[i].trace = (pp_trace){0};
                res->waiting_tag[i] = w->ranks[i].waiting_tag;
            }
    } else if (ready) {
        compare_replicas(w, res); /* first: the parameters' collection takes the gradient snapshots */
        if (!w->no_params) collect_params(w, res);
        if (w->local_rank >= 0) pp__run_procs_merge(w, res);
        res->status = PP_OK;
        if (pp__world_failed(w)) { /* ranks lost while the results were gathered */
            res->status = w->status;
            snprintf(res->error, sizeof res->error, "%s", w->error);
        }
    }
}

/* Ends the run: drivers before the transport (where ranks are processes, a driver waiting on its rank must not
 * outlive it), then the ranks, the transport and the world. */
static void world_teardown(pp_world *w, run_state *s, int up, pp_status status) {
    for (int i = 0; i < s->N && status == PP_OK; i++) pp__server_release(s->srv[i]);
    drivers_stop(s->srv, s->N, status == PP_OK);
    for (int i = 0; i < s->N; i++)
        if (w->ranks[i].cfg) rank_teardown(&w->ranks[i]);
    if (up) w->tp->fini(w);
    free(w->ranks);
    pp__reduce_world_free(w);
    pthread_mutex_destroy(&w->fail_lock);
}

pp_status pp__run_program(const pp_run_config *cfg, const pp_program *prog, pp_run_result *res) {
    memset(res, 0, sizeof *res);
    res->P = cfg->P * cfg->D; /* the ranks the result describes: shard 0's under --tp */
    res->D = cfg->D;
    res->v = cfg->v;
    run_state s = {.cfg = cfg, .prog = prog, .N = pp__config_world(cfg)};
    if (run_refused(cfg, &s, res)) return res->status;
    s.me = s.tp->launched_rank ? s.tp->launched_rank() : -1;
    if (drivers_start(&s, res) || grid_setup(&s, res)) return res->status;
    pp_world w;
    world_init(&w, &s, res);
    int up = 0, ready = world_start(&w, &s, res, &up);
    if (ready && prog->on_ready && w.local_rank <= 0) prog->on_ready(prog->ready_arg);
    double t0 = pp__now();
    if (ready) steps_run(&w, prog, prog->sandbox ? pp__server_step : prog->fn, res);
    res->wall_s = pp__now() - t0;
    results_collect(&w, ready, res);
    world_teardown(&w, &s, up, res->status);
    return res->status;
}

pp_status pp__run(const pp_run_config *cfg, pp_step_fn fn, pp_run_result *res) {
    pp_program prog = {.fn = fn};
    return pp__run_program(cfg, &prog, res);
}
