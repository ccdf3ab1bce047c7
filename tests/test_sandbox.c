/* test_sandbox.c: the sandbox's promises that are not about one submission: where the machine refuses seccomp
 * or the uid switch, grading stops with one line instead of running unsandboxed (unless told to); libpp.so
 * exports exactly pp.h; an object for --in-process binds to pplab's own runtime; the driver channel keeps the
 * order of its requests. Tests run from the project root. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan.h"
#include "testutil.h"

static char out[1 << 16];

/* Runs `build/pplab ARGS` in a child that first loads a seccomp filter refusing (with EPERM) the calls in deny;
 * returns the exit status, with stdout and stderr in out. */
static int pplab_refused(const char *args, const int *deny, int ndeny) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "NO_COLOR=1 build/pplab %s 2>&1", args);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
        for (int i = 0; i < ndeny; i++) seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), deny[i], 0);
        if (!f || seccomp_load(f)) _exit(99);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(98);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t k;
    while (n < sizeof out - 1 && (k = read(fds[0], out + n, sizeof out - 1 - n)) > 0) n += (size_t)k;
    out[n] = 0;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

TestSuite(sandbox, .timeout = 120);

/* As a container profile does: seccomp() and prctl() refused. */
Test(sandbox, no_seccomp_means_no_grading_unless_told) {
    const int deny[] = {SCMP_SYS(seccomp), SCMP_SYS(prctl)};
    int rc = pplab_refused("grade --impl solutions --lab naive --quiet", deny, 2);
    cr_expect_eq(rc, 2, "grading must stop where seccomp is refused, got %d:\n%s", rc, out);
    cr_expect(strstr(out, "this machine refuses the sandbox: loading a seccomp filter failed (Operation not "
                          "permitted)"), "%s", out);
    cr_expect(strstr(out, "--unsafe-no-sandbox"), "the way out is named: %s", out);
    cr_expect_eq(lines(out), 1, "one line: %s", out);
    rc = pplab_refused("run --impl solutions --schedule naive --stages 2 --microbatches 1", deny, 2);
    cr_expect_neq(rc, 0, "pplab run must stop too:\n%s", out);
    cr_expect(strstr(out, "refuses the sandbox") && strstr(out, "--in-process"), "%s", out);
    rc = pplab_refused("grade --impl solutions --lab naive --quiet --unsafe-no-sandbox", deny, 2);
    cr_expect_eq(rc, 0, "with --unsafe-no-sandbox the solutions grade as before, got %d:\n%s", rc, out);
}

Test(sandbox, no_uid_switch_means_no_grading_as_root) {
    if (geteuid() != 0) test_skip("not root: grading does not switch uid");
    const int deny[] = {SCMP_SYS(setresuid), SCMP_SYS(setgroups), SCMP_SYS(setresgid)};
    int rc = pplab_refused("grade --impl solutions --lab naive --quiet", deny, 3);
    cr_expect_eq(rc, 2, "grading must stop where the uid switch is refused, got %d:\n%s", rc, out);
    cr_expect(strstr(out, "this machine refuses the sandbox: switching to uid"), "%s", out);
    cr_expect_eq(lines(out), 1, "one line: %s", out);
}

/* The function names declared in pp.h, read from the header itself. */
static int pp_h_functions(char names[][64], int cap) {
    FILE *f = fopen("lib/pp.h", "r");
    cr_assert(f, "run from the project root");
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < cap) {
        if (!isalpha((unsigned char)line[0]) || !strncmp(line, "typedef", 7) || !strncmp(line, "extern", 6)) continue;
        /* the first identifier pp_... followed by '(' is the declared function */
        for (char *at = strstr(line, "pp_"); at; at = strstr(at + 1, "pp_")) {
            if (at > line && (isalnum((unsigned char)at[-1]) || at[-1] == '_')) continue;
            size_t k = 0;
            while (isalnum((unsigned char)at[k]) || at[k] == '_') k++;
            if (at[k] != '(') continue;
            snprintf(names[n++], 64, "%.*s", (int)k, at);
            break;
        }
    }
    fclose(f);
    return n;
}

Test(sandbox, libpp_exports_exactly_pp_h) {
    static char want[64][64];
    int n = pp_h_functions(want, 64);
    cr_assert_gt(n, 20, "pp.h should declare its functions (found %d)", n);
    FILE *p = popen("nm -D --defined-only build/libpp.so", "r");
    cr_assert(p, "nm (binutils) is needed");
    char line[512];
    int seen = 0, extra = 0;
    while (fgets(line, sizeof line, p)) {
        char addr[64], type[8], name[256];
        if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3) continue;
        int known = 0;
        for (int i = 0; i < n; i++) known |= !strcmp(name, want[i]);
        seen += known;
        if (!known) {
            extra++;
            cr_expect(0, "libpp.so exports %s, which pp.h does not declare", name);
        }
    }
    pclose(p);
    cr_expect_eq(seen, n, "libpp.so exports %d of the %d functions of pp.h", seen, n);
    cr_expect_eq(extra, 0);
}

/* README.md and docs/design.md count pp.h's functions for the reader: the count must be pp.h's own. */
Test(sandbox, the_docs_count_pp_h_functions_right) {
    static char want[64][64];
    int n = pp_h_functions(want, 64);
    static const char *const docs[] = {"README.md", "docs/design.md"};
    for (int d = 0; d < 2; d++) {
        FILE *f = fopen(docs[d], "r");
        cr_assert(f, "%s is missing", docs[d]);
        static char text[1 << 18];
        text[fread(text, 1, sizeof text - 1, f)] = 0;
        fclose(f);
        char says[32];
        snprintf(says, sizeof says, "%d functions", n);
        cr_expect(strstr(text, says) != NULL, "%s does not say pp.h has %s", docs[d], says);
    }
}

/* An --in-process object carries no libpp of its own: its pp.h calls can only bind to pplab's runtime. */
Test(sandbox, in_process_objects_bind_to_pplab) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "build/pplab run --impl solutions --schedule gpipe --stages 2 --microbatches 2 "
                              "--in-process > /dev/null 2>&1");
    cr_assert_eq(system(cmd), 0, "pplab run --in-process failed");
    int needs = system("readelf -d build/impl/solutions/gpipe.so | grep -q 'NEEDED.*libpp'");
    cr_expect_neq(needs, 0, "the in-process object must not need libpp.so");
}

/* ---- the channel's order ---------------------------------------------------------------------------------- */

static int chan_alive(void *ctx) {
    (void)ctx;
    return 1;
}

enum { CHAN_ROUNDS = 2000000, CHAN_SECONDS = 20 };

/* The last round the driver makes: CHAN_ROUNDS, or fewer when a loaded machine makes them slower than
 * CHAN_SECONDS (two spinning threads without two free cores), set before that round's call. */
static _Atomic uint32_t chan_last = CHAN_ROUNDS;

/* The driver's side of chan_keeps_the_drivers_order: round i posts 1 + i % 3 requests, each carrying its post
 * number, then makes a call carrying how many posts came before it, as a step function's last pp.h calls
 * (posted) are followed by the call that ends its step. */
static void *chan_driver(void *arg) {
    pp_chan *c = arg;
    uint32_t posts = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t i = 1; i <= CHAN_ROUNDS; i++) {
        if (i % 1024 == 0 && (clock_gettime(CLOCK_MONOTONIC, &t), t.tv_sec - t0.tv_sec >= CHAN_SECONDS))
            atomic_store(&chan_last, i);
        /* a delay that sweeps across the runtime's look at the counters after the last reply */
        for (volatile uint32_t d = 0; d < i % 61; d++) {}
        for (uint32_t k = 0; k <= i % 3; k++, posts++) {
            unsigned char *slot = pp__chan_post_slot(c, posts);
            memcpy(slot, &posts, sizeof posts);
            pp__chan_post(c, posts, sizeof posts);
        }
        memcpy(c->req, &posts, sizeof posts);
        pp__chan_call(c, i, sizeof posts);
        if (atomic_load(&chan_last) == i) break;
    }
    return NULL;
}

/* A call is taken only after every post published before it, however the two sides interleave: the runtime
 * that took a step's ending call ahead of its last posts ran those (an optimizer step, say) in the next step, or
 * never after the last one. The race is between two of the runtime's loads, which a round of two spinning threads
 * hit about once in 250 000 on two cores: two million rounds, about 2 s, or what 20 s allow where other work holds
 * the cores (the spinning sides then wait their turns, and the race is rarer still). */
Test(sandbox, chan_keeps_the_drivers_order, .timeout = 120) {
    pp_chan *c;
    int fd;
    cr_assert_eq(pp__chan_create(&c, &fd), 0, "cannot make a channel: %s", strerror(errno));
    /* both sides spin: the runtime then looks at the counters while the driver writes them */
    c->facts.spin_ns = 1000000;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, chan_driver, c), 0);
    uint32_t seq = 0, taken = 0, got, bad = 0, first_bad = 0;
    unsigned char buf[PP_CHAN_MSG];
    size_t len;
    int posted;
    while (seq != atomic_load(&chan_last)) {
        cr_assert(pp__chan_await_request(c, &seq, &taken, &posted, 1000000, 1000, chan_alive, NULL, buf, sizeof buf, &len));
        cr_assert_eq(len, sizeof got);
        memcpy(&got, buf, sizeof got);
        if (posted) {
            if (got != taken - 1 && !bad++) first_bad = taken;
            pp__chan_served(c, taken);
        } else {
            if (got != taken && !bad++) first_bad = seq;
            pp__chan_reply(c, seq, 0);
        }
    }
    pthread_join(th, NULL);
    cr_expect_eq(bad, 0, "%u requests of %u rounds were taken out of the driver's order, the first at %u", bad,
                 seq, first_bad);
    if (seq < CHAN_ROUNDS) cr_log_info("a loaded machine: %u rounds of %d in %d s", seq, CHAN_ROUNDS, CHAN_SECONDS);
    pp__chan_unmap(c);
    close(fd);
}

/* As root, the build runs as a uid of its own in a folder under $TMPDIR; a $TMPDIR that uid cannot enter (inside a
 * folder only root may, as a test's or a job's scratch often is) gives way to /tmp: the lab still builds and runs,
 * and nothing is left in either folder. */
Test(sandbox, a_tmpdir_the_build_cannot_enter_gives_way_to_tmp, .timeout = 120) {
    if (geteuid() != 0) test_skip("the build changes to a uid of its own only as root");
    char dir[] = "/tmp/pplab-tmpdir-XXXXXX", cmd[1024];
    cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    /* a copy of the reference: a folder never built before, so the run must build it */
    snprintf(cmd, sizeof cmd, "chmod 0700 '%s' && mkdir -m 0755 '%s/tmp' && cp -r solutions '%s/impl' && "
             "TMPDIR='%s/tmp' NO_COLOR=1 build/pplab run --impl '%s/impl' --schedule gpipe --stages 2 "
             "--microbatches 2 2>&1", dir, dir, dir, dir, dir);
    int rc = test_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "the build under an unreachable TMPDIR failed (exit %d):\n%s", rc, out);
    cr_expect(strstr(out, "bubble: "), "%s", out);
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s/tmp')\"", dir);
    cr_expect_eq(system(cmd), 0, "the build left files in its TMPDIR");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}
