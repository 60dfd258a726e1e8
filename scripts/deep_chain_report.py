#!/usr/bin/env python3
"""A gpuprof report whose scopes form one chain, each inside the one before:
the input that makes writers and merges that work per level of depth blow up.

  scripts/deep_chain_report.py DEPTH OUT.json            # one report
  scripts/deep_chain_report.py DEPTH OUT.json --ranks 2  # a JSON array of ranks 0..N-1 (merge_fuzz's input)

Names are short ("n17"), so the file grows linearly with DEPTH (about 250
bytes a scope); every scope has one instance, nested in time.
"""
import argparse
import json


def chain(depth, rank=None, world=None):
    summary = {"samples_ms": [1.0]}
    nodes = [{"path": "n%d" % i, "name": "n%d" % i, "parent": i - 1, "depth": i, "count": 1,
              "host_ms": summary, "gpu_ms": None, "work": {"flops": 0, "bytes": 0, "tokens": 0},
              "peak_device_bytes": None} for i in range(depth)]
    shift = 0 if rank is None else rank
    instances = [{"id": i + 1, "node": i, "thread": 0, "host_begin_ns": i,
                  "host_end_ns": 2 * depth - i + shift, "gpu_ms": None} for i in range(depth)]
    report = {"schema": "gpuprof.report", "version": 1, "timing_source": "host_clock", "timing_note": "",
              "device": "", "nodes": nodes, "instances": instances, "kernels": [],
              "dropped_kernel_records": 0}
    if rank is not None:
        report["rank"] = {"rank": rank, "world_size": world, "local_rank": None}
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("depth", type=int)
    parser.add_argument("out")
    parser.add_argument("--ranks", type=int, default=0, help="write an array of this many ranks")
    args = parser.parse_args()
    document = ([chain(args.depth, r, args.ranks) for r in range(args.ranks)] if args.ranks
                else chain(args.depth))
    with open(args.out, "w") as out:
        json.dump(document, out, separators=(",", ":"))


if __name__ == "__main__":
    main()
