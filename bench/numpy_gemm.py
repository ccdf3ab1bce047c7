#!/usr/bin/env python3
"""numpy_gemm.py: numpy's fp32 matmul GFLOP/s on one thread, for shapes given as OP:MxNxK (OP = NN, NT, TN:
which operand is transposed, as `pplab bench gemm` prints them). Prints one line per shape: op m n k GFLOP/s.
Run with OPENBLAS_NUM_THREADS=1 (and OMP/MKL_NUM_THREADS=1): numpy's BLAS must use one core, as pplab's does."""
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("numpy_gemm.py: numpy is not installed: pip install numpy")

rng = np.random.default_rng(1234)
for spec in sys.argv[1:]:
    op, dims = spec.split(":")
    m, n, k = (int(x) for x in dims.split("x"))
    a = rng.random((k, m) if op[0] == "T" else (m, k), dtype=np.float32)
    b = rng.random((n, k) if op[1] == "T" else (k, n), dtype=np.float32)
    A = a.T if op[0] == "T" else a
    B = b.T if op[1] == "T" else b
    c = np.empty((m, n), dtype=np.float32)
    np.matmul(A, B, out=c)
    iters = 1
    while True:
        t = time.perf_counter()
        for _ in range(iters):
            np.matmul(A, B, out=c)
        if time.perf_counter() - t > 0.004 or iters > 50000:
            break
        iters *= 2
    ts = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(iters):
            np.matmul(A, B, out=c)
        ts.append((time.perf_counter() - t) / iters)
    ts.sort()
    print(f"{op} {m} {n} {k} {2.0 * m * n * k / ts[3] / 1e9:.2f}")
