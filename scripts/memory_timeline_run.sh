#!/usr/bin/env bash
# The GPU half of `transformer_profile --memory-timeline`:
# builds transformer_profile for sm_90 into build/device, draws the device
# memory over a forward-only run and a train-step run of the 2.7B model at
# ctx 128 and 512 (bf16, batch 4, one warm-up and one timed step each), and
# prints a summary. Usage, from the repo root on the GPU machine:
#   bash scripts/memory_timeline_run.sh            # extra flags go to transformer_profile
# Results, three files in $OUT/memtimeline (the device tool brings back few files):
#   memory-timeline.md   the largest allocations per run, linking the pictures
#   memtimeline.tgz      everything the program wrote: memory-timeline.md,
#                        memory-timeline-<config>-{fwd,step}.svg and .html
#   run.log              build and run output
# The files in memtimeline.tgz go to docs/profile/ unchanged (the markdown
# links the pictures by their bare names).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
RESULTS="$OUT/memtimeline"
WORK=$(mktemp -d /tmp/memtimeline.XXXXXX)
mkdir -p "$RESULTS"
LOG="$RESULTS/run.log"
: >"$LOG"
pack() { tar czf "$RESULTS/memtimeline.tgz" -C "$WORK" . 2>>"$LOG" || true; }
trap pack EXIT

echo "== $(date +%T) configure (cmake --preset device) + build transformer_profile" | tee -a "$LOG"
cmake --preset device >>"$LOG" 2>&1 \
  || { tail -40 "$LOG"; exit 1; }
cmake --build build/device -j16 --target transformer_profile >>"$LOG" 2>&1 \
  || { grep -B2 -A12 -m5 'error' "$LOG" | head -120; exit 1; }

echo "== $(date +%T) transformer_profile --memory-timeline $*" | tee -a "$LOG"
status=0
build/device/examples/transformer/profile/transformer_profile --memory-timeline --out "$WORK" "$@" 2>&1 \
  | tee -a "$LOG" || status=$?
[[ -f "$WORK/memory-timeline.md" ]] && cp "$WORK/memory-timeline.md" "$RESULTS/"

echo "== $(date +%T) done (exit status $status)" | tee -a "$LOG"
ls -l "$WORK" | tee -a "$LOG"
# Per run: its heading and its summary (the arena against the bytes its allocation scopes
# made: they should be equal); then each run's largest allocation.
grep -E '^## |allocations captured|^Out of memory|^Failed' "$WORK/memory-timeline.md" 2>/dev/null || true
grep -E '^\| 1 \|' "$WORK/memory-timeline.md" 2>/dev/null || true
exit "$status"
