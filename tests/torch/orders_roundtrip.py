# Every schedule of the kit's table, exported by `pplab run --canonical --export-order F.csv`, loaded by torch's
# own _PipelineScheduleRuntime._load_csv (which validates the order and lowers it to one with communication), and
# checked: torch's pipeline_order is the file's order, torch's _dump_csv writes the same bytes back, and where torch
# has a class for the schedule, its own pipeline_order (compute actions) is the kit's, and that order, written as
# torch writes it, runs under `pplab run --order` at full marks with the canonical bubble. A schedule the CSV
# cannot say (REFUSED below: full DualPipe holds every stage twice) is checked the other way: `--export-order` and
# `--order` refuse it in one line, with exit status 2, naming why, at every configuration the kit runs.
#   python3 tests/torch/orders_roundtrip.py BUILD        (tests/test_torch.c runs it where torch is installed)
# Every configuration the kit runs at P = 2..4, v = 1..3 and M = 1..4P is checked. Prints one line per schedule
# and a closing "N passed, N failed" line; exits 1 on any failure.
import csv, os, re, subprocess, sys, tempfile, types, warnings

warnings.filterwarnings("ignore")
from torch.distributed.pipelining import schedules as S

build = sys.argv[1] if len(sys.argv) > 1 else "build"
pplab = os.path.join(build, "pplab")

# torch's classes by the kit's schedule names; None where torch computes no order to compare (GPipe and 1F1B run
# their single stage directly; the rest are the kit's own)
CLASSES = {"interleaved": S.ScheduleInterleaved1F1B, "loopedbfs": S.ScheduleLoopedBFS,
           "zbinterleaved": S.ScheduleInterleavedZeroBubble, "zbv": S.ScheduleZBVZeroBubble,
           "dualpipev": S.ScheduleDualPipeV}

# the schedules whose orders PyTorch's CSV cannot say, as README.md documents, and what each refusal must name
REFUSED = {"dualpipe": "holds every stage twice"}


def kit_schedules():
    """The schedule table's names, as pplab lists them when refusing an unknown one."""
    out = subprocess.run([pplab, "run", "--canonical", "--schedule", "?"], capture_output=True, text=True).stderr
    m = re.search(r"unknown schedule '\?': use (.*?)(?: \(see|$)", out, re.M)
    if not m:
        sys.exit(f"cannot read the schedule names from pplab: {out!r}")
    names = m.group(1).replace(" or ", ", ").split(", ")
    return [n.strip() for n in names if n.strip()]


def canonical_args(name, P, M, v):
    return [pplab, "run", "--canonical", "--schedule", name, "--stages", str(P), "--microbatches", str(M),
            "--chunks", str(v)]


def runs(name, P, M, v):
    """Whether the kit runs the configuration at all (its rules refuse it with exit status 2)."""
    r = subprocess.run(canonical_args(name, P, M, v), capture_output=True, text=True)
    if r.returncode not in (0, 2):
        raise RuntimeError(f"{' '.join(canonical_args(name, P, M, v))} failed: {r.stderr.strip()}")
    return r.returncode == 0


def export(name, P, M, v):
    """The kit's canonical order as a CSV file's bytes; None where the kit refuses the configuration; the refusal's
    (exit status, stderr) where it runs the configuration but refuses to export it."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "order.csv")
        args = canonical_args(name, P, M, v) + ["--export-order", path]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            return (r.returncode, r.stderr) if runs(name, P, M, v) else None
        if not os.path.exists(path):
            raise RuntimeError(f"{' '.join(args)} wrote no file: {r.stderr.strip()}")
        with open(path, "rb") as f:
            return f.read()


def one_line_refusal(what, rc, err, why):
    """'' where a refusal is pplab's one documented line: exit status 2, a single line naming the flag and why."""
    lines = err.strip().splitlines()
    if rc != 2 or len(lines) != 1 or not lines[0].startswith(f"pplab run: {what} ") or why not in lines[0]:
        return f"{what} should be refused in one line with exit status 2 naming why ({why!r}); got exit {rc}: {err!r}"
    return ""


def refused_both_ways(name, P, M, v, refusal):
    """A schedule the CSV cannot say: its export was refused as documented, and so is an order given to run as it
    (any valid file: here a 1F1B order of the same P and M)."""
    if not isinstance(refusal, tuple):
        return f"--export-order wrote a file for {name}, whose orders README.md says the CSV cannot say"
    why = one_line_refusal("--export-order", *refusal, REFUSED[name])
    if why:
        return why
    one = export("1f1b", P, M, 1)
    if not isinstance(one, bytes):
        return f"no 1F1B order at P={P} M={M} to give --order: {one!r}"
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "order.csv")
        with open(path, "wb") as f:
            f.write(one)
        r = subprocess.run([pplab, "run", "--order", path, "--schedule", name], capture_output=True, text=True)
    return one_line_refusal("--order", r.returncode, r.stderr, REFUSED[name])


def runtime(P, M, stages):
    """A _PipelineScheduleRuntime with what _load_csv and its lowering read, and no process group."""
    R = S._PipelineScheduleRuntime
    o = R.__new__(R)
    o.pipeline_order, o._stages = {}, []
    o.pp_group_size, o._n_microbatches, o._num_stages = P, M, stages
    o._unshard_lookahead, o._max_active_stages = "full", 3
    o._defer_pp_recv = o._defer_reduce_grad_wait = False
    o._max_outstanding_sends = None
    return o


def compute_tokens(actions):
    """torch's actions as the CSV writes them, bubbles (None) left out, an overlapped pair as its two actions."""
    out = []
    for a in actions:
        if a is None:
            continue
        for sub in (a.sub_actions or (a,)):
            out.append(str(sub))
    return out


def class_actions(cls, P, M, v):
    """The order torch's class computes for (P, M, v), bubbles and overlapped pairs as it keeps them, without
    building stages or a process group."""
    rounds = max(1, M // P)
    me = types.SimpleNamespace(pp_group_size=P, _n_microbatches=M, n_local_stages=v, _stages=[None] * v,
                               microbatches_per_round=M // rounds, num_stages=P * v)
    return {r: cls._calculate_single_rank_operations(me, r) for r in range(P)}


def class_order(cls, P, M, v):
    return {r: compute_tokens(a) for r, a in class_actions(cls, P, M, v).items()}


def bubble_of(args):
    """The measured bubble pplab prints for a run, and the whole output."""
    r = subprocess.run([pplab, "run"] + args, capture_output=True, text=True)
    m = re.search(r"^bubble: ([0-9.]+)", r.stdout, re.M)
    return (m.group(1) if m else None), r.returncode, r.stdout + r.stderr


def torch_order_runs(name, cls, P, M, v):
    """torch's own order, written as its _dump_csv writes it (its bubbles as empty cells, an overlapped pair as one
    cell), run by pplab run --order: it must measure the kit's canonical bubble and keep full marks."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "torch.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            for r, actions in class_actions(cls, P, M, v).items():
                w.writerow(actions)
        ran, rc, out = bubble_of(["--order", path, "--schedule", name])
    ideal, _, _ = bubble_of(["--canonical", "--schedule", name, "--stages", str(P), "--microbatches", str(M),
                             "--chunks", str(v)])
    if rc != 0 or ran is None or ran != ideal:
        return f"torch's {cls.__name__} order run by --order measured {ran} (exit {rc}), the canonical {ideal}: {out}"
    return ""


def check(name, P, M, v):
    data = export(name, P, M, v)
    if data is None:
        return None
    if name in REFUSED:
        return refused_both_ways(name, P, M, v, data)
    if isinstance(data, tuple):
        return f"--export-order refused a configuration the kit runs (exit {data[0]}): {data[1].strip()}"
    rows = list(csv.reader(data.decode().splitlines()))
    with tempfile.TemporaryDirectory() as d:
        path, back = os.path.join(d, "order.csv"), os.path.join(d, "back.csv")
        with open(path, "wb") as f:
            f.write(data)
        o = runtime(P, M, P * v)
        o._load_csv(path)  # validates and lowers, or raises
        mine = {r: [str(a) for a in o.pipeline_order[r]] for r in o.pipeline_order}
        if mine != {r: row for r, row in enumerate(rows)}:
            return f"torch read {mine} from {rows}"
        if not o.pipeline_order_with_comms or any(not v for v in o.pipeline_order_with_comms.values()):
            return "torch's lowering left a rank without actions"
        o._dump_csv(back, format="compute_only")
        with open(back, "rb") as f:
            if f.read() != data:
                return "torch's _dump_csv wrote other bytes than the kit's file"
    cls = CLASSES.get(name)
    if cls is not None:
        theirs = class_order(cls, P, M, v)
        for r in range(P):
            if theirs[r] != rows[r]:
                return f"rank {r}: torch's {cls.__name__} runs {theirs[r]}, the kit {rows[r]}"
        return torch_order_runs(name, cls, P, M, v)
    return ""


passed = failed = 0
for name in kit_schedules():
    tried = 0
    for P in (2, 3, 4):
        for v in (1, 2, 3):
            for M in range(1, 4 * P + 1):
                why = check(name, P, M, v)
                if why is None:
                    continue
                tried += 1
                if why:
                    failed += 1
                    print(f"FAIL {name} P={P} M={M} v={v}: {why}")
                else:
                    passed += 1
    own = f" with torch's {CLASSES[name].__name__}" if name in CLASSES else ""
    if name in REFUSED:
        print(f"{name}: {tried} configurations whose --export-order and --order pplab refuses in one line, "
              f"as README.md says ({REFUSED[name]})")
    else:
        print(f"{name}: {tried} orders exported, loaded by torch and compared{own}")
    if tried == 0:
        failed += 1
        print(f"FAIL {name}: no configuration exported")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
