#!/usr/bin/env bash
# Kernel capture on CUDA graphs, checked in one call (about 3-4 minutes on an H100):
#   1. the GPU tests that cover scopes inside graphs (derived graph scope
#      times under kernel capture, stamps without it, eager scopes);
#   2. transformer_profile --size small --ctx 128 --graph: kernel capture's
#      overhead on the graph-replayed small train step (goal: at most 5 %);
#   3. transformer_profile --idle-study: eager vs graph step time and GPU idle
#      share over transformer_bench's default sweep.
# Builds only those targets, for sm_90, into build/device. Brings back three
# files in $OUT/graphprof (default ./out/graphprof): summary.txt, profile.md,
# idle_study.md; everything else stays in $WORK (default /tmp/graphprof).
# Usage: bash scripts/graphprof_run.sh
set -uo pipefail
export GPUPROF_REQUIRE_GPU=1  # here a GPU test that finds no GPU fails (docs/testing.md)
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
RESULTS="$OUT/graphprof"
WORK=${WORK:-/tmp/graphprof}
BUILD=build/device
rm -rf "$WORK"; mkdir -p "$WORK" "$RESULTS"
SUMMARY="$RESULTS/summary.txt"
: >"$SUMMARY"
status=0
log() { echo "== $(date +%T) $*" | tee -a "$SUMMARY"; }

log "configure (cmake --preset device) + build"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>&1 | tee -a "$SUMMARY"
{ cmake --preset device \
  && cmake --build "$BUILD" -j16 --target transformer_profile gpuprof_kernel_capture_tests \
       gpuprof_graph_timing_gpu_test gpuprof_scopes_gpu_test; } >"$WORK/build.log" 2>&1 \
  || { grep -B2 -A12 -m5 error "$WORK/build.log" | head -80 | tee -a "$SUMMARY"; exit 1; }

log "GPU tests"
ctest --test-dir "$BUILD" -R '^(gpuprof_kernel_capture_tests|gpuprof_graph_timing_gpu|gpuprof_scopes_gpu)$' \
  --output-on-failure --timeout 300 >"$WORK/ctest-gpu.log" 2>&1 || status=1
grep -E 'Test +#|tests passed|tests failed' "$WORK/ctest-gpu.log" | tee -a "$SUMMARY"
# What the derived graph times came to, and the first failures in full.
grep -E '^spin step|^step in graphs|ERROR|FAILED' -A3 "$WORK/ctest-gpu.log" | head -80 | tee -a "$SUMMARY"

PROFILE="$BUILD"/examples/transformer/profile/transformer_profile
log "transformer_profile --size small --ctx 128 --graph"
"$PROFILE" --size small --ctx 128 --graph --out "$WORK/profile" 2>"$WORK/profile.log" || status=1
grep -E 'capture overhead|failed|error' "$WORK/profile.log" | tee -a "$SUMMARY"
cp "$WORK/profile/profile.md" "$RESULTS/" 2>/dev/null || { tail -20 "$WORK/profile.log" | tee -a "$SUMMARY"; status=1; }

log "transformer_profile --idle-study"
"$PROFILE" --idle-study --out "$WORK/idle" 2>"$WORK/idle.log" || status=1
grep -E 'failed|error' "$WORK/idle.log" | head -20 | tee -a "$SUMMARY"
if cp "$WORK/idle/idle_study.md" "$RESULTS/" 2>/dev/null; then
  grep '^|' "$RESULTS/idle_study.md" | tee -a "$SUMMARY"
else
  tail -20 "$WORK/idle.log" | tee -a "$SUMMARY"
  status=1
fi
log "done (status $status)"
exit $status
