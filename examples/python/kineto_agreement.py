#!/usr/bin/env python3
"""gpuprof's kernel capture beside torch.profiler (Kineto) on the same train steps of the PyTorch model.

CUPTI takes one client per process, and Kineto keeps its subscription once
it has run, so each tool gets a fresh process (this script again, with
--side): the same model, seed and inputs, w warm-up steps, then n train
steps under the tool, each step synchronized inside its "step" range, with
forward / backward / optimizer ranges (gpuprof.scope on one side,
torch.profiler.record_function on the other).

Compared (kernels only; copies and memsets left out on both sides):
  - the kernel names and their launches per step (median over steps): equal
  - each kernel's GPU time per step (median over steps): within --tolerance
    (5%), or within --floor-us (1 us) for kernels too short for a percentage
  - per range, the kernels and their counts: equal. A kernel belongs to a
    range when its launching call's host time lies inside the range, on any
    thread (backward runs on PyTorch's autograd threads); gpuprof.report()
    charges kernels this way, and the torch side is read the same way from
    its trace (launch events matched by correlation id).
Prints both side by side, writes JSON; exit 0 when they agree, 1 when not
(or when a side captured nothing), 2 on bad arguments.

usage: kineto_agreement.py --out FILE.json [--size small] [--ctx 128] [--steps 20] [--activity-records]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import Counter

import model_steps

RANGES = ("forward", "backward", "optimizer")


def extra(parser):
    import argparse
    parser.add_argument("--size", default="small", choices=list(model_steps.SIZES))
    parser.add_argument("--ctx", type=int, default=128)
    parser.add_argument("--tolerance", type=float, default=0.05, help="relative time tolerance (0.05)")
    parser.add_argument("--floor-us", type=float, default=1.0, help="absolute time tolerance per step (1 us)")
    parser.add_argument("--activity-records", action="store_true",
                        help="gpuprof's side: KernelCapture(launch_callbacks=False)")
    parser.add_argument("--side", choices=["gpuprof", "torch"], help=argparse.SUPPRESS)  # one tool's process


def per_step(kernels, steps):
    """{name: [time ns per step]}, {name: [launches per step]} from (name, start_ns, dur_ns) and step intervals."""
    times, counts = {}, {}
    for index, (begin, end) in enumerate(steps):
        for name, start, duration in kernels:
            if begin <= start <= end:
                times.setdefault(name, [0] * len(steps))[index] += duration
                counts.setdefault(name, [0] * len(steps))[index] += 1
    return times, counts


def gpuprof_side(args):
    import gpuprof
    steps = model_steps.Steps(args.size, args.ctx, args.batch, args.vocab, device=args.device)
    for _ in range(args.warmup):
        steps.run("step")
    with gpuprof.KernelCapture(launch_callbacks=not args.activity_records) as capture:
        gpuprof.reset()
        for _ in range(args.steps):
            steps.run("step")
    if not capture.active:
        return {"error": "kernel capture is off: " + capture.why_inactive}
    report = capture.report
    step_node = [i for i, n in enumerate(report.nodes) if n.path == "step"]
    intervals = sorted((i.host_begin_ns, i.host_end_ns) for i in report.instances if i.node in step_node)
    kernels = [(k.name, k.start_ns, k.duration_ns) for k in report.kernels if k.kind == "kernel"]
    times, counts = per_step(kernels, intervals)
    ranges = {r: Counter(k.name for k in report.kernels_in(r)) for r in RANGES}
    return {"times_ns": times, "counts": counts, "ranges": ranges, "dropped": capture.dropped,
            "unattributed": sum(1 for n in report.kernel_nodes() if n < 0)}


def torch_side(args):
    import torch
    steps = model_steps.Steps(args.size, args.ctx, args.batch, args.vocab, device=args.device,
                              ranges=torch.profiler.record_function)
    for _ in range(args.warmup):
        steps.run("step")
    activities = [torch.profiler.ProfilerActivity.CPU]
    if args.device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as profile:
        for _ in range(args.steps):
            steps.run("step")
    with tempfile.TemporaryDirectory() as scratch:
        trace = os.path.join(scratch, "trace.json")
        profile.export_chrome_trace(trace)
        with open(trace, encoding="utf-8") as f:
            doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc  # a bare list from builds without Kineto
    us = 1000.0  # the trace's times are microseconds
    spans = lambda name: [(e["ts"] * us, (e["ts"] + e["dur"]) * us) for e in events  # noqa: E731
                          if e.get("cat", "user_annotation") == "user_annotation" and e.get("name") == name]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    launch = {e["args"]["correlation"]: e["ts"] * us for e in events
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    times, counts = per_step([(k["name"], k["ts"] * us, k["dur"] * us) for k in kernels], sorted(spans("step")))
    ranges = {}
    for r in RANGES:
        inside = spans(r)
        ranges[r] = Counter(k["name"] for k in kernels
                            if any(b <= launch.get(k["args"].get("correlation"), -1) <= e for b, e in inside))
    return {"times_ns": times, "counts": counts, "ranges": ranges}


def run_side(side, argv, scratch):
    out = os.path.join(scratch, side + ".json")
    command = [sys.executable, os.path.abspath(__file__), "--side", side] + argv + ["--out", out]
    done = subprocess.run(command, timeout=600)
    if done.returncode != 0 or not os.path.exists(out):
        return {"error": f"the {side} side failed (exit {done.returncode})"}
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def compare(args, g, t):
    names = sorted(set(g["counts"]) | set(t["counts"]))
    rows, problems = [], []
    for name in names:
        gc = statistics.median(g["counts"].get(name, [0]))
        tc = statistics.median(t["counts"].get(name, [0]))
        gt = statistics.median(g["times_ns"].get(name, [0])) / 1e3
        tt = statistics.median(t["times_ns"].get(name, [0])) / 1e3
        diff = (gt - tt) / tt if tt > 0 else float("inf")
        time_ok = abs(gt - tt) <= max(args.tolerance * tt, args.floor_us)
        rows.append({"name": name, "gpuprof_count": gc, "torch_count": tc, "gpuprof_us": gt, "torch_us": tt,
                     "difference": diff, "count_ok": gc == tc, "time_ok": time_ok})
        if gc != tc:
            problems.append(f"count differs: {name[:80]}: gpuprof {gc}, torch {tc} per step")
        elif not time_ok:
            problems.append(f"time differs by {100 * diff:+.1f}%: {name[:80]}")
    ranges = {}
    for r in RANGES:
        gr, tr = Counter(g["ranges"][r]), Counter(t["ranges"][r])
        only_g, only_t = gr - tr, tr - gr
        ranges[r] = {"gpuprof_kernels": sum(gr.values()), "torch_kernels": sum(tr.values()),
                     "only_gpuprof": dict(only_g), "only_torch": dict(only_t)}
        if only_g or only_t:
            problems.append(f"range {r}: {sum(only_g.values())} launches only in gpuprof's, "
                            f"{sum(only_t.values())} only in torch's")
    if not names:
        problems.append("no kernels captured on either side: nothing to compare")
    rows.sort(key=lambda r: -r["torch_us"])
    return rows, ranges, problems


def main():
    args = model_steps.setup(__doc__.split("\n")[0], extra)
    if args.side:
        result = gpuprof_side(args) if args.side == "gpuprof" else torch_side(args)
        model_steps.write_json(args.out, result)
        return 0
    argv = sys.argv[1:]  # the same options for both sides, less --out
    argv = [a for i, a in enumerate(argv) if a != "--out" and not a.startswith("--out=")
            and (i == 0 or argv[i - 1] != "--out")]
    with tempfile.TemporaryDirectory() as scratch:
        g = run_side("gpuprof", argv, scratch)
        t = run_side("torch", argv, scratch)
    errors = [side["error"] for side in (g, t) if "error" in side]
    if errors:
        rows, ranges, problems = [], {}, errors
    else:
        rows, ranges, problems = compare(args, g, t)
    agree = not problems
    print(f"{args.size}, ctx {args.ctx}, batch {args.batch}: {args.steps} train steps per tool, "
          f"medians per step; time tolerance {100 * args.tolerance:g}% or {args.floor_us:g} us")
    print(model_steps.table(["launches g/t", "us/step gpuprof", "torch", "diff", "kernel"], [
        [f"{r['gpuprof_count']:g}/{r['torch_count']:g}", f"{r['gpuprof_us']:.1f}", f"{r['torch_us']:.1f}",
         f"{100 * r['difference']:+.2f}%", r["name"][:90]] for r in rows]))
    for r, v in ranges.items():
        print(f"range {r}: gpuprof {v['gpuprof_kernels']} kernel launches, torch {v['torch_kernels']}")
    if not errors:
        total_g, total_t = sum(r["gpuprof_us"] for r in rows), sum(r["torch_us"] for r in rows)
        print(f"kernel time per step: gpuprof {total_g:.1f} us, torch {total_t:.1f} us; "
              f"{sum(r['count_ok'] and r['time_ok'] for r in rows)} of {len(rows)} kernels agree; "
              f"gpuprof dropped {g.get('dropped')}, unattributed {g.get('unattributed')}")
    for p in problems:
        print("DIFFERENCE:", p)
    print("agree" if agree else "DISAGREE")
    model_steps.write_json(args.out, {"schema": "gpuprof.python.kineto_agreement", "size": args.size,
                                      "ctx": args.ctx, "batch": args.batch, "steps": args.steps,
                                      "tolerance": args.tolerance, "floor_us": args.floor_us, "agree": agree,
                                      "problems": problems, "kernels": rows, "ranges": ranges})
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
