/* fuzz_chan.c: the trusted end of a driver's channel (sandbox/proto/chan.c's runtime side, sandbox/host/host.c's
 * requests, replies and death report) over a channel whose every byte a hostile driver wrote: its counters,
 * lengths, slots and facts, and more of them between the runtime's reads. The runtime takes a post before a
 * call, copies out no more than the slot holds, counts what it took by its own numbers, never waits when told not
 * to, and reads and writes nothing outside the channel: it lies against a page no access may touch, with a
 * canary below it.
 *
 * The input: u32 seq and u32 taken (the runtime's own counts, which a long run takes anywhere), u32 the wait
 * status the driver ended with, a byte of fill (bit 0: the overlay repeats over the whole channel, else it covers
 * its own length from the start and pp__chan_create's zeros stay), a byte n and n script bytes (below), then the
 * overlay: the channel's bytes from offset 0, as the driver left them. */
#include <sys/mman.h>
#include <unistd.h>

#include "chan.h"
#include "fuzz.h"
#include "host.h"

enum { SCRIPT_MAX = 64 };

/* The channel's room: PROT_NONE pages on both sides, the channel flush against the upper one. */
static unsigned char *room_lo;
static size_t room_slack;
static pp_chan *chan;
static unsigned char *canary_at;

static void room_make(void) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = (sizeof(pp_chan) + page - 1) / page;
    unsigned char *m = mmap(NULL, (pages + 2) * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    fuzz_require(m != MAP_FAILED, "cannot map the channel's room");
    fuzz_require(!mprotect(m + page, pages * page, PROT_READ | PROT_WRITE), "cannot open the channel's room");
    room_lo = m + page;
    room_slack = pages * page - sizeof(pp_chan);
    chan = (pp_chan *)(room_lo + room_slack);
    canary_at = room_lo;
    fuzz_require(((uintptr_t)chan & 7) == 0, "the channel is not aligned");
}

static int alive_left;
/* The driver runs for alive_left more checks, then is gone: a wait for a request always ends. */
static int alive(void *ctx) {
    (void)ctx;
    return alive_left-- > 0;
}

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* What the channel holds to take: the trusted side's next request, seen from outside it. */
static int something_to_take(const pp_chan *c, const pp_driver *d) {
    return __atomic_load_n(&c->posted, __ATOMIC_SEQ_CST) != d->taken ||
           __atomic_load_n(&c->req_seq, __ATOMIC_SEQ_CST) != d->seq;
}

/* Holds a request just taken to what the channel held before the take (a post before a call, a length no
 * larger than its slot, the bytes of that slot) and to the counts it must leave. */
static void check_take(const pp_chan *c, int got, uint32_t seq0, uint32_t taken0, uint32_t posted0, uint32_t req0,
                       uint32_t seq, uint32_t taken, int posted, const unsigned char *buf, size_t len) {
    if (!got) {
        fuzz_require(posted0 == taken0 && req0 == seq0, "nothing taken while the channel held a request");
        fuzz_require(seq == seq0 && taken == taken0, "counts moved without a request");
        return;
    }
    if (posted0 != taken0) {
        fuzz_require(posted, "a call taken before post %u", taken0);
        fuzz_require(taken == taken0 + 1 && seq == seq0, "a post moved the counts from %u/%u to %u/%u", seq0,
                     taken0, seq, taken);
        uint32_t k = taken0 % PP_CHAN_POSTS, want = c->post_len[k];
        fuzz_require(len == (want < PP_CHAN_POST_MSG ? want : PP_CHAN_POST_MSG), "post of %zu bytes, its length says %u",
                     len, want);
        fuzz_require(!memcmp(buf, c->post[k], len), "a post's bytes are not its slot's");
        return;
    }
    fuzz_require(req0 != seq0 && !posted, "a post taken where there was none");
    fuzz_require(seq == req0 && taken == taken0, "a call moved the counts to %u/%u", seq, taken);
    uint32_t want = c->req_len;
    fuzz_require(len == (want < PP_CHAN_MSG ? want : PP_CHAN_MSG), "call of %zu bytes, its length says %u", len, want);
    fuzz_require(!memcmp(buf, c->req, len), "a call's bytes are not its slot's");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!chan) room_make();
    if (size < 14) return 0;
    static pp_driver d; /* its request copy is a slot's size: not on the stack */
    memset(&d, 0, sizeof d);
    d.seq = rd32(data);
    d.taken = rd32(data + 4);
    int status = (int)rd32(data + 8);
    int tile = data[12] & 1;
    size_t n = data[13] < SCRIPT_MAX ? data[13] : SCRIPT_MAX;
    if (14 + n > size) n = size - 14;
    const uint8_t *script = data + 14, *over = script + n;
    size_t nover = size - 14 - n;

    /* the channel as the runtime makes it (pp__chan_create, then pp__driver_start's facts), then the driver's
     * bytes over it */
    pp_chan *made;
    int fd;
    fuzz_require(!pp__chan_create(&made, &fd), "pp__chan_create failed");
    made->facts.mode = PP_CHAN_SCHEDULE;
    made->facts.P = 2, made->facts.M = 4, made->facts.v = 1, made->facts.rank = 1;
    snprintf(made->facts.symbol, sizeof made->facts.symbol, "pp_gpipe_step");
    memcpy(chan, made, sizeof *chan);
    pp__chan_unmap(made);
    close(fd);
    memset(canary_at, 0xa5, room_slack);
    unsigned char *bytes = (unsigned char *)chan;
    if (nover && tile) {
        for (size_t at = 0; at < sizeof *chan; at += nover)
            memcpy(bytes + at, over, sizeof *chan - at < nover ? sizeof *chan - at : nover);
    } else if (nover) {
        memcpy(bytes, over, nover < sizeof *chan ? nover : sizeof *chan);
    }
    d.chan = chan;
    d.memory_limit = (size_t)256 << 20;

    unsigned char *buf = malloc(PP_CHAN_MSG); /* exactly the capacity the runtime passes: ASan sees past it */
    fuzz_require(buf, "out of memory");
    for (size_t i = 0; i < n; i++) {
        unsigned op = script[i] & 7, arg = script[i] >> 3;
        uint32_t seq0 = d.seq, taken0 = d.taken, posted0 = chan->posted, req0 = chan->req_seq;
        switch (op) {
        case 0: { /* a wait for a request that must not block: no spin or a short one, no sleep */
            int posted = -1;
            size_t len = 0;
            alive_left = arg & 1;
            int got = pp__chan_await_request(chan, &d.seq, &d.taken, &posted, arg & 2 ? 1000 : 0, 0, alive, NULL,
                                             buf, PP_CHAN_MSG, &len);
            check_take(chan, got, seq0, taken0, posted0, req0, d.seq, d.taken, posted, buf, len);
            if (got) d.posted = posted, d.pending = 1;
            break;
        }
        case 1: /* host.c's wait, only where it returns at once (it sleeps 20 ms on an idle channel) */
            if (!something_to_take(chan, &d)) break;
            d.spin_ns = 0;
            fuzz_require(pp__driver_next(&d), "pp__driver_next found nothing to take");
            check_take(chan, 1, seq0, taken0, posted0, req0, d.seq, d.taken, d.posted, d.req, d.req_len);
            fuzz_require(d.req_len <= sizeof d.req, "a request longer than its copy");
            break;
        case 2: { /* the answer to what was taken: a post counted served, a call replied to */
            int pending = d.pending, posted = d.posted;
            size_t len = (size_t)arg * 2048;
            pp__driver_reply(&d, len);
            fuzz_require(!d.pending, "still pending after the reply");
            if (pending && posted) fuzz_require(chan->served == d.taken, "served %u after %u posts", chan->served, d.taken);
            if (pending && !posted)
                fuzz_require(chan->rep_seq == d.seq && chan->rep_len == len, "reply %u of %u bytes for call %u of %zu",
                             chan->rep_seq, chan->rep_len, d.seq, len);
            break;
        }
        case 3:
            pp__chan_served(chan, d.taken);
            break;
        case 4:
            pp__chan_reply(chan, d.seq, (size_t)arg * 2048);
            break;
        case 5: /* the driver publishes more meanwhile */
            __atomic_add_fetch(&chan->posted, arg >> 1, __ATOMIC_SEQ_CST);
            if (arg & 1) __atomic_add_fetch(&chan->req_seq, 1, __ATOMIC_SEQ_CST);
            __atomic_add_fetch(&chan->bell, 1, __ATOMIC_SEQ_CST);
            break;
        case 6: /* ... or rewrites a length the runtime is about to read */
            if (arg & 1) chan->req_len = (arg >> 1) * 4500u;
            else chan->post_len[d.taken % PP_CHAN_POSTS] = (arg >> 1) * 9u;
            break;
        default: { /* the report of how the driver ended, from what it left in the channel */
            size_t cap = 16 + (size_t)arg * 24;
            char *msg = malloc(cap);
            fuzz_require(msg, "out of memory");
            const char *hint = NULL;
            pp_status st = pp__driver_death_of(&d, status, msg, cap, &hint);
            fuzz_require(st >= PP_OK && st < PP_STATUS_COUNT, "status %d", (int)st);
            fuzz_require(memchr(msg, 0, cap), "a death report that does not end in its buffer");
            fuzz_require(!hint || strlen(hint) < 4096, "a runaway hint");
            free(msg);
            break;
        }
        }
    }
    free(buf);
    for (size_t i = 0; i < room_slack; i++)
        fuzz_require(canary_at[i] == 0xa5, "a write %zu bytes below the channel", room_slack - i);
    return 0;
}
