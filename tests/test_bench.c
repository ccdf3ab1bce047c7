/* test_bench.c: `pplab bench` as a user runs it: the smoke run (`all --quick`) exits 0 and prints the five
 * tables, each with its column header and its conclusion line, and bad flags end in one line with exit 2.
 * Timings are never asserted: they depend on how busy the machine is. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* Runs `<this build>/pplab ARGS` (stdout and stderr together); returns the exit status, output in
 * out (truncated to len). */
static int pplab(char *out, size_t len, const char *args) {
    char dir[1024], cmd[1400];
    test_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "'%s/pplab' %s 2>&1", dir, args);
    return test_capture(cmd, out, len);
}

static int count(const char *hay, const char *needle) {
    int k = 0;
    for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle)) k++;
    return k;
}

/* The quick run takes well under 40 s on an idle 2-core machine (half of it grading the solutions twice); the
 * limit leaves room for a busy one. */
Test(bench, quick_all_prints_every_table, .timeout = 240) {
    static char buf[1 << 16];
    int rc = pplab(buf, sizeof buf, "bench all --quick");
    cr_assert_eq(rc, 0, "pplab bench all --quick exited %d:\n%s", rc, buf);
    const char *headers[] = {"# comm: pp_send/pp_recv ping-pong", "# gemm: cpu backend gemm slot",
                             "# pipeline: reference GPipe", "# sandbox: what the sandbox costs",
                             "# grading: pplab grade --impl solutions", "# reduce: pp_grad_reduce over D",
                             "# attention: cpu backend attn_fwd + attn_bwd"};
    for (int i = 0; i < 7; i++) cr_expect(strstr(buf, headers[i]), "missing table header '%s':\n%s", headers[i], buf);
    /* the column-header lines of each table */
    cr_expect(strstr(buf, "round-trip") && strstr(buf, "memcpy"), "comm columns missing:\n%s", buf);
    cr_expect(strstr(buf, "direct") && strstr(buf, "(GFLOP/s)"), "gemm columns missing:\n%s", buf);
    cr_expect(strstr(buf, "wall ratio") && strstr(buf, "cpu ratio"), "pipeline columns missing:\n%s", buf);
    cr_expect(strstr(buf, "sandboxed, P=1") && strstr(buf, "in-process"), "sandbox rows missing:\n%s", buf);
    /* one per table, two for the sandbox's (a call, grading) */
    cr_expect_eq(count(buf, "# conclusion:"), 7, "expected 7 conclusion lines, saw %d:\n%s",
                 count(buf, "# conclusion:"), buf);
    cr_expect(strstr(buf, "rendezvous") && strstr(buf, "eager"), "both comm modes expected:\n%s", buf);
}

Test(bench, one_benchmark_only, .timeout = 60) {
    static char buf[1 << 14];
    int rc = pplab(buf, sizeof buf, "bench gemm --quick");
    cr_assert_eq(rc, 0, "pplab bench gemm --quick exited %d:\n%s", rc, buf);
    cr_expect(strstr(buf, "# gemm:"), "gemm table missing:\n%s", buf);
    cr_expect(!strstr(buf, "# comm:") && !strstr(buf, "# pipeline:"), "only the gemm table expected:\n%s", buf);
}

Test(bench, bad_flags_fail_in_one_line, .timeout = 20) {
    const char *bad[] = {"bench --fast", "bench network", "bench comm gemm"};
    for (int i = 0; i < 3; i++) {
        char buf[1024];
        int rc = pplab(buf, sizeof buf, bad[i]);
        cr_expect_eq(rc, 2, "'pplab %s' should exit 2, got %d:\n%s", bad[i], rc, buf);
        cr_expect_eq(count(buf, "\n"), 1, "'pplab %s' should print one line:\n%s", bad[i], buf);
        cr_expect(strstr(buf, "pplab bench:"), "'pplab %s' should name the command:\n%s", bad[i], buf);
    }
}

/* bench/compare.sh without PyTorch or numpy (as in CI): each comparison says it is skipped and why, the grading
 * figures still come, and the script exits 0. */
Test(bench, compare_without_torch_says_why, .timeout = 240) {
    static char buf[1 << 16];
    char dir[1024], cmd[1400];
    test_build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "PYTHON=/nonexistent/python bash bench/compare.sh '%s' 2>&1", dir);
    int rc = test_capture(cmd, buf, sizeof buf);
    cr_assert_eq(rc, 0, "compare.sh exited %d:\n%s", rc, buf);
    cr_expect_eq(count(buf, "skipped: PyTorch is not importable by /nonexistent/python"), 3, "%s", buf);
    cr_expect(strstr(buf, "skipped: numpy is not importable by /nonexistent/python"), "%s", buf);
    cr_expect(strstr(buf, "  --jobs 1 ") && strstr(buf, "  --jobs 2 "), "the grading figures:\n%s", buf);
    cr_expect(strstr(buf, "kernel"), "the BLAS kernel in use is named:\n%s", buf);
}
