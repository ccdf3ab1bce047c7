/* fuzz_server.c: the rank server (lib/run/server.c), fed a stream of requests as a hostile schedule driver would
 * write them. A two-stage run of a small model: one rank is pp__server_step serving this input through a real
 * channel, every other rank runs its canonical order in-process (pp__order_interp_step, with every send nonblocking,
 * so that nothing the served rank does deadlocks it that would not deadlock a correct partner), so sends,
 * receives, stashes and reduces meet real partners.
 * Every input runs to its end: a request that is refused ends the run with a message, never a crash, and no
 * message carries a control byte pplab did not write.
 *
 * The input: byte 0 picks the run (bits 0-2: a row of `runs`; 3: the served rank is rank 1, else rank 0; 4: eager
 * sends; 5: recomputation, where the row allows it; 6: two steps); then requests, each a little-endian u16 (bits
 * 0-14: its length, bit 15: posted to the ring, else a call) and its bytes. Once the input is spent the driver
 * asks for its next command (PP_RPC_NEXT), as a driver whose step function returned does.
 *
 * The driver end is a thread of this process on the channel pp__server_start made. The server's own driver
 * process cannot become one (it is given no executable) and is reaped at once; the server watches a stand-in
 * instead, a child that lives as long as this process, so a driver thread the machine is slow to schedule is
 * never taken for a dead driver and every input ends the same way on every run. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "host.h"
#include "order_interp.h"
#include "pp.h"
#include "rank.h"
#include "rpc.h"
#include "runtime.h"
#include "replay.h"
#include "schedules.h"
#include "server.h"

/* The runs an input picks from: every placement, whole and split backwards, one and several chunks, and two
 * replicas whose gradients are reduced (the served rank is then replica 0's). */
static const struct {
    const char *schedule;
    int M, v, D;
} runs[8] = {{"gpipe", 2, 1, 1}, {"1f1b", 2, 1, 1},  {"interleaved", 2, 2, 1}, {"zbh1", 2, 1, 1},
             {"zbv", 2, 2, 1},   {"naive", 1, 1, 1}, {"dp1f1b", 2, 1, 2},      {"dualpipev", 4, 2, 1}};

/* ---- the driver end ------------------------------------------------------------------------------------ */

typedef struct fake_driver {
    pp_chan *c;
    const uint8_t *at, *end; /* the requests not yet sent */
    uint32_t seq, posts;     /* its own counts, as a driver keeps them */
    int stop;                /* set once the run is over: nothing will answer any more */
} fake_driver;

static uint32_t load(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void store(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }

static void futex_wake(uint32_t *addr) { syscall(SYS_futex, addr, FUTEX_WAKE, 1, NULL, NULL, 0); }

/* What chan.c's driver side does after publishing: the server may sleep on the bell. */
static void ring_bell(pp_chan *c) {
    __atomic_add_fetch(&c->bell, 1, __ATOMIC_SEQ_CST);
    if (load(&c->req_sleeping)) futex_wake(&c->bell);
}

/* Waits for the reply to call f->seq (reply) or for a free slot of the ring; 0 once the run is over. A sleep is
 * bounded so that a stop the harness announced between the check and the sleep is seen soon. */
static int await_server(fake_driver *f, int reply) {
    uint32_t *word = reply ? &f->c->rep_seq : &f->c->served;
    uint32_t *sleeping = reply ? &f->c->rep_sleeping : &f->c->served_sleeping;
    for (int spin = 0;; spin++) {
        uint32_t v = load(word);
        if (reply ? v == f->seq : f->posts - v < PP_CHAN_POSTS) return 1;
        if (__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) return 0;
        if (spin < 64) {
            sched_yield();
            continue;
        }
        store(sleeping, 1);
        struct timespec ms = {0, 1000000};
        if (load(word) == v && !__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE))
            syscall(SYS_futex, word, FUTEX_WAIT, v, &ms, NULL, 0);
        store(sleeping, 0);
    }
}

/* A post: its bytes (what fits a slot) and the length word as given, which a hostile driver sets as it likes. */
static int send_post(fake_driver *f, const uint8_t *p, size_t n) {
    if (!await_server(f, 0)) return 0;
    uint32_t k = f->posts % PP_CHAN_POSTS;
    memcpy(f->c->post[k], p, n < PP_CHAN_POST_MSG ? n : PP_CHAN_POST_MSG);
    __atomic_store_n(&f->c->post_len[k], (uint32_t)n, __ATOMIC_RELEASE);
    store(&f->c->posted, ++f->posts);
    ring_bell(f->c);
    return 1;
}

static int send_call(fake_driver *f, const uint8_t *p, size_t n) {
    memcpy(f->c->req, p, n);
    __atomic_store_n(&f->c->req_len, (uint32_t)n, __ATOMIC_RELEASE);
    store(&f->c->req_seq, ++f->seq);
    ring_bell(f->c);
    return await_server(f, 1);
}

static void *drive(void *arg) {
    fake_driver *f = arg;
    static const uint32_t next = PP_RPC_NEXT; /* wire.h: host byte order */
    for (int ok = 1; ok;) {
        if (f->end - f->at < 2) {
            ok = send_call(f, (const uint8_t *)&next, sizeof next);
            continue;
        }
        unsigned w = f->at[0] | (unsigned)f->at[1] << 8;
        f->at += 2;
        size_t n = w & 0x7fff, left = (size_t)(f->end - f->at);
        if (n > left) n = left;
        const uint8_t *p = f->at;
        f->at += n;
        ok = w >> 15 ? send_post(f, p, n) : send_call(f, p, n);
    }
    return NULL;
}

/* ---- the ranks --------------------------------------------------------------------------------------- */

static pp_server *served_srv;
static int served_rank;

static void step(pp_rank *r) {
    if (r->id != served_rank) {
        pp__order_interp_step(r); /* the canonical order, set for each input */
        return;
    }
    /* what pp__run_program does for a sandboxed rank, for this one alone */
    r->srv = served_srv;
    pp__server_step(r);
}

/* ---- one input ----------------------------------------------------------------------------------------- */

static pid_t stand_in_pid;

/* At exit: the stand-in ended and reaped here, so that no zombie of it is left to an init that may not reap. */
static void stand_in_end(void) {
    if (stand_in_pid <= 0) return;
    kill(stand_in_pid, SIGKILL);
    while (waitpid(stand_in_pid, NULL, 0) < 0 && errno == EINTR) {}
}

/* The process the server watches as its driver: one for all inputs, which never ends before this process. */
static pid_t stand_in(void) {
    pid_t pid = stand_in_pid;
    if (pid > 0) return pid;
    pid_t parent = getpid();
    pid = fork();
    if (pid == 0) {
        /* it holds nothing of this process's open: a reader of its output sees the end when it ends */
        syscall(SYS_close_range, 0u, ~0u, 0u);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);
        for (;;) pause();
    }
    fuzz_require(pid > 0, "cannot fork the driver's stand-in");
    stand_in_pid = pid;
    atexit(stand_in_end);
    return pid;
}

/* pplab's own fatal check (PP_ASSERT, PP_DIE) reached from a driver's bytes is a bug: abort, so the input is
 * kept, instead of the exit pp__die would make. */
static void die_abort(const char *what, const char *hint) {
    fprintf(stderr, "fuzz: pp__die reached: %s (hint: %s)\n", what, hint ? hint : "none");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pp__die_set_handler(die_abort);
    if (size < 1) return 0;
    unsigned opt = data[0];
    pp_run_config cfg;
    pp__config_defaults(&cfg);
    cfg.schedule = pp__schedule_def(runs[opt & 7].schedule);
    cfg.M = runs[opt & 7].M;
    cfg.v = runs[opt & 7].v;
    cfg.D = runs[opt & 7].D;
    cfg.P = 2;
    /* a model just large enough to have every kind of parameter: a whole run takes about a millisecond */
    cfg.mb_size = 1, cfg.seq = 2, cfg.hidden = 8, cfg.vocab = 8;
    cfg.eager = (opt >> 4) & 1;
    cfg.recompute = (opt >> 5) & 1 && !cfg.schedule->weight_halves;
    cfg.steps = (opt >> 6) & 1 ? 2 : 1;
    char err[512];
    fuzz_require(!pp__config_check(&cfg, err, sizeof err), "a run of the table is refused: %s", err);
    served_rank = (opt >> 3) & 1;

    pp_sandbox sb;
    memset(&sb, 0, sizeof sb);
    sb.exe_fd = sb.obj_fd = -1;
    pp_server *s = pp__server_start(&cfg, &sb, cfg.schedule->symbol, served_rank, err, sizeof err);
    fuzz_require(s, "pp__server_start: %s", err);
    /* server.c's struct pp_server begins with its pp_driver: checked, so that a change of layout fails here */
    pp_driver *d = (pp_driver *)(void *)s;
    fuzz_require(d->chan && d->chan->facts.magic == PP_CHAN_MAGIC && d->chan->facts.rank == served_rank &&
                     d->pid > 0 && !d->reaped,
                 "the server does not begin with its driver");
    int st;
    pid_t w;
    while ((w = waitpid(d->pid, &st, 0)) < 0 && errno == EINTR) {}
    fuzz_require(w == d->pid && WIFEXITED(st), "the server's driver process was not reaped");
    d->pid = stand_in();
    d->spawn_failed[0] = 0;
    served_srv = s;

    pp_schedule order;
    fuzz_require(!pp__schedule_build(&order, cfg.schedule->name, cfg.P, cfg.M, cfg.v), "no row %s", cfg.schedule->name);
    pp__order_interp_set(&order);

    fake_driver f = {.c = d->chan, .at = data + 1, .end = data + size};
    pthread_t th;
    fuzz_require(!pthread_create(&th, NULL, drive, &f), "cannot start the driver thread");
    pp_run_result res;
    pp__run(&cfg, step, &res);
    __atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
    futex_wake(&d->chan->rep_seq);
    futex_wake(&d->chan->served);
    pthread_join(th, NULL);

    fuzz_require(res.status >= PP_OK && res.status < PP_STATUS_COUNT, "status %d", (int)res.status);
    fuzz_require(res.status == PP_OK || res.error[0], "a failed run (%s) without a message",
                 pp__status_name(res.status));
    for (const unsigned char *p = (const unsigned char *)res.error; *p; p++)
        fuzz_require((*p >= 32 && *p != 127) || *p == '\n' || *p == '\t', "control byte %#x in the report: %s", *p,
                     res.error);
    /* the stand-in stays for the next input: pp__driver_stop kills only a driver it has not seen end */
    d->reaped = 1;
    pp__server_stop(s, res.status == PP_OK);
    pp__result_free(&res);
    pp__order_interp_set(NULL);
    pp__schedule_free(&order);
    served_srv = NULL;
    return 0;
}
