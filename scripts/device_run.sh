#!/usr/bin/env bash
# Everything that needs the GPU machine, in one call, so a lease is spent on
# measuring rather than on start-ups. Usage:
#   scripts/device_run.sh [build] [test] [bench] [torch] [profile] [precision] [overhead]
# Results go to $OUT (default ./out): logs, JSON, and the tables printed last.
# The PyTorch yardstick (shared/bench/torch_ref.py) runs in the same call as
# our benchmark, so a comparison is a ratio from one run.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
SHARED=${SHARED:-}
for candidate in ./shared ../shared; do
  [ -z "$SHARED" ] && [ -f "$candidate/bench/torch_ref.py" ] && SHARED=$candidate
done
BUILD=build/device
JOBS=$(nproc)
phases=${*:-build test}
want() { [[ " $phases " == *" $1 "* ]]; }
log() { echo "== $(date +%T) $*" | tee -a "$OUT/summary.txt"; }

if want build; then
  log "configure + build (sm_90)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv >"$OUT/gpu.txt" 2>&1
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/configure.log" 2>&1 \
    || { tail -40 "$OUT/configure.log"; exit 1; }
  cmake --build "$BUILD" -j"$JOBS" >"$OUT/build.log" 2>&1 || { grep -B2 -A12 -m5 'error' "$OUT/build.log" | head -120; exit 1; }
fi

if want test; then
  log "ctest: CPU tests in parallel, then GPU tests one at a time (their timings must not share the GPU)"
  ctest --test-dir "$BUILD" -LE "bench|package|gpu" --output-on-failure -j8 --timeout 300 >"$OUT/ctest-cpu.log" 2>&1
  ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 300 >"$OUT/ctest-gpu.log" 2>&1
  for f in "$OUT"/ctest-cpu.log "$OUT"/ctest-gpu.log; do
    grep -E 'tests passed|\*\*\*Failed|Skipped|Not Run|Timeout' "$f" | tail -12
  done
  # The first failures in full, so the reply carries them.
  grep -E -B3 -A25 'ERROR|FAILED|Assertion|error:' "$OUT"/ctest-gpu.log | head -150
fi

if want overhead; then
  log "scope overhead"
  "$BUILD"/bench/overhead/scope_overhead --json "$OUT/overhead.json" | tee "$OUT/overhead.txt"
fi

if want precision; then
  log "precision demos"
  "$BUILD"/examples/precision/precision_accumulation --json "$OUT/accumulation.json" >"$OUT/accumulation.txt" 2>&1
  "$BUILD"/examples/precision/precision_toy_model >"$OUT/toy_model.txt" 2>&1
  tail -5 "$OUT/accumulation.txt"
fi

BENCH_SIZES=${BENCH_SIZES:-small,medium,large,xl,2.7B}
BENCH_CTX=${BENCH_CTX:-128,512}
BENCH_MODES=${BENCH_MODES:-fwd,fwdbwd,step}
if want torch; then
  log "PyTorch eager yardstick"
  python3 "$SHARED/bench/torch_ref.py" --sizes "$BENCH_SIZES" --ctx "$BENCH_CTX" --modes "$BENCH_MODES" \
    --precs fp32,bf16 --out "$OUT/torch_eager.jsonl" >/dev/null 2>"$OUT/torch.err" || tail -5 "$OUT/torch.err"
fi

if want bench; then
  log "transformer_bench"
  torch_flag=()
  [ -f "$OUT/torch_eager.jsonl" ] && torch_flag=(--torch-jsonl "$OUT/torch_eager.jsonl")
  "$BUILD"/examples/transformer/bench/transformer_bench --size "$BENCH_SIZES" --ctx "$BENCH_CTX" \
    --mode "$BENCH_MODES" --precision fp32,bf16 --json "$OUT/bench.json" "${torch_flag[@]}" \
    >"$OUT/bench.txt" 2>"$OUT/bench.err"
  cat "$OUT/bench.txt"
fi

if want profile; then
  log "transformer_profile"
  "$BUILD"/examples/transformer/profile/transformer_profile --out "$OUT/profile" >"$OUT/profile.txt" 2>&1
  tail -20 "$OUT/profile.txt"
fi
log "done"
