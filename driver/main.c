/* main.c: the schedule driver's entry point, the same program for every submission. Nothing of the student's is
 * linked into it. It maps the channel pplab handed over on descriptor 3, locks itself down, and only then reads
 * the lab's object from descriptor 5 and loads it (loader.c), resolving its undefined names against the fixed
 * table of symtab.c; a second filter then takes away executable memory. The student's code first runs when a
 * command below calls one of its functions, or, in the grid lab, when its mapping is asked before the first
 * command (right after the driver said so with PP_RPC_GRID_ASK):
 *   GO    run the rank's step function once (one optimizer step)
 *   CALL  call one warm-up function with the given arguments; its answer travels with the next request
 *   EXIT  leave */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "driver.h"
#include "grid_call.h"
#include "loader.h"
#include "rpc.h"
#include "symbols.h"
#include "warmup_call.h"

static void say(const char *s) { (void)!write(2, s, strlen(s)); }

/* The whole object on descriptor fd, read into memory of its own (the file is never mapped: what is loaded is
 * what was read once). By offset: every rank's driver shares the one open file, and with it a file position.
 * NULL with the reason in err. */
static unsigned char *object_read(int fd, size_t *n, char *err, size_t len) {
    size_t cap = 1 << 16, got = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            snprintf(err, len, "out of memory reading the lab's object");
            return NULL;
        }
        ssize_t k = pread(fd, buf + got, cap - got, (off_t)got);
        if (k < 0) {
            snprintf(err, len, "cannot read the lab's object on descriptor %d", fd);
            free(buf);
            return NULL;
        }
        if (k == 0) break;
        got += (size_t)k;
        if (got == cap) {
            if (cap >= PP_LAB_MAX_OBJECT) {
                snprintf(err, len, "the lab's object is larger than the %zu KiB a lab may have",
                         (size_t)PP_LAB_MAX_OBJECT >> 10);
                free(buf);
                return NULL;
            }
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    *n = got;
    return buf;
}

/* The channel pplab handed over on descriptor 3, and a copy of its facts: the student's code may write to the
 * channel later; the copy stays as given. Exits with 2 when there is none (started by hand). */
static pp_chan_facts channel_attach(void) {
    pp_chan *c = pp__chan_attach(PP_CHAN_FD);
    if (!c) {
        say("pplab-driver: no channel on descriptor 3: this program is started by pplab, not by hand\n");
        exit(2);
    }
    close(PP_CHAN_FD);
    pp__drv_chan = c;
    pp_chan_facts f = c->facts;
    f.symbol[sizeof f.symbol - 1] = 0;
    return f;
}

/* Locks the process down, then reads the lab's object from descriptor 5, loads it into img and seals the
 * process (no executable memory from then on). Stops the run with the reason when a step fails. */
static void object_load_locked(const pp_chan_facts *f, pp_image *img) {
    char err[600];
    if (pp__drv_lockdown(f->sandbox, f->rank, err, sizeof err))
        pp__drv_stop(PP_RPC_SETUP_FAILED, PP_STOP_LOCKDOWN, errno, err);

    /* locked down: from here on the object's bytes are read, parsed and run */
    size_t n = 0;
    unsigned char *obj = object_read(PP_OBJ_FD, &n, err, sizeof err);
    close(PP_OBJ_FD);
    size_t nsyms;
    const pp_loader_symbol *syms = pp__drv_symbols(&nsyms);
    if (!obj || pp__loader_load(img, obj, n, syms, nsyms, PP_LAB_MAX_IMAGE, err, sizeof err))
        pp__drv_stop(PP_RPC_LOAD_FAILED, PP_STOP_OBJECT, 0, err);
    free(obj);
    if (f->sandbox && pp__drv_seal(err, sizeof err)) pp__drv_stop(PP_RPC_SETUP_FAILED, PP_STOP_SEAL, errno, err);
}

/* What the commands call in the loaded object: the rank's step function (a schedule; the run stops without one),
 * or the warm-up's functions, each of which a student may have deleted (the grader then fails that part alone). */
static void entry_points_find(const pp_chan_facts *f, const pp_image *img, void (**step)(pp_rank *),
                              pp_warmup_fns *fns) {
    *step = NULL;
    if (f->mode == PP_CHAN_SCHEDULE && !(*(void **)step = pp__loader_symbol(img, f->symbol)))
        pp__drv_stop(PP_RPC_MISUSE, PP_STOP_NO_STEP, 0, NULL);
    memset(fns, 0, sizeof *fns);
    if (f->mode == PP_CHAN_WARMUP) {
#define PP_WU_FIND(field, symbol, type) *(void **)&fns->field = pp__loader_symbol(img, #symbol);
        PP_WARMUP_FUNCTIONS(PP_WU_FIND)
#undef PP_WU_FIND
    }
}

/* The grid lab's mapping, asked once, before the first step (the runtime places the run by it): the answer,
 * written into answer (cap bytes), and its length (0 when it did not fit). */
static size_t grid_mapping_ask(const pp_chan_facts *f, const pp_image *img, unsigned char *answer, size_t cap) {
    pp_grid_place_fn *place;
    pp_grid_group_fn *group;
    *(void **)&place = pp__loader_symbol(img, "pp_tpgrid_place");
    *(void **)&group = pp__loader_symbol(img, "pp_tpgrid_group");
    if (!place || !group) pp__drv_stop(PP_RPC_MISUSE, PP_STOP_NO_STEP, place ? 2 : 1, NULL);
    /* the last word that is the driver's alone: the submission's code runs from the next line on */
    pp_wire w;
    unsigned st;
    pp__drv_begin(&w, PP_RPC_GRID_ASK);
    pp__drv_call(&w, &st);
    pp__drv_end();
    pp_wire out;
    pp__wire_init_fixed(&out, answer, cap);
    pp__grid_ask(f->T, f->P, f->D, place, group, &out);
    return out.bad ? 0 : out.len;
}

/* The runtime's commands, until it says EXIT (or anything but what this driver runs): each PP_RPC_NEXT carries
 * the answer of the command before (answer_len bytes of answer, a warm-up call's or the grid's mapping), and its
 * reply is the next command. */
__attribute__((noreturn)) static void commands_serve(const pp_chan_facts *f, pp_rank *r, void (*step)(pp_rank *),
                                                    const pp_warmup_fns *fns, unsigned char *answer, size_t cap,
                                                    size_t answer_len) {
    static unsigned char args[PP_CHAN_MSG];
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
            pp_wire_in go;
            pp__wire_in_init(&go, args, nargs);
            int sid = (int)pp__wire_get_i64(&go, 0, 0xffff), hrank = (int)pp__wire_get_i64(&go, 0, 0xfff);
            pp__drv_step_begin(sid, hrank);
            step(r);
            answer_len = 0;
        } else if (st == PP_REPLY_CALL && f->mode == PP_CHAN_WARMUP) {
            pp_wire_in a;
            pp_wire out;
            pp__wire_in_init(&a, args, nargs);
            pp__wire_init_fixed(&out, answer, cap);
            pp__warmup_call(fns, &a, &out);
            answer_len = out.bad ? 0 : out.len;
        } else {
            fflush(stdout);
            exit(0);
        }
    }
}

int main(void) {
    prctl(PR_SET_NAME, "pplab-driver"); /* started through a descriptor, it would be called "4" */
    pp_chan_facts f = channel_attach();
    static pp_image img;
    object_load_locked(&f, &img);
    pp_rank *r = pp__drv_rank_init(&f);
    void (*step)(pp_rank *);
    pp_warmup_fns fns;
    entry_points_find(&f, &img, &step, &fns);
    static unsigned char answer[PP_CHAN_MSG - 64];
    size_t answer_len = 0;
    if (f.mode == PP_CHAN_SCHEDULE && f.grid) answer_len = grid_mapping_ask(&f, &img, answer, sizeof answer);
    commands_serve(&f, r, step, &fns, answer, sizeof answer, answer_len);
}
