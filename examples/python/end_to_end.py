#!/usr/bin/env python3
"""The end-to-end benchmark on the PyTorch model: sizes x context x (forward, forward+backward, train step).

Each configuration: w warm-up steps, then n timed steps with gpuprof.bench
(CUDA events on the current stream, the device synchronized after every
step), mean +- std in ms. A configuration that does not fit says "oom".

usage: end_to_end.py --out FILE.json [--sizes tiny,small] [--ctx 128,256]
                     [--modes fwd,fwdbwd,step] [--prec fp32|bf16] [--warmup W] [--steps N]
"""
import sys

import torch

import gpuprof
import model_steps


def extra(parser):
    parser.add_argument("--sizes", type=model_steps.comma_list(allowed=model_steps.SIZES), default=["small"])
    parser.add_argument("--ctx", type=model_steps.comma_list(int), default=[128, 256])
    parser.add_argument("--modes", type=model_steps.comma_list(allowed=("fwd", "fwdbwd", "step")),
                        default=["fwd", "fwdbwd", "step"])
    parser.add_argument("--prec", default="fp32", choices=["fp32", "bf16"])


def main():
    args = model_steps.setup(__doc__.split("\n")[0], extra)
    rows = []
    for size, ctx in model_steps.configurations(args):
        try:
            steps = model_steps.Steps(size, ctx, args.batch, args.vocab, args.prec, device=args.device)
        except torch.cuda.OutOfMemoryError:
            rows += [dict(size=size, ctx=ctx, mode=m, oom=True) for m in args.modes]
            continue
        for mode in args.modes:
            row = dict(size=size, ctx=ctx, mode=mode, prec=args.prec, batch=args.batch, params=steps.params)
            try:
                result = gpuprof.bench(lambda: steps.run(mode), warmup=args.warmup, iters=args.steps)
            except torch.cuda.OutOfMemoryError:
                rows.append(dict(row, oom=True))
                continue
            s = result.primary
            rows.append(dict(row, mean_ms=s.mean, std_ms=s.stddev, median_ms=s.median, n=s.n,
                             timing_source=result.timing_source, samples_ms=s.samples))
        steps = None  # frees the model before the next configuration
        model_steps.release_cached_memory(args.device)
    print(model_steps.table(
        ["size", "ctx", "mode", "mean ms", "± std", "n"],
        [[r["size"], r["ctx"], r["mode"], "oom" if r.get("oom") else f"{r['mean_ms']:.3f}",
          "" if r.get("oom") else f"{r['std_ms']:.3f}", r.get("n", "")] for r in rows]))
    model_steps.write_json(args.out, {"schema": "gpuprof.python.end_to_end", "warmup": args.warmup,
                                      "steps": args.steps, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
