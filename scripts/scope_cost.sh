#!/usr/bin/env bash
# The scope's hot path on the GPU machine, in one call: builds (sm_90, into
# build/device) only the scope tests and scope_overhead, runs the tests that
# exercise every scope mode on a GPU, then scope_overhead three times, so a
# goal that passes once by luck shows. Results: $OUT/scopecost/overhead-{1,2,3}.json.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
DIR="$OUT/scopecost"
mkdir -p "$DIR"
BUILD=build/device
TESTS=(gpuprof_tests gpuprof_scopes_gpu_test gpuprof_graph_timing_gpu_test gpuprof_kernel_capture_tests)
{ cmake --preset device \
  && cmake --build "$BUILD" -j"$(nproc)" --target scope_overhead "${TESTS[@]}"; } >/tmp/scope_cost_build.log 2>&1 \
  || { grep -B2 -A12 -m5 error /tmp/scope_cost_build.log | head -80; exit 1; }
status=0
echo "== scope tests (GPU)"
ctest --test-dir "$BUILD" -R '^(gpuprof_tests|gpuprof_scopes_gpu|gpuprof_graph_timing_gpu|gpuprof_kernel_capture_tests)$' \
  --output-on-failure --timeout 300 >/tmp/scope_cost_ctest.log 2>&1 || status=1
grep -E 'Test +#|tests passed|Failed|ERROR' /tmp/scope_cost_ctest.log | head -20
[ $status -eq 0 ] || grep -E -B3 -A20 'ERROR|FAILED' /tmp/scope_cost_ctest.log | head -80
for run in 1 2 3; do
  echo "== scope_overhead, run $run"
  "$BUILD"/bench/overhead/scope_overhead --json "$DIR/overhead-$run.json" | sed -n '4,14p' || status=1
done
exit $status
