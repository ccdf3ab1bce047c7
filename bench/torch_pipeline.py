#!/usr/bin/env python3
"""torch_pipeline.py: torch.distributed.pipelining's ScheduleGPipe and Schedule1F1B on the CPU (gloo), two
processes with one thread each, on pplab's model, to set `pplab run --stages 2` beside them.

Model as bench/torch_step.py (lib/model/model.h): stage 0 = embedding + the first L/2 blocks, stage 1 = the other
L/2 blocks + final LayerNorm + head; loss = cross-entropy, mean over each micro-batch's tokens (pplab scales each
micro-batch's loss by 1/M, torch's schedules average the micro-batch losses: the same gradient). SGD.
Compare with: pplab run --schedule gpipe|1f1b --stages 2 --microbatches M --width H --layers L --seq S
--batch B --vocab V --steps K. Prints one line per schedule:
    schedule  hidden  layers  tokens  microbatches  ms/step (median of the steps after the first)
"""
import argparse
import os
import queue
import statistics
import sys
import time

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe
except ImportError as e:
    sys.exit(f"torch_pipeline.py: PyTorch with torch.distributed.pipelining is not importable ({e}): pip install torch")

from torch_step import Block  # the same block as the single-device reference (this script's folder is on sys.path)


class First(nn.Module):
    def __init__(self, vocab, h, n):
        super().__init__()
        self.emb = nn.Embedding(vocab, h)
        self.blocks = nn.Sequential(*[Block(h) for _ in range(n)])

    def forward(self, tokens):
        return self.blocks(self.emb(tokens))


class Last(nn.Module):
    def __init__(self, vocab, h, n):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(h) for _ in range(n)])
        self.ln = nn.LayerNorm(h, eps=1e-5)
        self.head = nn.Linear(h, vocab)

    def forward(self, x):
        return self.head(self.ln(self.blocks(x)))


def loss_fn(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def worker(rank, args, schedule_name, out):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(args.seed + rank)
    half = args.layers // 2
    mod = First(args.vocab, args.hidden, half) if rank == 0 else Last(args.vocab, args.hidden, args.layers - half)
    stage = PipelineStage(mod, rank, 2, torch.device("cpu"))
    cls = ScheduleGPipe if schedule_name == "gpipe" else Schedule1F1B
    sched = cls(stage, n_microbatches=args.microbatches, loss_fn=loss_fn)
    opt = torch.optim.SGD(mod.parameters(), lr=args.lr)
    g = torch.Generator().manual_seed(args.seed)
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq), generator=g)
    targets = (3 * tokens + 1) % args.vocab
    times = []
    for _ in range(args.steps):
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        if rank == 0:
            sched.step(tokens)
        else:
            sched.step(target=targets, losses=[])
        opt.step()
        dist.barrier()
        times.append(time.perf_counter() - t0)
    if rank == 0:
        out.put(statistics.median(times[1:]) * 1e3 if len(times) > 1 else times[0] * 1e3)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--schedules", default="gpipe,1f1b")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--batch", type=int, default=64, help="sequences per step (all micro-batches)")
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--port", type=int, default=29517)
    args = p.parse_args()
    print(f"# torch {torch.__version__}, torch.distributed.pipelining on gloo, 2 processes x 1 thread, fp32")
    print(f"# {'schedule':>9} {'hidden':>7} {'layers':>7} {'tokens':>7} {'M':>4} {'ms/step':>10}")
    ctx = mp.get_context("spawn")
    for name in args.schedules.split(","):
        out = ctx.Queue()
        procs = [ctx.Process(target=worker, args=(r, args, name, out)) for r in range(2)]
        for q in procs:
            q.start()
        # a rank that dies (an import error, a crash) would leave the other waiting for gloo's timeout: watch
        # both, and end the part as soon as one has failed, naming it
        ms, failed = None, None
        while ms is None and failed is None:
            try:
                ms = out.get(timeout=0.5)
            except queue.Empty:
                failed = next((r for r, q in enumerate(procs) if q.exitcode not in (None, 0)), None)
        for q in procs:
            if failed is not None:
                q.kill()
            q.join()
        args.port += 1
        if failed is not None:
            print(f"# {name}: rank {failed} died (exit code {procs[failed].exitcode}); its error is above", file=sys.stderr)
            print(f"  {name:>9} {args.hidden:>7} {args.layers:>7} {args.batch * args.seq:>7} {args.microbatches:>4} "
                  f"{'failed':>10}")
            continue
        print(f"  {name:>9} {args.hidden:>7} {args.layers:>7} {args.batch * args.seq:>7} {args.microbatches:>4} {ms:>10.3f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
