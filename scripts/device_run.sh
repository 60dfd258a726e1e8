#!/usr/bin/env bash
# Everything that needs the GPU machine, in one call, so a lease is spent on
# measuring rather than on start-ups. Usage:
#   scripts/device_run.sh [preset] [build] [test | cputest gputest] [sanitize] [agreement]
#                         [mutation] [bench] [torch] [profile] [precision] [overhead] [studies]
#                         [longrun]
# With no phase named it runs `preset sanitize`. preset: the README's own test
# command, `cmake --workflow --preset test` (build/default, every test but the
# benchmark), then `ctest --preset test` until $PRESET_REPEAT runs in all
# (default 1) have passed or one fails. sanitize: the CUDA tests under
# compute-sanitizer's four tools (scripts/gpu_sanitize.sh); any finding fails.
# longrun: the kernel window on the GPU, its test and long_run_gpu (a
# 100,000-step loop, window against full trace; configures build/device if
# no phase did). The other phases use build/device.
# Results go to $OUT (default ./out): logs, JSON, and the tables printed last.
# The PyTorch yardstick (examples/transformer/scripts/torch_reference.py) runs
# in the same call as our benchmark, so a comparison is a ratio from one run.
#
# Tests run with GPUPROF_REQUIRE_GPU=1: on this machine a GPU test that finds
# no GPU fails instead of skipping, and a GPU test skipped for any other
# reason fails the run, except the documented skips (allowed_skips below).
# The exit status is 1 when a test failed or was skipped unexpectedly, or a
# mutant was not caught.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
# Everything lands in $RESULTS and is packed into $OUT/results.tgz at the
# end: the device tool brings back only a few files per call.
RESULTS=${RESULTS:-/tmp/gpuprof-results}
rm -rf "$RESULTS"; mkdir -p "$RESULTS"
# The dump's arrays stay behind (tens of MiB); its manifest comes back.
pack() { tar czf "$OUT/results.tgz" -C "$RESULTS" --exclude='dump/*.npy' --exclude='dump/params*' --exclude='dump/grads' . ; }
trap pack EXIT
BUILD=build/device
B="$BUILD"/examples/transformer/bench/transformer_bench
JOBS=$(nproc)
phases=${*:-preset sanitize}
want() { [[ " $phases " == *" $1 "* ]]; }
log() { echo "== $(date +%T) $*" | tee -a "$RESULTS/summary.txt"; }
export GPUPROF_REQUIRE_GPU=1
status=0
fail() { echo "FAILED: $*" | tee -a "$RESULTS/summary.txt"; status=1; }

# The only skips a GPU-machine run accepts (docs/testing.md): the two-GPU DDP
# test with one GPU, the PyTorch agreement tests where python3 has no
# PyTorch, and the CPU test that draws the HTML report where no browser is
# installed.
allowed_skips() {
  local gpus
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  [ "$gpus" -lt 2 ] && echo transformer_ddp_world2
  python3 -c 'import numpy, torch' 2>/dev/null || echo transformer_torch_agreement_cpu transformer_torch_agreement_gpu
  command -v chromium chromium-browser google-chrome >/dev/null || echo gpuprof_html_browser
}
# ctest's exit status, then every skipped test not in allowed_skips: a failure.
check_ctest() {  # log file, ctest's exit status
  local allowed name
  [ "$2" -eq 0 ] || fail "the run failed (build or tests), see $(basename "$1")"
  allowed=" $(allowed_skips | tr '\n' ' ') "
  for name in $(sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) (Skipped)$/\1/p' "$1" | sort -u); do
    if [[ "$allowed" == *" $name "* ]]; then
      echo "skipped (documented): $name"
    else
      fail "$name was skipped on the GPU machine ($(basename "$1"))"
    fi
  done
}

if want preset; then
  repeat=${PRESET_REPEAT:-1}
  log "the README's test command: cmake --workflow --preset test, then ctest --preset test ($repeat run(s) in all)"
  cmake --workflow --preset test >"$RESULTS/preset.log" 2>&1
  check_ctest "$RESULTS/preset.log" $?
  if [ "$repeat" -gt 1 ] && [ "$status" -eq 0 ]; then
    ctest --preset test --repeat until-fail:$((repeat - 1)) >"$RESULTS/preset-repeat.log" 2>&1
    check_ctest "$RESULTS/preset-repeat.log" $?
  fi
  grep -h -E 'tests passed|\*\*\*Failed|Skipped|Not Run|Timeout|error:' "$RESULTS"/preset*.log | tail -20
fi

if want build; then
  log "configure (cmake --preset device) + build"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv >"$RESULTS/gpu.txt" 2>&1
  cmake --preset device >"$RESULTS/configure.log" 2>&1 \
    || { tail -40 "$RESULTS/configure.log"; exit 1; }
  cmake --build "$BUILD" -j"$JOBS" >"$RESULTS/build.log" 2>&1 || { grep -B2 -A12 -m5 'error' "$RESULTS/build.log" | head -120; exit 1; }
fi

if want test || want cputest; then
  log "ctest: CPU tests in parallel, 3 times over"
  ctest --test-dir "$BUILD" -LE "bench|package|gpu" --repeat until-fail:3 --output-on-failure -j8 --timeout 300 >"$RESULTS/ctest-cpu.log" 2>&1
  check_ctest "$RESULTS/ctest-cpu.log" $?
  grep -E 'tests passed|\*\*\*Failed|Skipped|Not Run|Timeout' "$RESULTS/ctest-cpu.log" | tail -12
fi
if want test || want gputest; then
  # Each 20 times ($GPU_REPEAT) so a flaky test shows. Tests that time or
  # count run alone (RUN_SERIAL); those marked SHARES_GPU, which check values
  # only, run beside each other (cmake/gpuprofTesting.cmake). The PyTorch
  # agreement runs once (phase agreement).
  log "ctest: GPU tests, ${GPU_REPEAT:-20} times over (-j4, timing tests alone)"
  ctest --test-dir "$BUILD" -L gpu -E torch_agreement --repeat until-fail:"${GPU_REPEAT:-20}" -j4 --output-on-failure --timeout 300 >"$RESULTS/ctest-gpu.log" 2>&1
  check_ctest "$RESULTS/ctest-gpu.log" $?
  grep -E 'tests passed|\*\*\*Failed|Skipped|Not Run|Timeout' "$RESULTS/ctest-gpu.log" | tail -12
  # The first failures in full, so the reply carries them.
  grep -E -B3 -A25 'ERROR|FAILED|Assertion|error:' "$RESULTS"/ctest-gpu.log | head -150
fi

if want sanitize; then
  log "compute-sanitizer: memcheck, racecheck, initcheck, synccheck (scripts/gpu_sanitize.sh)"
  OUT="$RESULTS" BUILD="$BUILD" scripts/gpu_sanitize.sh || fail "compute-sanitizer: see sanitize/summary.txt"
fi

if want agreement; then
  log "the whole model against PyTorch (transformer_bench --dump, torch_reference.py --check-dump)"
  ctest --test-dir "$BUILD" -R torch_agreement -V --timeout 600 >"$RESULTS/ctest-agreement.log" 2>&1
  check_ctest "$RESULTS/ctest-agreement.log" $?
  grep -E '^[0-9]+: (== |FAIL|every check|[0-9]+ check|SKIPPED)|tests passed' "$RESULTS/ctest-agreement.log" | head -20
fi

if want mutation; then
  # $MUTANTS (comma-separated ids, scripts/mutation.py --list) picks some:
  # a long run split over several calls.
  log "mutants (scripts/mutation.py --gpu ${MUTANTS:+--only $MUTANTS}): each must fail the tests that cover it"
  python3 scripts/mutation.py --gpu ${MUTANTS:+--only "$MUTANTS"} --work /tmp/gpuprof-mutation --jobs "$JOBS" \
    >"$RESULTS/mutation.txt" 2>&1 \
    || fail "scripts/mutation.py --gpu: see mutation.txt"
  cp /tmp/gpuprof-mutation/mutation.log "$RESULTS/mutation-build-and-test.log" 2>/dev/null
  tail -16 "$RESULTS/mutation.txt"
fi

if want overhead; then
  log "scope overhead"
  "$BUILD"/bench/overhead/scope_overhead --json "$RESULTS/overhead.json" | tee "$RESULTS/overhead.txt"
fi

if want precision; then
  log "precision demos"
  "$BUILD"/examples/precision/precision_accumulation --json "$RESULTS/accumulation.json" >"$RESULTS/accumulation.txt" 2>&1
  "$BUILD"/examples/precision/precision_toy_model >"$RESULTS/toy_model.txt" 2>&1
  tail -5 "$RESULTS/accumulation.txt"
fi

if want longrun; then
  log "long runs: the kernel-window GPU test, then long_run_gpu (window against full trace)"
  [ -f "$BUILD/CMakeCache.txt" ] || cmake --preset device >"$RESULTS/configure.log" 2>&1 \
    || { tail -40 "$RESULTS/configure.log"; exit 1; }
  if cmake --build "$BUILD" -j"$JOBS" --target gpuprof_kernel_capture_tests long_run_gpu >"$RESULTS/longrun-build.log" 2>&1; then
    ctest --test-dir "$BUILD" -R '^gpuprof_kernel_capture_(tests|records)$' --output-on-failure --timeout 300 \
      >"$RESULTS/longrun-ctest.log" 2>&1
    check_ctest "$RESULTS/longrun-ctest.log" $?
    grep -E 'tests passed|\*\*\*Failed|Skipped' "$RESULTS/longrun-ctest.log"
    "$BUILD"/bench/long_run/long_run_gpu --json "$RESULTS/long_run_gpu.json" >"$RESULTS/long_run_gpu.txt" 2>&1 \
      || fail "long_run_gpu: see long_run_gpu.txt"
    cat "$RESULTS/long_run_gpu.txt"
  else
    fail "the long-run targets did not build: see longrun-build.log"
    grep -B2 -A12 -m5 'error' "$RESULTS/longrun-build.log" | head -60
  fi
fi

BENCH_SIZES=${BENCH_SIZES:-small,medium,large,xl,2.7B}
BENCH_CTX=${BENCH_CTX:-128,512}
BENCH_MODES=${BENCH_MODES:-fwd,fwdbwd,step}
if want torch; then
  log "PyTorch eager yardstick"
  python3 examples/transformer/scripts/torch_reference.py --sizes "$BENCH_SIZES" --ctx "$BENCH_CTX" --modes "$BENCH_MODES" \
    --precs fp32,bf16 --out "$RESULTS/torch_eager.jsonl" >/dev/null 2>"$RESULTS/torch.err" || tail -5 "$RESULTS/torch.err"
fi

if want bench; then
  log "transformer_bench"
  torch_flag=()
  [ -f "$RESULTS/torch_eager.jsonl" ] && torch_flag=(--torch-jsonl "$RESULTS/torch_eager.jsonl")
  "$B" --size "$BENCH_SIZES" --ctx "$BENCH_CTX" \
    --mode "$BENCH_MODES" --precision fp32,bf16 --json "$RESULTS/bench.json" "${torch_flag[@]}" \
    >"$RESULTS/bench.txt" 2>"$RESULTS/bench.err"
  cat "$RESULTS/bench.txt"
fi

if want profile; then
  log "transformer_profile: small and large, ctx 128-1024, bf16"
  "$BUILD"/examples/transformer/profile/transformer_profile --out "$RESULTS/profile" --trace >"$RESULTS/profile.txt" 2>&1
  tail -20 "$RESULTS/profile.txt"
  log "transformer_profile: the 2.7B memory table"
  "$BUILD"/examples/transformer/profile/transformer_profile --size small --ctx 128 --memory-table \
    --out "$RESULTS/profile-memory" >"$RESULTS/profile-memory.txt" 2>&1
  tail -20 "$RESULTS/profile-memory.txt"
fi

if want studies; then
  log "warm-up study and precision loss curves"
  "$B" --size small --ctx 512 --mode step --precision fp32,bf16 --warmup-study --json "$RESULTS/warmup.json" \
    >"$RESULTS/warmup.txt" 2>&1
  tail -12 "$RESULTS/warmup.txt"
  "$B" --size small --ctx 128 --mode step --precision fp32,tf32,bf16 --loss-curve 50 --json "$RESULTS/loss.json" \
    >"$RESULTS/loss.txt" 2>&1
  tail -12 "$RESULTS/loss.txt"
  "$B" --size small,medium,large,xl,2.7B --ctx 512 --mode step --precision fp32,tf32,bf16 \
    --json "$RESULTS/precisions.json" >"$RESULTS/precisions.txt" 2>&1
  tail -18 "$RESULTS/precisions.txt"
  log "the bundled benchmark (ctest -L bench, what cmake --workflow --preset bench runs)"
  ( time ctest --test-dir "$BUILD" -L bench -V ) >"$RESULTS/bench-default.txt" 2>&1
  tail -4 "$RESULTS/bench-default.txt"
  "$B" --size tiny --ctx 128 --mode step --precision fp32 --steps 1 --dump "$RESULTS/dump" >/dev/null 2>&1
fi
log "done (exit status $status)"
exit "$status"
