#!/usr/bin/env bash
# Builds the readers' libFuzzer targets (preset "fuzz": clang, ASan + UBSan)
# and runs each for FUZZ_SECONDS (default 60), two at a time, from the seed
# corpus in fuzz/corpus/<target>. New inputs go to a scratch copy, so the
# committed corpus stays as it is; a crash leaves its input in
# build/fuzz/findings/ and fails the script. docs/fuzzing.md says more.
#
#   scripts/fuzz.sh                 # all targets
#   FUZZ_SECONDS=600 scripts/fuzz.sh report
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(json report bench merge writers)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

findings=build/fuzz/findings
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$findings"

# Deep chains of scopes, made here rather than committed (megabytes), run
# once each under a memory limit before the fuzzing: 8,000 levels as two
# ranks through merge (it ran out of memory when merging was quadratic in
# depth) and 20,000 through the writers. Linear code stays far below it.
python3 scripts/deep_chain_report.py 8000 "$scratch/merge_deep_chain.json" --ranks 2
python3 scripts/deep_chain_report.py 20000 "$scratch/writers_deep_chain.json"
for target in merge writers; do
  if ! TMPDIR="$scratch" "build/fuzz/fuzz/${target}_fuzz" "$scratch/${target}_deep_chain.json" \
      -rss_limit_mb=1024 -timeout=60 >"$scratch/$target-deep.log" 2>&1; then
    echo "== $target: FAILED on a deep chain"
    tail -n 30 "$scratch/$target-deep.log"
    exit 1
  fi
  echo "== $target: a deep chain within 1 GB"
done

fuzz_one() {
  local target=$1
  mkdir -p "$scratch/$target"
  # -rss_limit_mb: the readers' limits must hold memory well below this;
  # merge's is lower, what a merge linear in its input needs.
  # -timeout: no single input may take seconds (a hang is a finding).
  local rss_limit_mb=2048
  [ "$target" != merge ] || rss_limit_mb=1024
  if TMPDIR="$scratch" "build/fuzz/fuzz/${target}_fuzz" "$scratch/$target" "fuzz/corpus/$target" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb="$rss_limit_mb" -print_final_stats=1 \
      -artifact_prefix="$findings/${target}-" >"$scratch/$target.log" 2>&1; then
    echo "== $target: $(grep -E '^stat::number_of_executed_units' "$scratch/$target.log" | awk '{print $2}') runs, no finding"
  else
    echo "== $target: FAILED"
    tail -n 60 "$scratch/$target.log"
    return 1
  fi
}

status=0
pids=()
for target in "${targets[@]}"; do
  fuzz_one "$target" & pids+=($!)
  if [ ${#pids[@]} -eq 2 ]; then
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    pids=()
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
