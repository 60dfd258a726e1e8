#!/usr/bin/env bash
# tests/compare/interleaved_gate.sh PROGRAM COMPARE WORK_DIR RUNS
# gpuprof-compare --run as a CI gate on a busy machine: busy loops on every
# core (started here, stopped by their process ids), then RUNS times the same
# program as base and new, 3 ABBA rounds each: every run must exit 0 with no
# "slower" row. Then 2 runs whose new side does 30 % more work
# (timed_work --slowdown 0.3): each must exit 1 with the scope "work" slower.
# The rows of every run are printed, so a failure shows the numbers.
set -euo pipefail
program=$1 compare=$2 work_dir=$3 runs=$4
rm -rf "$work_dir"
mkdir -p "$work_dir"
load_pids=()
trap 'for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
for _ in $(seq 1 "$(nproc)"); do
  sh -c 'while :; do :; done' &
  load_pids+=($!)
done

gate() {  # gate NAME EXPECTED_STATUS NEW_ARGS...
  local name=$1 expected=$2 status=0
  shift 2
  "$compare" --run --rounds 3 --base "$program {out}" --new "$program {out} $*" --keep "$work_dir/$name" \
    >"$work_dir/$name.txt" 2>"$work_dir/$name.err" || status=$?
  echo "$name: exit $status: $(grep '^scope  *work ' "$work_dir/$name.txt" | tr -s ' ')"
  if [ "$status" != "$expected" ]; then
    cat "$work_dir/$name.txt" "$work_dir/$name.err"
    echo "FAILED: $name exited $status, expected $expected"
    exit 1
  fi
}
for run in $(seq 1 "$runs"); do
  gate "aa$run" 0
  if grep -q ' slower' "$work_dir/aa$run.txt"; then echo "FAILED: A/A run $run has a slower row"; exit 1; fi
done
for run in 1 2; do
  gate "slower$run" 1 --slowdown 0.3
  grep -q '^scope  *work .* slower' "$work_dir/slower$run.txt" || { echo "FAILED: work not slower"; exit 1; }
done
echo "$runs A/A runs under load: none slower; 2 runs with 30 % more work: slower, exit 1"
