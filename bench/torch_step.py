#!/usr/bin/env python3
"""torch_step.py: a PyTorch eager reference for one training step of pplab's model, to set pplab's per-step
time beside a mainstream framework on the same GPU.

Model (as lib/model/model.h): embedding -> L residual MLP blocks x + W2 gelu_tanh(W1 LN(x) + b1) + b2 -> final
LayerNorm -> LM head -> softmax cross-entropy (mean over tokens) -> SGD. fp32; TF32 off unless --tf32.
One step = zero_grad, forward, backward, optimizer step, on one device, no pipelining: compare it with
`pplab run --stages 1 --schedule naive` at the same shape (the full-batch work of a pipelined step).

Timing: --warmup untimed steps, then --steps timed ones; on CUDA with events around the whole loop and a
synchronize, so the figure is device time per step including launch overhead. Prints one line per hidden size:
    hidden  layers  tokens  vocab  ms/step
"""
import argparse
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("torch_step.py: PyTorch is not installed: pip install torch (or run it on the GPU machine)")


class Block(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.ln = nn.LayerNorm(h, eps=1e-5)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x)), approximate="tanh"))


class Model(nn.Module):
    def __init__(self, vocab, h, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, h)
        self.blocks = nn.ModuleList(Block(h) for _ in range(layers))
        self.ln = nn.LayerNorm(h, eps=1e-5)
        self.head = nn.Linear(h, vocab)

    def forward(self, tokens, targets):
        x = self.emb(tokens)
        for b in self.blocks:
            x = b(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits, targets)


def bench(args, h, dev):
    torch.manual_seed(args.seed)
    model = Model(args.vocab, h, args.layers).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    n = args.tokens
    tokens = torch.randint(0, args.vocab, (n,), device=dev)
    targets = (3 * tokens + 1) % args.vocab  # a learnable map, as pplab's data

    def step():
        opt.zero_grad(set_to_none=False)
        loss = model(tokens, targets)
        loss.backward()
        opt.step()
        return loss

    for _ in range(args.warmup):
        step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
        t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0.record()
        for _ in range(args.steps):
            loss = step()
        t1.record()
        torch.cuda.synchronize()
        ms = t0.elapsed_time(t1) / args.steps
    else:
        s = time.perf_counter()
        for _ in range(args.steps):
            loss = step()
        ms = (time.perf_counter() - s) * 1e3 / args.steps
    return ms, float(loss.detach())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hidden", default="512,1024,4096", help="comma-separated hidden sizes")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--tokens", type=int, default=2048, help="tokens per step (micro-batches x batch x seq)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--tf32", action="store_true", help="allow TF32 matmuls (pplab: PP_CUDA_TF32=1)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (pplab's cpu backend uses one per rank)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)

    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    dev = torch.device(args.device)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    print(f"# torch {torch.__version__} on {name}, fp32{' (TF32 matmuls)' if args.tf32 else ''}, eager")
    print(f"# {'hidden':>7} {'layers':>7} {'tokens':>7} {'vocab':>7} {'ms/step':>10} {'loss':>9}")
    for h in (int(x) for x in args.hidden.split(",")):
        ms, loss = bench(args, h, dev)
        print(f"  {h:>7} {args.layers:>7} {args.tokens:>7} {args.vocab:>7} {ms:>10.3f} {loss:>9.4f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
