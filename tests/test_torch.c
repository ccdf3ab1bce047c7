/* test_torch.c: the kit's orders travel to PyTorch. tests/torch/orders_roundtrip.py exports every schedule's
 * canonical order with `pplab run --export-order`, loads each file with torch's own
 * _PipelineScheduleRuntime._load_csv (its validation and its lowering to communication), and checks that torch
 * reads the file's order, writes the same bytes back, and, where torch has a class for the schedule, computes the
 * same order itself; full DualPipe, which the CSV cannot say, must be refused in pplab's one documented line.
 * Needs a Python with torch 2.15 (PPLAB_TORCH_PYTHON, else python3); skipped, with the reason, where there is none,
 * and failed in CI (PPLAB_CI=1), which installs it. Tests run from the project root. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

TestSuite(torch, .timeout = 300);

Test(torch, every_exported_order_is_read_by_torchs_runtime) {
    const char *py = getenv("PPLAB_TORCH_PYTHON");
    if (!py || !py[0]) py = "python3";
    char cmd[2 * PATH_MAX + 256], out[1 << 16], build[PATH_MAX];
    snprintf(cmd, sizeof cmd, "'%s' -c 'import torch.distributed.pipelining.schedules as s; "
             "s._PipelineScheduleRuntime._load_csv; print(\"torch\")' 2>/dev/null", py);
    if (test_capture(cmd, out, sizeof out) != 0 || !strstr(out, "torch"))
        test_skip("no torch with torch.distributed.pipelining in %s: pip install torch==2.15.0, or set "
                     "PPLAB_TORCH_PYTHON to a Python that has it", py);
    test_build_dir(build, sizeof build);
    snprintf(cmd, sizeof cmd, "'%s' tests/torch/orders_roundtrip.py '%s' 2>&1", py, build);
    int rc = test_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "the round trip failed:\n%s", out);
    cr_expect(strstr(out, " passed, 0 failed"), "%s", out);
    cr_expect(!strstr(out, "\n0 passed"), "no order was compared:\n%s", out);
}
