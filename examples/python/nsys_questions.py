#!/usr/bin/env python3
"""The course's nsys questions (a)-(e) for the PyTorch model, from kernels gpuprof captured itself.

  (a) forward time: the benchmark's mean (capture off), the forward scope's
      CUDA-event mean, its summed kernel time and its GPU projection
  (b) the kernel with the most time in the forward pass, and in forward + backward
  (c) non-GEMM kernels above 1% of the forward pass's kernel time
  (d) time per kernel category (copies and memsets as "memory"): inference vs train step
  (e) softmax vs the two attention matmuls inside attention: kernel time and FLOPs
The model runs with its naive attention (scores matmul, softmax, P.V matmul
in the course's three ranges, here gpuprof scopes). docs/profiling.md
explains each answer for the C++ model; this is the same for PyTorch.

usage: nsys_questions.py --out FILE.json [--size small] [--ctx 256] [--prec fp32|bf16]
"""
import sys

import gpuprof
import model_steps

ATTENTION = ("computing attention scores", "computing softmax", "final matmul")


def extra(parser):
    parser.add_argument("--size", default="small", choices=list(model_steps.SIZES))
    parser.add_argument("--ctx", type=int, default=256)
    parser.add_argument("--prec", default="fp32", choices=["fp32", "bf16"])


def captured(steps, mode, warmup, n):
    """The report of n steps of `mode` under kernel capture, warm-up forgotten."""
    with gpuprof.KernelCapture() as capture:
        for _ in range(warmup):
            steps.run(mode)
        gpuprof.reset()  # forgets the warm-up's scopes and kernels
        for _ in range(n):
            steps.run(mode)
    return capture


def summed_ns(records):
    return sum(r.duration_ns for r in records)


def row_dict(row, per):
    return {"name": row.name, "category": row.category, "percent": row.time_percent,
            "ms_per_pass": row.total_ns / per / 1e6, "instances_per_pass": row.instances / per}


def answers(args, steps, bench_fwd_ms, fwd, train):
    n = args.steps
    d, _, layers, heads = model_steps.SIZES[args.size]
    out = {}
    forward_node = fwd.report.node("step/forward")
    fwd_kernels = fwd.report.kernels_in("forward")
    projection = fwd.report.scope_gpu_summary("step/forward")
    out["a"] = {"bench_mean_ms": bench_fwd_ms,
                "scope_mean_ms": forward_node.primary_ms.mean if forward_node else None,
                "scope_timing": "cuda_events" if forward_node and forward_node.gpu_timed else "host_clock",
                "kernel_sum_ms": summed_ns(fwd_kernels) / n / 1e6,
                "projection_ms": projection[0].projection_ns / n / 1e6 if projection else None}
    fwd_rows = fwd.report.kern_sum("forward")
    train_rows = gpuprof.kern_sum(train.report.kernels_in("forward") + train.report.kernels_in("backward"))
    out["b"] = {"forward_top": row_dict(fwd_rows[0], n) if fwd_rows else None,
                "train_top": row_dict(train_rows[0], n) if train_rows else None}
    if fwd_rows and train_rows:
        out["b"]["same_kernel"] = fwd_rows[0].name == train_rows[0].name
    out["c"] = [row_dict(r, n) for r in fwd_rows if r.category != "gemm" and r.time_percent > 1.0]
    out["d"] = {}
    for label, report in (("inference", fwd.report), ("train_step", train.report)):
        shares = gpuprof.category_breakdown(report.kernels_in("step", copies=True))
        out["d"][label] = [{"category": c.category, "percent": c.percent, "ms_per_pass": c.total_ns / n / 1e6}
                           for c in shares]
    per_scope = {name: summed_ns(fwd.report.kernels_in(name)) / n / 1e6 for name in ATTENTION}
    d_head = d // heads
    elements = args.batch * heads * args.ctx * args.ctx * layers  # score elements per forward
    matmul_flops = 2 * elements * d_head  # each of the two matmuls
    softmax_flops = 5 * elements  # max, subtract, exp, sum, divide: an assumption
    both = per_scope[ATTENTION[0]] + per_scope[ATTENTION[2]]
    out["e"] = {"ms_per_forward": per_scope, "flops": {"scores_matmul": matmul_flops, "softmax": softmax_flops,
                                                       "final_matmul": matmul_flops},
                "softmax_over_matmuls_time": per_scope[ATTENTION[1]] / both if both > 0 else None,
                "softmax_over_matmuls_flops": softmax_flops / (2 * matmul_flops),
                "note": "the scores scope also holds the causal mask (triu, masked_fill)"}
    return out


def print_answers(a, capture_note):
    f = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    print("(a) forward ms: bench {}  scope {} ({})  kernel sum {}  projection {}".format(
        f(a["a"]["bench_mean_ms"]), f(a["a"]["scope_mean_ms"]), a["a"]["scope_timing"], f(a["a"]["kernel_sum_ms"]),
        f(a["a"]["projection_ms"])))
    if capture_note:
        print("    kernels not captured:", capture_note)
        return
    for key, label in (("forward_top", "forward"), ("train_top", "forward+backward")):
        top = a["b"][key]
        if top:
            print(f"(b) top kernel, {label}: {top['name'][:90]} ({top['percent']:.1f}%, "
                  f"{top['instances_per_pass']:.0f} per pass, {top['ms_per_pass']:.3f} ms)")
    print("(c) non-GEMM kernels > 1% of the forward's kernel time:")
    print(model_steps.table(["%", "ms/fwd", "per fwd", "category", "kernel"],
                            [[f"{r['percent']:.1f}", f"{r['ms_per_pass']:.3f}", f"{r['instances_per_pass']:.0f}",
                              r["category"], r["name"][:80]] for r in a["c"]]))
    print("(d) category shares (% of activity time, ms per pass):")
    cats = [c["category"] for c in a["d"]["train_step"]]
    by = {label: {c["category"]: c for c in rows} for label, rows in a["d"].items()}
    print(model_steps.table(["category", "inference %", "ms", "train step %", "ms"], [
        [c] + [v for label in ("inference", "train_step")
               for v in ((f"{by[label][c]['percent']:.1f}", f"{by[label][c]['ms_per_pass']:.3f}")
                         if c in by[label] else ("-", "-"))] for c in cats]))
    e = a["e"]
    print("(e) attention per forward, ms: " + ", ".join(f"{k} {v:.3f}" for k, v in e["ms_per_forward"].items()))
    print(f"    softmax / (both matmuls): time {f(e['softmax_over_matmuls_time'])}, "
          f"FLOPs {e['softmax_over_matmuls_flops']:.4f}")


def main():
    args = model_steps.setup(__doc__.split("\n")[0], extra)
    steps = model_steps.Steps(args.size, args.ctx, args.batch, args.vocab, args.prec, fused=False,
                              device=args.device)
    bench = gpuprof.bench(lambda: steps.run("fwd"), warmup=args.warmup, iters=args.steps)
    gpuprof.reset()
    fwd = captured(steps, "fwd", args.warmup, args.steps)
    train = captured(steps, "step", args.warmup, args.steps)
    note = "" if fwd.active and train.active else (fwd.why_inactive or train.why_inactive)
    result = answers(args, steps, bench.primary.mean, fwd, train)
    print(f"{args.size}, ctx {args.ctx}, batch {args.batch}, {args.prec}, naive attention, {args.steps} steps")
    print_answers(result, note)
    model_steps.write_json(args.out, {"schema": "gpuprof.python.nsys_questions", "size": args.size,
                                      "ctx": args.ctx, "batch": args.batch, "prec": args.prec,
                                      "steps": args.steps, "capture_note": note,
                                      "dropped_kernel_records": fwd.dropped + train.dropped,
                                      "answers": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
