#!/usr/bin/env python3
"""Peak memory of the PyTorch model's forward alone and of a full train step, per scope.

Two views of each scope (the highest over --steps executions):
  allocated  the caching allocator's peak of allocated bytes, the live tensors
             (gpuprof.TorchMemoryWatch; torch.cuda.max_memory_allocated's sense)
  reserved   the allocator's reserved bytes at the scope's end
  device     device memory in use (gpuprof.MemoryWatch: cudaMemGetInfo's
             total - free, the CUDA context and the cached blocks included)
and, as the check, torch.cuda.max_memory_allocated read around the same steps
without any watch: the "step" scope's allocated peak must equal it (the
difference column, %).

usage: peak_memory.py --out FILE.json [--sizes tiny,small] [--ctx 128,256]
"""
import sys

import torch

import gpuprof
import model_steps

MODES = {"fwd": "forward alone (no_grad)", "step": "train step"}
SCOPES = {"fwd": ("step", "step/forward"), "step": ("step", "step/forward", "step/backward", "step/optimizer")}


def extra(parser):
    parser.add_argument("--sizes", type=model_steps.comma_list(allowed=model_steps.SIZES), default=["small"])
    parser.add_argument("--ctx", type=model_steps.comma_list(int), default=[128, 256])


def figure(value):
    return value if value is not None and value >= 0 else None


def measure(args, steps, mode):
    for _ in range(args.warmup):
        steps.run(mode)
    row = {"mode": mode}
    if args.device == "cuda":  # PyTorch's own number around the same steps, no watch on
        torch.cuda.reset_peak_memory_stats()
        for _ in range(args.steps):
            steps.run(mode)
        row["torch_max_allocated_bytes"] = torch.cuda.max_memory_allocated()
    gpuprof.reset()
    with gpuprof.MemoryWatch() as device_watch, gpuprof.TorchMemoryWatch() as watch:
        for _ in range(args.steps):
            steps.run(mode)
    row["watch"] = ", ".join(w.why_inactive for w in (device_watch, watch) if w.why_inactive) or "active"
    row["scopes"] = {}
    for path in SCOPES[mode]:
        node = watch.report.node(path)
        row["scopes"][path] = {"peak_allocated_bytes": figure(node and node.peak_allocated_bytes),
                               "reserved_bytes": figure(node and node.reserved_bytes),
                               "peak_device_bytes": figure(node and node.peak_device_bytes)}
    step_peak = row["scopes"]["step"]["peak_allocated_bytes"]
    torch_peak = row.get("torch_max_allocated_bytes")
    row["difference_pct"] = 100 * (step_peak - torch_peak) / torch_peak if step_peak and torch_peak else None
    return row


def main():
    args = model_steps.setup(__doc__.split("\n")[0], extra)
    rows = []
    for size, ctx in model_steps.configurations(args):
        try:
            steps = model_steps.Steps(size, ctx, args.batch, args.vocab, device=args.device)
            for mode in MODES:
                rows.append({"size": size, "ctx": ctx, "params": steps.params, **measure(args, steps, mode)})
            del steps
        except torch.cuda.OutOfMemoryError:
            rows.append({"size": size, "ctx": ctx, "oom": True})
        model_steps.release_cached_memory(args.device)
    mib = lambda v: "-" if v is None else f"{v / 2 ** 20:.1f}"  # noqa: E731
    pct = lambda v: "-" if v is None else f"{v:+.2f}"  # noqa: E731
    table = []
    for r in rows:
        if r.get("oom"):
            table.append([r["size"], r["ctx"], "oom"] + ["-"] * 6)
            continue
        for path, f in r["scopes"].items():
            table.append([r["size"], r["ctx"], MODES[r["mode"]], path, mib(f["peak_allocated_bytes"]),
                          mib(f["reserved_bytes"]), mib(f["peak_device_bytes"]),
                          mib(r.get("torch_max_allocated_bytes")) if path == "step" else "",
                          pct(r["difference_pct"]) if path == "step" else ""])
    print(f"Peak memory per scope, MiB (highest of {args.steps} steps)")
    print(model_steps.table(["size", "ctx", "mode", "scope", "allocated peak", "reserved", "device in use",
                             "torch max_memory_allocated", "difference %"], table))
    for r in rows:
        if r.get("watch", "active") != "active":
            print("note: watch off:", r["watch"])
            break
    model_steps.write_json(args.out, {"schema": "gpuprof.python.peak_memory", "steps": args.steps, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
