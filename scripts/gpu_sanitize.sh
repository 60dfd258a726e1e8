#!/usr/bin/env bash
# The CUDA tests under compute-sanitizer: memcheck (with the API errors it
# reports by default, --report-api-errors explicit), racecheck, initcheck and
# synccheck. Any finding fails the run, as does a test that fails, times out
# or skips under a tool. Builds what it needs with `cmake --preset device`
# (build/device) unless BUILD names a configured tree. Logs and summary.txt
# go to $OUT/sanitize (default ./out/sanitize).
#
# Sized to take about 5 minutes on an H200: tests that only check timing are
# left out (a sanitizer slows kernels and host alike), cuDNN's cases too (its
# kernels are not ours to fix), and racecheck, initcheck and synccheck run
# the tests of single kernels (the attention kernels, the layers, the
# precision demo), not the model and graph tests that run the same kernels
# in whole steps.
# SANITIZE_TOOLS="memcheck racecheck" picks tools; SANITIZE_TIMEOUT (s, per
# run, default 240) bounds each run.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/out}
LOGS="$OUT/sanitize"
mkdir -p "$LOGS"
BUILD=${BUILD:-build/device}
TOOLS=${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}
TIMEOUT=${SANITIZE_TIMEOUT:-240}
FINDING=86  # compute-sanitizer's exit status when it reports an error
export GPUPROF_REQUIRE_GPU=1  # a test that finds no GPU fails instead of skipping

SANITIZER=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
if [ ! -x "$SANITIZER" ]; then
  echo "gpu_sanitize.sh: compute-sanitizer not found (set COMPUTE_SANITIZER=/path/to/compute-sanitizer)" >&2
  exit 2
fi

targets=(gpuprof_scopes_gpu_test gpuprof_graph_timing_gpu_test transformer_cuda_tests
         transformer_flash_attention_tests precision_gpu_tests)
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake --preset device -B "$BUILD" >"$LOGS/configure.log" 2>&1 \
    || { tail -40 "$LOGS/configure.log"; exit 1; }
fi
cmake --build "$BUILD" -j"$(nproc)" --target "${targets[@]}" >"$LOGS/build.log" 2>&1 \
  || { grep -B2 -A12 -m5 error "$LOGS/build.log" | head -80; exit 1; }

summary="$LOGS/summary.txt"
: >"$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }

# sanitize TOOL NAME EXECUTABLE [test arguments...]: one run, judged by its
# exit status and the tool's own summary line (racecheck reports hazards of
# warning severity without changing the exit status).
sanitize() {
  local tool=$1 name=$2 executable=$3
  shift 3
  local log="$LOGS/$tool-$name.log" started elapsed rc findings verdict
  local options=(--tool "$tool" --error-exitcode "$FINDING")
  [ "$tool" = memcheck ] && options+=(--report-api-errors explicit)
  started=$(date +%s)
  timeout "$TIMEOUT" "$SANITIZER" "${options[@]}" "$BUILD/$executable" "$@" >"$log" 2>&1
  rc=$?
  elapsed=$(($(date +%s) - started))
  if [ "$tool" = racecheck ]; then
    findings=$(sed -n 's/.*RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p' "$log" | tail -1)
  else
    findings=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | tail -1)
  fi
  if [ "$rc" -eq 124 ]; then
    verdict="FAILED: timed out after ${TIMEOUT} s"
  elif [ -z "$findings" ]; then
    verdict="FAILED: no ${tool} summary (exit status $rc)"
  elif [ "$findings" -ne 0 ] || [ "$rc" -eq "$FINDING" ]; then
    verdict="FAILED: $findings finding(s)"
  elif [ "$rc" -ne 0 ]; then
    verdict="FAILED: the test failed under ${tool} (exit status $rc)"
  else
    verdict="clean"
  fi
  note "$(printf '%-9s %-32s %4d s  %s' "$tool" "$name" "$elapsed" "$verdict")"
  if [ "$verdict" != clean ]; then
    status=1
    grep -E -m 12 -A 6 '^========= (Program hit|Invalid|Uninitialized|Race|Error|Barrier|Warning)|\(Warp Level Programming\)|FAILED|ERROR:' \
      "$log" | head -60
  fi
}

want() { [[ " $TOOLS " == *" $1 "* ]]; }
no_cudnn=--test-suite-exclude=cudnn
# Value checks only: the cases that also bound timings, or count event pairs
# in flight, are left out (a tool runs kernels slower and launches them one
# by one, so such a check fails with no finding).
scope_cases=(--test-case-exclude="a scope's CUDA-event time matches*,bench's L2 flush*,bench with cuda_graph*,scopes inside bench's graph capture*,the event pool stops growing*")
graph_cases=(--test-case-exclude="captured scopes time every replay*")
# One grid of 65,535 × 2 blocks: the same kernels as the other shapes, and
# minutes under racecheck and initcheck; memcheck runs it.
flash_cases=("$no_cudnn" --test-case-exclude="*more sequences times heads than a grid row holds*")
layer_cases=("$no_cudnn" --source-file="*layers_test*")

if want memcheck; then
  sanitize memcheck scopes tests/gpuprof_scopes_gpu_test "${scope_cases[@]}"
  sanitize memcheck graph_timing tests/gpuprof_graph_timing_gpu_test "${graph_cases[@]}"
  sanitize memcheck transformer examples/transformer/cuda/tests/transformer_cuda_tests "$no_cudnn"
  sanitize memcheck flash_attention examples/transformer/cuda/tests/transformer_flash_attention_tests "$no_cudnn"
  sanitize memcheck precision examples/precision/tests/precision_gpu_tests
fi
for tool in racecheck initcheck synccheck; do
  want "$tool" || continue
  sanitize "$tool" flash_attention examples/transformer/cuda/tests/transformer_flash_attention_tests "${flash_cases[@]}"
  sanitize "$tool" layers examples/transformer/cuda/tests/transformer_cuda_tests "${layer_cases[@]}"
  sanitize "$tool" precision examples/precision/tests/precision_gpu_tests
done
if want initcheck; then
  sanitize initcheck scopes tests/gpuprof_scopes_gpu_test "${scope_cases[@]}"
  sanitize initcheck graph_timing tests/gpuprof_graph_timing_gpu_test "${graph_cases[@]}"
fi

if [ "$status" -eq 0 ]; then note "compute-sanitizer: every run clean"; else note "compute-sanitizer: FAILED (logs in $LOGS)"; fi
exit "$status"
