/* fuzz_orderfile.c: an order in PyTorch's compute-only CSV (grader/view/order_csv.c), as pplab run --order reads
 * a file someone else wrote: torch's _dump_csv, a colleague's, a hand-edited one. Every input is read or refused
 * with one printable line naming the file; what is read has the shape the runner relies on (each action's
 * micro-batch and chunk in range, each on the rank that holds its stage), and replays on the virtual clock or
 * is found unable to complete, never anything else; written back, it reads the same. */
#include <unistd.h>

#include "error.h"
#include "fuzz.h"
#include "order_csv.h"
#include "placement.h"

/* The order as the writer would put it: a trace per rank, each action an event on its virtual stage. */
static void to_traces(const pp_schedule *s, pp_trace *tr) {
    for (int r = 0; r < s->P; r++)
        for (int i = 0; i < s->n[r]; i++) {
            const pp_sched_op *o = &s->ops[r][i];
            pp_event e = {.rank = r, .op = o->kind == 'F' ? PP_OP_F : o->kind == 'W' ? PP_OP_W : PP_OP_B,
                          .mb = o->mb, .chunk = o->chunk, .vstage = pp__place_vstage(s->P, s->vshape, r, o->chunk),
                          .flags = o->kind == 'B' && o->split ? PP_EV_SPLIT : 0};
            pp__trace_add(&tr[r], &e);
        }
}

static void same_order(const pp_schedule *a, const pp_schedule *b) {
    fuzz_require(a->P == b->P && a->M == b->M && a->v == b->v && a->vshape == b->vshape,
                 "written back, the order reads P=%d M=%d v=%d V=%d, not P=%d M=%d v=%d V=%d", b->P, b->M, b->v,
                 b->vshape, a->P, a->M, a->v, a->vshape);
    for (int r = 0; r < a->P; r++) {
        fuzz_require(a->n[r] == b->n[r], "rank %d: %d actions written, %d read back", r, a->n[r], b->n[r]);
        for (int i = 0; i < a->n[r]; i++) {
            const pp_sched_op *x = &a->ops[r][i], *y = &b->ops[r][i];
            fuzz_require(x->kind == y->kind && x->mb == y->mb && x->chunk == y->chunk && x->split == y->split,
                         "rank %d action %d changed on the way back", r, i);
        }
    }
}

/* One file for every input's write-back, made once and removed when the process ends. */
static char back_path[] = "/tmp/pplab-fuzz-order-XXXXXX.csv";

static void back_remove(void) { unlink(back_path); }

static const char *back_file(void) {
    static int made;
    if (!made) {
        int fd = mkstemps(back_path, 4);
        if (fd < 0) abort();
        close(fd);
        atexit(back_remove);
        made = 1;
    }
    return back_path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pp_schedule s;
    char err[1024] = "";
    int prefer = size && (data[0] & 1);
    if (pp__order_csv_parse("f.csv", (const char *)data, size, prefer, &s, err, sizeof err)) {
        fuzz_one_line(err, sizeof err, "a refusal");
        fuzz_require(!strncmp(err, "--order f.csv", 13), "a refusal that does not name the file: %s", err);
        return 0;
    }
    fuzz_require(s.P >= 1 && s.P <= 64 && s.v >= 1 && s.v <= 16 && s.M >= 1 && s.M <= 1024,
                 "read P=%d v=%d M=%d", s.P, s.v, s.M);
    for (int r = 0; r < s.P; r++)
        for (int i = 0; i < s.n[r]; i++) {
            const pp_sched_op *o = &s.ops[r][i];
            fuzz_require(o->mb >= 0 && o->mb < s.M && o->chunk >= 0 && o->chunk < s.v, "rank %d action %d: mb %d "
                         "chunk %d", r, i, o->mb, o->chunk);
            fuzz_require(strchr("FBW", o->kind) && (o->kind == 'B' || !o->split), "rank %d action %d: kind %c", r, i,
                         o->kind);
        }
    /* the replay either completes or says it cannot: an order's mistakes are the run's to report */
    size_t S = (size_t)(s.P * s.v);
    pp_costs k = {.f = pp__xcalloc(S, sizeof *k.f), .b = pp__xcalloc(S, sizeof *k.b)};
    for (size_t i = 0; i < S; i++) k.f[i] = 1, k.b[i] = 2;
    double span = pp__schedule_replay(&s, &k, NULL);
    fuzz_require(span == -1 || span >= 0, "a replay of %g", span);
    free(k.f), free(k.b);
    /* written back and read again, the same order */
    pp_trace *tr = pp__xcalloc((size_t)s.P, sizeof *tr);
    to_traces(&s, tr);
    const char *path = back_file();
    fuzz_require(pp__order_csv_write(tr, s.P, path, err, sizeof err) == 0, "the writer refused: %s", err);
    pp_schedule back;
    fuzz_require(pp__order_csv_read(path, s.vshape, &back, err, sizeof err) == 0, "written back, refused: %s", err);
    same_order(&s, &back);
    for (int r = 0; r < s.P; r++) pp__trace_clear(&tr[r]);
    free(tr);
    pp__schedule_free(&back);
    pp__schedule_free(&s);
    return 0;
}
