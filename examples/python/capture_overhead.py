#!/usr/bin/env python3
"""What kernel capture adds to eager PyTorch: the model's forward and train step without capture and under it.

Modes, each in its own process (CUPTI keeps state per process), the processes
of all modes interleaved over --rounds rounds:
  uncaptured         gpuprof scopes only (CUDA events), no KernelCapture
  activity records   KernelCapture(launch_callbacks=False): CUPTI records every
                     CUDA runtime and driver call (RUNTIME, DRIVER and
                     EXTERNAL_CORRELATION kinds) and the join keeps the launches
  launch callbacks   KernelCapture() (the default): CUPTI calls back on the
                     launching functions only, which note scope and start
Per process and phase (fwd: forward only, step: the train step): w warm-up
steps, then n steps, each timed on the host from its start to the end of its
synchronize (model_steps.Steps.run); the process's figure is the median step.
A mode's figure is the median over rounds; overhead is against uncaptured.
The "step" scope's own time (CUDA events) is given beside it.

Both capture modes must charge the same kernels to the same ranges (forward,
backward, optimizer; counted over the n steps) and leave none unattributed:
the cheaper mode gives up no attribution. With --agreement (default) the
launch-callbacks mode is then compared with torch.profiler
(kineto_agreement.py: same kernels, same counts, times
within 5 %, the same kernels in each range).

Prints the table, writes JSON. Exit status: 0 when the modes attribute
alike and agree with torch.profiler, 1 when not (the timings are reported,
not judged), 2 on bad arguments.

usage: capture_overhead.py --out FILE.json [--size small] [--ctx 128] [--warmup 3] [--steps 20]
                           [--rounds 3] [--no-agreement]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter

import gpuprof
import model_steps

MODES = {"uncaptured": None, "activity records": {"launch_callbacks": False}, "launch callbacks": {}}
CAPTURED = ("activity records", "launch callbacks")
PHASES = {"fwd": "forward", "step": "train step"}
RANGES = ("forward", "backward", "optimizer")


def extra(parser):
    import argparse
    parser.add_argument("--size", default="small", choices=list(model_steps.SIZES))
    parser.add_argument("--ctx", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--goal", type=float, default=0.10, help="overhead goal, as a fraction (0.10)")
    parser.add_argument("--no-agreement", dest="agreement", action="store_false",
                        help="skip the comparison with torch.profiler")
    parser.add_argument("--side", choices=list(MODES), help=argparse.SUPPRESS)  # one mode's process


def phase_run(args, steps, phase):
    """Warm-up, then --steps timed steps; host ms per step and what the report says about them."""
    for _ in range(args.warmup):
        steps.run(phase)
    gpuprof.reset()
    host_ms = []
    for _ in range(args.steps):
        start = time.perf_counter()
        steps.run(phase)
        host_ms.append((time.perf_counter() - start) * 1e3)
    report = gpuprof.report()
    step = report.node("step")
    result = {"host_ms": host_ms, "median_ms": statistics.median(host_ms),
              "step_scope_ms": step.primary_ms.median if step else None,
              "step_scope_timing": "gpu" if step and step.gpu_timed else "host"}
    if report.kernels:
        result["ranges"] = {r: Counter(k.name for k in report.kernels_in(r)) for r in RANGES}
        result["kernels"] = sum(1 for k in report.kernels if k.kind == "kernel")
        result["unattributed"] = sum(1 for n in report.kernel_nodes() if n < 0)
    return result


def side(args):
    """One mode's process: both phases, under the mode's capture (if any)."""
    steps = model_steps.Steps(args.size, args.ctx, args.batch, args.vocab, device=args.device)
    options = MODES[args.side]
    if options is None:
        return {"phases": {phase: phase_run(args, steps, phase) for phase in PHASES}}
    with gpuprof.KernelCapture(**options) as capture:
        if not capture.active and args.device == "cuda":
            return {"error": "kernel capture is off: " + capture.why_inactive}
        callbacks = capture.uses_launch_callbacks
        phases = {phase: phase_run(args, steps, phase) for phase in PHASES}
        dropped = capture.dropped
    return {"phases": phases, "uses_launch_callbacks": callbacks, "dropped": dropped,
            "why_inactive": capture.why_inactive}


def run_child(command, out):
    done = subprocess.run(command, timeout=900)
    if done.returncode not in (0, 1) or not os.path.exists(out):
        return {"error": f"{os.path.basename(command[1])} failed (exit {done.returncode})"}
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def strip_out(argv):
    """argv less --out and its value (each child gets its own)."""
    return [a for i, a in enumerate(argv) if a != "--out" and not a.startswith("--out=")
            and (i == 0 or argv[i - 1] != "--out")]


def attribution_problems(runs):
    """Both capture modes: the same kernels in the same ranges, none unattributed."""
    problems = []
    for phase in PHASES:
        seen = {}
        for mode in CAPTURED:
            for index, run in enumerate(runs[mode]):
                p = run["phases"][phase]
                if "ranges" not in p:
                    problems.append(f"{mode}, {phase}: no kernels captured")
                    continue
                if p["unattributed"]:
                    problems.append(f"{mode}, {phase}, round {index + 1}: {p['unattributed']} kernels in no scope")
                seen.setdefault(mode, p["ranges"])
        if len(seen) == 2:
            for r in RANGES:
                a, b = Counter(seen[CAPTURED[0]][r]), Counter(seen[CAPTURED[1]][r])
                if a != b:
                    problems.append(f"{phase}, range {r}: {sum((a - b).values())} launches seen only with "
                                    f"{CAPTURED[0]}, {sum((b - a).values())} only with {CAPTURED[1]}")
    return problems


def main():
    args = model_steps.setup(__doc__.split("\n")[0], extra)
    if args.rounds < 1:
        print("capture_overhead.py: --rounds >= 1 is needed", file=sys.stderr)
        return 2
    if args.side:
        model_steps.write_json(args.out, side(args))
        return 0
    argv = strip_out(sys.argv[1:])
    runs = {mode: [] for mode in MODES}
    errors = []
    with tempfile.TemporaryDirectory() as scratch:
        for round_index in range(args.rounds):
            for mode in MODES:
                out = os.path.join(scratch, f"{round_index}-{mode.replace(' ', '_')}.json")
                run = run_child([sys.executable, os.path.abspath(__file__), "--side", mode] + argv + ["--out", out],
                                out)
                if "error" in run:
                    errors.append(f"{mode}: {run['error']}")
                else:
                    runs[mode].append(run)
        agreement = None
        if args.agreement and args.device == "cuda" and not errors:
            out = os.path.join(scratch, "agreement.json")
            here = os.path.dirname(os.path.abspath(__file__))
            agreement = run_child([sys.executable, os.path.join(here, "kineto_agreement.py"), "--size", args.size,
                                   "--ctx", str(args.ctx), "--batch", str(args.batch), "--vocab", str(args.vocab),
                                   "--warmup", str(args.warmup), "--steps", str(args.steps),
                                   "--device", args.device, "--out", out], out)
    if errors:
        for e in errors:
            print("ERROR:", e)
        return 1

    rows = []
    for phase, label in PHASES.items():
        row = {"phase": phase}
        for mode in MODES:
            medians = [run["phases"][phase]["median_ms"] for run in runs[mode]]
            scopes = [run["phases"][phase]["step_scope_ms"] for run in runs[mode]]
            row[mode] = {"median_ms": statistics.median(medians), "round_medians_ms": medians,
                         "step_scope_ms": statistics.median(s for s in scopes if s is not None)
                         if any(s is not None for s in scopes) else None}
        base = row["uncaptured"]["median_ms"]
        for mode in CAPTURED:
            row[mode]["overhead"] = row[mode]["median_ms"] / base - 1
            row[mode]["goal_met"] = row[mode]["overhead"] <= args.goal
        rows.append(row)

    problems = attribution_problems(runs) if args.device == "cuda" else []
    if agreement is not None:
        if "error" in agreement:
            problems.append("torch.profiler agreement: " + agreement["error"])
        elif not agreement.get("agree"):
            problems += ["torch.profiler agreement: " + p for p in agreement.get("problems", [])]

    print(f"{args.size}, ctx {args.ctx}, batch {args.batch}: {args.rounds} rounds x {args.steps} steps per mode "
          f"and phase, one process each; ms per step (host, synchronized), median of the rounds' medians")
    pct = lambda x: f"{100 * x:+.1f}%"  # noqa: E731
    goal = f"<= {100 * args.goal:g}%"
    print(model_steps.table(
        ["phase", "uncaptured", CAPTURED[0], "overhead", goal, CAPTURED[1], "overhead", goal],
        [[PHASES[r["phase"]], f"{r['uncaptured']['median_ms']:.3f}"] +
         [cell for mode in CAPTURED for cell in (f"{r[mode]['median_ms']:.3f}", pct(r[mode]["overhead"]),
                                                 "yes" if r[mode]["goal_met"] else "NO")] for r in rows]))
    print("the step scope's own time (ms, median): " + "; ".join(
        f"{PHASES[r['phase']]}: " + ", ".join(
            f"{mode} {r[mode]['step_scope_ms']:.3f}" for mode in MODES if r[mode]["step_scope_ms"] is not None)
        for r in rows))
    if args.device == "cuda":
        for mode in CAPTURED:
            run = runs[mode][0]
            print(f"{mode}: uses_launch_callbacks={run['uses_launch_callbacks']}, "
                  f"kernels per {args.steps} train steps {run['phases']['step']['kernels']}, "
                  f"dropped {run['dropped']}, unattributed {run['phases']['step']['unattributed']}")
    if agreement is not None and "error" not in agreement:
        kernels = agreement.get("kernels", [])
        print(f"torch.profiler agreement (launch callbacks): {'agree' if agreement.get('agree') else 'DISAGREE'}; "
              f"{len(kernels)} kernels, {sum(k['count_ok'] and k['time_ok'] for k in kernels)} agree; "
              f"largest time difference {max((abs(k['difference']) for k in kernels), default=0) * 100:.2f}%")
    for p in problems:
        print("DIFFERENCE:", p)
    print("attribution alike" if not problems else "ATTRIBUTION OR AGREEMENT DIFFERS")
    model_steps.write_json(args.out, {
        "schema": "gpuprof.python.capture_overhead", "size": args.size, "ctx": args.ctx, "batch": args.batch,
        "warmup": args.warmup, "steps": args.steps, "rounds": args.rounds, "goal": args.goal, "rows": rows,
        "problems": problems, "agreement": agreement,
        "runs": runs})
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
