#!/usr/bin/env python3
"""What a range costs from Python: gpuprof.scope beside what PyTorch users use.

For each mode, the cost of one `with` (enter + exit) in microseconds:
  nvtx-only    gpuprof.set_nvtx_only(True)        goal <= 0.5 us
               beside torch.cuda.nvtx.range and torch.profiler.record_function
  host-clock   gpuprof.set_gpu_timing(False)       goal <= 0.8 us
  event-timed  CUDA events on the current stream   goal <= 0.5 us over a raw
               torch.cuda.Event pair (two .record() calls)
gpuprof is measured twice: a scope object made once and entered every time
(`s = gpuprof.scope("x")` ... `with s:`), and a new one per `with`
(`with gpuprof.scope("x"):`), which adds the object's construction.

Protocol: every candidate runs `--iters` times in a loop, the loop's time
divided by the iterations, minus the same loop around nothing; `--reps`
such rounds, candidates interleaved in each round; the table gives the
median over rounds (and the best). Recorded scopes are reset between rounds.

usage: overhead.py [--iters N] [--reps R] [OUT.json]
Without torch (or without a GPU) the torch rows and the event-timed mode are
left out and the JSON says why. Exit status: 0 done, 2 bad arguments.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import gpuprof

GOALS_US = {"nvtx-only": 0.5, "host-clock": 0.8, "event-timed over torch.cuda.Event pair": 0.5}


def loop_seconds(body, iters):
    """Seconds per iteration of `for _ in range(iters): body()`-like loops (body is a loop itself)."""
    start = time.perf_counter()
    body(iters)
    return (time.perf_counter() - start) / iters


def with_reused(name, stream=None):
    s = gpuprof.scope(name, stream=stream)

    def run(iters):
        for _ in range(iters):
            with s:
                pass
    return run


def with_fresh(name):
    make = gpuprof.scope

    def run(iters):
        for _ in range(iters):
            with make(name):
                pass
    return run


def with_context(factory):
    def run(iters):
        for _ in range(iters):
            with factory("x"):
                pass
    return run


def empty_loop(iters):
    for _ in range(iters):
        pass


def torch_candidates(torch, notes):
    """The PyTorch ranges that work in this build: NVTX and record_function (no profiler running)."""
    candidates = {}
    for name, factory in (("torch.cuda.nvtx.range", lambda: torch.cuda.nvtx.range),
                          ("torch.profiler.record_function", lambda: torch.profiler.record_function)):
        try:
            run = with_context(factory())
            run(1)
        except (AttributeError, RuntimeError) as error:
            notes.append(f"{name} left out: {error}")
            continue
        candidates[name] = run
    return candidates


def event_pair(torch):
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def run(iters):
        for _ in range(iters):
            begin.record()
            end.record()
    return run


def measure(candidates, iters, reps, between_rounds):
    """Median and best microseconds per candidate, the empty loop subtracted."""
    per_round = {name: [] for name in candidates}
    for _ in range(reps):
        empty = min(loop_seconds(empty_loop, iters) for _ in range(3))
        for name, run in candidates.items():
            per_round[name].append((loop_seconds(run, iters) - empty) * 1e6)
            between_rounds()
    return {name: {"median_us": statistics.median(v), "best_us": min(v), "rounds_us": v}
            for name, v in per_round.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", nargs="?", help="write the results as JSON here")
    parser.add_argument("--iters", type=int, default=20000, help="iterations per round (default 20000)")
    parser.add_argument("--reps", type=int, default=15, help="rounds (default 15)")
    args = parser.parse_args()
    if args.iters < 100 or args.reps < 3:
        parser.error("--iters must be >= 100 and --reps >= 3")

    notes = []
    try:
        import torch
    except ImportError:
        torch = None
        notes.append("torch is not installed: torch rows left out")
    cuda = bool(torch is not None and torch.cuda.is_available())
    if torch is not None and not cuda:
        notes.append("torch sees no CUDA device: event-timed mode left out")
    if cuda:
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # the current stream and context exist before timing
    extra = torch_candidates(torch, notes) if torch is not None else {}

    results = {}
    modes = [("nvtx-only", lambda: (gpuprof.set_nvtx_only(True), gpuprof.set_gpu_timing(True)))]
    modes.append(("host-clock", lambda: (gpuprof.set_nvtx_only(False), gpuprof.set_gpu_timing(False))))
    if cuda and gpuprof.with_cuda:
        modes.append(("event-timed", lambda: (gpuprof.set_nvtx_only(False), gpuprof.set_gpu_timing(True))))
    elif cuda:
        notes.append("this gpuprof module was built without CUDA: event-timed mode left out")
    for mode, switch in modes:
        switch()
        candidates = {"gpuprof.scope, reused": with_reused("x"), "gpuprof.scope, new per with": with_fresh("x")}
        if mode == "event-timed":
            candidates["torch.cuda.Event pair"] = event_pair(torch)
            candidates["gpuprof.scope, reused, stream given"] = with_reused(
                "x", stream=torch.cuda.current_stream().cuda_stream)
        else:
            candidates.update(extra)

        def between_rounds():
            if cuda:
                torch.cuda.synchronize()
            gpuprof.reset()
        results[mode] = measure(candidates, args.iters, args.reps, between_rounds)
    gpuprof.set_nvtx_only(False)
    gpuprof.set_gpu_timing(True)

    goals = []
    for mode, limit in (("nvtx-only", GOALS_US["nvtx-only"]), ("host-clock", GOALS_US["host-clock"])):
        value = results[mode]["gpuprof.scope, reused"]["median_us"]
        goals.append({"goal": f"{mode} scope enter+exit <= {limit} us", "value_us": value, "met": value <= limit})
    if "event-timed" in results:
        r = results["event-timed"]
        over = r["gpuprof.scope, reused"]["median_us"] - r["torch.cuda.Event pair"]["median_us"]
        limit = GOALS_US["event-timed over torch.cuda.Event pair"]
        goals.append({"goal": f"event-timed scope <= torch.cuda.Event pair + {limit} us", "value_us": over,
                      "met": over <= limit})

    print(f"Range cost from Python, us per enter+exit (median of {args.reps} rounds of {args.iters}; best)")
    print(f"{'mode':<12} {'candidate':<36} {'median':>8} {'best':>8}")
    for mode, rows in results.items():
        for name, r in rows.items():
            print(f"{mode:<12} {name:<36} {r['median_us']:8.3f} {r['best_us']:8.3f}")
    for g in goals:
        print(f"{'met' if g['met'] else 'MISSED':<7} {g['goal']}: {g['value_us']:.3f} us")
    for note in notes:
        print("note:", note)

    doc = {"schema": "gpuprof.python_overhead", "iters": args.iters, "reps": args.reps,
           "python": sys.version.split()[0], "machine": platform.node(),
           "torch": getattr(torch, "__version__", None), "device": gpuprof.device_name(),
           "results": results, "goals": goals, "notes": notes}
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
