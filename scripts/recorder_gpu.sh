#!/usr/bin/env bash
# The recorder's device check in one call: build the library's tests and the
# overhead benchmark (no examples), the CPU suite 3 times, every gpu test 20
# times, then scope_overhead. Logs go to $OUT (default ./out).
set -uo pipefail
export GPUPROF_REQUIRE_GPU=1  # here a GPU test that finds no GPU fails (docs/testing.md)
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
BUILD=build/recorder-gpu
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv >"$OUT/gpu.txt" 2>&1
{ cmake --preset device -B "$BUILD" \
    -DGPUPROF_BUILD_EXAMPLES=OFF -DGPUPROF_BUILD_BENCH=ON \
  && cmake --build "$BUILD" -j"$(nproc)"; } >"$OUT/build.log" 2>&1 \
  || { grep -B2 -A12 -m5 error "$OUT/build.log" | head -80; exit 1; }
echo "== CPU tests x3"
ctest --test-dir "$BUILD" -LE "gpu|bench|package" --repeat until-fail:3 --output-on-failure -j8 \
  >"$OUT/ctest-cpu.log" 2>&1 || status=1
tail -4 "$OUT/ctest-cpu.log"
echo "== GPU tests x20"
ctest --test-dir "$BUILD" -L gpu --repeat until-fail:20 --output-on-failure --timeout 300 \
  >"$OUT/ctest-gpu.log" 2>&1 || status=1
grep -E "Test +#|tests passed|FAILED|ERROR|CHECK" "$OUT/ctest-gpu.log" | head -60
echo "== scope_overhead"
"$BUILD"/bench/overhead/scope_overhead --json "$OUT/scope_overhead.json" 2>&1 | tee "$OUT/scope_overhead.txt" || status=1
echo "== graph_scope_cost"
"$BUILD"/bench/overhead/graph_scope_cost 2>&1 | tee "$OUT/graph_scope_cost.txt" || status=1
exit $status
