#!/usr/bin/env bash
# scripts/compare_power.sh: the false-positive rate and power of
# gpuprof-compare, measured on this machine (a benchmark, not a test: it
# prints a table and writes JSON, and asserts nothing).
#
#   CPU:  scripts/compare_power.sh --quickstart build/cpu/examples/quickstart/quickstart
#             --compare build/cpu/tools/gpuprof-compare [--runs 50] [--rounds 5]
#             [--threshold 2%] [--load-jobs N] [--cases aa_loaded,slow15_loaded,slow5_idle]
#             [--json OUT.json] [--methods interleaved,one_pair] [--pair-compare PATH]
#   GPU:  scripts/compare_power.sh --gpu-bench build/release/examples/transformer/transformer_bench
#             --compare ... [--runs 10] [--rounds 3] [--spin-slowdown 3%] [--json OUT.json]
#
# Cases (each measured --runs times, by both methods side by side):
#   aa_loaded      A/A of quickstart under load: any row slower or faster is a false verdict
#   slow15_loaded  new with quickstart --slowdown 0.15 (14.6 % more work) under load:
#                  detected when the first row ("step", the whole step) is slower
#   slow5_idle     --slowdown 0.05 (5.2 % more work), no load of ours: detected likewise
#   aa_gpu         A/A of transformer_bench --size small --ctx 128 --mode step
#   slow_gpu       new with TRANSFORMER_TEST_SPIN_CYCLES set so that one kernel (RMSNorm's
#                  gain sum) spins long enough to slow the step by --spin-slowdown,
#                  calibrated first from one run with a known spin
# Methods: "interleaved" is gpuprof-compare --run --rounds N (ABBA rounds,
# verdict over the runs' medians); "one_pair" runs base then new once and
# compares the two files, as a user without --run would, with --pair-compare
# (default: --compare; another build's gpuprof-compare shows what it said).
# Load: --load-jobs busy loops (default: one per core), started by this
# script for the *_loaded cases and stopped by their process ids after them.
# Other users of the machine add their own load to every case: say so when
# quoting the figures.
set -euo pipefail

quickstart="" gpu_bench="" compare="" pair_compare="" runs="" rounds="" threshold=2% cases="" json=""
spin_slowdown=3% methods=interleaved,one_pair
load_jobs=$(nproc)
usage() { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --quickstart) quickstart=$2; shift 2 ;;
    --gpu-bench) gpu_bench=$2; shift 2 ;;
    --compare) compare=$2; shift 2 ;;
    --pair-compare) pair_compare=$2; shift 2 ;;
    --methods) methods=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threshold) threshold=$2; shift 2 ;;
    --spin-slowdown) spin_slowdown=$2; shift 2 ;;
    --load-jobs) load_jobs=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "compare_power.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
fail() { echo "compare_power.sh: $*" >&2; exit 2; }
[ -x "$compare" ] || fail "--compare PATH (an executable) is required"
: "${pair_compare:=$compare}"
[ -x "$pair_compare" ] || fail "--pair-compare $pair_compare is not an executable"
case "$methods" in
  interleaved | one_pair | interleaved,one_pair | one_pair,interleaved) ;;
  *) fail "--methods: interleaved, one_pair or both, comma-separated" ;;
esac
if [ -n "$quickstart" ]; then
  [ -x "$quickstart" ] || fail "--quickstart $quickstart is not an executable"
  base_command="$quickstart --json {out}"
  : "${runs:=50}" "${rounds:=5}" "${cases:=aa_loaded,slow15_loaded,slow5_idle}"
elif [ -n "$gpu_bench" ]; then
  [ -x "$gpu_bench" ] || fail "--gpu-bench $gpu_bench is not an executable"
  base_command="$gpu_bench --size small --ctx 128 --mode step --json {out}"
  : "${runs:=10}" "${rounds:=3}" "${cases:=aa_gpu,slow_gpu}"
else
  fail "--quickstart PATH or --gpu-bench PATH is required"
fi
for number in "$runs" "$rounds" "$load_jobs"; do
  [[ "$number" =~ ^[0-9]+$ ]] || fail "not a count: $number"
done
[[ "$spin_slowdown" =~ ^[0-9.]+%$ ]] || fail "--spin-slowdown wants a percentage, e.g. 3%"

scratch=$(mktemp -d)
load_pids=()
stop_load() {
  for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${load_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  load_pids=()
}
trap 'stop_load; rm -rf "$scratch"' EXIT
start_load() {
  for _ in $(seq 1 "$load_jobs"); do
    sh -c 'while :; do :; done' &
    load_pids+=($!)
  done
}

# The verdicts of one comparison's table: how many rows are slower or faster,
# and the first row's verdict when it is one of those ("-" otherwise).
tally() {
  awk '$1 == "scope" || $1 == "bench" || $1 == "kernel" {
         rows++; verdict = ""
         for (i = 3; i <= NF; i++) if ($i == "slower" || $i == "faster") { verdict = $i; break }
         if (verdict != "") changed++
         if (rows == 1) first = verdict
       }
       END { printf "%d %s\n", changed + 0, first == "" ? "-" : first }' "$1"
}

# `command` with every {out} replaced by the quoted path $2, run by /bin/sh as gpuprof-compare does.
run_once() {  # the scratch paths are mktemp's: no quote in them
  sh -c "${1//\{out\}/\'$2\'}" >/dev/null 2>"$scratch/run.err" || { cat "$scratch/run.err" >&2; exit 1; }
}

# The first benchmark's GPU median (ms) in a gpuprof.bench file.
bench_median() {
  python3 -c 'import json, sys; b = json.load(open(sys.argv[1]))["benchmarks"][0]; print(b["gpu_ms"]["median"])' "$1"
}

# Cycles of TRANSFORMER_TEST_SPIN_CYCLES that slow the step by $spin_slowdown:
# one run without and one with a known spin, scaled linearly.
calibrate_spin() {
  local probe=2000000 base_ms probe_ms
  run_once "$base_command" "$scratch/calibrate_base.json"
  run_once "TRANSFORMER_TEST_SPIN_CYCLES=$probe $base_command" "$scratch/calibrate_spin.json"
  base_ms=$(bench_median "$scratch/calibrate_base.json")
  probe_ms=$(bench_median "$scratch/calibrate_spin.json")
  python3 -c 'import sys; b, p, probe, want = map(float, sys.argv[1:]); print(max(1, round(probe * want / 100 * b / max(p - b, 1e-9))))' \
    "$base_ms" "$probe_ms" "$probe" "${spin_slowdown%\%}"
  echo "calibration: step $base_ms ms, with $probe spin cycles $probe_ms ms" >&2
}

results=()
printf '%-14s %-12s %5s %9s %10s\n' case method runs "false" detected
for case_name in ${cases//,/ }; do
  case "$case_name" in
    aa_loaded) new_command="$base_command" loaded=1 ;;
    slow15_loaded) new_command="$base_command --slowdown 0.15" loaded=1 ;;
    slow5_idle) new_command="$base_command --slowdown 0.05" loaded=0 ;;
    aa_gpu) new_command="$base_command" loaded=0 ;;
    slow_gpu)
      cycles=$(calibrate_spin) || exit 1
      new_command="TRANSFORMER_TEST_SPIN_CYCLES=$cycles $base_command" loaded=0 ;;
    *) fail "unknown case $case_name" ;;
  esac
  [ -n "$quickstart" ] || [[ "$case_name" == *_gpu ]] || fail "case $case_name needs --quickstart"
  [ -n "$gpu_bench" ] || [[ "$case_name" != *_gpu ]] || fail "case $case_name needs --gpu-bench"
  aa=0
  [ "$new_command" = "$base_command" ] && aa=1
  [ "$loaded" = 1 ] && start_load
  declare -A false_count=([interleaved]=0 [one_pair]=0) detected_count=([interleaved]=0 [one_pair]=0)
  for run in $(seq 1 "$runs"); do
    if [[ ",$methods," == *,interleaved,* ]]; then
      status=0
      "$compare" --run --rounds "$rounds" --threshold "$threshold" --base "$base_command" --new "$new_command" \
        >"$scratch/interleaved.txt" 2>"$scratch/interleaved.err" || status=$?
      if [ "$status" -ge 2 ]; then cat "$scratch/interleaved.err" >&2; exit 1; fi
    fi
    if [[ ",$methods," == *,one_pair,* ]]; then
      run_once "$base_command" "$scratch/base.json"
      run_once "$new_command" "$scratch/new.json"
      status=0
      "$pair_compare" "$scratch/base.json" "$scratch/new.json" --threshold "$threshold" >"$scratch/one_pair.txt" ||
        status=$?
      if [ "$status" -ge 2 ]; then exit 1; fi
    fi
    for method in ${methods//,/ }; do
      read -r changed first < <(tally "$scratch/$method.txt")
      if [ "$aa" = 1 ]; then
        [ "$changed" -gt 0 ] && false_count[$method]=$((false_count[$method] + 1))
      else
        [ "$first" = slower ] && detected_count[$method]=$((detected_count[$method] + 1))
        grep -q ' faster' "$scratch/$method.txt" && false_count[$method]=$((false_count[$method] + 1))
      fi
    done
    for method in ${methods//,/ }; do
      echo "  $case_name $run/$runs $method: $(sed -n 2p "$scratch/$method.txt" | tr -s ' ')" >&2
    done
  done
  [ "$loaded" = 1 ] && stop_load
  for method in ${methods//,/ }; do
    detected="-"
    [ "$aa" = 0 ] && detected="${detected_count[$method]}/$runs"
    printf '%-14s %-12s %5d %9s %10s\n' "$case_name" "$method" "$runs" "${false_count[$method]}/$runs" "$detected"
    results+=("{\"case\": \"$case_name\", \"method\": \"$method\", \"runs\": $runs, \"rounds\": $rounds, \"threshold\": \"$threshold\", \"load_jobs\": $([ "$loaded" = 1 ] && echo "$load_jobs" || echo 0), \"false_verdict_runs\": ${false_count[$method]}, \"detected_runs\": $([ "$aa" = 0 ] && echo "${detected_count[$method]}" || echo null)}")
  done
done

if [ -n "$json" ]; then
  {
    echo "{\"schema\": \"gpuprof.compare_power\", \"nproc\": $(nproc), \"pair_compare\": \"$pair_compare\", \"results\": ["
    for i in "${!results[@]}"; do echo "  ${results[$i]}$([ "$i" -lt $((${#results[@]} - 1)) ] && echo ,)"; done
    echo "]}"
  } >"$json.tmp"
  mv "$json.tmp" "$json"
fi
