/* rank.c: a rank's failure path and bookkeeping: a failing rank records its failure and leaves its step function
 * through its abort point (a longjmp to the rank's entry, set by the runtime); once no rank can run on, the run
 * reports the failure earliest on the virtual clock (pp__world_settle); the caps on what one step may make; the
 * host copy of step 1's gradients. */
#include "rank.h"
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

double pp__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- failure ------------------------------------------------------------------------------------------- */

int pp__world_fail(pp_world *w, pp_status st, const char *msg) {
    /* a rank whose driver died is not blocked but gone: that, not the wait it left behind, is the cause */
    char died[1100], how[1024];
    pp_status why;
    for (int i = 0; st == PP_ERR_DEADLOCK && w->driver_death && i < w->P; i++)
        if (w->driver_death(w, i, &why, how, sizeof how)) {
            char who[48];
            snprintf(died, sizeof died, "%s: %s", pp__rank_label(w, i, who, sizeof who), how);
            st = why, msg = died;
            break;
        }
    int first = 0;
    pthread_mutex_lock(&w->fail_lock);
    if (!pp__world_failed(w)) {
        w->status = st;
        snprintf(w->error, sizeof w->error, "%s", msg);
        __atomic_store_n(&w->failed, 1, __ATOMIC_RELEASE);
        first = 1;
    }
    pthread_mutex_unlock(&w->fail_lock);
    if (w->wake_all) w->wake_all(w);
    return first;
}

const char *pp__rank_label(const pp_world *w, int i, char *buf, size_t len) {
    const pp_run_config *c = w->cfg;
    if (!c) return snprintf(buf, len, "rank %d", i), buf;
    int p = pp__config_rank_pipe(c, i), d = pp__config_rank_replica(c, i), t = pp__config_rank_tp(c, i);
    int n = c->D > 1 ? snprintf(buf, len, "rank %d of replica %d", p, d) : snprintf(buf, len, "rank %d", p);
    if (c->T > 1 && n >= 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, ", shard %d", t);
    return buf;
}

int pp__world_failed(const pp_world *w) { return __atomic_load_n(&w->failed, __ATOMIC_ACQUIRE); }

void pp__rank_fail(pp_rank *r, pp_status st, const char *msg) {
    pp_world *w = r->world;
    pthread_mutex_lock(&w->fail_lock);
    int first = !r->failed;
    if (first) {
        r->fail_status = st;
        r->fail_clock = r->clock;
        snprintf(r->fail_msg, sizeof r->fail_msg, "%s", msg);
        __atomic_store_n(&r->failed, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&w->fail_lock);
    if (first && !(w->rank_failed && w->rank_failed(w, r->id))) pp__world_fail(w, st, msg);
}

int pp__world_rank_failed(const pp_world *w) {
    for (int i = 0; w->ranks && i < w->P; i++)
        if (__atomic_load_n(&w->ranks[i].failed, __ATOMIC_ACQUIRE)) return 1;
    return 0;
}

/* Lines after the leading failure: at most this many, then a count. */
#define SETTLE_MAX_LINES 8

pp_status pp__rank_report(const pp_world *w, const pp_rank_end *ends, int n, char *out, size_t cap) {
    int lead = -1;
    for (int i = 0; i < n; i++)
        if (ends[i].failed && (lead < 0 || ends[i].clock < ends[lead].clock)) lead = i;
    if (lead < 0) return PP_OK;
    size_t len = pp__text_append(out, cap, 0, "%s", ends[lead].msg);
    /* then the later failures in the order they came on the clock, then the ranks that only waited; a schedule's
     * own pp_fail text is the rest of its lines, and nothing of the grader's follows it */
    int lines = 0, more = 0, k = 0, *order = pp__xcalloc((size_t)n, sizeof *order);
    for (int i = 0; i < n; i++)
        if (i != lead && (ends[i].failed || ends[i].blocked_in)) {
            int j = k++;
            const pp_rank_end *a = &ends[i];
            for (; j > 0; j--) {
                const pp_rank_end *b = &ends[order[j - 1]];
                if (b->failed && (!a->failed || b->clock <= a->clock)) break;
                if (!b->failed && !a->failed) break;
                order[j] = order[j - 1];
            }
            order[j] = i;
        }
    for (int j = 0; ends[lead].status != PP_ERR_STUDENT && j < k; j++) {
        const pp_rank_end *e = &ends[order[j]];
        char who[48];
        pp__rank_label(w, order[j], who, sizeof who);
        if (lines++ >= SETTLE_MAX_LINES) {
            more++;
        } else if (e->failed) {
            /* its own failure, later on the clock (or as early, on a higher rank): its first line */
            const char *what = e->msg, *nl = strchr(what, '\n');
            char head[64];
            int hn = snprintf(head, sizeof head, "%s: ", who);
            if (!strncmp(what, head, (size_t)hn)) what += hn;
            len = pp__text_append(out, cap, len, "\n  then %s failed too, at time %g: %.*s", who, e->clock,
                             (int)(nl ? nl - what : (long)strlen(what)), what);
        } else {
            len = pp__text_append(out, cap, len, "\n  so %s stayed blocked in %s, which nothing could answer any more",
                             who, e->blocked_in);
        }
    }
    if (more) pp__text_append(out, cap, len, "\n  (%d more ranks stopped)", more);
    free(order);
    return ends[lead].status;
}

void pp__world_settle(pp_world *w) {
    if (pp__world_failed(w)) return;
    pp_rank_end *ends = pp__xcalloc((size_t)w->P, sizeof *ends);
    for (int i = 0; i < w->P; i++) {
        const pp_rank *r = &w->ranks[i];
        if (!r->cfg) continue;
        ends[i] = (pp_rank_end){.failed = r->failed, .status = r->fail_status, .clock = r->fail_clock,
                                .msg = r->fail_msg, .blocked_in = pp__rank_blocked_in(r)};
    }
    char *msg = pp__xmalloc(sizeof w->error);
    pp_status st = pp__rank_report(w, ends, w->P, msg, sizeof w->error);
    if (st != PP_OK) pp__world_fail(w, st, msg);
    free(msg);
    free(ends);
}

void pp__rank_bail(pp_rank *r) { longjmp(r->abort_jmp, 1); }

void pp__rank_alive(pp_rank *r) {
    if (pp__world_failed(r->world)) pp__rank_bail(r);
}

void pp__rank_check(pp_rank *r) {
    pp__rank_alive(r);
    const pp_stash *s = r->open_op;
    if (s) {
        int fwd = s->state == PP__STASH_FWD_OPEN;
        r->open_op = NULL; /* the report names it once */
        pp__rank_abort(r, PP_ERR_USAGE, fwd ? "run the stage's blocks, then end the forward with pp_stage_forward_end "
                       "before anything else" : "run the stage's blocks backwards, then end the backward with "
                       "pp_stage_backward_end before anything else", "the %s of micro-batch %d, chunk %d is open "
                       "(pp_stage_%s_begin): only its blocks' calls may run until it ends", fwd ? "forward"
                       : "backward", s->mb, s->chunk, fwd ? "forward" : "backward");
    }
}

void pp__rank_abort(pp_rank *r, pp_status st, const char *hint, const char *fmt, ...) {
    char msg[3072], full[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char who[48];
    pp__rank_label(r->world, r->id, who, sizeof who);
    if (hint && *hint)
        snprintf(full, sizeof full, "%s: %s\nHINT: %s", who, msg, hint);
    else
        snprintf(full, sizeof full, "%s: %s", who, msg);
    pp__rank_fail(r, st, full);
    pp__rank_bail(r);
}

void pp__rank_charge(pp_rank *r, pp_charge what, const char *api) {
    const pp_run_config *c = r->cfg;
    static const char *const names[] = {"forwards", "loss gradients", "messages"};
    static const char *const needs[] = {"one per micro-batch and chunk", "one per micro-batch", "two per micro-batch and boundary"};
    long cap = what == PP_CHARGE_FORWARD ? 4L * c->M * c->v + 64 : what == PP_CHARGE_LOSS_GRAD ? 4L * c->M + 64
                                                                 : 16L * c->M * c->v + 256;
    if (++r->made[what] > cap && !c->uncapped)
        pp__rank_abort(r, PP_ERR_LIMIT, "look for a loop that never ends or runs the same micro-batch again",
                       "%s: this step made more than %ld %s (a schedule needs %s): pplab stops it here", api, cap,
                       names[what], needs[what]);
}

static __thread int tls_rank = -1;

int pp__current_rank(void) { return tls_rank; }

void pp__rank_set_current(int id) { tls_rank = id; }

int pp__rank_nparams(const pp_rank *r) {
    int n = 0;
    for (int ch = 0; ch < r->cfg->v; ch++) n += r->chunks[ch].nparams;
    return n;
}

/* Host copies of every gradient of the rank, in chunk then parameter order. */
static float **grads_to_host(pp_rank *r) {
    int n = pp__rank_nparams(r);
    float **out = pp__xcalloc((size_t)n + 1, sizeof *out);
    int k = 0;
    for (int ch = 0; ch < r->cfg->v; ch++)
        for (int i = 0; i < r->chunks[ch].nparams; i++) {
            pp_tensor *g = r->chunks[ch].params[i].g;
            out[k] = pp__xmalloc(g->bytes);
            pp__tensor_to_host(g, out[k++]);
        }
    return out;
}

void pp__rank_snapshot_grads(pp_rank *r) {
    if (r->step == 0 && !r->grad_snapshot && !r->world->no_params) r->grad_snapshot = grads_to_host(r);
}
