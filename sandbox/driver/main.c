/* main.c: the schedule driver's entry point. It maps the channel pplab handed over on descriptor 3, locks
 * itself down (nothing of the student's has run yet: the build refuses constructors, ifunc resolvers and
 * .preinit_array entries), then serves the runtime's commands until told to exit:
 *   GO    run the rank's step function once (one optimizer step)
 *   CALL  call one warm-up function with the given arguments; its answer travels with the next request
 *   EXIT  leave */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "driver.h"
#include "rpc.h"
#include "schedules.h"
#include "warmup_call.h"

/* Weak references: the student's object defines the one its lab needs (the build checks that it does). */
#define PP_STEP_DECLARE(fn) extern void fn(pp_rank *r) __attribute__((weak));
PP_SCHEDULE_STEPS(PP_STEP_DECLARE)
#undef PP_STEP_DECLARE
/* the warm-up's: a student may have deleted one, and the grader then fails that part alone */
#define PP_WU_DECLARE(field, symbol, type) extern type symbol __attribute__((weak));
PP_WARMUP_FUNCTIONS(PP_WU_DECLARE)
#undef PP_WU_DECLARE

typedef void (*step_fn)(pp_rank *r);

static step_fn step_named(const char *name) {
    static const struct {
        const char *name;
        step_fn fn;
#define PP_STEP_ENTRY(fn) {#fn, fn},
    } steps[] = {PP_SCHEDULE_STEPS(PP_STEP_ENTRY)};
#undef PP_STEP_ENTRY
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        if (!strcmp(name, steps[i].name)) return steps[i].fn;
    return NULL;
}

static void say(const char *s) { (void)!write(2, s, strlen(s)); }

int main(void) {
    prctl(PR_SET_NAME, "pplab-driver"); /* started through a descriptor, it would be called "4" */
    pp_chan *c = pp__chan_attach(PP_CHAN_FD);
    if (!c) {
        say("pplab-driver: no channel on descriptor 3: this program is started by pplab, not by hand\n");
        return 2;
    }
    close(PP_CHAN_FD);
    pp__drv_chan = c;
    pp_chan_facts f = c->facts; /* the student's code may write to the channel later; these stay as given */
    f.symbol[sizeof f.symbol - 1] = 0;
    char err[256];
    if (pp__drv_lockdown(f.sandbox, f.rank, err, sizeof err)) pp__drv_fatal(PP_RPC_SETUP_FAILED, err);
    pp_rank *r = pp__drv_rank_init(&f);
    step_fn step = NULL;
    if (f.mode == PP_CHAN_SCHEDULE && !(step = step_named(f.symbol))) {
        char msg[160];
        snprintf(msg, sizeof msg, "the lab's file does not define %s(): keep the function name the lab gives",
                 f.symbol);
        pp__drv_fatal(PP_RPC_MISUSE, msg);
    }
    static unsigned char answer[PP_CHAN_MSG - 64], args[PP_CHAN_MSG];
    size_t answer_len = 0;
    for (;;) {
        pp_wire w;
        unsigned st;
        pp__drv_begin(&w, PP_RPC_NEXT);
        pp__wire_put(&w, answer, answer_len);
        pp_wire_in in = pp__drv_call(&w, &st);
        /* the arguments leave the shared slot before any student code runs again */
        size_t nargs = pp__wire_left(&in);
        memcpy(args, pp__wire_view(&in, nargs), nargs);
        pp__drv_end();
        if (st == PP_REPLY_GO && step) {
            step(r);
            answer_len = 0;
        } else if (st == PP_REPLY_CALL && f.mode == PP_CHAN_WARMUP) {
            pp_wire_in a;
            pp_wire out;
            pp__wire_in_init(&a, args, nargs);
            pp__wire_init_fixed(&out, answer, sizeof answer);
#define PP_WU_INIT(field, symbol, type) .field = symbol,
            static const pp_warmup_fns fns = {PP_WARMUP_FUNCTIONS(PP_WU_INIT)};
#undef PP_WU_INIT
            pp__warmup_call(&fns, &a, &out);
            answer_len = out.bad ? 0 : out.len;
        } else {
            fflush(stdout);
            exit(0);
        }
    }
}
