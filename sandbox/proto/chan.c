/* chan.c: the shared-memory channel of chan.h: sequence numbers, a ring of posts, a brief spin, then a futex
 * sleep. The sleeping flags let the side that publishes skip the wake-up system call while the other side still
 * spins or runs. */
#include "chan.h"

#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint32_t load(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void store(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }

/* Shared (not process-private) futex calls: the two ends are different processes. */
static void futex_wait(uint32_t *addr, uint32_t val, int timeout_ms) {
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    syscall(SYS_futex, addr, FUTEX_WAIT, val, timeout_ms >= 0 ? &ts : NULL, NULL, 0);
}

static void futex_wake(uint32_t *addr) { syscall(SYS_futex, addr, FUTEX_WAKE, 1, NULL, NULL, 0); }

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A hint to the core that this is a spin loop (and, on a hyperthread, to let its sibling run). */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spins up to spin_ns while *word == old; returns the value it last saw. */
static uint32_t spin_while(const uint32_t *word, uint32_t old, int64_t spin_ns) {
    uint32_t v = load(word);
    if (v != old || spin_ns <= 0) return v;
    int64_t t0 = now_ns();
    for (unsigned it = 1;; it++) {
        cpu_relax();
        if ((v = load(word)) != old) return v;
        if (it % 64 == 0 && now_ns() - t0 > spin_ns) return v;
    }
}

/* Publishes *word = v and wakes the other side if it said it sleeps. */
static void publish(uint32_t *word, uint32_t v, uint32_t *sleeping) {
    store(word, v);
    if (load(sleeping)) futex_wake(word);
}

/* Sleeps on *word while it equals old, announcing it in *sleeping; at most timeout_ms (-1: no limit). */
static void sleep_on(uint32_t *word, uint32_t old, uint32_t *sleeping, int timeout_ms) {
    store(sleeping, 1);
    if (load(word) == old) futex_wait(word, old, timeout_ms);
    store(sleeping, 0);
}

int pp__chan_create(pp_chan **c, int *fd) {
    int f = memfd_create("pplab-channel", MFD_CLOEXEC);
    if (f < 0) return -1;
    if (ftruncate(f, (off_t)sizeof(pp_chan)) != 0) {
        int e = errno;
        close(f);
        errno = e;
        return -1;
    }
    void *p = mmap(NULL, sizeof(pp_chan), PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(f);
        errno = e;
        return -1;
    }
    memset(p, 0, sizeof(pp_chan));
    *c = p;
    (*c)->facts.magic = PP_CHAN_MAGIC;
    (*c)->refused_syscall = -1;
    *fd = f;
    return 0;
}

void pp__chan_unmap(pp_chan *c) {
    if (c) munmap(c, sizeof *c);
}

/* A private copy of n bytes (read once, bounded by max and cap) from a slot the driver may still write. */
static size_t copy_out(void *buf, size_t cap, const void *slot, const uint32_t *len_word, size_t max) {
    uint32_t n = __atomic_load_n(len_word, __ATOMIC_ACQUIRE);
    if (n > max) n = (uint32_t)max;
    if (n > cap) n = (uint32_t)cap;
    memcpy(buf, slot, n);
    return n;
}

int pp__chan_await_request(pp_chan *c, uint32_t *seq, uint32_t *taken, int *posted, int64_t spin_ns,
                           int timeout_ms, int (*alive)(void *), void *ctx, void *buf, size_t cap, size_t *len) {
    for (int spun = 0;;) {
        uint32_t bell = load(&c->bell);
        /* posts first: the driver published every post before the call that follows them */
        if (load(&c->posted) != *taken) {
            uint32_t k = *taken % PP_CHAN_POSTS;
            *len = copy_out(buf, cap, c->post[k], &c->post_len[k], PP_CHAN_POST_MSG);
            ++*taken;
            *posted = 1;
            return 1;
        }
        uint32_t now = load(&c->req_seq);
        if (now != *seq) {
            /* the driver publishes a post before the call after it, but it may have done both since posted was
             * read above: a post seen now was made before this call, and runs first */
            if (load(&c->posted) != *taken) continue;
            *len = copy_out(buf, cap, c->req, &c->req_len, PP_CHAN_MSG);
            *seq = now;
            *posted = 0;
            return 1;
        }
        if (!spun) {
            spun = 1;
            if (spin_while(&c->bell, bell, spin_ns) != bell) continue;
        }
        sleep_on(&c->bell, bell, &c->req_sleeping, timeout_ms);
        if (load(&c->bell) == bell && !alive(ctx)) {
            /* what it published before it ended still counts */
            if (load(&c->posted) == *taken && load(&c->req_seq) == *seq) return 0;
        }
    }
}

void pp__chan_reply(pp_chan *c, uint32_t seq, size_t len) {
    __atomic_store_n(&c->rep_len, (uint32_t)len, __ATOMIC_RELEASE);
    publish(&c->rep_seq, seq, &c->rep_sleeping);
}

void pp__chan_served(pp_chan *c, uint32_t n) { publish(&c->served, n, &c->served_sleeping); }

pp_chan *pp__chan_attach(int fd) {
    void *p = mmap(NULL, sizeof(pp_chan), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return NULL;
    pp_chan *c = p;
    if (c->facts.magic != PP_CHAN_MAGIC) {
        munmap(p, sizeof *c);
        return NULL;
    }
    return c;
}

/* Bumps the runtime's bell and wakes it if it sleeps. */
static void ring_bell(pp_chan *c) {
    __atomic_add_fetch(&c->bell, 1, __ATOMIC_SEQ_CST);
    if (load(&c->req_sleeping)) futex_wake(&c->bell);
}

size_t pp__chan_call(pp_chan *c, uint32_t seq, size_t len) {
    __atomic_store_n(&c->req_len, (uint32_t)len, __ATOMIC_RELEASE);
    store(&c->req_seq, seq);
    ring_bell(c);
    uint32_t old = seq - 1, v = spin_while(&c->rep_seq, old, c->facts.spin_ns);
    while (v != seq) {
        sleep_on(&c->rep_seq, v, &c->rep_sleeping, -1);
        v = load(&c->rep_seq);
    }
    uint32_t n = __atomic_load_n(&c->rep_len, __ATOMIC_ACQUIRE);
    return n > PP_CHAN_MSG ? PP_CHAN_MSG : n;
}

/* Waits while fewer than want posts are served (served - want, as unsigned, counts from the wrap). Posts do not
 * wake the runtime by themselves, so this does first. */
static void wait_served(pp_chan *c, uint32_t want) {
    uint32_t v = load(&c->served);
    if ((int32_t)(v - want) < 0) ring_bell(c);
    while ((int32_t)(v - want) < 0) {
        v = spin_while(&c->served, v, c->facts.spin_ns);
        if ((int32_t)(v - want) >= 0) break;
        sleep_on(&c->served, v, &c->served_sleeping, -1);
        v = load(&c->served);
    }
}

unsigned char *pp__chan_post_slot(pp_chan *c, uint32_t n) {
    if (n >= PP_CHAN_POSTS) wait_served(c, n - PP_CHAN_POSTS + 1);
    return c->post[n % PP_CHAN_POSTS];
}

void pp__chan_post(pp_chan *c, uint32_t n, size_t len) {
    __atomic_store_n(&c->post_len[n % PP_CHAN_POSTS], (uint32_t)(len > PP_CHAN_POST_MSG ? PP_CHAN_POST_MSG : len),
                     __ATOMIC_RELEASE);
    /* no wake-up: the runtime takes the posts when the next call (or a wait for one to be served) rings, so a
     * run of posts costs the driver no system call, and the runtime one wake-up for all of them */
    store(&c->posted, n + 1);
}

void pp__chan_drain(pp_chan *c, uint32_t n) { wait_served(c, n); }
