#!/usr/bin/env bash
# Hardware counters on the GPU in one call. Three phases (docs/counters.md),
# run in the order given (`counters_check.sh transformer profile`):
#
#   counters_check.sh [tests]     build the counter tests and the probe, run the
#     tests (host-side metric evaluator; GPU collection against known kernels),
#     print the probe's values per kernel and per scope, measure the same
#     kernels with Nsight Compute and print the agreement table, then the cost
#     benchmark (bench/counters/counter_cost; COUNTERS_COST=0 leaves it out).
#     Writes $OUT/summary.txt (everything printed), $OUT/counter_cost.json and
#     $OUT/counters.tgz.
#   counters_check.sh transformer  one small-model bf16 train step of the
#     Transformer example: every kernel's counters (transformer_counter_probe),
#     Nsight Compute on a GEMM, our attention, RMSNorm, SwiGLU and AdamW
#     kernel of the same step, and the agreement table for those five; then
#     the whole step as one range in both tools, and every kernel's DRAM bytes
#     and duration summed. Writes $OUT/transformer_agreement.txt,
#     $OUT/transformer_step_agreement.txt and $OUT/transformer_totals.txt.
#   counters_check.sh profile  transformer_profile --counters (small and
#     large model, forward and train step, counters per scope under the
#     roofline). Writes $OUT/roofline.md; its reports and pictures go into the
#     archive.
#   counters_check.sh durations  each scope's duration in the probe: flat
#     scopes (copy, copy back, fma), the same with a 2 us scope first, and
#     scopes nested in a step, beside the kernels' own durations. Writes
#     $OUT/durations.txt.
#   counters_check.sh writeback  where each tool charges L2 write-backs: the
#     512 MB copy then the FMA chain (1 MB written), with 0, 1 or 2 reads of
#     512 MB between them (the first evicts the copy's dirty lines), and with
#     the GPU idle for 20 ms before the read; DRAM bytes per kernel from
#     gpuprof (user replay) and ncu (application replay), the same three
#     metrics in both; ncu with each kernel as a range; then gpuprof's second
#     read with the default metric set.
#
# Everything printed goes to $OUT/<phases>_summary.txt ($OUT/summary.txt for
# tests alone), the logs and raw outputs to $OUT/<phases>.tgz
# ($OUT/counters.tgz for tests alone).
#
# Every step has its own time limit, so a hang still leaves the earlier
# results. Exit 0 when every step passed and every compared value agreed.
set -uo pipefail
export GPUPROF_REQUIRE_GPU=1  # here a GPU test that finds no GPU fails (docs/testing.md)
cd "$(dirname "$0")/.."
PHASES=("${@:-tests}")
for phase in "${PHASES[@]}"; do
  case "$phase" in
    tests|transformer|profile|durations|writeback) ;;
    *) echo "usage: $0 [tests|transformer|profile|durations|writeback]..." >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
BUILD=${BUILD:-build/device}
LOGS=$(mktemp -d /tmp/counters_check.XXXXXX)
NCU=${NCU:-/usr/local/cuda/bin/ncu}
status=0
if [ "${PHASES[*]}" = tests ]; then
  SUMMARY=$OUT/summary.txt ARCHIVE=$OUT/counters.tgz
else
  joined=$(IFS=_; echo "${PHASES[*]}")
  SUMMARY=$OUT/${joined}_summary.txt ARCHIVE=$OUT/${joined}.tgz
fi
exec > >(tee "$SUMMARY") 2>&1

step() { echo; echo "== $*"; }

# The one configure line of this script.
CONFIGURE=(cmake --preset device -B "$BUILD")

# Builds the named targets, or prints the first errors and exits 1.
build() {
  { timeout -s TERM 300 "${CONFIGURE[@]}" && timeout -s TERM 300 cmake --build "$BUILD" -j16 -t "$@"; } \
    >"$LOGS/build.log" 2>&1 \
    || { grep -B2 -A12 -m5 -E "error|FAILED" "$LOGS/build.log" | head -80; tar -C "$LOGS" -czf "$ARCHIVE" .; exit 1; }
  echo "built $*"
}

# Sets $metrics to the metric names of a per-kernel probe's CSV, comma-separated
# (ncu --metrics); false, saying why, when there is nothing to compare or no ncu.
ncu_ready() {
  metrics=$(awk -F, '$1 == "kernel" { print $(NF-1) }' "$1" | sort -u | paste -sd, -)
  [ -n "$metrics" ] || { echo "no per-kernel values from the probe: nothing to compare"; return 1; }
  [ -x "$NCU" ] || { echo "no ncu at $NCU"; return 1; }
}

# ncu as the only CUPTI client. No cache flush and no clock locking between
# kernels: CounterCapture does neither, so counts agree and times compare
# like for like.
NCU_MEASURE=("$NCU" --csv --print-units base --cache-control none --clock-control none)

tests_phase() {
  step "build"
  build gpuprof_counter_host_tests gpuprof_counters_gpu_tests gpuprof_counters_probe counter_cost

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
  if ! ncu_ready "$LOGS/probe.csv"; then
    status=1
  else
    timeout -s TERM 240 "${NCU_MEASURE[@]}" --kernel-name regex:'copy_kernel|fma_kernel' --metrics "$metrics" \
      "$BUILD"/tests/gpuprof_counters_probe --plain >"$LOGS/ncu.csv" 2>"$LOGS/ncu.err" || status=1
    tail -5 "$LOGS/ncu.err"
    step "agreement (gpuprof vs ncu, per kernel)"
    python3 scripts/counters_agreement.py "$LOGS/probe.csv" "$LOGS/ncu.csv" | tee "$LOGS/agreement.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  fi

  if [ "${COUNTERS_COST:-1}" = 0 ]; then
    step "cost: left out (COUNTERS_COST=0)"
    return
  fi
  step "cost: passes per metric set, step time with and without counters"
  timeout -s TERM 240 "$BUILD"/bench/counters/counter_cost --json "$LOGS/counter_cost.json" 2>&1 \
    | tee "$LOGS/counter_cost.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  cp "$LOGS/counter_cost.json" "$OUT/" 2>/dev/null
}

# The kernels compared, by category: the first of each in the step that both
# measured. Both tools replay the whole step, not each kernel (the probe:
# CounterReplay::user; ncu: application replay, the probe process run once
# per pass), so each kernel finds the L2 as the step before it left it and
# cache-dependent values (DRAM bytes, L2 hit rate, time) compare like for
# like (kernel replay's save/restore of memory leaves other lines in L2).
# ncu measures every kernel from the step's first (the embedding) through
# the first block and the next block's first GEMMs, as the probe does:
# RMSNorm, the QKV GEMM, RoPE, attention, the output GEMM, RMSNorm, the
# w1|w3 GEMM, SwiGLU, ...; then, in a second run, the first AdamW piece.
# So no compared kernel is the first that ncu measures after unmeasured
# ones, which the probe never has.
transformer_phase() {
  local probe="$BUILD/examples/transformer/profile/transformer_counter_probe"
  # ctx 512 (COUNTERS_CTX): at 128 the norm and SwiGLU kernels last 4-5 us,
  # where a microsecond or an L2 write-back is more than 5 % of a value.
  local shape=(--ctx "${COUNTERS_CTX:-512}")
  local forward='embedding_forward_kernel|rmsnorm_forward_kernel|rope_split_heads_kernel|flash_forward_kernel|swiglu_forward_kernel|gemm|nvjet|xmma|cutlass'
  step "build"
  build transformer_counter_probe

  step "names: the kernels of one train step, in launch order"
  timeout -s TERM 120 "$probe" "${shape[@]}" --names >"$LOGS/names.csv" 2>"$LOGS/names.err" || status=1
  cat "$LOGS/names.err"
  head -1 "$LOGS/names.csv"
  cut -d, -f3 "$LOGS/names.csv" | grep -v '^#' | sort | uniq -c | sort -rn

  step "counters: every kernel of the same step (user replay: the step once per pass)"
  timeout -s TERM 120 "$probe" "${shape[@]}" --counters >"$LOGS/counters.csv" 2>"$LOGS/counters.err" || status=1
  cat "$LOGS/counters.err"
  grep '^#' "$LOGS/counters.csv"

  step "Nsight Compute on the step's first forward kernels and first AdamW kernel"
  if ! ncu_ready "$LOGS/counters.csv"; then
    status=1
  else
    timeout -s TERM 180 "${NCU_MEASURE[@]}" --replay-mode application --profile-from-start off \
      --kernel-name regex:"$forward" --launch-count 19 --metrics "$metrics" "$probe" "${shape[@]}" --plain >"$LOGS/ncu_forward.csv" 2>"$LOGS/ncu_forward.err" || status=1
    tail -3 "$LOGS/ncu_forward.err"
    timeout -s TERM 150 "${NCU_MEASURE[@]}" --replay-mode application --profile-from-start off \
      --kernel-name regex:adamw_kernel --launch-count 1 --metrics "$metrics" "$probe" "${shape[@]}" --plain >"$LOGS/ncu_adamw.csv" 2>"$LOGS/ncu_adamw.err" || status=1
    tail -3 "$LOGS/ncu_adamw.err"
    step "agreement (gpuprof vs ncu, per kernel)"
    python3 scripts/counters_agreement.py "$LOGS/counters.csv" "$LOGS/ncu_forward.csv" "$LOGS/ncu_adamw.csv" \
      --names "$LOGS/names.csv" --pick "GEMM=gemm|nvjet|xmma|cutlass" --pick attention=flash_forward_kernel \
      --pick RMSNorm=rmsnorm_forward_kernel --pick SwiGLU=swiglu_forward_kernel --pick AdamW=adamw_kernel \
      | tee "$OUT/transformer_agreement.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    step_totals "$probe" "${shape[@]}"
  fi
}

# The same step as one range in both tools: a user range around it (the
# probe's --step) and ncu's application range replay of its profiler
# start/stop range. Nothing runs between the kernels but the kernels, so
# every write-back lands inside the range. The range compares what the step
# did (DRAM bytes, L2 hit rate, tensor ops), not how fast: ncu's range
# replay slows the host's launches and the step takes several times longer
# under it, so durations and % of peak describe another run. ncu's range
# replay has no SASS instruction counts either. Then the DRAM bytes and
# duration of every kernel summed, in both tools (ncu measuring all of
# them), and gpuprof's sum against ncu's range: where per-kernel values
# differ, do the totals?
step_totals() {
  local probe=$1
  shift
  local sums=dram__bytes_write.sum,dram__bytes_read.sum,gpu__time_duration.sum
  local range_metrics
  range_metrics=$(tr , '\n' <<<"$metrics" | grep -E '^(dram__bytes|lts__t_sector_hit_rate|sm__ops_path_tensor)' \
    | paste -sd, -)
  step "counters: the step as one range (user range)"
  timeout -s TERM 120 "$probe" "$@" --step >"$LOGS/step.csv" 2>"$LOGS/step.err" || status=1
  cat "$LOGS/step.err"
  grep '^#' "$LOGS/step.csv"
  step "Nsight Compute: the step as one range (application range replay)"
  timeout -s TERM 240 "${NCU_MEASURE[@]}" --replay-mode app-range --metrics "$range_metrics" \
    "$probe" "$@" --plain >"$LOGS/ncu_step.csv" 2>"$LOGS/ncu_step.err" || status=1
  tail -3 "$LOGS/ncu_step.err"
  step "Nsight Compute: every kernel of the step, DRAM bytes and duration"
  timeout -s TERM 240 "${NCU_MEASURE[@]}" --replay-mode application --profile-from-start off --metrics "$sums" \
    "$probe" "$@" --plain >"$LOGS/ncu_all.csv" 2>"$LOGS/ncu_all.err" || status=1
  tail -3 "$LOGS/ncu_all.err"
  step "agreement (gpuprof vs ncu, the step as one range)"
  python3 scripts/counters_agreement.py "$LOGS/step.csv" "$LOGS/ncu_step.csv" | tee "$OUT/transformer_step_agreement.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  # Totals, to read rather than to pass: a sum of per-kernel durations has
  # no gaps, a range's has them.
  step "totals: every kernel summed, gpuprof vs ncu per kernel"
  python3 scripts/counters_agreement.py --sum "$LOGS/counters.csv" "$LOGS/ncu_all.csv" | tee "$OUT/transformer_totals.txt"
  step "totals: every kernel summed in gpuprof vs ncu's range"
  python3 scripts/counters_agreement.py --sum "$LOGS/counters.csv" "$LOGS/ncu_step.csv" | tee -a "$OUT/transformer_totals.txt"
}

# transformer_profile --counters with its defaults (small and large, one
# context, one warm-up and two timed steps, each run replayed once per pass).
profile_phase() {
  local dir="$LOGS/profile-counters"
  step "build"
  build transformer_profile

  step "transformer_profile --counters: scopes under the roofline"
  timeout -s TERM 360 "$BUILD"/examples/transformer/profile/transformer_profile --counters --out "$dir" \
    >"$LOGS/profile.log" 2>&1 || status=1
  tail -15 "$LOGS/profile.log"
  if [ -f "$dir/roofline.md" ]; then
    cp "$dir/roofline.md" "$OUT/roofline.md"
    cat "$dir/roofline.md"
  else
    echo "no roofline.md"
    status=1
  fi
}

# The probe's scope durations, in us, one line per range: per kernel (kernel
# replay: the kernel alone) and per scope.
durations_phase() {
  local probe="$BUILD/tests/gpuprof_counters_probe"
  local tiny name
  step "build"
  build gpuprof_counters_probe
  : >"$OUT/durations.txt"
  for tiny in "" --tiny-first; do
    name=durations$(echo "$tiny" | tr -d ' -')
    step "durations${tiny:+ $tiny}"
    timeout -s TERM 120 "$probe" --metrics gpu__time_duration.sum $tiny >"$LOGS/$name.csv" 2>"$LOGS/$name.err" \
      || status=1
    cat "$LOGS/$name.err"
    awk -F, -v variant="${tiny:-flat}" '$3 == "gpu__time_duration.sum" {
      printf "%-14s %-6s %-10s %9.1f us\n", variant, $1, $2, $4 / 1000 }' "$LOGS/$name.csv" \
      | tee -a "$OUT/durations.txt"
  done
}

# The FMA chain leaves its 1 MB output in L2 and writes nothing to DRAM
# itself: DRAM writes during it are lines an earlier kernel left dirty. Both
# tools replay the whole work with the same three metrics, so a difference
# between them is where each charges those write-backs. The reads between
# the copy and the chain say whether the copy's dirty lines are what the
# chain is charged for; a second read finds only lines dirtied after the
# first, by nothing of the work's own, so what it is charged is the
# measurement's. gpuprof's second read is also measured with the chip's
# default metric set and with fewer ranges per pass: does the profiler's own
# traffic depend on either?
writeback_phase() {
  local probe="$BUILD/tests/gpuprof_counters_probe"
  local metrics=dram__bytes_write.sum,dram__bytes_read.sum,gpu__time_duration.sum
  local pattern='^kernel,[0-9]+,(dram__bytes_(read|write)|gpu__time_duration)\.sum,'
  step "build"
  build gpuprof_counters_probe
  local variant name
  for variant in "" "--reads 1" "--reads 1 --gap-ms 20" "--reads 2"; do
    name=writeback$(echo "$variant" | tr -d ' -')
    step "write-backs${variant:+ with $variant}: gpuprof per kernel (user replay; launch 0 copy, then the reads, last fma)"
    timeout -s TERM 120 "$probe" --user-replay --metrics "$metrics" $variant >"$LOGS/$name.csv" 2>"$LOGS/$name.err" \
      || status=1
    cat "$LOGS/$name.err"
    grep -E "$pattern" "$LOGS/$name.csv"
    step "write-backs${variant:+ with $variant}: ncu (application replay)"
    timeout -s TERM 120 "${NCU_MEASURE[@]}" --replay-mode application \
      --kernel-name regex:'copy_kernel|evict_kernel|fma_kernel' --metrics "$metrics" \
      "$probe" --plain $variant >"$LOGS/$name-ncu.csv" 2>"$LOGS/$name-ncu.err" || status=1
    tail -3 "$LOGS/$name-ncu.err"
    grep -E 'dram__bytes|gpu__time' "$LOGS/$name-ncu.csv" | awk -F'","' '{ print $5 ": " $(NF-2) " " $NF }'
  done
  # ncu with each kernel as a range of its own (the probe's --profiler-ranges,
  # range replay): does a window other than ncu's kernel window see what
  # that one does not?
  step "write-backs with --reads 1: ncu, each kernel a range (application range replay)"
  timeout -s TERM 120 "${NCU_MEASURE[@]}" --replay-mode app-range --metrics "$metrics" \
    "$probe" --plain --reads 1 --profiler-ranges >"$LOGS/writeback-ranges-ncu.csv" 2>"$LOGS/writeback-ranges-ncu.err" \
    || status=1
  tail -3 "$LOGS/writeback-ranges-ncu.err"
  grep -E 'dram__bytes|gpu__time' "$LOGS/writeback-ranges-ncu.csv" | awk -F'","' '{ print "range " $1 ": " $(NF-2) " " $NF }' | tr -d '"'
  for variant in "--max-ranges 8" ""; do
    name=writeback-reads2-default-metrics$(echo "$variant" | tr -d ' -')
    step "write-backs with --reads 2, the default metric set${variant:+, $variant}: gpuprof only"
    timeout -s TERM 120 "$probe" --user-replay --reads 2 $variant >"$LOGS/$name.csv" 2>"$LOGS/$name.err" || status=1
    cat "$LOGS/$name.err"
    grep '^# kernel' "$LOGS/$name.csv"
    grep -E "$pattern" "$LOGS/$name.csv"
  done
}

SECONDS=0
step "GPU"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
cat /proc/driver/nvidia/params 2>/dev/null | grep -i profiling
for phase in "${PHASES[@]}"; do "${phase}_phase"; done
step "done: status $status, ${SECONDS} s"
tar -C "$LOGS" -czf "$ARCHIVE" .
exit $status
