#!/usr/bin/env python3
"""torch_step.py: a PyTorch eager reference for one training step of pplab's model, to set pplab's per-step
time beside a mainstream framework on the same GPU.

Model (as lib/model/model.h), a small GPT: token embedding + learned position embedding -> L pre-LayerNorm blocks,
each x1 = x + Wo attn(LN1(x)) + bo (causal multi-head self-attention, q = ln Wq + bq, k = ln Wk without a bias,
v = ln Wv + bv, F.scaled_dot_product_attention(is_causal=True)) then y = x1 + W2 gelu_tanh(W1 LN2(x1) + b1) + b2
-> final LayerNorm -> LM head -> softmax cross-entropy (mean over tokens) -> SGD. fp32; TF32 off unless --tf32.
One step = zero_grad, forward, backward, optimizer step, on one device, no pipelining: compare it with
`pplab run --stages 1 --schedule naive` at the same shape (the full-batch work of a pipelined step).

Timing: --warmup untimed steps, then --steps timed ones; on CUDA with events around the whole loop and a
synchronize, so the figure is device time per step including launch overhead. Prints one line per hidden size:
    hidden  heads  seq  layers  tokens  vocab  ms/step  loss
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


def default_heads(h):
    """pplab's default without --heads (lib/run/config.c, no tensor parallelism): the fewest heads, at least
    four, that divide h; else h itself."""
    return next((k for k in range(4, h + 1) if h % k == 0), h)


class Block(nn.Module):
    """One pre-LN GPT block on (batch, seq, h): causal multi-head attention, then the MLP, each residual."""

    def __init__(self, h, heads=None):
        super().__init__()
        self.heads = heads or default_heads(h)
        self.ln1 = nn.LayerNorm(h, eps=1e-5)
        self.wq, self.wk, self.wv = nn.Linear(h, h), nn.Linear(h, h, bias=False), nn.Linear(h, h)
        self.wo = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h, eps=1e-5)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)

    def forward(self, x):
        B, T, h = x.shape
        z = self.ln1(x)
        split = lambda t: t.view(B, T, self.heads, h // self.heads).transpose(1, 2)  # head j: columns j*hd ..
        a = F.scaled_dot_product_attention(split(self.wq(z)), split(self.wk(z)), split(self.wv(z)), is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(B, T, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class Model(nn.Module):
    def __init__(self, vocab, h, layers, seq, heads=None):
        super().__init__()
        self.emb = nn.Embedding(vocab, h)
        self.pos = nn.Parameter(torch.zeros(seq, h).uniform_(-0.1, 0.1))
        self.blocks = nn.ModuleList(Block(h, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(h, eps=1e-5)
        self.head = nn.Linear(h, vocab)

    def forward(self, tokens, targets):
        x = self.emb(tokens) + self.pos  # tokens: (batch, seq)
        for b in self.blocks:
            x = b(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def bench(args, h, dev):
    torch.manual_seed(args.seed)
    model = Model(args.vocab, h, args.layers, args.seq, args.heads).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    if args.tokens % args.seq:
        sys.exit(f"torch_step.py: --tokens {args.tokens} is not a whole number of --seq {args.seq} sequences")
    tokens = torch.randint(0, args.vocab, (args.tokens // args.seq, args.seq), device=dev)
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
    p.add_argument("--seq", type=int, default=16, help="tokens per sequence (pplab's --seq)")
    p.add_argument("--heads", type=int, default=0, help="attention heads (pplab's --heads; 0: pplab's default)")
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
    print(f"# {'hidden':>7} {'heads':>5} {'seq':>5} {'layers':>7} {'tokens':>7} {'vocab':>7} {'ms/step':>10} {'loss':>9}")
    for h in (int(x) for x in args.hidden.split(",")):
        ms, loss = bench(args, h, dev)
        heads = args.heads or default_heads(h)
        print(f"  {h:>7} {heads:>5} {args.seq:>5} {args.layers:>7} {args.tokens:>7} {args.vocab:>7} {ms:>10.3f} "
              f"{loss:>9.4f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
