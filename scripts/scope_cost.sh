#!/usr/bin/env bash
# The scope's hot path on the GPU machine, in one call: builds (sm_90, into
# build/device) only the scope tests and scope_overhead, runs the tests that
# exercise every scope mode on a GPU, then scope_overhead three times, so a
# goal that passes once by luck shows. Results: $OUT/scopecost/overhead-{1,2,3}.json.
#   scripts/scope_cost.sh [BASELINE_DIR]
# With BASELINE_DIR (a source tree of the commit before, e.g. .baseline), its
# scope_overhead is built too (build/scope-baseline) and the two run in
# alternation: $OUT/scopecost/before-{1,2,3}.json beside after-{1,2,3}.json,
# and a table of the medians, before vs after, is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
DIR="$OUT/scopecost"
mkdir -p "$DIR"
BUILD=build/device
BASELINE=${1:-}
if [ -n "$BASELINE" ] && [ ! -f "$BASELINE/CMakeLists.txt" ]; then
  echo "usage: scripts/scope_cost.sh [BASELINE_DIR] (a source tree with a CMakeLists.txt)" >&2
  exit 2
fi
TESTS=(gpuprof_tests gpuprof_scopes_gpu_test gpuprof_graph_timing_gpu_test gpuprof_kernel_capture_tests)
{ cmake --preset device \
  && cmake --build "$BUILD" -j"$(nproc)" --target scope_overhead "${TESTS[@]}"; } >/tmp/scope_cost_build.log 2>&1 \
  || { grep -B2 -A12 -m5 error /tmp/scope_cost_build.log | head -80; exit 1; }
# The baseline may predate the device preset: its settings spelled out.
if [ -n "$BASELINE" ]; then
  { cmake -S "$BASELINE" -B build/scope-baseline -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DGPUPROF_BUILD_EXAMPLES=OFF \
    && cmake --build build/scope-baseline -j"$(nproc)" --target scope_overhead; } >/tmp/scope_cost_baseline.log 2>&1 \
    || { grep -B2 -A12 -m5 error /tmp/scope_cost_baseline.log | head -80; exit 1; }
fi
status=0
echo "== scope tests (GPU)"
ctest --test-dir "$BUILD" -R '^(gpuprof_tests|gpuprof_scopes_gpu|gpuprof_graph_timing_gpu|gpuprof_kernel_capture_tests)$' \
  --output-on-failure --timeout 300 >/tmp/scope_cost_ctest.log 2>&1 || status=1
grep -E 'Test +#|tests passed|Failed|ERROR' /tmp/scope_cost_ctest.log | head -20
[ $status -eq 0 ] || grep -E -B3 -A20 'ERROR|FAILED' /tmp/scope_cost_ctest.log | head -80
for run in 1 2 3; do
  if [ -n "$BASELINE" ]; then
    build/scope-baseline/bench/overhead/scope_overhead --json "$DIR/before-$run.json" >/dev/null || status=1
    "$BUILD"/bench/overhead/scope_overhead --json "$DIR/after-$run.json" >/dev/null || status=1
  else
    echo "== scope_overhead, run $run"
    "$BUILD"/bench/overhead/scope_overhead --json "$DIR/overhead-$run.json" | sed -n '4,14p' || status=1
  fi
done
if [ -n "$BASELINE" ]; then
  python3 - "$DIR" <<'PY'
import json, sys
from pathlib import Path
d = Path(sys.argv[1])
def medians(kind):
    runs = [json.loads((d / f"{kind}-{i}.json").read_text())["rows"] for i in (1, 2, 3)]
    return {row["case"]: [r["median_ns"] for rows in runs for r in rows if r["case"] == row["case"]] for row in runs[0]}
before, after = medians("before"), medians("after")
print(f"{'case':52s} {'before ns (3 runs)':>26s} {'after ns (3 runs)':>26s}")
for case in after:
    fmt = lambda xs: " ".join(f"{x:8.2f}" for x in xs)
    print(f"{case:52s} {fmt(before.get(case, [])):>26s} {fmt(after[case]):>26s}")
PY
fi
exit $status
