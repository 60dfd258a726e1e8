#!/usr/bin/env python3
"""Side-by-side table of gpuprof's per-kernel counter values and Nsight Compute's.

usage: counters_agreement.py PROBE_CSV NCU_CSV [NCU_CSV ...] [--names NAMES_CSV]
                             [--pick LABEL=REGEX ...] [--sum] [--tolerance PCT]

PROBE_CSV: the lines "kernel,<launch index>,<metric>,<value>" of a per-kernel
CounterCapture, or "range,<name>,<metric>,<value>" of a range around the work
(other lines are ignored). NCU_CSV: `ncu --csv --print-units base --metrics
...` output, per kernel or per range (--replay-mode app-range); several files
are read in turn.

--sum: one row per side instead of one per kernel, each value the sum over
every kernel (or range) of that side, for the metrics that add up (the .sum
counts, bytes and durations; not rates or percentages). A sum of per-kernel
durations leaves out the gaps between kernels that a range's includes.

Without --names, kernels are matched by launch order (the probe and ncu
measured the same few kernels). With --names (lines "name,<launch index>,<base
name>" naming the probe's kernels), a kernel is matched by its name and its
occurrence among the kernels of that name: the third rmsnorm_forward_kernel
of ours is the third one ncu measured, so ncu may measure a prefix of each
name (--kernel-name, --launch-count).

--pick LABEL=REGEX (repeatable): compare only the first kernel whose name
(the probe's, with namespaces, or ncu's without --names) matches REGEX and
that both measured; a pick with no such kernel fails.
Without picks every matched kernel is compared.

A value agrees when it is within the tolerance (default 5 %) of ncu's, or
within the absolute floor of its kind (docs/counters.md): % metrics 1
percentage point; DRAM bytes 1 MB or 1 % of the kernel's DRAM bytes (read +
written, ncu's), whichever is larger; duration 0.5 us; counts none. A row that
agrees only by its floor says so. Exit 0 when every compared value agrees, 1
when one does not or a pick is missing, 2 on bad input.
"""
import csv
import re
import sys

PERCENT_POINTS_FLOOR = 1.0
DRAM_BYTES_FLOOR = 1e6
DRAM_SHARE_FLOOR = 0.01
DURATION_NS_FLOOR = 500.0


def read_probe(path):
    kernels = []  # [(range, {metric: value})] in launch order
    with open(path) as f:
        for number, line in enumerate(f, 1):
            parts = line.rstrip("\n").split(",")
            if len(parts) < 4 or parts[0] not in ("kernel", "range"):
                continue
            try:
                value = float(parts[-1])
            except ValueError:
                raise ValueError(f"{path}:{number}: not a number: {parts[-1]!r}")
            name, metric = ",".join(parts[1:-2]), parts[-2]
            if not kernels or kernels[-1][0] != name or metric in kernels[-1][1]:
                kernels.append((name, {}))
            kernels[-1][1][metric] = value
    return kernels


def read_names(path):
    names = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            parts = line.rstrip("\n").split(",", 2)
            if len(parts) != 3 or parts[0] != "name":
                continue
            names[parts[1]] = parts[2]
    return names


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
        name = row.get("Kernel Name") or row.get("Range Name") or ""
        entry = kernels.setdefault(kernel_id, (name, {}))
        entry[1][row["Metric Name"]] = value
    return [kernels[k] for k in sorted(kernels)]


# How demanglers name an anonymous namespace: "(anonymous namespace)"
# (ours), "<unnamed>" or, in ncu's CSV, "unnamed>" (its "<" eaten). Dropped
# before brackets are counted: its lone ">" would unbalance them.
ANONYMOUS_NAMESPACE = re.compile(r"\(anonymous namespace\)::|<?unnamed>::")


def base_name(name):
    """The bare function name: template arguments, parameters, return type
    and namespaces dropped, so ncu's demangling and gpuprof's compare equal."""
    name = ANONYMOUS_NAMESPACE.sub("", name)
    out, depth = [], 0
    for c in name:
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(c)
    words = "".join(out).split()
    return words[-1].split("::")[-1] if words else name


def with_occurrence(kernels):
    """[(base name, occurrence, values)] from [(name, values)]."""
    seen = {}
    out = []
    for name, values in kernels:
        base = base_name(name)
        out.append((base, seen.get(base, 0), values))
        seen[base] = seen.get(base, 0) + 1
    return out


def adds_up(metric):
    return metric.endswith(".sum") and "pct" not in metric and "per_second" not in metric


def summed(kernels):
    """{metric: sum over the kernels} for the metrics that add up."""
    total = {}
    for _, values in kernels:
        for metric, value in values.items():
            if adds_up(metric):
                total[metric] = total.get(metric, 0.0) + value
    return total


def floor_of(metric, ncu_values):
    """The absolute difference a metric may show whatever its relative one."""
    if metric.endswith(".pct") or "pct_of_peak" in metric:
        return PERCENT_POINTS_FLOOR
    if metric.startswith("dram__bytes"):
        total = ncu_values.get("dram__bytes_read.sum", 0) + ncu_values.get("dram__bytes_write.sum", 0)
        return max(DRAM_BYTES_FLOOR, DRAM_SHARE_FLOOR * total)
    if metric == "gpu__time_duration.sum":
        return DURATION_NS_FLOOR
    return 0.0


def compare(label, ours, theirs, tolerance):
    """Prints one row per metric; returns the number of rows that disagree."""
    bad = 0
    for metric, value in ours.items():
        if metric not in theirs:
            print(f"{label:<40} {metric:<62} {value:>14.6g} {'-':>14} {'-':>8}  not measured by ncu")
            continue
        reference = theirs[metric]
        if reference == 0:
            diff = 0.0 if value == 0 else float("inf")
        else:
            diff = 100.0 * (value - reference) / abs(reference)
        floor = floor_of(metric, theirs)
        if abs(diff) <= tolerance:
            note = ""
        elif abs(value - reference) <= floor:
            note = f"within floor: |diff| {abs(value - reference):.3g} <= {floor:.3g}"
        else:
            note = "<-- over tolerance"
            bad += 1
        print(f"{label:<40} {metric:<62} {value:>14.6g} {reference:>14.6g} {diff:>8.2f}  {note}")
    return bad


def parse_args(argv):
    files, names, picks, tolerance, add = [], None, [], 5.0, False
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--sum":
            add = True
            i += 1
        elif arg in ("--names", "--pick", "--tolerance"):
            if i + 1 >= len(argv):
                raise ValueError(f"{arg} needs a value")
            value = argv[i + 1]
            i += 2
            if arg == "--names":
                names = value
            elif arg == "--tolerance":
                tolerance = float(value)
            else:
                label, sep, pattern = value.partition("=")
                if not sep or not label or not pattern:
                    raise ValueError(f"--pick needs LABEL=REGEX, not {value!r}")
                picks.append((label, re.compile(pattern)))
        elif arg.startswith("--"):
            raise ValueError(f"unknown option {arg}")
        else:
            files.append(arg)
            i += 1
    if len(files) < 2:
        raise ValueError("give the probe's CSV and at least one ncu CSV")
    if add and (names or picks):
        raise ValueError("--sum compares totals: it takes no --names or --pick")
    return files[0], files[1:], names, picks, tolerance, add


def main(argv):
    try:
        probe, ncu_files, names_file, picks, tolerance, add = parse_args(argv)
    except (ValueError, re.error) as error:
        print(f"counters_agreement: {error}\n{__doc__}", file=sys.stderr)
        return 2
    try:
        ours = read_probe(probe)
        theirs = [kernel for path in ncu_files for kernel in read_ncu(path)]
        names = read_names(names_file) if names_file else None
    except (OSError, ValueError) as error:
        print(f"counters_agreement: {error}", file=sys.stderr)
        return 2
    if not ours or not theirs:
        print(f"counters_agreement: no kernels in {'the probe output' if not ours else 'the ncu output'}",
              file=sys.stderr)
        return 2

    if add:
        print(f"{'kernel':<40} {'metric':<62} {'gpuprof':>14} {'ncu':>14} {'diff %':>8}  note")
        label = f"sum: {len(ours)} gpuprof, {len(theirs)} ncu"
        bad = compare(label[:40], summed(ours), summed(theirs), tolerance)
        print(f"totals compared, {bad} value(s) outside {tolerance} % and the floors")
        return 0 if bad == 0 else 1

    if names is None:
        if len(ours) != len(theirs):
            print(f"counters_agreement: {len(ours)} kernel(s) measured by gpuprof, {len(theirs)} by ncu",
                  file=sys.stderr)
        pairs = [(base, occurrence, o, t, name)
                 for (_, o), (base, occurrence, t), (name, _) in zip(ours, with_occurrence(theirs), theirs)]
    else:
        unnamed = [r for r, _ in ours if r not in names]
        if unnamed or len(names) != len(ours):
            print(f"counters_agreement: {len(ours)} kernel range(s) measured, {len(names)} kernel(s) named "
                  f"(the two runs launched different kernels?)", file=sys.stderr)
            return 2
        ncu_by_key = {}
        for base, occurrence, values in with_occurrence(theirs):
            ncu_by_key.setdefault((base, occurrence), values)
        named = [(names[r], v) for r, v in ours]
        pairs = [(base, occurrence, values, ncu_by_key[(base, occurrence)], name)
                 for (base, occurrence, values), (name, _) in zip(with_occurrence(named), named)
                 if (base, occurrence) in ncu_by_key]
        print(f"{len(ours)} kernel(s) measured by gpuprof, {len(theirs)} by ncu, {len(pairs)} matched by name "
              f"and occurrence")

    chosen, missing = [], []
    if picks:
        for label, pattern in picks:
            found = next((p for p in pairs if pattern.search(p[4])), None)
            if found:
                chosen.append((label, found))
            else:
                missing.append(label)
    else:
        chosen = [(str(i), p) for i, p in enumerate(pairs)]

    print(f"{'kernel':<40} {'metric':<62} {'gpuprof':>14} {'ncu':>14} {'diff %':>8}  note")
    bad = 0
    for label, (base, occurrence, our_values, ncu_values, _) in chosen:
        bad += compare(f"{label}: {base}#{occurrence}"[:40], our_values, ncu_values, tolerance)
    for label in missing:
        print(f"{label}: no kernel that both gpuprof and ncu measured matches its pattern")
    print(f"{len(chosen)} kernel(s) compared, {bad} value(s) outside {tolerance} % and the floors"
          f"{', missing: ' + ', '.join(missing) if missing else ''}")
    return 0 if bad == 0 and not missing and chosen else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
