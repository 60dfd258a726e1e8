#!/usr/bin/env python3
"""Mixed precision on the PyTorch model: fp32 vs bf16 autocast, forward and train step, with a verdict.

Each precision runs w warm-up then n timed steps per mode, each step in a
gpuprof scope named after its mode; the two reports are then compared scope
by scope with gpuprof.compare (median ratio, Mann-Whitney U test, verdict).
fp32 means fp32 GEMMs (TF32 off); bf16 is torch.autocast with fp32 master
weights and the loss in fp32.

usage: mixed_precision.py --out FILE.json [--size small] [--ctx 256] [--modes fwd,step]
"""
import sys

import gpuprof
import model_steps


def extra(parser):
    parser.add_argument("--size", default="small", choices=list(model_steps.SIZES))
    parser.add_argument("--ctx", type=int, default=256)
    parser.add_argument("--modes", type=model_steps.comma_list(allowed=("fwd", "fwdbwd", "step")),
                        default=["fwd", "step"])


def timed_report(args, precision):
    """A report with one scope per mode ("fwd", "step"), n instances each."""
    steps = model_steps.Steps(args.size, args.ctx, args.batch, args.vocab, precision, device=args.device)
    gpuprof.reset()
    for mode in args.modes:
        for _ in range(args.warmup):
            steps.run(mode)
        model_steps.synchronize(args.device)
        for _ in range(args.steps):
            with gpuprof.scope(mode):
                steps.run(mode)
    report = gpuprof.report()
    del steps
    model_steps.release_cached_memory(args.device)
    return report


def main():
    args = model_steps.setup(__doc__.split("\n")[0], extra)
    if args.device == "cpu":
        print("note: bf16 autocast on the CPU says nothing about a GPU; this only checks the script")
    fp32 = timed_report(args, "fp32")
    bf16 = timed_report(args, "bf16")
    comparison = gpuprof.compare(fp32, bf16)
    rows = []
    for mode in args.modes:
        row = next(r for r in comparison.rows if r.kind == "scope" and r.key == mode)
        a, b = fp32.node(mode).primary_ms, bf16.node(mode).primary_ms
        rows.append({"mode": mode, "fp32_mean_ms": a.mean, "fp32_std_ms": a.stddev, "bf16_mean_ms": b.mean,
                     "bf16_std_ms": b.stddev, "speedup": a.median / b.median if b.median > 0 else None,
                     "p_value": row.p_value, "verdict": row.verdict})
    print(f"{args.size}, ctx {args.ctx}, batch {args.batch}, {args.steps} steps after {args.warmup} warm-up")
    print(model_steps.table(["mode", "fp32 ms", "± std", "bf16 ms", "± std", "fp32/bf16", "bf16 is"], [
        [r["mode"], f"{r['fp32_mean_ms']:.3f}", f"{r['fp32_std_ms']:.3f}", f"{r['bf16_mean_ms']:.3f}",
         f"{r['bf16_std_ms']:.3f}", f"{r['speedup']:.2f}x" if r["speedup"] else "-", r["verdict"]] for r in rows]))
    model_steps.write_json(args.out, {"schema": "gpuprof.python.mixed_precision", "size": args.size, "ctx": args.ctx,
                                      "batch": args.batch, "steps": args.steps, "rows": rows,
                                      "comparison_warnings": comparison.warnings})
    return 0


if __name__ == "__main__":
    sys.exit(main())
