#!/usr/bin/env python3
"""Proves the test suite can fail: deliberate bugs (mutants), each applied to a
copy of the tree, must each make the tests that cover them fail.

usage: python3 scripts/mutation.py [--gpu] [--work DIR] [--jobs N] [--only ID,...] [--list | --check]

For every mutant of MUTANTS: apply its edits to the copy, build the targets it
names, run its ctest entries, restore the file. A mutant is caught when ctest
reports a failed test; a mutant that does not build is an error of this
script, never "caught". Before any mutant, the same targets are built and the
same entries run unmutated, and must pass with no test skipped: otherwise a
failure would mean nothing.

Mutants that only GPU tests can catch run only with --gpu (on the GPU machine;
GPUPROF_REQUIRE_GPU=1 is set, so a GPU test cannot pass by skipping); without
it they are listed as skipped, with why, and never counted as caught.

Each edit is anchored on a function's signature: the pattern must occur exactly
once inside that function's braces, and the script stops (exit 2) before
building anything when an anchor or a pattern is not found, so code that moved
is noticed instead of leaving a mutant unapplied.

Exit status: 0 every mutant run was caught, 1 one was not, 2 the script could
not do its job (a pattern not found, a build failed, the unmutated tests fail).
Too slow for the default test preset; scripts/device_run.sh runs it (phase
`mutation`). Results: docs/results.md, section 12.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Edit:
    file: str      # relative to the repository root
    anchor: str    # literal text that occurs once in the file: a function's signature
    pattern: str   # regular expression, exactly one match inside the anchored function
    replacement: str


@dataclass
class Mutant:
    id: str
    needs: str     # "cpu" or "gpu": which tests catch it
    bug: str
    edits: list
    targets: list  # build targets
    tests: str     # ctest -R regular expression


MUTANTS = [
    Mutant("compare-p-zero", "cpu", "compare's p-value is always 0 (every change significant)",
           [Edit("include/gpuprof/compare.hpp", "inline ComparisonRow compare_measurements(",
                 r"row\.p_value = raw \? [^;]*;", "row.p_value = 0;")],
           ["gpuprof_tests"], r"^gpuprof_tests$"),
    Mutant("bench-warmup-off-by-one", "cpu", "bench() makes one warm-up call more than asked",
           [Edit("include/gpuprof/bench.hpp", "void warm_up_and_sample(",
                 r"result\.warmup_calls < options\.warmup\b", "result.warmup_calls <= options.warmup")],
           ["gpuprof_tests"], r"^gpuprof_tests$"),
    *[Mutant(f"join-drops-{which}-record", "cpu",
             f"the CUPTI join leaves the {which} kernel record out of the captured scopes' intervals",
             [Edit("include/gpuprof/detail/cupti_join.hpp", "inline std::vector<GraphInterval> graph_scope_intervals(",
                   r"if \(record\.graph_node_id == 0\) continue;",
                   f"if (record.graph_node_id == 0 || &record == &records.{end}()) continue;")],
             ["gpuprof_tests"], r"^gpuprof_tests$")
      for which, end in (("first", "front"), ("last", "back"))],
    Mutant("rmsnorm-eps-cpu", "cpu", "the CPU RMSNorm adds 10·eps instead of eps",
           [Edit("examples/transformer/cpu/rmsnorm.cpp", "void rmsnorm_forward(",
                 r"squaredNorm\(\) / width \+ eps\)", "squaredNorm() / width + 10 * eps)")],
           ["transformer_cpu_tests"], r"^transformer_cpu_tests$"),
    Mutant("scope-events-swapped", "gpu",
           "a scope records its end event where it begins and its begin event where it ends",
           [Edit("include/gpuprof/detail/recorder.hpp", "inline void begin_gpu_timing(ScopeState& s) {",
                 r"s\.events\.record_begin\(s\.stream\);",
                 "GPUPROF_CUDA_CHECK(cudaEventRecord(s.events.end, s.stream));"),
            Edit("include/gpuprof/detail/recorder.hpp", "inline bool finish_gpu_timing(ScopeState& s) noexcept {",
                 r"cudaEventRecord\(s\.events\.end, s\.stream\)", "cudaEventRecord(s.events.begin, s.stream)")],
           ["gpuprof_scopes_gpu_test", "gpuprof_kernel_capture_tests"],
           r"^(gpuprof_scopes_gpu|gpuprof_kernel_capture_tests)$"),
    Mutant("capture-drops-kernel-record", "gpu",
           "kernel capture silently drops one record in 16 (not counted as dropped)",
           [Edit("include/gpuprof/detail/kernel_capture_activity.hpp",
                 "void keep(KernelRecord record, const char* raw_name) {",
                 r"join_\.add_record\(std::move\(record\)\);",
                 "static unsigned long mutant_seen = 0;\n"
                 "    if (mutant_seen++ % 16 != 5) join_.add_record(std::move(record));")],
           ["gpuprof_kernel_capture_tests"], r"^gpuprof_kernel_capture_tests$"),
    Mutant("rmsnorm-eps-cuda", "gpu", "the CUDA RMSNorm forward kernel adds 10·eps instead of eps",
           [Edit("examples/transformer/cuda/rmsnorm.cu", "__global__ void rmsnorm_forward_kernel(",
                 r"/ static_cast<float>\(d\) \+ eps\)", "/ static_cast<float>(d) + 10.0f * eps)")],
           ["transformer_cuda_tests"], r"^transformer_cuda_tests$"),
]


class ScriptError(Exception):
    """This script could not do its job (exit 2)."""


def function_span(text, anchor, where):
    """[start, end) of the function whose signature is `anchor`: to its closing brace."""
    count = text.count(anchor)
    if count != 1:
        raise ScriptError(f"{where}: anchor {anchor!r} found {count} times, want 1")
    start = text.index(anchor)
    i = start
    if anchor.endswith("("):  # the body's brace follows the parameters, which may hold "= {}"
        depth, i = 0, start + len(anchor) - 1
        while i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
    depth, i = 0, text.find("{", i)
    if i < 0:
        raise ScriptError(f"{where}: no body after anchor {anchor!r}")
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return start, i + 1
        i += 1
    raise ScriptError(f"{where}: no closing brace after anchor {anchor!r}")


def mutated_sources(root, mutant):
    """{file: mutated text} for a mutant's edits on the sources under `root`."""
    texts = {}
    for edit in mutant.edits:
        where = f"{mutant.id}: {edit.file}"
        path = root / edit.file
        if edit.file not in texts:
            if not path.is_file():
                raise ScriptError(f"{where}: no such file")
            texts[edit.file] = path.read_text(encoding="utf-8")
        text = texts[edit.file]
        start, end = function_span(text, edit.anchor, where)
        body, matches = re.subn(edit.pattern, edit.replacement, text[start:end])
        if matches != 1:
            raise ScriptError(f"{where}: pattern {edit.pattern!r} matched {matches} times inside "
                              f"{edit.anchor!r}, want 1: the code moved; update MUTANTS")
        texts[edit.file] = text[:start] + body + text[end:]
    return texts


def copy_tree(source, destination):
    """The repository's files (tracked and untracked-not-ignored) with their mtimes."""
    listing = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=source,
                             capture_output=True, check=False)
    if listing.returncode == 0:
        files = [name for name in listing.stdout.decode().split("\0") if name]
    else:  # no git here (a copy of a working tree): everything but build outputs
        files = [str(p.relative_to(source)) for p in source.rglob("*")
                 if p.is_file() and p.relative_to(source).parts[0] not in ("build", "out", ".git")]
    if destination.exists():
        shutil.rmtree(destination)
    for name in files:
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (source / name).is_file():
            shutil.copy2(source / name, target)


def run(command, log, cwd=None, env=None):
    """Runs `command`, appending its output to `log`; returns (status, output)."""
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    with open(log, "a", encoding="utf-8") as file:
        file.write(f"\n$ {' '.join(map(str, command))}\n{result.stdout}{result.stderr}")
    return result.returncode, result.stdout + result.stderr


def ctest_outcome(output):
    """(tests run, tests failed, skipped names) from ctest's summary."""
    # "100% tests passed, 0 tests failed out of 2" or, from newer CMake, "100% tests passed out of 2".
    summary = re.search(r"(\d+)% tests passed(?:, (\d+) tests? failed)? out of (\d+)", output)
    if not summary:
        return 0, 0, []
    skipped = re.findall(r"^\s*\d+ - (\S+) \((?:Skipped|Not Run)\)", output, re.MULTILINE)
    return int(summary.group(3)), int(summary.group(2) or 0), skipped


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gpu", action="store_true", help="also the mutants only GPU tests catch")
    parser.add_argument("--work", default="build/mutation", help="the copy and its build (default build/mutation)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--only", help="comma-separated mutant ids")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--check", action="store_true",
                        help="only check that every mutant still applies to the sources (a CPU test runs this)")
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent

    if args.list:
        for mutant in MUTANTS:
            print(f"{mutant.id:28s} {mutant.needs}  {mutant.bug}  [ctest -R '{mutant.tests}']")
        return 0
    if args.check:
        try:
            for mutant in MUTANTS:
                mutated_sources(root, mutant)
        except ScriptError as error:
            print(f"mutation.py: {error}", file=sys.stderr)
            return 2
        print(f"all {len(MUTANTS)} mutants apply")
        return 0
    chosen = MUTANTS
    if args.only:
        wanted = args.only.split(",")
        unknown = set(wanted) - {m.id for m in MUTANTS}
        if unknown:
            print(f"mutation.py: unknown mutant(s) {sorted(unknown)}", file=sys.stderr)
            return 2
        chosen = [m for m in MUTANTS if m.id in wanted]
    runnable = [m for m in chosen if m.needs == "cpu" or args.gpu]
    skipped = [m for m in chosen if m not in runnable]

    work = Path(args.work).resolve()
    source, build = work / "src", work / "build"
    work.mkdir(parents=True, exist_ok=True)
    log = work / "mutation.log"
    log.write_text("", encoding="utf-8")
    env = dict(os.environ)
    if args.gpu:
        env["GPUPROF_REQUIRE_GPU"] = "1"
    try:
        # Every pattern first, on the real sources: nothing is built for a stale table.
        for mutant in runnable:
            mutated_sources(root, mutant)
        copy_tree(root, source)
        # A fresh build every run: objects an earlier run built from a mutant
        # may be newer than the copied sources, and would look up to date.
        shutil.rmtree(build, ignore_errors=True)
        configure = ["cmake", "-S", source, "--preset", "device", "-B", build, "-DGPUPROF_BUILD_BENCH=OFF"]
        if not args.gpu:
            configure.append("-DGPUPROF_USE_CUDA=OFF")
        status, output = run(configure, log, env=env)
        if status != 0:
            raise ScriptError(f"configure failed (see {log}):\n{output[-2000:]}")

        def build_targets(targets, what):
            status, output = run(["cmake", "--build", build, f"-j{args.jobs}", "-t", *targets], log, env=env)
            if status != 0:
                raise ScriptError(f"{what}: the build failed (see {log}):\n{output[-3000:]}")

        def ctest(regex):
            return run(["ctest", "--test-dir", build, "-R", regex, "--output-on-failure", "--timeout", "600"],
                       log, env=env)

        all_targets = sorted({t for m in runnable for t in m.targets})
        print(f"baseline: building {', '.join(all_targets)} unmutated", flush=True)
        build_targets(all_targets, "baseline")
        for regex in sorted({m.tests for m in runnable}):
            status, output = ctest(regex)
            ran, failed, skipped_tests = ctest_outcome(output)
            if status != 0 or ran == 0 or failed or skipped_tests:
                raise ScriptError(f"baseline: ctest -R '{regex}' must pass with no skip unmutated: "
                                  f"{ran} run, {failed} failed, skipped {skipped_tests} (see {log})")
            print(f"baseline: ctest -R '{regex}': {ran} passed", flush=True)

        results = []
        for mutant in runnable:
            texts = mutated_sources(source, mutant)
            originals = {name: (source / name).read_text(encoding="utf-8") for name in texts}
            started = time.monotonic()
            try:
                for name, text in texts.items():
                    (source / name).write_text(text, encoding="utf-8")
                build_targets(mutant.targets, mutant.id)
                status, output = ctest(mutant.tests)
            finally:
                # The original text, with a fresh mtime: what the mutant built is rebuilt.
                for name, text in originals.items():
                    (source / name).write_text(text, encoding="utf-8")
            ran, failed, _ = ctest_outcome(output)
            caught = failed > 0
            results.append((mutant, caught, f"{failed} of {ran} ctest entries failed"))
            print(f"{'caught    ' if caught else 'NOT CAUGHT'} {mutant.id}: {mutant.bug} -- "
                  f"{failed} of {ran} entries failed ({time.monotonic() - started:.0f} s)", flush=True)
    except ScriptError as error:
        print(f"mutation.py: {error}", file=sys.stderr)
        return 2

    print("\n| mutant | bug | tests | result |\n|---|---|---|---|")
    for mutant, caught, detail in results:
        print(f"| {mutant.id} | {mutant.bug} | `{mutant.tests}` | {'caught' if caught else '**NOT CAUGHT**'}"
              f" ({detail}) |")
    for mutant in skipped:
        print(f"| {mutant.id} | {mutant.bug} | `{mutant.tests}` | skipped: only GPU tests catch it, "
              "and --gpu was not given |")
    missed = [mutant.id for mutant, caught, _ in results if not caught]
    print(f"\n{len(results) - len(missed)} of {len(results)} mutant(s) caught"
          + (f"; NOT caught: {', '.join(missed)}" if missed else "")
          + (f"; {len(skipped)} skipped (need --gpu)" if skipped else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
