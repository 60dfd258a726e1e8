#!/usr/bin/env python3
"""The PyTorch yardstick for transformer_bench: the same model in plain PyTorch.

The model, initialisation scale and protocol are those of docs/model.md: batch
4, w warm-up steps then n timed steps, each timed with a pair of CUDA events and
synchronized, fp32 without TF32 or bf16 autocast (fp32 master weights, loss in
fp32). Every configuration becomes one JSON line, the format
`transformer_bench --torch-jsonl FILE` joins onto its own rows by
(size, ctx, mode, prec, batch):

  {"size": "small", "ctx": 128, "mode": "step", "prec": "bf16", "batch": 4,
   "compile": false, "fast": false, "params": ..., "mean_ms": ..., "std_ms": ...,
   "median_ms": ..., "min_ms": ..., "peak_mem_gib": ..., "wall_s": ...}

and {"...", "oom": true} for a configuration that did not fit.

  --fast            what a PyTorch user picks to go fast: fused attention
                    (scaled_dot_product_attention) and the fused AdamW kernel
  --compile         torch.compile the model (--compile-mode reduce-overhead adds
                    CUDA graphs)

usage: torch_reference.py [--sizes small,large] [--ctx 128,256] [--modes fwd,step]
                          [--precs fp32,bf16] [--fast] [--compile] [--out FILE]
       torch_reference.py --check-dump DIR
Needs a CUDA GPU and PyTorch. Exit status: 0 done, 2 bad arguments or no GPU.

--check-dump DIR checks a `transformer_bench --dump DIR` training step
(docs/transformer-dump.md) against this model in float64 on the CPU (no GPU
needed): the loss, the logits and every gradient, within the tolerances of
DUMP_TOLERANCES for the dump's precision; and the parameters after the step
against one AdamW step (our order) applied in float64 to the dump's own
parameters and gradients. Prints one line per check. Exit status: 0 every
check passed, 1 one failed, 2 the dump cannot be read.
"""

import argparse
import contextlib
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

# d_model, d_ff, layers, heads: the sizes of model/config.cpp.
SIZES = {
    "tiny": (64, 128, 3, 4),
    "small": (768, 3072, 12, 12),
    "medium": (1024, 4096, 24, 16),
    "large": (1280, 5120, 36, 20),
    "xl": (1600, 6400, 48, 25),
    "2.7B": (2560, 10240, 32, 32),
}
MODES = ("fwd", "fwdbwd", "step")
PRECISIONS = ("fp32", "bf16")
# The ranges the naive attention opens (the course's names). examples/python
# sets this to gpuprof.scope to time them and charge their kernels.
attention_range = torch.cuda.nvtx.range


def truncated_normal_(weight, std):
    nn.init.trunc_normal_(weight, std=std, a=-3 * std, b=3 * std)


def linear(d_in, d_out):
    layer = nn.Linear(d_in, d_out, bias=False)
    truncated_normal_(layer.weight, math.sqrt(2.0 / (d_in + d_out)))
    return layer


class RMSNorm(nn.Module):
    """In fp32 (or wider) whatever the input's dtype; the result is cast back."""

    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        wide = x.to(torch.promote_types(x.dtype, torch.float32))
        scale = torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + self.eps)
        return (wide * scale * self.weight).to(x.dtype)


def rotate(x, angles):
    """RoPE on interleaved pairs (x[2j], x[2j+1]) of the last axis."""
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


# Parameter names are those of transformer_bench --dump plus ".weight"
# (docs/transformer-dump.md), so a dump loads by name.
class Block(nn.Module):
    def __init__(self, d, d_ff, heads, fused_attention):
        super().__init__()
        self.heads, self.fused_attention = heads, fused_attention
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.wq, self.wk, self.wv, self.wo = (linear(d, d) for _ in range(4))
        self.w1, self.w3, self.w2 = linear(d, d_ff), linear(d, d_ff), linear(d_ff, d)

    def attention(self, x, angles):
        batch, ctx, d = x.shape
        d_head = d // self.heads

        def split(t):
            return t.view(batch, ctx, self.heads, d_head).transpose(1, 2)

        q, k, v = rotate(split(self.wq(x)), angles), rotate(split(self.wk(x)), angles), split(self.wv(x))
        if self.fused_attention:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # the course's ranges, as in our scopes (none on the CPU: --check-dump)
            def ranged(name):
                return attention_range(name) if x.is_cuda else contextlib.nullcontext()

            with ranged("computing attention scores"):
                scores = q @ k.transpose(-1, -2) / math.sqrt(d_head)
                future = torch.ones(ctx, ctx, dtype=torch.bool, device=x.device).triu(1)
                scores = scores.masked_fill(future, float("-inf"))
            with ranged("computing softmax"):
                weights = torch.softmax(scores, dim=-1)
            with ranged("final matmul"):
                y = weights @ v
        return self.wo(y.transpose(1, 2).reshape(batch, ctx, d))

    def forward(self, x, angles):
        x = x + self.attention(self.norm1(x), angles)
        h = self.norm2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class TransformerLM(nn.Module):
    def __init__(self, vocab, d, d_ff, layers, heads, fused_attention=False):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        truncated_normal_(self.emb.weight, 1.0)
        self.blocks = nn.ModuleList(Block(d, d_ff, heads, fused_attention) for _ in range(layers))
        self.final_norm = RMSNorm(d)
        self.lm_head = linear(d, vocab)
        d_head = d // heads
        self.register_buffer(
            "inverse_wavelengths",
            10000.0 ** (-torch.arange(0, d_head, 2, dtype=torch.float32) / d_head),
            persistent=False)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device, dtype=torch.float32)
        angles = positions[:, None] * self.inverse_wavelengths[None, :]
        x = self.emb(tokens)
        for block in self.blocks:
            x = block(x, angles)
        return self.lm_head(self.final_norm(x))


def time_configuration(model, ctx, mode, precision, args):
    """Per-step milliseconds of `steps` timed steps after `warmup` warm-up steps."""
    # fused=None leaves PyTorch's default (the multi-tensor kernels).
    fused = True if args.fast else None
    optimizer = torch.optim.AdamW(model.parameters(), fused=fused) if mode == "step" else None
    tokens = torch.randint(0, args.vocab, (args.batch, ctx), device="cuda")
    targets = torch.randint(0, args.vocab, (args.batch, ctx), device="cuda")

    def loss_of_forward():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            logits = model(tokens)
        return F.cross_entropy(logits.float().view(-1, args.vocab), targets.view(-1))

    def step():
        if mode == "fwd":
            with torch.no_grad():
                loss_of_forward()
            return
        loss_of_forward().backward()
        if optimizer:
            optimizer.step()
        model.zero_grad(set_to_none=True)

    return time_steps(step, args.warmup, args.steps)


def time_steps(step, warmup, steps, before_each=lambda: None):
    """The protocol: `warmup` untimed calls, then `steps` calls each timed by a
    pair of CUDA events and waited for; `before_each` runs untimed (a barrier)."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        before_each()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def measure(size, ctx, mode, precision, args):
    d, d_ff, layers, heads = SIZES[size]
    row = dict(size=size, ctx=ctx, mode=mode, prec=precision, batch=args.batch,
               compile=args.compile, fast=args.fast)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    try:
        torch.manual_seed(0)
        with torch.device("cuda"):
            model = TransformerLM(args.vocab, d, d_ff, layers, heads, fused_attention=args.fast)
        params = sum(p.numel() for p in model.parameters())
        if args.compile:
            model = torch.compile(model, mode=args.compile_mode)
        times = time_configuration(model, ctx, mode, precision, args)
    except torch.cuda.OutOfMemoryError:
        return dict(row, oom=True)
    return dict(row, params=params, mean_ms=statistics.fmean(times),
                std_ms=statistics.stdev(times) if len(times) > 1 else 0.0,
                median_ms=statistics.median(times), min_ms=min(times),
                peak_mem_gib=torch.cuda.max_memory_allocated() / 2**30)


# --check-dump's tolerances, per the dump's precision. loss: |ours - torch| /
# |torch|; logits and each gradient: ||ours - torch|| / ||torch|| (norm-wise,
# as the CUDA tests state theirs: fp32 arithmetic of a few layers, 5e-5;
# tf32 GEMM inputs, 2e-2; bf16 activations and gradients, 5e-2); step: the
# largest |ours - float64 AdamW| over a tensor's elements, a few fp32
# roundings of parameters below 4 (ulp 4.8e-7).
DUMP_TOLERANCES = {
    "fp32": dict(loss=1e-5, logits=5e-5, grads=5e-5, step=2e-6),
    "tf32": dict(loss=1e-3, logits=2e-2, grads=2e-2, step=2e-6),
    "bf16": dict(loss=1e-2, logits=5e-2, grads=5e-2, step=2e-6),
}


def check_dump(directory):
    """0 when the dump agrees with this model within DUMP_TOLERANCES, else 1."""
    import numpy as np

    def load(path):
        return torch.from_numpy(np.load(f"{directory}/{path}")).double()

    with open(f"{directory}/manifest.json", encoding="utf-8") as file:
        manifest = json.load(file)
    config, adamw = manifest["config"], manifest["adamw"]
    tolerance = DUMP_TOLERANCES[config["precision"]]
    if config["norm_eps"] != 1e-5 or config["rope_theta"] != 10000.0:
        raise ValueError(f"norm_eps {config['norm_eps']}, rope_theta {config['rope_theta']}: "
                         "this model has 1e-5 and 10000")
    model = TransformerLM(config["vocab"], config["d_model"], config["d_ff"], config["layers"],
                          config["heads"]).double()
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, parameter in params.items():
            parameter.copy_(load(f"params/{name.removesuffix('.weight')}.npy"))
    tokens = torch.from_numpy(np.load(f"{directory}/tokens.npy")).long()
    targets = torch.from_numpy(np.load(f"{directory}/targets.npy")).long()
    logits = model(tokens)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
    loss.backward()

    failures = 0

    def report(what, error, limit):
        nonlocal failures
        good = error <= limit
        failures += not good
        print(f"{'ok  ' if good else 'FAIL'} {what:40s} {error:.3e} (tolerance {limit:.0e})")

    def relative(ours, reference):
        return ((ours - reference).norm() / reference.norm()).item()

    print(f"{directory}: {config['size']} {config['precision']} {config['attention']} attention, "
          f"batch {config['batch']} ctx {config['ctx']}, torch {torch.__version__} float64 on the CPU")
    ours_loss = float(np.load(f"{directory}/loss.npy"))
    report("loss", abs(ours_loss - loss.item()) / abs(loss.item()), tolerance["loss"])
    report("logits", relative(load("logits.npy"), logits.detach()), tolerance["logits"])
    grads = {name.removesuffix(".weight"): load(f"grads/{name.removesuffix('.weight')}.npy")
             for name in params}
    for name, parameter in params.items():
        ours = name.removesuffix(".weight")
        report(f"grad {ours}", relative(grads[ours], parameter.grad), tolerance["grads"])
    # The step from our own gradients: the optimizer on its own, exactly.
    scale = 1.0
    if adamw["clip_norm"] > 0:
        norm = math.sqrt(sum((g * g).sum().item() for g in grads.values()))
        if norm > adamw["clip_norm"]:
            scale = adamw["clip_norm"] / (norm + 1e-6)
    alpha = adamw["lr"] * math.sqrt(1 - adamw["beta2"]) / (1 - adamw["beta1"])
    for name in params:
        ours = name.removesuffix(".weight")
        g = grads[ours] * scale
        m, v = (1 - adamw["beta1"]) * g, (1 - adamw["beta2"]) * g * g
        theta = load(f"params/{ours}.npy") - alpha * m / (v.sqrt() + adamw["eps"])
        theta = theta * (1 - adamw["lr"] * adamw["weight_decay"])
        error = (load(f"params_after/{ours}.npy") - theta).abs().max().item()
        report(f"AdamW step {ours} (max abs)", error, tolerance["step"])
    print(f"{failures} check(s) failed" if failures else "every check passed")
    return 1 if failures else 0


def comma_list(allowed=None, item=str):
    def parse(text):
        items = [item(part) for part in text.split(",")]
        unknown = [part for part in items if allowed is not None and part not in allowed]
        if unknown or not items:
            raise argparse.ArgumentTypeError(f"unknown {unknown} (known: {', '.join(allowed)})")
        return items
    return parse


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=comma_list(SIZES), default=["small"])
    parser.add_argument("--ctx", type=comma_list(item=positive), default=[128, 256, 512, 1024])
    parser.add_argument("--modes", type=comma_list(MODES), default=list(MODES))
    parser.add_argument("--precs", type=comma_list(PRECISIONS), default=list(PRECISIONS))
    parser.add_argument("--batch", type=positive, default=4)
    parser.add_argument("--vocab", type=positive, default=10000)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=positive, default=10)
    parser.add_argument("--fast", action="store_true",
                        help="scaled_dot_product_attention and fused AdamW")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    parser.add_argument("--compile-mode", default=None,
                        help="torch.compile mode, e.g. reduce-overhead (CUDA graphs)")
    parser.add_argument("--out", default="-", help="append JSON lines here (default stdout)")
    parser.add_argument("--check-dump", metavar="DIR",
                        help="check a transformer_bench --dump DIR against this model (float64, CPU)")
    args = parser.parse_args()
    if args.check_dump:
        try:
            return check_dump(args.check_dump)
        except (OSError, KeyError, ValueError) as error:
            print(f"torch_reference.py: --check-dump {args.check_dump}: {error}", file=sys.stderr)
            return 2
    if args.compile_mode and not args.compile:
        parser.error("--compile-mode needs --compile")
    if not torch.cuda.is_available():
        parser.error("no CUDA device: the yardstick times the GPU")

    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32 GEMMs, PyTorch's default
    torch.backends.cudnn.allow_tf32 = False
    out = sys.stdout if args.out == "-" else open(args.out, "a", encoding="utf-8")
    for precision in args.precs:
        for size in args.sizes:
            for ctx in args.ctx:
                for mode in args.modes:
                    started = time.monotonic()
                    row = measure(size, ctx, mode, precision, args)
                    row["wall_s"] = round(time.monotonic() - started, 2)
                    line = json.dumps(row)
                    print(line, file=out, flush=True)
                    if out is not sys.stdout:
                        print(line, file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
