#!/usr/bin/env python3
"""Plot transformer_bench's JSON: median ms per step against context length.

One panel per precision, one line per (size, mode); configurations that ran
out of memory are marked with an x at the top of their panel.

usage: plot_bench.py BENCH.json OUT.png

Needs matplotlib (Debian: python3-matplotlib). Exit status: 0 written,
1 the input is not a gpuprof.bench document (transformer_bench --json), 2 bad arguments.
"""

import sys

from schema_document import bench_rows, load_document

SCHEMA = "gpuprof.bench"
PRECISION_ORDER = {"fp32": 0, "tf32": 1, "bf16": 2}
USAGE = "usage: plot_bench.py BENCH.json OUT.png  (BENCH.json from transformer_bench --json)"


def load_rows(path):
    return bench_rows(load_document(path, SCHEMA))


def series_by_precision(rows):
    """{precision: {(size, mode): ([ctx...], [median ms...])}} and the OOM points."""
    lines, oom = {}, {}
    for row in sorted(rows, key=lambda r: r["ctx"]):
        precision = row["precision"]
        if row["status"] == "ok" and row.get("median_ms") is not None:
            ctxs, times = lines.setdefault(precision, {}).setdefault((row["size"], row["mode"]), ([], []))
            ctxs.append(row["ctx"])
            times.append(row["median_ms"])
        elif row["status"] == "oom":
            oom.setdefault(precision, []).append((row["size"], row["mode"], row["ctx"]))
    return lines, oom


def plot(rows, out_path):
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    lines, oom = series_by_precision(rows)
    precisions = sorted(set(lines) | set(oom), key=lambda p: (PRECISION_ORDER.get(p, len(PRECISION_ORDER)), p))
    if not precisions:
        raise SystemExit("plot_bench.py: no measured or OOM rows to plot")
    figure, axes = plt.subplots(1, len(precisions), figsize=(max(8, 6 * len(precisions)), 4.5), squeeze=False)
    for axis, precision in zip(axes[0], precisions):
        for (size, mode), (ctxs, times) in sorted(lines.get(precision, {}).items()):
            axis.plot(ctxs, times, marker="o", label=f"{size} {mode}")
        for size, mode, ctx in oom.get(precision, []):
            # x in data coordinates, y at the top of the panel.
            axis.plot(ctx, 0.97, marker="x", color="red", transform=axis.get_xaxis_transform())
            axis.annotate(f"OOM {size} {mode}", (ctx, 0.97), xycoords=axis.get_xaxis_transform(),
                          fontsize=7, color="red", rotation=90, va="top", ha="right")
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        all_ctx = sorted({r["ctx"] for r in rows if r["precision"] == precision})
        axis.set_xticks(all_ctx)
        axis.set_xticklabels([str(c) for c in all_ctx])
        axis.set_xlabel("context length (tokens)")
        axis.set_ylabel("median ms per step")
        axis.set_title(precision)
        axis.grid(True, which="both", alpha=0.3)
        if lines.get(precision):
            axis.legend(fontsize=8)
    first = rows[0]
    figure.suptitle(f"transformer_bench on {first['device']} "
                    f"(batch {first['batch']}, {first['steps']} timed steps)")
    figure.tight_layout()
    try:
        figure.savefig(out_path, dpi=120)
    except OSError as error:
        raise SystemExit(f"plot_bench.py: cannot write {out_path}: {error}") from None


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2
    plot(load_rows(argv[1]), argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
