#!/usr/bin/env python3
"""torch_attention.py: PyTorch's causal attention, forward + backward, on the CPU, the baseline of
`pplab bench attention` (bench/compare.sh sets the two side by side).

    python3 bench/torch_attention.py B:T:NH:HD ...

For each shape: q, k, v as a model holds them, (B, T, NH*HD) split into heads by a view and a transpose (head j:
columns j*HD ..), uniform in [-1, 1); one call = F.scaled_dot_product_attention(q, k, v, is_causal=True) and its
backward from a fixed output gradient (q, k and v's gradients). fp32, one thread (torch.set_num_threads(1)).
Calls are batched to about 0.1 s, the median of 7 batches. Prints one line per shape, in order:
    B  T  nh  hd  calls  ms
"""
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("torch_attention.py: PyTorch is not installed: pip install torch")


def timed(fn, iters):
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters


def shape_ms(B, T, nh, hd, target=0.1, reps=7):
    g = torch.Generator().manual_seed(4321)
    qkv = [(torch.rand(B, T, nh * hd, generator=g) * 2 - 1).requires_grad_(True) for _ in range(3)]
    dout = torch.rand(B, nh, T, hd, generator=g) * 2 - 1
    heads = lambda t: t.view(B, T, nh, hd).transpose(1, 2)

    def call():
        for t in qkv:
            t.grad = None
        out = F.scaled_dot_product_attention(*(heads(t) for t in qkv), is_causal=True)
        out.backward(dout)

    call()  # warm-up
    iters, per = 1, timed(call, 1)
    while per * iters < target / 8 and iters < 10000:
        iters *= 2
        per = timed(call, iters)
    iters = max(1, int(target / per))
    return iters, statistics.median(timed(call, iters) for _ in range(reps)) * 1e3


def main():
    torch.set_num_threads(1)
    print(f"# torch {torch.__version__} on cpu, 1 thread, F.scaled_dot_product_attention(is_causal=True) fwd + bwd")
    print(f"# {'B':>3} {'T':>5} {'nh':>4} {'hd':>4} {'calls':>6} {'ms':>9}")
    for spec in sys.argv[1:]:
        B, T, nh, hd = (int(x) for x in spec.split(":"))
        calls, ms = shape_ms(B, T, nh, hd)
        print(f"  {B:>3} {T:>5} {nh:>4} {hd:>4} {calls:>6} {ms:>9.3f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
