#!/usr/bin/env bash
# Hardware counters on the GPU in one call: build the counter tests and the
# probe, run the tests (host-side metric evaluator; GPU collection against
# known kernels), print the probe's values per kernel and per scope, measure
# the same kernels with Nsight Compute and print the agreement table, then
# the cost benchmark (bench/counters/counter_cost). Every
# step has its own time limit, so a hang still leaves the earlier results.
# Writes $OUT/summary.txt (everything printed), $OUT/counter_cost.json and
# $OUT/counters.tgz (all logs).
set -uo pipefail
export GPUPROF_REQUIRE_GPU=1  # here a GPU test that finds no GPU fails (docs/testing.md)
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
BUILD=${BUILD:-build/device}
LOGS=$(mktemp -d /tmp/counters_check.XXXXXX)
NCU=${NCU:-/usr/local/cuda/bin/ncu}
status=0
exec > >(tee "$OUT/summary.txt") 2>&1

step() { echo; echo "== $*"; }

step "GPU"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
cat /proc/driver/nvidia/params 2>/dev/null | grep -i profiling

step "build"
{ timeout -s TERM 300 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  && timeout -s TERM 300 cmake --build "$BUILD" -j16 \
       -t gpuprof_counter_host_tests gpuprof_counters_gpu_tests gpuprof_counters_probe counter_cost; } \
  >"$LOGS/build.log" 2>&1 \
  || { grep -B2 -A12 -m5 -E "error|FAILED" "$LOGS/build.log" | head -80; tar -C "$LOGS" -czf "$OUT/counters.tgz" .; exit 1; }
echo "built"

step "tests: host-side evaluator and GPU collection"
timeout -s TERM 60 "$BUILD"/tests/gpuprof_counter_host_tests >"$LOGS/host_tests.log" 2>&1 || status=1
grep -E "MESSAGE|ERROR|test cases" "$LOGS/host_tests.log"
if timeout -s TERM 180 "$BUILD"/tests/gpuprof_counters_gpu_tests -s >"$LOGS/gpu_tests.log" 2>&1; then
  grep -E -A1 "MESSAGE|test cases" "$LOGS/gpu_tests.log"
else
  status=1
  grep -E -B1 -A3 "MESSAGE|ERROR|FATAL|SKIPPED|THREW|test cases" "$LOGS/gpu_tests.log" | head -150
  tail -5 "$LOGS/gpu_tests.log"
fi

step "probe: every metric per kernel and per scope"
timeout -s TERM 120 "$BUILD"/tests/gpuprof_counters_probe >"$LOGS/probe.csv" 2>"$LOGS/probe.err" || status=1
cat "$LOGS/probe.err"
column -t -s, "$LOGS/probe.csv" 2>/dev/null || cat "$LOGS/probe.csv"

step "Nsight Compute on the same kernels"
metrics=$(awk -F, '$1 == "kernel" { print $(NF-1) }' "$LOGS/probe.csv" | sort -u | paste -sd, -)
if [ -z "$metrics" ]; then
  echo "no per-kernel values from the probe: nothing to compare"; status=1
elif [ ! -x "$NCU" ]; then
  echo "no ncu at $NCU"; status=1
else
  # No cache flush and no clock locking between kernels: CUPTI's kernel
  # replay does neither, so counts agree and times compare like for like.
  timeout -s TERM 240 "$NCU" --csv --print-units base --cache-control none --clock-control none \
    --kernel-name regex:'copy_kernel|fma_kernel' --metrics "$metrics" \
    "$BUILD"/tests/gpuprof_counters_probe --plain >"$LOGS/ncu.csv" 2>"$LOGS/ncu.err" || status=1
  tail -5 "$LOGS/ncu.err"
  step "agreement (gpuprof vs ncu, per kernel)"
  python3 scripts/counters_agreement.py "$LOGS/probe.csv" "$LOGS/ncu.csv" | tee "$LOGS/agreement.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

step "cost: passes per metric set, step time with and without counters"
timeout -s TERM 240 "$BUILD"/bench/counters/counter_cost --json "$LOGS/counter_cost.json" 2>&1 \
  | tee "$LOGS/counter_cost.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
cp "$LOGS/counter_cost.json" "$OUT/" 2>/dev/null

step "done: status $status"
tar -C "$LOGS" -czf "$OUT/counters.tgz" .
exit $status
