#!/usr/bin/env python3
"""Peak device memory per scope of the PyTorch model's train step (gpuprof.MemoryWatch).

gpuprof's number is device memory in use (cudaMemGetInfo's total - free:
the CUDA context, PyTorch's cached blocks and other processes included)
sampled at every scope boundary: for PyTorch it tracks the caching
allocator's reserved memory, not the tensors alive. Beside it, PyTorch's own
view of the same step: torch.cuda.max_memory_allocated / reserved.

usage: peak_memory.py --out FILE.json [--sizes tiny,small] [--ctx 128,256]
"""
import sys

import torch

import gpuprof
import model_steps

SCOPES = ("step", "step/forward", "step/backward", "step/optimizer")


def extra(parser):
    parser.add_argument("--sizes", type=model_steps.comma_list(allowed=model_steps.SIZES), default=["small"])
    parser.add_argument("--ctx", type=model_steps.comma_list(int), default=[128, 256])


def measure(args, size, ctx):
    gib = 2 ** 30
    steps = model_steps.Steps(size, ctx, args.batch, args.vocab, device=args.device)
    for _ in range(args.warmup):
        steps.run("step")
    gpuprof.reset()
    if args.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    with gpuprof.MemoryWatch() as watch:
        for _ in range(args.steps):
            steps.run("step")
    row = {"size": size, "ctx": ctx, "params": steps.params, "watch": watch.why_inactive or "active"}
    for path in SCOPES:
        node = watch.report.node(path)
        row[path] = node.peak_device_bytes / gib if node and node.peak_device_bytes >= 0 else None
    if args.device == "cuda":
        row["torch_max_allocated_gib"] = torch.cuda.max_memory_allocated() / gib
        row["torch_max_reserved_gib"] = torch.cuda.max_memory_reserved() / gib
    del steps
    model_steps.release_cached_memory(args.device)
    return row


def main():
    args = model_steps.setup(__doc__.split("\n")[0], extra)
    rows = []
    for size, ctx in model_steps.configurations(args):
        try:
            rows.append(measure(args, size, ctx))
        except torch.cuda.OutOfMemoryError:
            rows.append({"size": size, "ctx": ctx, "oom": True})
    f = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    print("Peak device memory per scope, GiB (gpuprof.MemoryWatch), beside PyTorch's allocator peaks")
    print(model_steps.table(["size", "ctx"] + list(SCOPES) + ["torch allocated", "torch reserved"], [
        [r["size"], r["ctx"]] + (["oom"] * (len(SCOPES) + 2) if r.get("oom") else
                                 [f(r[s]) for s in SCOPES] + [f(r.get("torch_max_allocated_gib")),
                                                              f(r.get("torch_max_reserved_gib"))]) for r in rows]))
    for r in rows:
        if r.get("watch", "active") != "active":
            print("note: memory watch off:", r["watch"])
            break
    model_steps.write_json(args.out, {"schema": "gpuprof.python.peak_memory", "steps": args.steps, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
