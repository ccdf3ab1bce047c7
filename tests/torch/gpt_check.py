# The kit's GPT against PyTorch on the same weights. tests/test_torch.c runs the kit's model (one stage holding the
# embedding, every block and the head, on the cpu backend) forward and backward and writes FILE: a line of dims
# (V h ffn heads seq layers samples), the loss, the tokens and targets, then every parameter's weight and gradient
# ("weight|grad NAME ROWS COLS v ..."). This script rebuilds the model from those weights with torch's own modules
# (F.layer_norm, F.scaled_dot_product_attention(is_causal=True), F.gelu(approximate="tanh"), F.cross_entropy),
# computes the loss and every gradient in float64 (the reference: the fp32 weights held exactly, torch's rounding
# far below the kit's), and compares each element as |kit - ref| <= atol + rtol |ref|:
#   gradients: rtol = 1e-4, the kit's gradient tolerance (PP_GRAD_RTOL, docs/design.md "Tolerances"), and
#              atol = 1e-4 x the tensor's RMS, so that an element near zero is allowed its tensor's rounding;
#              the tensor's relative error norm |kit - ref| / |ref| must also be <= 1e-4, as the grader checks it;
#   loss:      rtol = 1e-5 (PP_LOSS_RTOL), atol = 0.
#   python3 tests/torch/gpt_check.py [--spoil] [--fp32] FILE ...
# --spoil scales one gradient of each file (the first block's Wq) by 1.01 before comparing: each must fail there.
# --fp32 computes the reference in float32 instead (torch's own rounding against the kit's).
# Prints per file one line per tensor that fails and the worst tensor, then "N passed, N failed" over all files;
# exits 1 on any failure, 77 where torch cannot be imported (the test skips then, naming why).
import argparse, math, sys

import warnings

warnings.filterwarnings("ignore")
try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"no torch: {e}")
    sys.exit(77)

ap = argparse.ArgumentParser()
ap.add_argument("files", nargs="+")
ap.add_argument("--spoil", action="store_true")
ap.add_argument("--fp32", action="store_true")
a = ap.parse_args()
dt = torch.float32 if a.fp32 else torch.float64
GRAD_RTOL, LOSS_RTOL = 1e-4, 1e-5


def read_case(path):
    """The kit's run: dims, loss, tokens, targets, and each parameter's weight and gradient in the model's order."""
    case = {"weights": {}, "grads": {}, "order": []}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "dims":
                case.update(zip(("V", "h", "ffn", "heads", "T", "L", "B"), map(int, w[1:])))
            elif w[0] == "loss":
                case["loss"] = float(w[1])
            elif w[0] in ("tokens", "targets"):
                case[w[0]] = torch.tensor([int(x) for x in w[1:]], dtype=torch.long)
            else:
                name, r, c = w[1], int(w[2]), int(w[3])
                case[w[0] + "s"][name] = torch.tensor([float(x) for x in w[4:]], dtype=torch.float32).reshape(r, c)
                if w[0] == "weight":
                    case["order"].append(name)
    return case


def torch_loss(c, P):
    """The model in torch on parameters P: the mean cross-entropy over the case's tokens."""
    h, heads, B, T = c["h"], c["heads"], c["B"], c["T"]
    hd = h // heads

    def ln(x, pre):
        return F.layer_norm(x, (h,), P[pre + ".g"].reshape(h), P[pre + ".b"].reshape(h), eps=1e-5)

    def block(x, b):
        p = lambda n: P[f"block{b}.{n}"]
        z = ln(x, f"block{b}.ln1")
        q, k, v = z @ p("wq") + p("bq"), z @ p("wk"), z @ p("wv") + p("bv")
        heads_of = lambda t: t.reshape(B, T, heads, hd).transpose(1, 2)  # head j: columns j*hd ..
        att = F.scaled_dot_product_attention(heads_of(q), heads_of(k), heads_of(v), is_causal=True)
        x = x + att.transpose(1, 2).reshape(B * T, h) @ p("wo") + p("bo")
        z = ln(x, f"block{b}.ln2")
        return x + F.gelu(z @ p("w1") + p("b1"), approximate="tanh") @ p("w2") + p("b2")

    x = P["embed.w"][c["tokens"]] + P["pos.w"].repeat(B, 1)  # the same positions for every sequence
    for b in range(c["L"]):
        x = block(x, b)
    return F.cross_entropy(ln(x, "final_ln") @ P["head.w"] + P["head.b"], c["targets"])


def check(path):
    """Compares one file; returns (passed, failed)."""
    c = read_case(path)
    P = {n: c["weights"][n].to(dt).requires_grad_(True) for n in c["order"]}
    loss = torch_loss(c, P)
    loss.backward()
    grads = c["grads"]
    if a.spoil:
        grads["block0.wq"] = grads["block0.wq"] * 1.01
    passed = failed = 0
    worst = (-1.0, "", 0.0, 0.0)  # (|diff| / allowed, name, relative error norm, largest |diff|)
    lerr = abs(c["loss"] - loss.item())
    if lerr <= LOSS_RTOL * abs(loss.item()):
        passed += 1
    else:
        failed += 1
        print(f"FAIL loss: kit {c['loss']:.9g}, torch {loss.item():.9g}, |diff| {lerr:.2e} > {LOSS_RTOL} x |torch|")
    for n in c["order"]:
        ref, got = P[n].grad.double(), grads[n].double()
        diff = (got - ref).abs()
        rms = ref.norm().item() / math.sqrt(ref.numel())
        allowed = GRAD_RTOL * rms + GRAD_RTOL * ref.abs()
        ratio = (diff / allowed).max().item()
        rel = diff.norm().item() / max(ref.norm().item(), 1e-300)
        bad = int((diff > allowed).sum())
        if ratio > worst[0]:
            worst = (ratio, n, rel, diff.max().item())
        if bad or not rel <= GRAD_RTOL:
            failed += 1
            print(f"FAIL {n}: {bad} of {ref.numel()} elements over atol + rtol |ref| (worst {ratio:.2f}x its "
                  f"allowance), relative error norm {rel:.2e}")
        else:
            passed += 1
    print(f"# {'float32' if a.fp32 else 'float64'} torch reference; V={c['V']} h={c['h']} heads={c['heads']} "
          f"seq={c['T']} layers={c['L']} samples={c['B']}; loss kit {c['loss']:.7f} torch {loss.item():.7f} "
          f"(|diff| {lerr:.1e})")
    print(f"# worst gradient: {worst[1]}, {worst[0]:.3f}x its allowance (largest |diff| {worst[3]:.2e}, "
          f"relative error norm {worst[2]:.2e}; limits rtol {GRAD_RTOL:g}, atol {GRAD_RTOL:g} x RMS)")
    return passed, failed


passed = failed = 0
for path in a.files:
    p, f = check(path)
    passed, failed = passed + p, failed + f
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
