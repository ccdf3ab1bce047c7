/* rank.c: a rank's failure path and bookkeeping: the first failure of a run is recorded once, every rank is woken
 * and leaves its step function through its abort point (a longjmp to the rank's entry, set by the runtime); the
 * caps on what one step may make; the host copy of step 1's gradients. */
#include "rank.h"

#include <stdarg.h>
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
    char died[1100];
    pp_status why;
    if (st == PP_ERR_DEADLOCK && w->driver_death && w->driver_death(w, &why, died, sizeof died)) st = why, msg = died;
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

int pp__world_failed(const pp_world *w) { return __atomic_load_n(&w->failed, __ATOMIC_ACQUIRE); }

void pp__rank_bail(pp_rank *r) { longjmp(r->abort_jmp, 1); }

void pp__rank_check(pp_rank *r) {
    if (pp__world_failed(r->world)) pp__rank_bail(r);
}

void pp__rank_abort(pp_rank *r, pp_status st, const char *hint, const char *fmt, ...) {
    char msg[3072], full[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (hint && *hint)
        snprintf(full, sizeof full, "rank %d: %s\nHINT: %s", r->id, msg, hint);
    else
        snprintf(full, sizeof full, "rank %d: %s", r->id, msg);
    pp__world_fail(r->world, st, full);
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
