#!/usr/bin/env python3
"""PyTorch's side of attention_bench: times
torch.nn.functional.scaled_dot_product_attention(is_causal=True) in bf16 at the
head shapes attention_bench uses (batch 4; small 12x64, medium 16x64, large
20x64, xl 25x64, 2.7B 32x80), forward and forward+backward, with CUDA events,
the median of --reps after --warmup calls, and FLOPs counted as attention_bench
counts them (causal half: forward 4*B*H*T^2*D/2, backward 2.5x forward).

Each shape is timed with PyTorch's default backend choice and, where they run,
with the flash and cuDNN backends forced. With --compare OURS.json (written by
attention_bench --json) it prints both side by side, ours over PyTorch's
default and over its fastest backend.

  python3 torch_sdpa_bench.py [--ctx 512,1024,2048,4096] [--json PATH] [--compare OURS.json]
"""
import argparse
import contextlib
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HEAD_SHAPES = [("small", 12, 64), ("medium", 16, 64), ("large", 20, 64), ("xl", 25, 64), ("2.7B", 32, 80)]
BATCH = 4
BACKENDS = {"default": None, "flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def median_ms(work, warmup, reps):
    for _ in range(warmup):
        work()
    times = []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        start.record()
        work()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def measure(heads, d_head, ctx, backend, warmup, reps):
    shape = (BATCH, heads, ctx, d_head)
    q, k, v = (torch.empty(shape, device="cuda", dtype=torch.bfloat16).uniform_(-1.7320508, 1.7320508)
               .requires_grad_() for _ in range(3))
    grad = torch.empty(shape, device="cuda", dtype=torch.bfloat16).uniform_(-1.7320508, 1.7320508)

    def forward():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def forward_backward():
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(grad)
        q.grad = k.grad = v.grad = None

    chosen = BACKENDS[backend]
    with sdpa_kernel(chosen) if chosen is not None else contextlib.nullcontext():
        fwd = median_ms(forward, warmup, reps)
        fwdbwd = median_ms(forward_backward, warmup, reps)
    flops = 4.0 * BATCH * heads * ctx * ctx * d_head / 2
    return {"fwd_ms": fwd, "fwdbwd_ms": fwdbwd, "fwd_tflops": flops / fwd / 1e9,
            "fwdbwd_tflops": 3.5 * flops / fwdbwd / 1e9}


def write_json(path, document):
    temp = path + ".tmp"
    with open(temp, "w") as f:
        json.dump(document, f, indent=1)
    os.replace(temp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ctx", default="512,1024,2048,4096")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json")
    parser.add_argument("--compare", help="attention_bench's JSON, printed beside PyTorch's figures")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_sdpa_bench: no CUDA device")
    ctxs = [int(c) for c in args.ctx.split(",")]
    print(f"torch {torch.__version__} (cuDNN {cudnn_version() or 'absent'}) on "
          f"{torch.cuda.get_device_name()}: SDPA causal bf16, batch {BATCH}, "
          f"median of {args.reps} after {args.warmup}", flush=True)
    rows = []
    for size, heads, d_head in HEAD_SHAPES:
        for ctx in ctxs:
            row = {"size": size, "batch": BATCH, "heads": heads, "d_head": d_head, "ctx": ctx}
            for backend in BACKENDS:
                try:
                    row[backend] = measure(heads, d_head, ctx, backend, args.warmup, args.reps)
                except RuntimeError as error:  # a backend that refuses the shape
                    row[backend] = {"error": str(error).splitlines()[0][:200]}
                torch.cuda.empty_cache()
            rows.append(row)
            print(" ", size, ctx, {b: round(row[b].get("fwdbwd_tflops", float("nan")), 1) for b in BACKENDS},
                  flush=True)
    document = {"kernel": "torch.nn.functional.scaled_dot_product_attention", "torch": torch.__version__,
                "cudnn_version": cudnn_version(), "batch": BATCH, "reps": args.reps, "warmup": args.warmup,
                "statistic": "median", "rows": rows}
    if args.json:
        write_json(args.json, document)
    if args.compare:
        compare(args.compare, rows)


def cudnn_version():
    """The cuDNN torch loaded, as attention_bench writes its own ("9.19.0"); None without one.
    Its fused attention engines differ between versions, so the comparison names both.
    cuDNN 9 counts major*10000 + minor*100 + patch, cuDNN 8 major*1000 + minor*100 + patch."""
    version = torch.backends.cudnn.version()
    if not version:
        return None
    major, rest = divmod(version, 10000 if version >= 90000 else 1000)
    return f"{major}.{rest // 100}.{rest % 100}"


def best(row, key):
    values = [(row[b][key], b) for b in BACKENDS if key in row[b]]
    return max(values) if values else (float("nan"), "-")


def our_rows(document):
    """attention_bench's gpuprof.bench file as one row per (attention, size, ctx),
    with fwd_tflops and fwdbwd_tflops from each benchmark's fields."""
    if document.get("schema") != "gpuprof.bench":
        sys.exit(f"torch_sdpa_bench: --compare wants attention_bench's gpuprof.bench JSON, "
                 f"not schema {document.get('schema')!r}")
    rows = {}
    for benchmark in document["benchmarks"]:
        fields = benchmark["fields"]
        key = (fields["attention"], fields["size"], fields["ctx"])
        row = rows.setdefault(key, {"attention": key[0], "size": key[1], "ctx": key[2]})
        row[fields["pass"] + "_tflops"] = fields["tflops"]
        if fields.get("cudnn_version"):
            row["cudnn_version"] = fields["cudnn_version"]
    return list(rows.values())


def compare(path, torch_rows):
    with open(path) as f:
        ours = our_rows(json.load(f))
    ours_cudnn = next((r["cudnn_version"] for r in ours if "cudnn_version" in r), None)
    print("\nTFLOP/s (causal FLOPs), ours vs torch SDPA (default backend; best of default/flash/cudnn)")
    print(f"cuDNN: ours {ours_cudnn or 'absent'}, torch's {cudnn_version() or 'absent'}")
    print("x: ours over torch's default; xbest: ours over its fastest backend")
    print(f"{'ours':9} {'size':7} {'ctx':>5} | {'fwd ours':>8} {'torch':>6} {'x':>5} {'best':>13} {'xbest':>5} | "
          f"{'f+b ours':>8} {'torch':>6} {'x':>5} {'best':>13} {'xbest':>5}")
    for row in torch_rows:
        for mine in (r for r in ours if (r["size"], r["ctx"]) == (row["size"], row["ctx"])):
            cells = []
            for key in ("fwd_tflops", "fwdbwd_tflops"):
                default = row["default"].get(key, float("nan"))
                top, name = best(row, key)
                cells.append(f"{mine[key]:8.1f} {default:6.1f} {mine[key] / default:5.2f} {top:6.1f}{'(' + name + ')':>7} "
                             f"{mine[key] / top:5.2f}")
            print(f"{mine.get('attention', 'fused'):9} {row['size']:7} {row['ctx']:5} | {cells[0]} | {cells[1]}")


if __name__ == "__main__":
    main()
