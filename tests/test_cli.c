/* test_cli.c: the command-line contract scripts and CI rely on, checked on the real binary: exact result
 * lines, timelines, errors for bad input, the no-GPU message, exit codes. Tests run from the project root. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "impl_build.h"
#include "schedules.h"
#include "testset.h"
#include "suite.h"
#include "testutil.h"

/* Runs `build/pplab ARGS` (stdout and stderr together); returns the exit status, output in out. */
static int pplab(char *out, size_t len, const char *args) {
    char dir[PATH_MAX], cmd[PATH_MAX + 1024];
    test_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "NO_COLOR=1 '%s/pplab' %s 2>&1", dir, args);
    return test_capture(cmd, out, len);
}

static char buf[1 << 16];

TestSuite(cli, .timeout = 60);

Test(cli, gpipe_seed_example_lines) {
    cr_assert_eq(pplab(buf, sizeof buf, "run --impl solutions --schedule gpipe --stages 4 --microbatches 6 --timeline"), 0, "%s", buf);
    cr_expect(strstr(buf, "\nbubble: 0.3333 (theory 0.3333)\npeak stashes: 6 6 6 6\n") != NULL, "%s", buf);
    cr_expect(strstr(buf, "GPU 0: F0 F1 F2 F3 F4 F5") != NULL, "%s", buf);
    cr_expect(strstr(buf, "GPU 3:") != NULL, "%s", buf);
}

Test(cli, forward_only_staircase) {
    cr_assert_eq(pplab(buf, sizeof buf, "run --impl solutions --schedule gpipe --stages 4 --microbatches 6 --timeline --forward-only"), 0, "%s", buf);
    cr_expect(strstr(buf, "GPU 0: F0 F1 F2 F3 F4 F5 .  .  .\n") != NULL, "%s", buf);
    cr_expect(strstr(buf, "GPU 3: .  .  .  F0 F1 F2 F3 F4 F5\n") != NULL, "%s", buf);
    cr_expect(strstr(buf, "Idle fraction: 33%") != NULL, "%s", buf);
}

Test(cli, bubble_at_24_and_1_microbatches) {
    pplab(buf, sizeof buf, "run --impl solutions --schedule gpipe --stages 4 --microbatches 24");
    cr_expect(strstr(buf, "bubble: 0.1111 (theory 0.1111)\npeak stashes: 24 24 24 24\n") != NULL, "%s", buf);
    pplab(buf, sizeof buf, "run --impl solutions --schedule gpipe --stages 4 --microbatches 1");
    cr_expect(strstr(buf, "bubble: 0.7500 (theory 0.7500)\npeak stashes: 1 1 1 1\n") != NULL, "%s", buf);
}

/* The output is `lines`, then each rank's stash memory (as many positive KiB figures as `lines` gave peak stashes),
 * and then the step's wall time, one line, nothing else. */
static void expect_lines_then_time(const char *out, const char *lines) {
    size_t n = strlen(lines);
    cr_expect(!strncmp(out, lines, n), "expected it to start with:\n%s\ngot:\n%s", lines, out);
    const char *peaks = strstr(lines, "peak stashes:"), *p = out + n;
    int ranks = 0, got = 0, used = 0;
    for (const char *q = peaks ? peaks + 13 : ""; *q && *q != '\n'; q++) ranks += q[-1] == ' ' && *q != ' ';
    cr_expect(!strncmp(p, "stash memory:", 13), "expected a line 'stash memory: ... KiB' after them, got: %s", p);
    p += strncmp(p, "stash memory:", 13) ? 0 : 13;
    for (double kib; sscanf(p, " %lf%n", &kib, &used) == 1 && kib > 0; p += used) got++;
    cr_expect(ranks > 0 && got == ranks && !strncmp(p, " KiB\n", 5), "%d KiB figures for %d ranks, then ' KiB': %s",
              got, ranks, out + n);
    p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p;
    double ms = -1;
    char tail[128] = "";
    cr_expect(sscanf(p, "time: %lf ms/step (%127[^)])\n", &ms, tail) == 2 && ms > 0,
              "expected a line 'time: X ms/step (...)' after them, got: %s", p);
    cr_expect(strchr(p, '\n') == out + strlen(out) - 1, "one time line, then nothing: %s", p);
}

Test(cli, interleaved_contract_lines) {
    cr_assert_eq(pplab(buf, sizeof buf, "run --impl solutions --schedule interleaved --stages 4 --microbatches 8 --chunks 2"), 0, "%s", buf);
    expect_lines_then_time(buf, "bubble: 0.1579 (theory 0.1579)\npeak stashes: 11 9 7 5\n");
}

Test(cli, onef1b_peaks) {
    pplab(buf, sizeof buf, "run --impl solutions --schedule 1f1b --stages 4 --microbatches 8");
    expect_lines_then_time(buf, "bubble: 0.2727 (theory 0.2727)\npeak stashes: 4 3 2 1\n");
    cr_expect(strstr(buf, "(1 step, which pays for first touches: --steps 5 for a median)") != NULL, "%s", buf);
}

/* With several steps, the median of those after the first, and the first apart. */
Test(cli, run_prints_the_median_step_time) {
    cr_assert_eq(pplab(buf, sizeof buf, "run --impl solutions --schedule gpipe --stages 2 --microbatches 4 --steps 4"), 0, "%s", buf);
    expect_lines_then_time(buf, "bubble: 0.2000 (theory 0.2000)\npeak stashes: 4 4\n");
    double med, first;
    const char *t = strstr(buf, "time: ");
    cr_assert(t && sscanf(t, "time: %lf ms/step (median of steps 2-4; step 1 %lf ms)", &med, &first) == 2, "%s", buf);
    cr_expect(med > 0 && first > 0, "%s", buf);
}

Test(cli, trace_csv_header_and_rows) {
    char path[] = "/tmp/pplab-trace-XXXXXX.csv", args[256];
    close(mkstemps(path, 4));
    snprintf(args, sizeof args, "run --impl solutions --schedule gpipe --stages 2 --microbatches 2 --trace %s", path);
    cr_assert_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    char line[512];
    cr_assert(fgets(line, sizeof line, f));
    cr_expect(strstr(line, "rank,op,microbatch,chunk") == line, "%s", line);
    cr_expect(strstr(line, "virtual_start,virtual_end") != NULL, "%s", line);
    int rows = 0, f_rows = 0;
    while (fgets(line, sizeof line, f)) rows++, f_rows += strstr(line, ",F,") != NULL;
    fclose(f);
    unlink(path);
    cr_expect_eq(f_rows, 4, "2 ranks x 2 micro-batches forwards, got %d", f_rows);
    cr_expect_eq(rows, 4 + 4 + 4 + 4, "F, B, SEND and RECV rows, got %d", rows);
}

/* --export-order writes what a run ran, as PyTorch's compute-only CSV: the reference solutions run their
 * canonical orders, so a real run's file and --canonical's are the same bytes, for whole backwards (1f1b), split
 * ones (zbh1: I and W cells) and the V (zbv: stage 2P-1-r on rank r); a step's order, not the clock, is written. */
Test(cli, exported_orders_are_what_the_run_ran) {
    static const char *const runs[] = {"--schedule 1f1b --stages 3 --microbatches 4",
                                       "--schedule zbh1 --stages 2 --microbatches 3",
                                       "--schedule zbv --stages 2 --microbatches 3 --chunks 2"};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        char ran[] = "/tmp/pplab-order-XXXXXX.csv", ideal[] = "/tmp/pplab-order-XXXXXX.csv", args[512];
        close(mkstemps(ran, 4));
        close(mkstemps(ideal, 4));
        snprintf(args, sizeof args, "run --impl solutions %s --comm-latency 0.5 --export-order %s", runs[i], ran);
        cr_assert_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
        snprintf(args, sizeof args, "run --canonical %s --export-order %s", runs[i], ideal);
        cr_assert_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
        cr_expect(strstr(buf, "written to") && strstr(buf, "compute-only schedule CSV"), "%s", buf);
        char a[4096] = "", b[4096] = "";
        FILE *f = fopen(ran, "rb"), *g = fopen(ideal, "rb");
        cr_assert(f && g);
        size_t na = fread(a, 1, sizeof a - 1, f), nb = fread(b, 1, sizeof b - 1, g);
        fclose(f), fclose(g), unlink(ran), unlink(ideal);
        cr_expect(na == nb && !memcmp(a, b, na), "%s: the run wrote\n%s\n--canonical wrote\n%s", runs[i], a, b);
        /* rank 1 of ZB-H1 holds a weight half back; rank 0 of ZBV holds virtual stage 2P-1 = 3 */
        if (i == 1) cr_expect(strstr(a, "\r\n1F0,1I0,1F1,1I1,1W0,") != NULL, "ZB-H1: %s", a);
        if (i == 2) cr_expect(strstr(a, "0F0,0F1,0F2,3F0,3I0,3W0,") == a, "ZBV: %s", a);
    }
    /* an order of a student's own is exported as it ran: first in, first out inside a chunk */
    char own[] = "/tmp/pplab-order-XXXXXX.csv", args[512], text[4096] = "";
    close(mkstemps(own, 4));
    snprintf(args, sizeof args, "run --impl tests/valid/bfs-backward-fifo --schedule loopedbfs --stages 2 --chunks 2 "
             "--microbatches 3 --export-order %s", own);
    cr_assert_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
    FILE *f = fopen(own, "rb");
    cr_assert(f);
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f), unlink(own);
    cr_expect(strstr(text, "0F0,0F1,0F2,2F0,2F1,2F2,2B0,2B1,2B2,0B0,0B1,0B2\r\n") == text, "%s", text);
    cr_expect_neq(pplab(buf, sizeof buf, "run --canonical --schedule gpipe --stages 2 --microbatches 2 "
                                         "--export-order o.txt"), 0);
    cr_expect(strstr(buf, "--export-order o.txt: name the file .csv") != NULL, "%s", buf);
}

/* Writes text to a fresh /tmp file named path (a mkstemps template ending in .csv). */
static void write_csv(char *path, const char *text) {
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* --order runs an order read from PyTorch's CSV on the model and the clock and grades it as the schedule named:
 * the canonical order exported and run again keeps full marks with the canonical bubble; GPipe's order graded as
 * 1F1B loses the memory points with the warm-up named; an order that deadlocks is reported as code's is; and a
 * file the kit cannot run is refused in one line that names its row and cell. */
Test(cli, an_order_from_a_csv_is_run_and_graded) {
    char path[] = "/tmp/pplab-order-XXXXXX.csv", args[512], ideal[4096];
    close(mkstemps(path, 4));
    snprintf(args, sizeof args, "run --canonical --schedule zbh1 --stages 3 --microbatches 6 --export-order %s", path);
    cr_assert_eq(pplab(ideal, sizeof ideal, args), 0, "%s", ideal);
    snprintf(args, sizeof args, "run --order %s --schedule zbh1", path);
    cr_expect_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
    cr_expect(strstr(buf, "bubble: 0.1000 (theory 0.1000)") && strstr(ideal, "bubble: 0.1000 (theory 0.1000)"),
              "the canonical order, run: %s", buf);
    cr_expect(strstr(buf, "as zbh1 P=3 M=6 v=1") && strstr(buf, "12/12  ok"), "%s", buf);
    snprintf(args, sizeof args, "run --canonical --schedule gpipe --stages 4 --microbatches 8 --export-order %s", path);
    cr_assert_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
    snprintf(args, sizeof args, "run --order %s --schedule 1f1b", path);
    cr_expect_eq(pplab(buf, sizeof buf, args), 1, "%s", buf);
    cr_expect(strstr(buf, "stash peak (0/2): rank 0 runs 8 forwards before its first backward, the canonical 1F1B "
                          "order 4"), "%s", buf);
    snprintf(args, sizeof args, "run --order %s --schedule gpipe --microbatches 2", path);
    cr_expect_eq(pplab(buf, sizeof buf, args), 2);
    cr_expect(strstr(buf, "names micro-batch 7, but --microbatches is 2") != NULL, "%s", buf);
    snprintf(args, sizeof args, "run --order %s", path);
    cr_expect_eq(pplab(buf, sizeof buf, args), 2);
    cr_expect(strstr(buf, "--order needs --schedule") != NULL, "%s", buf);
    unlink(path);
    static const struct { const char *text, *schedule, *needle; } bad[] = {
        {"0B0,0F0\r\n1F0,1B0\r\n", "gpipe", "cycle: rank 0 -> rank 1 -> rank 0"},
        {"0F0,0X0\r\n", "gpipe", ":1:2: '0X0' is not a compute action"},
        {"0F0,0SEND_F0\r\n1F0\r\n", "gpipe", "write the compute-only format"},
        {"1F0\r\n0F0\r\n", "gpipe", "row 1, action 1: stage 1 on rank 0"},
        {"0F0,3F0,3B0,0B0\r\n1F0,2F0,2B0,1B0\r\n", "1f1b", "places its stages in a V, and 1F1B places them looped"},
        {"0F99999999\r\n", "gpipe", "is out of range"},
        {"\r\n\r\n", "gpipe", "no action in it"},
        {"(0F0;0B0)SOMETHING\r\n", "gpipe", "is not an overlapped pair"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char p[] = "/tmp/pplab-order-XXXXXX.csv";
        write_csv(p, bad[i].text);
        snprintf(args, sizeof args, "run --order %s --schedule %s", p, bad[i].schedule);
        cr_expect_neq(pplab(buf, sizeof buf, args), 0, "%s", bad[i].text);
        cr_expect(strstr(buf, bad[i].needle) != NULL, "%s: %s", bad[i].text, buf);
        unlink(p);
    }
}

/* The file's bytes into buf (NUL-terminated, cut to len), then the file removed. */
static void slurp_rm(const char *path, char *text, size_t len) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s was not written", path);
    text[fread(text, 1, len - 1, f)] = 0;
    fclose(f);
    unlink(path);
}

/* Every single-pipeline row of the schedule table, on the first configuration of its default tests: its canonical
 * order exported, run again by --order and exported from that run, is the same file, measures the same bubble and
 * keeps full marks. DualPipe's two pipelines have no such file: both directions refuse it, saying why. A row whose
 * blocks are the schedule's own exports its order, which --order refuses to run as whole stages. */
Test(cli, every_schedules_order_survives_the_round_trip_through_a_csv) {
    int rows = 0;
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *d = &pp__schedules[i];
        if (d->reduce != PP_REDUCE_NONE) continue;
        if (d->dual) {
            cr_expect_eq(pplab(buf, sizeof buf, "run --canonical --schedule dualpipe --stages 2 --microbatches 4 "
                               "--export-order /tmp/pplab-never.csv"), 2, "%s", buf);
            cr_expect(strstr(buf, "holds every stage twice, on two pipelines"), "%s", buf);
            cr_expect(access("/tmp/pplab-never.csv", F_OK) != 0, "the refused export wrote its file");
            char csv[] = "/tmp/pplab-order-XXXXXX.csv", args[256];
            int fd = mkstemps(csv, 4);
            cr_assert(fd >= 0 && write(fd, "0F0,0B0\n1F0,1B0\n", 16) == 16);
            close(fd);
            snprintf(args, sizeof args, "run --order %s --schedule dualpipe", csv);
            cr_expect_eq(pplab(buf, sizeof buf, args), 2, "%s", buf);
            unlink(csv);
            cr_expect(strstr(buf, "holds every stage twice, on two pipelines"), "%s", buf);
            continue;
        }
        int n;
        const pp_test_config *t = pp__testset(d->name, &n);
        cr_assert(n > 0);
        if (d->own_blocks) {
            char csv[] = "/tmp/pplab-order-XXXXXX.csv", args[256];
            close(mkstemps(csv, 4));
            snprintf(args, sizeof args, "run --canonical --schedule %s --stages 2 --microbatches 4 --tp 2 "
                     "--export-order %s", d->name, csv);
            cr_expect_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
            snprintf(args, sizeof args, "run --order %s --schedule %s --tp 2", csv, d->name);
            cr_expect_eq(pplab(buf, sizeof buf, args), 2, "%s", buf);
            cr_expect(strstr(buf, "blocks are the schedule's own: measure the order under --schedule 1f1b"), "%s", buf);
            unlink(csv);
            continue;
        }
        char first[] = "/tmp/pplab-order-XXXXXX.csv", again[] = "/tmp/pplab-order-XXXXXX.csv", args[512];
        char a[8192], b[8192], ideal[4096];
        close(mkstemps(first, 4));
        close(mkstemps(again, 4));
        snprintf(args, sizeof args, "run --canonical --schedule %s --stages %d --microbatches %d --chunks %d "
                 "--export-order %s", d->name, t->P, t->M, t->v, first);
        cr_assert_eq(pplab(ideal, sizeof ideal, args), 0, "%s", ideal);
        snprintf(args, sizeof args, "run --order %s --schedule %s --export-order %s", first, d->name, again);
        cr_expect_eq(pplab(buf, sizeof buf, args), 0, "%s: %s", d->name, buf);
        slurp_rm(first, a, sizeof a);
        slurp_rm(again, b, sizeof b);
        cr_expect_str_eq(a, b, "%s: the run of the exported order ran another", d->name);
        const char *want = strstr(ideal, "bubble: "), *got = strstr(buf, "bubble: ");
        cr_expect(want && got && !strncmp(want, got, strcspn(want, "(")) && strstr(buf, "  ok  "), "%s: %s vs %s",
                  d->name, ideal, buf);
        rows++;
    }
    cr_expect_geq(rows, 10, "only %d rows", rows);
}

/* CUDA_VISIBLE_DEVICES empty hides every device from the CUDA runtime, so the message is provoked on a machine
 * with a GPU too (and a build without the cuda backend says that instead). */
Test(cli, cuda_without_gpu_says_so) {
    char dir[PATH_MAX], cmd[PATH_MAX + 256];
    test_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "CUDA_VISIBLE_DEVICES= NO_COLOR=1 '%s/pplab' run --impl solutions --schedule gpipe "
             "--stages 2 --microbatches 2 --backend cuda 2>&1", dir);
    int rc = test_capture(cmd, buf, sizeof buf);
    cr_expect_neq(rc, 0);
    cr_expect(strstr(buf, "no CUDA device") == buf || strstr(buf, "cuda backend not compiled in") != NULL, "%s", buf);
}

Test(cli, bad_input_gets_one_clear_line) {
    static const struct { const char *args, *needle; } cases[] = {
        {"run --stages x", "--stages needs an integer"},
        {"run --schedule gpipe --stages 4 --microbatches 6 --bogus", "unknown flag '--bogus'"},
        {"run --schedule pipedream", "unknown schedule 'pipedream'"},
        {"run --schedule interleaved --stages 4 --microbatches 9 --chunks 2",
         "9 micro-batches make 2 rounds, which do not divide them"},
        {"run --schedule dpinterleaved --stages 4 --microbatches 6 --dp 2", "multiple of the stage count"},
        {"run --schedule zbinterleaved --stages 4 --microbatches 9",
         "9 micro-batches make 2 rounds, which do not divide them"},
        {"run --schedule gpipe --stages 4 --microbatches 6 --layers 3", "--layers 3 is fewer than the 4 virtual stages"},
        {"run --schedule gpipe --stages 4 --microbatches 6 --layout 1,2", "names 2 virtual stages; this run has 4"},
        {"run --schedule gpipe --stages 4 --microbatches 6 --layers 5 --layout first:3,last:3",
         "places 6 blocks, more than the 5 of --layers"},
        {"run --schedule zbv --stages 4 --microbatches 6 --chunks 3", "ZBV places two chunks per rank in a V: use --chunks 2"},
        {"run --schedule dualpipev --stages 4 --microbatches 6", "DualPipeV needs at least as many micro-batches as virtual stages (2P = 8)"},
        {"run --schedule zbh1 --stages 4 --microbatches 6 --recompute", "--recompute is not offered with ZB-H1"},
        {"run --schedule gpipe --stages 2 --microbatches 2 --trace t.txt", "name the file .csv"},
        {"run --schedule naive --stages 4 --microbatches 3", "use --microbatches 1"},
        {"run --schedule gpipe --stages 2 --chunks 2", "needs --schedule interleaved"},
        {"run --impl /nonexistent --schedule gpipe --stages 2 --microbatches 2", "--impl /nonexistent: no such folder"},
        {"run --schedule gpipe --stages 4", "--microbatches is required"},
        {"grade --lab pipedream", "unknown lab 'pipedream'"},
        {"frobnicate", "unknown command 'frobnicate'"},
        {"run --schedule gpipe --stagez 4", "unknown flag '--stagez': did you mean --stages?"},
        {"run --schedule gpipe --stages 4 --microbatches 6 --timeline=1", "--timeline takes no value"},
        {"run --schedule gpipe --stages= --microbatches 6", "--stages needs a value after '='"},
        {"run --schedule gpipe --stages 4 --microbatches=x", "--microbatches needs an integer"},
        {"run --optimizer=adam", "--optimizer must be sgd or adamw, got 'adam'"},
        {"run gpipe", "unexpected argument 'gpipe'"},
        {"grade --plot-dir", "--plot-dir needs a value"},
        {"info --bogus", "unknown flag '--bogus'"},
        {"help frobnicate", "unknown command 'frobnicate'"},
        {"run --canonical --schedule gpipe --stages 2 --microbatches 2 --backend gpu", "unknown backend 'gpu'"},
        {"run --canonical --schedule gpipe --stages 2 --microbatches 2 --transport carrier-pigeon",
         "unknown transport 'carrier-pigeon'"},
        {"run --schedule gpipe --stages 2 --microbatches 2 --backend gpu", "unknown backend 'gpu'"},
        {"run --schedule gpipe --stages 2 --microbatches 2 --trace /nonexistent/t.csv",
         "--trace /nonexistent/t.csv: its folder /nonexistent does not exist"},
        {"run --schedule gpipe --stages 2 --stages 3 --microbatches 2", "--stages is given twice"},
        {"grade --quiet --lab gpipe --quiet", "--quiet is given twice"},
        {"grade --impl /nonexistent", "--impl /nonexistent: no such folder"},
        {"grade --lab gpipe --json /nonexistent/r.json", "--json /nonexistent/r.json: its folder /nonexistent"},
        {"grade --lab gpipe --config /nonexistent.cfg", "/nonexistent.cfg: cannot open the config file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = pplab(buf, sizeof buf, cases[i].args);
        cr_expect_eq(rc, 2, "'%s' is a usage error: exit 2, got %d", cases[i].args, rc);
        cr_expect(strstr(buf, cases[i].needle) != NULL, "'%s': expected '%s' in: %s", cases[i].args, cases[i].needle, buf);
        cr_expect(strchr(buf, '\n') == buf + strlen(buf) - 1, "'%s': one line only: %s", cases[i].args, buf);
    }
}

Test(cli, info_lists_backends_and_transports) {
    cr_assert_eq(pplab(buf, sizeof buf, "info"), 0);
    cr_expect(strstr(buf, "cpu   usable") != NULL, "%s", buf);
    cr_expect(strstr(buf, " kernel") != NULL, "the OpenBLAS kernel in use is named: %s", buf);
    /* a core type in the environment is the user's: kept, and said so */
    char cmd[PATH_MAX + 128], dir[PATH_MAX];
    test_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "OPENBLAS_CORETYPE=Prescott '%s/pplab' info 2>&1", dir);
    cr_assert_eq(test_capture(cmd, buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "Prescott kernel (OPENBLAS_CORETYPE=Prescott)") != NULL, "%s", buf);
    cr_expect(strstr(buf, "threads") != NULL, "%s", buf);
}

Test(cli, grade_labs_exits_one_with_zero_score) {
    char pristine[64], args[160];
    cr_assert_eq(test_pristine_labs(pristine, sizeof pristine), 0);
    snprintf(args, sizeof args, "grade --impl %s --lab gpipe --quiet", pristine);
    int rc = pplab(buf, sizeof buf, args);
    test_rm_tree(pristine);
    cr_expect_eq(rc, 1, "%s", buf);
    cr_expect(strstr(buf, "Score: 0/") != NULL, "%s", buf);
}

Test(cli, handout_has_labs_and_grader_but_no_solutions) {
    int rc = system("bash scripts/handout.sh > /dev/null 2>&1");
    cr_assert_eq(rc, 0, "scripts/handout.sh failed");
    FILE *p = popen("tar -tzf dist/pplab-handout.tar.gz", "r");
    cr_assert(p);
    char line[512];
    int labs = 0, grader = 0, solutions = 0, tests = 0, instructor = 0, docs = 0, corpus = 0, container = 0;
    while (fgets(line, sizeof line, p)) {
        container += !strcmp(line, "pplab/Dockerfile\n") || !strcmp(line, "pplab/.dockerignore\n") ||
                     !strcmp(line, "pplab/.devcontainer/devcontainer.json\n");
        instructor += strstr(line, "pplab/docs/instructor.md") != NULL || strstr(line, "pplab/docs/ci/") != NULL;
        docs += strstr(line, "pplab/docs/design.md") != NULL;
        labs += strstr(line, "pplab/labs/02-gpipe/gpipe.c") != NULL;
        grader += strstr(line, "pplab/grader/grade/checks.c") != NULL;
        solutions += strstr(line, "solutions/") != NULL;
        tests += strstr(line, "pplab/tests/") != NULL;
        corpus += strstr(line, "pplab/data/shakespeare.txt") != NULL;
    }
    pclose(p);
    cr_expect_eq(labs, 1, "the handout holds the labs");
    cr_expect_eq(grader, 1, "the handout holds the grader");
    cr_expect_eq(solutions, 0, "the handout must not hold solutions/");
    cr_expect_eq(tests, 0, "the handout must not hold the broken solutions under tests/");
    cr_expect_eq(instructor, 0, "the handout must not hold the instructor's material (docs/instructor.md, docs/ci/)");
    cr_expect_eq(docs, 1, "the handout holds the docs");
    cr_expect_eq(corpus, 1, "the handout holds the corpus pplab train learns from");
    cr_expect_eq(container, 3, "the handout holds the container (Dockerfile, .dockerignore, .devcontainer/)");
    /* and the grading tree, which Gradescope's zip is, does not */
    rc = system("d=$(mktemp -d) && bash scripts/handout.sh --grading \"$d\" && ls -A \"$d/pplab\" | "
                "grep -qx -e Dockerfile -e .dockerignore -e .devcontainer; rc=$?; rm -rf \"$d\"; exit $rc");
    cr_expect_neq(rc, 0, "the grading tree holds the container, which Gradescope's zip does not need");
    /* nothing in the handout points students at a file it lacks */
    rc = system("tar -xzOf dist/pplab-handout.tar.gz --wildcards 'pplab/lib/*' 'pplab/grader/*' | grep -q "
                "'docs/instructor.md'");
    cr_expect_neq(rc, 0, "a message of the kit's code points at docs/instructor.md, which the handout leaves out");
    rc = system("tar -xzOf dist/pplab-handout.tar.gz --wildcards 'pplab/labs/*' | grep -q -e '//>''> solution' -e '//<''< solution'");
    cr_expect_neq(rc, 0, "no solution marker may reach the handout");
    /* the kit's answer files stay out, the record of the public configurations' answers goes in
     * (test_handout builds it and holds it to more) */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "f=/tmp/pplab-answer-files-%d.txt && make -s --no-print-directory answer-files | "
             "sed 's|^|pplab/|' > $f && test -s $f && ! tar -tzf dist/pplab-handout.tar.gz | grep -qxF -f $f; "
             "rc=$?; rm -f $f; exit $rc", (int)getpid());
    rc = system(cmd);
    cr_expect_eq(rc, 0, "the handout holds an answer file of the kit (make answer-files lists them)");
    rc = system("tar -tzf dist/pplab-handout.tar.gz | grep -qx 'pplab/lib/schedule/answers.rec'");
    cr_expect_eq(rc, 0, "the handout has no lib/schedule/answers.rec to grade with");
}

/* The docs check can fail: a quote that differs, output the quote leaves out, and a flag pplab refuses are each
 * reported with their file and line; an elided quote ("...") and a right one pass. */
Test(cli, the_docs_check_catches_a_wrong_quote) {
    char dir[] = "/tmp/pplab-doccheck-XXXXXX", path[PATH_MAX], cmd[2 * PATH_MAX];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/doc.md", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("Right:\n\n```\n$ build/pplab run --canonical --schedule gpipe --stages 4 --microbatches 6\n"
          "bubble: 0.3333 (theory 0.3333)\npeak stashes: 6 6 6 6\n```\n\n"
          "Elided:\n\n```\n$ build/pplab run --canonical --schedule 1f1b --stages 4 --microbatches 8 --timeline\n"
          "...\npeak stashes: 4 3 2 1\n```\n\n"
          "Wrong:\n\n```\n$ build/pplab run --canonical --schedule gpipe --stages 4 --microbatches 8\n"
          "bubble: 0.3333 (theory 0.3333)\npeak stashes: 8 8 8 8\n```\n\n"
          "Short:\n\n```\n$ build/pplab run --canonical --schedule gpipe --stages 4 --microbatches 6\n"
          "bubble: 0.3333 (theory 0.3333)\n```\n\n"
          "Stale flag:\n\n```sh\nbuild/pplab run --schedule gpipe --stagez 4    # a typo\n```\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "bash scripts/doccheck.sh build '%s' 2>&1", path);
    cr_expect_eq(test_capture(cmd, buf, sizeof buf), 1, "the check should fail: %s", buf);
    cr_expect(strstr(buf, "doc.md:20: $ build/pplab run --canonical --schedule gpipe --stages 4 --microbatches 8") &&
              strstr(buf, "expected \"bubble: 0.3333 (theory 0.3333)\""), "the wrong bubble: %s", buf);
    cr_expect(strstr(buf, "doc.md:28:") && strstr(buf, "extra output from line 2: \"peak stashes: 6 6 6 6\""),
              "the dropped line: %s", buf);
    cr_expect(strstr(buf, "doc.md:35: build/pplab run --schedule gpipe --stagez 4 (exit 2)"), "the stale flag: %s", buf);
    cr_expect(!strstr(buf, "doc.md:4:") && !strstr(buf, "doc.md:13:"), "a right quote failed: %s", buf);
    cr_expect(strstr(buf, "doccheck: 5 commands from the docs run, 3 failed, 0 skipped"), "%s", buf);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* A model that does not fit: one line naming the size that could not be had, in `pplab run` and in a grade,
 * never a crash blamed on the schedule. The address-space limit makes "does not fit" quick and harmless; under
 * AddressSanitizer, whose shadow memory alone needs more address space than any such limit, its own cap on one
 * allocation (with malloc returning NULL past it) makes the same allocation fail. */
/* 1 when text says `lead` followed by a byte count of one of the model's large weights (256 MiB or more) and its
 * size in words: "... 268435456 bytes (256.0 MiB)". */
static int big_allocation_named(const char *text, const char *lead) {
    const char *at = strstr(text, lead);
    long long bytes = 0;
    char unit[8] = "";
    return at && sscanf(at + strlen(lead), "%lld bytes (%*f %7[A-Za-z])", &bytes, unit) == 2 &&
           bytes >= 256LL << 20 && (!strcmp(unit, "MiB") || !strcmp(unit, "GiB"));
}

Test(cli, a_model_that_does_not_fit_names_the_size) {
    char dir[PATH_MAX], cmd[2 * PATH_MAX + 512], cfg[] = "/tmp/pplab-oom-XXXXXX";
    test_build_dir(dir, sizeof dir);
    const char *limit = strstr(dir, "asan") ? "export ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}"
                                              "allocator_may_return_null=1:max_allocation_size_mb=1000\";"
                                            : "ulimit -v 1000000;";
    int fd = mkstemp(cfg);
    cr_assert(fd >= 0);
    /* this model's weights (8192 x 8192 floats for each of attention's four, 8192 x 32768 for each of the MLP's)
     * are more than the whole limit below within the first block, so one of its large allocations fails whatever
     * else the process maps, and nothing is touched before it */
    const char *line = "1f1b P=2 M=4 layers=8 width=8192 time=60\n";
    cr_assert_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
    close(fd);
    snprintf(cmd, sizeof cmd, "%s NO_COLOR=1 '%s/pplab' run --impl solutions --schedule 1f1b "
             "--stages 2 --microbatches 4 --layers 8 --width 8192 2>&1", limit, dir);
    cr_expect_eq(test_capture(cmd, buf, sizeof buf), 2, "%s", buf);
    cr_expect(big_allocation_named(buf, "out of memory allocating "), "%s", buf);
    snprintf(cmd, sizeof cmd, "%s NO_COLOR=1 '%s/pplab' grade --impl solutions --lab 1f1b "
             "--config %s --only-config 2>&1", limit, dir, cfg);
    cr_expect_eq(test_capture(cmd, buf, sizeof buf), 1, "%s", buf);
    cr_expect(big_allocation_named(buf, "run: out of memory allocating ") &&
              strstr(buf, "the configuration's model does not fit this machine's memory") != NULL, "%s", buf);
    cr_expect(!strstr(buf, "pplab: error:"), "nothing printed past the report: %s", buf);
    unlink(cfg);
}

/* Every flag takes its value both ways: the same run, the same lines. */
Test(cli, flag_equals_value_is_flag_value) {
    static char other[1 << 16];
    cr_assert_eq(pplab(buf, sizeof buf, "run --canonical --schedule gpipe --stages 4 --microbatches 6"), 0, "%s", buf);
    cr_assert_eq(pplab(other, sizeof other, "run --canonical --schedule=gpipe --stages=4 --microbatches=6"), 0, "%s",
                 other);
    cr_expect_str_eq(other, buf);
    cr_assert_eq(pplab(buf, sizeof buf, "run --impl=solutions --schedule=1f1b --stages=2 --microbatches=4 --layout=2,1 "
                                        "--layers=3 --lr=0.05 --optimizer=adamw"), 0, "%s", buf);
    cr_expect(strstr(buf, "bubble: ") == buf, "%s", buf);
    cr_assert_eq(pplab(buf, sizeof buf, "grade --lab=pipedream"), 2, "%s", buf);
    cr_expect(strstr(buf, "unknown lab 'pipedream'") != NULL, "%s", buf);
}

/* A former name still works, after one line naming the new one; given beside the new name, it is the same flag
 * given twice. */
Test(cli, old_names_work_after_a_notice) {
    cr_assert_eq(pplab(buf, sizeof buf, "run --canonical --schedule gpipe --stages 2 --microbatches 2 --hidden=16"), 0,
                 "%s", buf);
    cr_expect_str_eq(buf, "pplab run: --hidden is now --width\nbubble: 0.3333 (theory 0.3333)\npeak stashes: 2 2\n");
    cr_expect_eq(pplab(buf, sizeof buf, "run --canonical --schedule gpipe --stages 2 --microbatches 2 --hidden 32 "
                                        "--width 16"), 2, "%s", buf);
    cr_expect(strstr(buf, "--width is given twice"), "%s", buf);
    char dir[] = "/tmp/pplab-old-XXXXXX", args[512];
    cr_assert(mkdtemp(dir));
    snprintf(args, sizeof args, "%s/one.cfg", dir);
    FILE *f = fopen(args, "w");
    cr_assert(f);
    fputs("naive P=2 seed=5\n", f);
    fclose(f);
    snprintf(args, sizeof args, "grade --impl solutions --lab naive --config %s/one.cfg --only-config --quiet "
             "--unsafe-in-process --plots %s/plots", dir, dir);
    cr_expect_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
    cr_expect(strstr(buf, "pplab grade: --unsafe-in-process is now --in-process\n") != NULL, "%s", buf);
    cr_expect(strstr(buf, "pplab grade: --plots is now --plot-dir\n") != NULL, "%s", buf);
    cr_expect(strstr(buf, "FULL MARKS") != NULL, "%s", buf);
    snprintf(args, sizeof args, "ls %s/plots/*.json >/dev/null 2>&1", dir);
    cr_expect_eq(system(args), 0, "--plots DIR still writes each test's trace into DIR");
    test_rm_tree(dir);
    cr_assert_eq(pplab(buf, sizeof buf, "figures --hidden 8"), 2, "%s", buf);
    cr_expect(strstr(buf, "pplab figures: --hidden is now --width\n") == buf, "%s", buf);
}

/* The configuration file's key of the model's width is width=; hidden=, its former name, still loads. */
Test(cli, config_key_width_and_its_former_name) {
    char path[] = "/tmp/pplab-width-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *text = "gpipe P=2 M=2 width=32\ngpipe P=2 M=2 hidden=16\ninterleaved P=2 M=4\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    pp_test_config *c = NULL;
    int n = 0;
    char err[512] = "", name[256];
    cr_assert_eq(pp__suite_load(path, "all", &c, &n, err, sizeof err), 0, "%s", err);
    unlink(path);
    cr_assert_eq(n, 3);
    cr_expect_eq(c[0].hidden, 32);
    cr_expect_eq(c[1].hidden, 16);
    pp__test_name(&c[0], name, sizeof name);
    cr_expect_str_eq(name, "hidden: gpipe P=2 M=2 width=32 seed=1");
    cr_expect_eq(c[2].v, 2, "interleaved without v= has two chunks, as pplab run gives it");
    free(c);
}

/* --version, and help: the command list, and each command's help as --help prints it. */
Test(cli, version_and_help) {
    static char other[1 << 16];
    cr_assert_eq(pplab(buf, sizeof buf, "--version"), 0, "%s", buf);
    char want[64];
    snprintf(want, sizeof want, "pplab %s\n", pp_version());
    cr_expect_str_eq(buf, want);
    cr_assert_eq(pplab(buf, sizeof buf, "help"), 0, "%s", buf);
    cr_assert_eq(pplab(other, sizeof other, "--help"), 0, "%s", other);
    cr_expect_str_eq(other, buf);
    for (int i = 0; i < pp__cli_ncommands; i++) {
        const pp_cli_command *c = pp__cli_commands[i];
        char line[64], args[64];
        snprintf(line, sizeof line, "\n  %-9s ", c->name);
        cr_expect_eq(strstr(buf, line) != NULL, c->summary != NULL, "pplab help %s %s: %s",
                     c->summary ? "lists" : "leaves out", c->name, buf);
        snprintf(args, sizeof args, "help %s", c->name);
        cr_assert_eq(pplab(other, sizeof other, args), 0, "%s", other);
        static char own[1 << 16];
        snprintf(args, sizeof args, "%s --help", c->name);
        cr_assert_eq(pplab(own, sizeof own, args), 0, "%s", own);
        cr_expect_str_eq(other, own, "pplab help %s is pplab %s --help", c->name, c->name);
    }
    cr_expect(strstr(buf, "help ") != NULL && strstr(buf, "--version") != NULL, "%s", buf);
    /* --help wins wherever it stands, even after a bad value */
    cr_expect_eq(pplab(buf, sizeof buf, "run --stages x --help"), 0, "%s", buf);
}

/* Where the help of `cmd` lists flag `name`: the start of its row, or NULL. */
static const char *help_row(const char *help, const char *name) {
    char row[80];
    for (const char *p = help; (p = strstr(p, "\n  ")); p++) {
        const char *f = p + 3;
        if (!strncmp(f, "-j, ", 4)) f += 4;
        snprintf(row, sizeof row, "%s", f);
        row[strcspn(row, " \n")] = 0;
        if (!strcmp(row, name)) return p + 1;
    }
    return NULL;
}

/* Every flag of every command's table is in its --help with its default (or "required"), the kit's own tests'
 * apart, a former name beside the new one; and the help lists no flag the table lacks. */
Test(cli, every_flag_is_in_its_help_with_its_default) {
    for (int i = 0; i < pp__cli_ncommands; i++) {
        const pp_cli_command *c = pp__cli_commands[i];
        char args[64];
        snprintf(args, sizeof args, "%s --help", c->name);
        cr_assert_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
        const char *tests = strstr(buf, "\nFor the kit's own tests");
        pp_flag flags[PP_CLI_MAX_FLAGS];
        int n = c->flags ? c->flags(flags) : 0;
        for (int k = 0; k < n; k++) {
            const pp_flag *f = &flags[k];
            const char *row = help_row(buf, f->name);
            cr_assert(row, "pplab %s --help leaves out %s:\n%s", c->name, f->name, buf);
            /* the row runs to the next one (a line starting "  -") or the end of the section */
            const char *end = row + 1;
            while ((end = strchr(end, '\n')) && !strncmp(end, "\n    ", 5)) end++;
            int len = end ? (int)(end - row) : (int)strlen(row);
            char text[2048];
            snprintf(text, sizeof text, "%.*s", len, row);
            cr_expect(strstr(text, "[default: ") || strstr(text, "[required]"), "pplab %s --help: %s has no "
                      "default:\n%s", c->name, f->name, text);
            cr_expect(f->help && strlen(f->help) > 8, "pplab %s: %s says what it does", c->name, f->name);
            cr_expect_eq(tests && row > tests, f->for_tests, "pplab %s --help: %s %s the kit's tests' part",
                         c->name, f->name, f->for_tests ? "belongs in" : "does not belong in");
            if (f->old) {
                char was[80];
                snprintf(was, sizeof was, "formerly %s]", f->old);
                cr_expect(strstr(text, was) != NULL, "pplab %s --help: %s names its former name:\n%s", c->name,
                          f->name, text);
            }
        }
        /* and the other way: each row of the help is a flag of the table (or --help) */
        for (const char *p = buf; (p = strstr(p, "\n  -")); p++) {
            char name[80];
            snprintf(name, sizeof name, "%s", p + 3 + (strncmp(p + 3, "-j, ", 4) ? 0 : 4));
            name[strcspn(name, " \n")] = 0;
            int known = !strcmp(name, "-h,");
            for (int k = 0; k < n; k++) known |= !strcmp(name, flags[k].name);
            cr_expect(known, "pplab %s --help lists %s, which it does not parse", c->name, name);
        }
        cr_expect(strstr(buf, "\n  -h, --help ") != NULL, "pplab %s --help names --help", c->name);
    }
}

/* interleaved without --chunks runs two chunks, and says so on stderr; the V schedules have no other choice. */
Test(cli, interleaved_defaults_to_two_chunks) {
    cr_assert_eq(pplab(buf, sizeof buf, "run --canonical --schedule interleaved --stages 4 --microbatches 8"), 0,
                 "%s", buf);
    cr_expect_str_eq(buf, "pplab run: --chunks 2: interleaved's default (at --chunks 1 it is plain 1F1B)\n"
                          "bubble: 0.1579 (theory 0.1579)\npeak stashes: 11 9 7 5\n");
    const char *canonical = "run --canonical --schedule interleaved --stages 4 --microbatches 8";
    char args[160];
    snprintf(args, sizeof args, "%s --chunks 2", canonical);
    cr_assert_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
    cr_expect_str_eq(buf, "bubble: 0.1579 (theory 0.1579)\npeak stashes: 11 9 7 5\n");
    snprintf(args, sizeof args, "%s --chunks 1", canonical);
    cr_assert_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
    cr_expect_str_eq(buf, "bubble: 0.2727 (theory 0.2727)\npeak stashes: 7 5 3 1\n");
    cr_assert_eq(pplab(buf, sizeof buf, "run --canonical --schedule zbv --stages 4 --microbatches 8"), 0, "%s", buf);
    cr_expect(strstr(buf, "bubble: ") == buf, "a V says nothing of its only choice: %s", buf);
    cr_assert_eq(pplab(buf, sizeof buf, "run --impl solutions --schedule interleaved --stages 2 --microbatches 4"), 0,
                 "%s", buf);
    cr_expect(strstr(buf, "pplab run: --chunks 2: interleaved's default") == buf, "%s", buf);
    cr_expect(strstr(buf, "\nbubble: 0.1111 (theory 0.1111)\n") != NULL, "%s", buf);
}

/* --lab takes a lab's folder for every lab in it: the default set of 05-zerobubble is ZB-H1's, ZB-H2's and
 * interleaved zero bubble's. */
Test(cli, lab_folder_grades_every_lab_in_it) {
    static const struct {
        const char *folder, *labs[3];
    } cases[] = {{"05-zerobubble", {"zbh1", "zbh2", "zbinterleaved"}}, {"04-interleaved", {"interleaved", "loopedbfs"}},
                 {"06-vshape", {"zbv", "dualpipev", "dualpipe"}}, {"02-gpipe", {"gpipe"}}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_test_config *c = NULL;
        int n = pp__suite_default(cases[i].folder, 0, &c), want = 0, seen[3] = {0, 0, 0};
        for (int l = 0; l < 3 && cases[i].labs[l]; l++) {
            int k;
            pp__testset(cases[i].labs[l], &k);
            want += k;
        }
        cr_expect_eq(n, want, "%s: %d tests, expected %d", cases[i].folder, n, want);
        for (int k = 0; k < n; k++) {
            int mine = 0;
            for (int l = 0; l < 3 && cases[i].labs[l]; l++)
                if (!strcmp(c[k].lab, cases[i].labs[l])) seen[l]++, mine = 1;
            cr_expect(mine, "%s grades %s", cases[i].folder, c[k].lab);
        }
        for (int l = 0; l < 3 && cases[i].labs[l]; l++) cr_expect_gt(seen[l], 0, "%s leaves out %s", cases[i].folder,
                                                                      cases[i].labs[l]);
        free(c);
    }
    /* and end to end, the configuration file's lines too */
    char dir[] = "/tmp/pplab-folder-XXXXXX", args[512];
    cr_assert(mkdtemp(dir));
    snprintf(args, sizeof args, "%s/two.cfg", dir);
    FILE *f = fopen(args, "w");
    cr_assert(f);
    fputs("zbh1 P=2 M=4\nzbh2 P=2 M=4\ngpipe P=2 M=4\n", f);
    fclose(f);
    snprintf(args, sizeof args, "grade --impl solutions --lab 05-zerobubble --config %s/two.cfg --only-config", dir);
    cr_expect_eq(pplab(buf, sizeof buf, args), 0, "%s", buf);
    test_rm_tree(dir);
    cr_expect(strstr(buf, ": 2 tests\n") && strstr(buf, "] hidden: zbh1 P=2 M=4") &&
              strstr(buf, "] hidden: zbh2 P=2 M=4"), "%s", buf);
    cr_expect(!strstr(buf, "gpipe"), "%s", buf);
}

/* A run that did no work, or failed a check it makes, exits 1; a usage error 2; a run that did its work 0. */
Test(cli, exit_status_of_run) {
    char pristine[64], args[512];
    cr_assert_eq(test_pristine_labs(pristine, sizeof pristine), 0);
    snprintf(args, sizeof args, "run --impl %s --schedule gpipe --stages 2 --microbatches 2", pristine);
    int rc = pplab(buf, sizeof buf, args);
    test_rm_tree(pristine);
    cr_expect_eq(rc, 1, "an untouched stub did no work: %s", buf);
    cr_expect(strstr(buf, "pplab run: no rank ran any operation: is pp_gpipe_step still the untouched stub?"), "%s",
              buf);
    const char *one = "run --impl solutions --schedule gpipe --stages 2 --microbatches 2";
    static const struct {
        const char *more;
        int rc;
    } cases[] = {
        {"", 0},
        {" --trace /nonexistent/t.csv", 2},
        {" --dump-grads /nonexistent/g.bin", 2},
        {" --canonical --trace /nonexistent/t.json", 2},
        {" --stages 0", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(args, sizeof args, "%s%s", one, cases[i].more);
        cr_expect_eq(pplab(buf, sizeof buf, args), cases[i].rc, "pplab %s: %s", args, buf);
    }
    /* outputs are checked before the run: nothing ran, so nothing is lost */
    cr_expect(!strstr(buf, "bubble:"), "%s", buf);
    cr_expect_eq(pplab(buf, sizeof buf, "run --impl /nonexistent --schedule gpipe --stages 2 --microbatches 2"), 2,
                 "%s", buf);
}


/* A tree made private file by file (chmod -R go-rwx, as an autograder's setup might) leaves the driver to root
 * alone: grading says so once, before any test, and exits 2, instead of failing every test as the student's. */
Test(cli, a_driver_the_tests_cannot_run_stops_grading_before_any_test) {
    if (geteuid() != 0) test_skip("as a normal user the driver is this user's own");
    char build[PATH_MAX], dir[] = "/tmp/pplab-mode-XXXXXX", cmd[4 * PATH_MAX];
    test_build_dir(build, sizeof build);
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/build' '%s/lib' && cp '%s/pplab' '%s/pplab-driver' '%s/build/' && "
             "cp lib/pp.h '%s/lib/' && cp -r solutions '%s/' && chmod 0700 '%s/build/pplab-driver'", dir, dir, build,
             build, dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "cd '%s' && NO_COLOR=1 build/pplab grade --impl solutions --lab gpipe 2>&1", dir);
    int rc = test_capture(cmd, buf, sizeof buf);
    cr_expect_eq(rc, 2, "exit 2 for a tree that cannot be graded, got %d: %s", rc, buf);
    cr_expect(strstr(buf, "pplab-driver (mode 0700) cannot be run by the tests' uids") && strstr(buf, "chmod 0755"),
              "the cause and the fix: %s", buf);
    cr_expect(!strstr(buf, "[ 1/"), "a test ran: %s", buf);
    cr_expect(strchr(buf, '\n') == buf + strlen(buf) - 1, "one line: %s", buf);
    test_rm_tree(dir);
}

/* The CI templates take what they name from the kit's own tables, so that neither drifts: they install through
 * scripts/deps.sh (no package list of their own), and their LAB line names every lab of the schedule table. */
Test(cli, the_ci_templates_follow_the_kits_tables) {
    char names[300], want[400];
    snprintf(want, sizeof want, "LAB: all        # or a lab: %s\n", pp__lab_names(names, sizeof names, ", ", " or "));
    const char *files[] = {"docs/ci/github-actions.yml", "docs/ci/gitlab-ci.yml"};
    for (int i = 0; i < 2; i++) {
        static char text[1 << 16];
        FILE *f = fopen(files[i], "r");
        cr_assert(f, "%s is missing", files[i]);
        text[fread(text, 1, sizeof text - 1, f)] = 0;
        fclose(f);
        cr_expect(strstr(text, want), "%s: its LAB line does not name the labs of the table (%s)", files[i], want);
        cr_expect(strstr(text, "bash scripts/deps.sh --required"), "%s does not install through scripts/deps.sh",
                  files[i]);
        cr_expect(!strstr(text, "apt-get install"), "%s keeps a package list of its own", files[i]);
        cr_expect(!strstr(text, "libseccomp-dev"), "%s names a package itself", files[i]);
    }
}
