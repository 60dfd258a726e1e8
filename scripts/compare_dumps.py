#!/usr/bin/env python3
"""Compares two `transformer_bench --dump` directories (docs/transformer-dump.md)
made from the same seed, size, batch and context: the loss, the logits and
every gradient, each as the norm-wise relative error ||got - want|| / ||want||
(the measure of the GPU tests). Prints one line per array; exits 1 when one
exceeds the tolerance, 2 on bad input.

    compare_dumps.py GOT_DIR WANT_DIR --tolerance 1e-4 [--json PATH]

The updated parameters are left out: the first AdamW step moves each element
by about lr whatever the gradient's size, so elements whose gradient is near
zero may legitimately step either way.
"""
import argparse
import json
import os
import sys

import numpy as np


def arrays(directory):
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    names = ["loss.npy", "logits.npy"]
    names += sorted(entry["file"] for entry in manifest["files"] if entry["file"].startswith("grads/"))
    return manifest, names


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("got")
    parser.add_argument("want")
    parser.add_argument("--tolerance", type=float, required=True)
    parser.add_argument("--json", help="write the errors here")
    args = parser.parse_args()
    try:
        got_manifest, names = arrays(args.got)
        want_manifest, want_names = arrays(args.want)
    except (OSError, ValueError, KeyError) as e:
        print(f"compare_dumps: cannot read a manifest: {e}", file=sys.stderr)
        return 2
    for key in ("vocab", "d_model", "d_ff", "layers", "heads", "batch", "ctx", "seed"):
        if got_manifest["config"].get(key) != want_manifest["config"].get(key):
            print(f"compare_dumps: the dumps are of different runs ({key})", file=sys.stderr)
            return 2
    if names != want_names:
        print("compare_dumps: the dumps hold different arrays", file=sys.stderr)
        return 2

    errors = {}
    for name in names:
        got = np.load(os.path.join(args.got, name)).astype(np.float64)
        want = np.load(os.path.join(args.want, name)).astype(np.float64)
        if got.shape != want.shape:
            print(f"compare_dumps: {name}: shapes {got.shape} and {want.shape}", file=sys.stderr)
            return 2
        scale = np.linalg.norm(want)
        difference = np.linalg.norm(got - want)
        errors[name] = float(difference / scale) if scale > 0 else float(difference)
        if not np.isfinite(got).all():
            errors[name] = float("inf")
    failed = [name for name, error in errors.items() if not error <= args.tolerance]
    for name, error in errors.items():
        print(f"  {name:32s} {error:.3e}{'  <-- FAIL' if name in failed else ''}")
    print(f"{len(names) - len(failed)}/{len(names)} within {args.tolerance:g} "
          f"({got_manifest['config'].get('precision')}, {got_manifest['config'].get('attention')} "
          f"against {want_manifest['config'].get('precision')})")
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump({"tolerance": args.tolerance, "errors": errors, "passed": not failed}, f, indent=1)
        os.replace(args.json + ".tmp", args.json)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
