#!/usr/bin/env python3
"""Compile cost of each public gpuprof header: wall time and peak memory of one
translation unit that includes the header and uses it once (uses.txt), beside
the baseline translation unit every CUDA user compiles anyway (cuda_runtime.h,
nvtx3, <string>, <vector>, <map>). Compiles one file at a time (object only),
takes the median of --repeat runs, prints a table and writes JSON.

Usage: compile_cost.py [--include DIR]... [--repeat N] [--only a.hpp,b.hpp]
                       [--cxx g++] [--label TEXT] [--check] [OUT.json]
Several --include trees (e.g. `git archive` of the commit before a change and
this checkout) are measured in alternation, so they share the machine's load.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BASELINE = """#include <cuda_runtime.h>
#include <nvtx3/nvtx3.hpp>
#include <map>
#include <string>
#include <vector>
"""


def fail(message, code=2):
    print(f"compile_cost: {message}", file=sys.stderr)
    sys.exit(code)


def read_uses(path):
    """uses.txt: `header.hpp [NAME=VALUE ...]: statements` per line, the
    brackets holding macros the header's CMake target defines, or that a
    program may define for it; '#' starts a comment. A header may have
    several lines: the first row is named by the header, the others by the
    header and their macros ("gpuprof.hpp [GPUPROF_RECORDER_IN_ONE_UNIT]").
    Returns {header: [Row, ...]} in file order."""
    uses = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            match = re.fullmatch(r"([\w/]+\.hpp)\s*(?:\[([^\]]*)\])?\s*:(.*)", line)
            if not match:
                fail(f"{path}:{number}: expected 'header.hpp [NAME=VALUE ...]: statements'")
            header, defines, body = match.groups()
            rows = uses.setdefault(header, [])
            name = header if not rows else f"{header} [{(defines or '').strip()}]"
            if any(row.name == name for row in rows):
                fail(f"{path}:{number}: a second row named {name}")
            rows.append(Row(name, header, (defines or "").split(), body.strip(), True))
    return uses


class Row:
    """One translation unit to measure: a header, the macros defined before
    it, and the statements that use it (none: include only)."""

    def __init__(self, name, header, defines, body, used):
        self.name, self.header, self.defines, self.body, self.used = name, header, defines, body, used


def public_headers(include_dir):
    top = os.path.join(include_dir, "gpuprof")
    if not os.path.isdir(top):
        fail(f"no gpuprof/ under {include_dir}")
    names = [n for n in os.listdir(top) if n.endswith(".hpp")]
    report = os.path.join(top, "report")
    if os.path.isdir(report):
        names += ["report/" + n for n in os.listdir(report) if n.endswith(".hpp")]
    return sorted(names)


def translation_unit(row):
    if row is None:
        return BASELINE + "int gpuprof_compile_cost_use() { return 0; }\n"
    macros = "".join("#define {} {}\n".format(*(d.split("=", 1) + ["1"])[:2]) for d in row.defines)
    return (macros + BASELINE + f"#include <gpuprof/{row.header}>\n"
            f"int gpuprof_compile_cost_use() {{ {row.body} return 0; }}\n")


def compile_once(command, source_path):
    """(wall s, CPU s, peak kB) from /usr/bin/time, or raises with the compiler's
    errors. CPU time (user + system) is what a busy machine inflates least:
    on an idle one a single-threaded compile's wall time is about its CPU time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as timing:
        result = subprocess.run(["/usr/bin/time", "-o", timing.name, "-f", "%e %U %S %M"] + command + [source_path],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            raise RuntimeError(result.stderr[-3000:])
        wall, user, system, kilobytes = timing.read().split()[-4:]
        return float(wall), round(float(user) + float(system), 2), int(kilobytes)


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", help="JSON file to write")
    parser.add_argument("--include", action="append",
                        help="directory holding gpuprof/ (default: this checkout's); give it twice or more to "
                             "compare trees (e.g. a `git archive` of another commit), measured in alternation")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated headers (e.g. scope.hpp,gpuprof.hpp)")
    parser.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    parser.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    parser.add_argument("--check", action="store_true", help="only check that every translation unit compiles")
    parser.add_argument("--label", default="", help="free text stored in the JSON (e.g. the commit)")
    args = parser.parse_args()
    if args.repeat < 1:
        fail("--repeat must be at least 1")
    if not os.path.isfile("/usr/bin/time"):
        fail("/usr/bin/time is missing (Debian package 'time')")
    cuda_include = os.path.join(args.cuda, "include")
    if not os.path.isfile(os.path.join(cuda_include, "cuda_runtime.h")):
        fail(f"no cuda_runtime.h under {cuda_include} (--cuda)")
    trees = [os.path.abspath(d) for d in (args.include or [os.path.join(ROOT, "include")])]
    uses = read_uses(os.path.join(HERE, "uses.txt"))
    headers = sorted(set().union(*(public_headers(tree) for tree in trees)))
    measured = [row for header in headers for row in uses.get(header, [Row(header, header, [], "", False)])]
    if args.only:
        wanted = [h.strip() for h in args.only.split(",") if h.strip()]
        unknown = [w for w in wanted if not any(w in (row.name, row.header) for row in measured)]
        if unknown:
            fail(f"not a public header or a row of uses.txt: {', '.join(unknown)}")
        measured = [row for row in measured if row.name in wanted or row.header in wanted]
    # The flags gpuprof::gpuprof gives a consumer with CUDA found (CMakeLists.txt).
    def flags(tree):
        return [args.cxx, "-std=c++17", "-O2", "-DGPUPROF_WITH_CUDA=1", "-DGPUPROF_WITH_NVTX=1",
                "-I", tree, "-isystem", cuda_include, "-x", "c++"]
    output = ["-c", "-o", os.devnull]
    version = subprocess.run([args.cxx, "--version"], stdout=subprocess.PIPE, text=True).stdout.splitlines()[0]

    load_before = load_average()
    with tempfile.TemporaryDirectory() as scratch:
        # (tree, header); the baseline (header None) needs no tree.
        cases = [(trees[0], None)] + [(tree, row) for row in measured for tree in trees
                                      if row.header in public_headers(tree)]
        sources = {}
        for case in cases:
            path = os.path.join(scratch, f"tu{len(sources)}.cpp")
            with open(path, "w") as f:
                f.write(translation_unit(case[1]))
            sources[case] = path
        def name(case):
            return case[1].name if case[1] else "baseline"
        if args.check:
            broken = []
            for case, path in sources.items():
                result = subprocess.run(flags(case[0]) + ["-fsyntax-only", path],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                if result.returncode != 0:
                    broken.append(f"{name(case)} ({case[0]})")
                    print(f"== {name(case)}\n{result.stderr[-2000:]}", file=sys.stderr)
            if broken:
                fail(f"do not compile: {', '.join(broken)}", 1)
            print(f"all {len(sources)} translation units compile")
            return
        # Interleaved rounds: each case sees the same spread of machine load.
        samples = {case: [] for case in cases}
        for _ in range(args.repeat):
            for case in cases:
                try:
                    samples[case].append(compile_once(flags(case[0]) + output, sources[case]))
                except RuntimeError as error:
                    fail(f"{name(case)} ({case[0]}) does not compile:\n{error}", 1)
    load_after = load_average()

    def median(case, field):
        return statistics.median(sample[field] for sample in samples[case])
    base_cpu, base_kb = median(cases[0], 1), median(cases[0], 2)
    rows = []
    for case in cases:
        cpu, kilobytes = median(case, 1), median(case, 2)
        rows.append({"header": case[1].name if case[1] else "(baseline)", "tree": case[0] if case[1] else None,
                     "used": case[1] is None or case[1].used,
                     "seconds": median(case, 0), "cpu_seconds": cpu, "peak_mb": round(kilobytes / 1024, 1),
                     "extra_cpu_seconds": round(cpu - base_cpu, 2), "memory_ratio": round(kilobytes / base_kb, 2),
                     "samples_seconds": [sample[0] for sample in samples[case]],
                     "samples_cpu_seconds": [sample[1] for sample in samples[case]],
                     "samples_peak_mb": [round(sample[2] / 1024, 1) for sample in samples[case]]})

    several = len(trees) > 1
    width = max(len(r["header"]) for r in rows)
    print(f"{'translation unit':<{width}}  {'tree' if several else ''}{'  ' if several else ''}"
          f"{'wall s':>7}  {'cpu s':>6}  {'+cpu s':>6}  {'peak MB':>8}  {'x mem':>5}")
    for r in rows:
        note = "" if r["used"] else "  (include only)"
        tree = f"{trees.index(r['tree']) if r['tree'] else '-'}     " if several else ""
        print(f"{r['header']:<{width}}  {tree}{r['seconds']:7.2f}  {r['cpu_seconds']:6.2f}  {r['extra_cpu_seconds']:+6.2f}  "
              f"{r['peak_mb']:8.1f}  {r['memory_ratio']:5.2f}{note}")
    if several:
        for i, tree in enumerate(trees):
            print(f"tree {i}: {tree}")
    print(f"load average (1 min) before {load_before:.2f}, after {load_after:.2f}; {os.cpu_count()} cpus")

    if args.out:
        document = {"kind": "gpuprof.compile_cost", "label": args.label, "compiler": version,
                    "command": " ".join(flags("INCLUDE") + output), "trees": trees, "repeat": args.repeat,
                    "cpus": os.cpu_count(), "machine": platform.node(), "load_average_before": load_before,
                    "load_average_after": load_after, "rows": rows}
        temporary = args.out + ".tmp"
        with open(temporary, "w") as f:
            json.dump(document, f, indent=1)
            f.write("\n")
        os.replace(temporary, args.out)


if __name__ == "__main__":
    main()
