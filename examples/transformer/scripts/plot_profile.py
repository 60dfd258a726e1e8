#!/usr/bin/env python3
"""Plot transformer_profile's JSON: GPU time by kernel category, inference vs train step.

One stacked bar per configuration and phase (inference = the forward passes of
the forward-only run, train step = forward + backward + optimizer step), each
bar split by kernel category in % of that phase's GPU time. Configurations
without measurements (OOM, failed) are left out and listed in the title.

usage: plot_profile.py PROFILE.json OUT.png

Needs matplotlib (Debian: python3-matplotlib). Exit status: 0 written,
1 the input is not a transformer_profile document, 2 bad arguments.
"""

import sys

from schema_document import load_document

SCHEMA = "gpuprof.transformer_profile"
USAGE = "usage: plot_profile.py PROFILE.json OUT.png  (PROFILE.json from transformer_profile --out DIR)"
PHASES = (("inference_percent", "inference"), ("train_step_percent", "train step"))


def load_configurations(path):
    document = load_document(path, SCHEMA)
    return document, document.get("configurations", [])


def bars(configurations):
    """([bar labels], [categories], {category: [percent per bar]}, [skipped labels])."""
    labels, shares, skipped = [], [], []
    for configuration in configurations:
        rows = configuration.get("categories")
        if configuration.get("status") != "ok" or not rows:
            skipped.append(f'{configuration["label"]} ({configuration.get("status")})')
            continue
        for key, phase in PHASES:
            labels.append(f'{configuration["label"]}\n{phase}')
            shares.append({row["category"]: row[key] for row in rows})
    # Categories in the document's order, keeping only those that ever take time.
    categories = []
    for configuration in configurations:
        for row in configuration.get("categories") or []:
            if row["category"] not in categories and any(s.get(row["category"], 0) > 0 for s in shares):
                categories.append(row["category"])
    return labels, categories, {c: [s.get(c, 0.0) for s in shares] for c in categories}, skipped


def plot(document, configurations, out_path):
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    labels, categories, percent, skipped = bars(configurations)
    if not labels:
        raise SystemExit("plot_profile.py: no measured configuration to plot")
    figure, axis = plt.subplots(figsize=(max(8, 0.9 * len(labels) + 3), 6.5))
    positions = [i + (i // 2) * 0.4 for i in range(len(labels))]  # a gap between configurations
    bottom = [0.0] * len(labels)
    colors = plt.get_cmap("tab10")
    for index, category in enumerate(categories):
        axis.bar(positions, percent[category], bottom=bottom, width=0.8, label=category, color=colors(index % 10))
        bottom = [b + p for b, p in zip(bottom, percent[category])]
    axis.set_xticks(positions)
    # Configuration names are long: slanted, they do not run into their neighbours.
    axis.set_xticklabels(labels, fontsize=8, rotation=35, ha="right")
    axis.set_ylabel("% of GPU time in the phase")
    axis.set_ylim(0, 100)
    title = f'GPU time by kernel category: {document.get("device", "?")}, batch {document.get("batch", "?")}'
    if skipped:
        title += "\nnot measured: " + ", ".join(skipped)
    axis.set_title(title, fontsize=10)
    axis.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    figure.tight_layout()
    figure.savefig(out_path, dpi=120)


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2
    document, configurations = load_configurations(argv[1])
    try:
        plot(document, configurations, argv[2])
    except SystemExit as error:
        print(error, file=sys.stderr)
        return 1
    except OSError as error:
        print(f"plot_profile.py: cannot write {argv[2]}: {error}", file=sys.stderr)
        return 1
    print(f"wrote {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
