#!/usr/bin/env python3
"""Side-by-side table of gpuprof's per-kernel counter values and Nsight Compute's.

usage: counters_agreement.py PROBE_CSV NCU_CSV [--tolerance PCT]

PROBE_CSV: the lines "kernel,<range>,<metric>,<value>" that gpuprof_counters_probe
prints (other lines are ignored). NCU_CSV: `ncu --csv --print-units base
--metrics ...` output for the same kernels in the same order. Kernels are
matched by launch order. Prints one row per kernel and metric: our value,
ncu's, and the difference in % of ncu's. Exit 0 when every difference is
within the tolerance (default 5 %), 1 when one is not, 2 on bad input.
"""
import csv
import sys


def read_probe(path):
    kernels = []  # [(name, {metric: value})] in launch order
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split(",")
            if len(parts) < 4 or parts[0] != "kernel":
                continue
            name, metric, value = ",".join(parts[1:-2]), parts[-2], float(parts[-1])
            if not kernels or kernels[-1][0] != name or metric in kernels[-1][1]:
                kernels.append((name, {}))
            kernels[-1][1][metric] = value
    return kernels


def read_ncu(path):
    with open(path) as f:
        rows = [line for line in f if line.startswith('"')]
    kernels = {}  # ID -> (name, {metric: value})
    for row in csv.DictReader(rows):
        try:
            kernel_id = int(row["ID"])
            value = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        entry = kernels.setdefault(kernel_id, (row.get("Kernel Name", ""), {}))
        entry[1][row["Metric Name"]] = value
    return [kernels[k] for k in sorted(kernels)]


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    tolerance = 5.0
    if "--tolerance" in argv:
        try:
            tolerance = float(argv[argv.index("--tolerance") + 1])
            args.remove(argv[argv.index("--tolerance") + 1])
        except (IndexError, ValueError):
            print("--tolerance needs a number", file=sys.stderr)
            return 2
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        ours, theirs = read_probe(args[0]), read_ncu(args[1])
    except OSError as error:
        print(f"counters_agreement: {error}", file=sys.stderr)
        return 2
    if not ours or not theirs:
        print(f"counters_agreement: no kernels in {'the probe output' if not ours else 'the ncu output'}",
              file=sys.stderr)
        return 2
    if len(ours) != len(theirs):
        print(f"counters_agreement: {len(ours)} kernel(s) measured by gpuprof, {len(theirs)} by ncu", file=sys.stderr)
    worst = 0.0
    print(f"{'kernel':<28} {'metric':<62} {'gpuprof':>16} {'ncu':>16} {'diff %':>8}")
    for (our_name, our_values), (ncu_name, ncu_values) in zip(ours, theirs):
        label = ncu_name.split("(")[0][:28]
        for metric, value in our_values.items():
            if metric not in ncu_values:
                print(f"{label:<28} {metric:<62} {value:>16.6g} {'-':>16} {'-':>8}")
                continue
            reference = ncu_values[metric]
            if reference == 0:
                diff = 0.0 if value == 0 else float("inf")
            else:
                diff = 100.0 * (value - reference) / abs(reference)
            worst = max(worst, abs(diff))
            flag = "" if abs(diff) <= tolerance else "  <-- over tolerance"
            print(f"{label:<28} {metric:<62} {value:>16.6g} {reference:>16.6g} {diff:>8.2f}{flag}")
    print(f"largest difference: {worst:.2f} % (tolerance {tolerance} %)")
    return 0 if worst <= tolerance else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
