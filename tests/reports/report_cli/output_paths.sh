#!/usr/bin/env bash
# Output paths through a CLI (gpuprof_write_report, argument 1): "-" and
# /dev/stdout are standard output, a symbolic link stays a link, a FIFO and
# /dev/full are written in place (a full device is a message and exit 1), and
# an unwritable directory is a message and exit 1 with nothing left behind.
set -euo pipefail
program=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

"$program" - >"$work/dash.out"
grep -q '"written"' "$work/dash.out" || fail "- did not write the report to standard output"

"$program" /dev/stdout | grep -q '"written"' || fail "/dev/stdout through a pipe"

mkdir "$work/runs"
echo old >"$work/runs/run42.json"
ln -s runs/run42.json "$work/latest.json"
"$program" "$work/latest.json"
[ -L "$work/latest.json" ] || fail "the symbolic link was replaced"
grep -q '"written"' "$work/runs/run42.json" || fail "the link's target was not rewritten"
[ "$(ls -A "$work/runs")" = run42.json ] || fail "a temporary was left beside the target"

mkfifo "$work/pipe"
cat "$work/pipe" >"$work/from_pipe" &
reader=$!
"$program" "$work/pipe"
wait "$reader"
[ -p "$work/pipe" ] || fail "the FIFO was replaced"
grep -q '"written"' "$work/from_pipe" || fail "nothing came through the FIFO"

if [ -c /dev/full ]; then
  status=0
  "$program" /dev/full 2>"$work/full.err" || status=$?
  [ "$status" -eq 1 ] || fail "/dev/full: exit status $status, expected 1"
  grep -q 'No space left on device' "$work/full.err" || fail "/dev/full: no message: $(cat "$work/full.err")"
  [ -c /dev/full ] || fail "/dev/full is no longer a character device"
else
  echo "skipped /dev/full: not on this system"
fi

status=0
"$program" "$work/missing-dir/report.json" 2>"$work/missing.err" || status=$?
[ "$status" -eq 1 ] || fail "missing directory: exit status $status, expected 1"
grep -q "$work/missing-dir/report.json" "$work/missing.err" || fail "missing directory: message lacks the path"
[ ! -e "$work/missing-dir" ] || fail "missing directory: something was created"
echo "output paths: all cases passed"
