#!/usr/bin/env bash
# Hostile input through the tools: gpuprof-compare, gpuprof-merge and
# gpuprof-report (arguments 1-3) on the seed corpus (argument 4, fuzz/corpus)
# and on edits of it. Each case must exit 2 with a message saying what is
# wrong, or print names escaped; never abort, hang or exit 0.
set -euo pipefail
compare=$1 merge=$2 report=$3 corpus=$4
# shellcheck source=tool_checks.sh
source "$(dirname "$0")/tool_checks.sh"

quickstart=$corpus/report/quickstart.json
bench=$corpus/bench/bench.json

# Unbounded input: /dev/zero and a large array stop at the limit.
for tool in "$compare" "$merge"; do
  GPUPROF_MAX_INPUT_MB=1 expect 2 "larger than the input limit" "$tool" /dev/zero "$quickstart"
done
expect 2 "larger than the input limit" "$report" /dev/zero -o "$work/out.html"
python3 -c 'import sys; sys.stdout.write("[" + "1," * 1500000 + "1]")' >"$work/numbers.json"
GPUPROF_MAX_INPUT_MB=2 expect 2 "larger than the input limit" "$compare" "$work/numbers.json" "$quickstart"
GPUPROF_MAX_INPUT_MB=abc expect 2 "GPUPROF_MAX_INPUT_MB" "$compare" "$quickstart" "$quickstart"

# A directory, a missing file: the system's reason.
expect 2 "Is a directory" "$merge" "$work"
expect 2 "No such file or directory" "$report" "$work/missing.json" -o "$work/out.html"

# A depth the tree does not give (the probe's printed for a minute at 6 GB).
edit "$quickstart" depth.json 'd["nodes"][1]["depth"] = 2000000000'
expect 2 "has depth 2000000000" "$merge" "$work/depth.json"
expect 2 "has depth 2000000000" "$merge" "$work/depth.json" --markdown

# Two kinds of file; the same file twice as two ranks.
expect 2 "cannot compare two kinds of file: $bench is a gpuprof.bench file" "$compare" "$bench" "$quickstart"
expect 2 "are the same run" "$merge" "$quickstart" "$quickstart"

# Values checked against their context.
edit "$quickstart" version.json 'd["version"] = -5'
expect 2 "version -5 is not one this reader knows" "$compare" "$work/version.json" "$quickstart"
printf '{"schema": "gpuprof.report", "schema": "gpuprof.bench"}' >"$work/duplicate.json"
expect 2 'duplicate key "schema"' "$compare" "$work/duplicate.json" "$quickstart"
edit "$quickstart" rank.json 'd["rank"]["rank"] = 2**32'
expect 2 "4294967296 is not an integer" "$merge" "$work/rank.json"
edit "$quickstart" count.json 'd["nodes"][0]["count"] = -5'
expect 2 "-5 is not an integer from 0" "$compare" "$work/count.json" "$quickstart"
edit "$quickstart" node.json 'd["instances"][0]["node"] = 10**6'
expect 2 "names node 1000000" "$report" "$work/node.json" -o "$work/out.html"
edit "$quickstart" times.json 'd["instances"][0]["host_begin_ns"] = -2**63 + 1'
expect 2 "is outside 0 .. 2^62" "$merge" "$work/times.json"

# Names with terminal control sequences and HTML: escaped, exit 0.
edit "$quickstart" names.json 'd["nodes"][0]["path"] = d["nodes"][0]["name"] = "x\x1b]0;owned\x07\x1b[2J<img src=x onerror=alert(1)>"'
edit "$quickstart" names2.json 'd["nodes"][0]["path"] = d["nodes"][0]["name"] = "x\x1b]0;owned\x07\x1b[2J<img src=x onerror=alert(1)>"; d["instances"][0]["host_end_ns"] += 1'
for command in "$compare $work/names.json $quickstart" "$merge $work/names.json $work/names2.json" \
               "$merge $work/names.json $work/names2.json --markdown" "$compare $work/names.json $quickstart --markdown"; do
  status=0
  $command >"$work/out" 2>"$work/err" || status=$?
  [ "$status" = 0 ] || fail "$command exited $status: $(cat "$work/err")"
  if grep -q $'\x1b\|\x07' "$work/out"; then fail "$command printed a raw control character"; fi
  if [[ $command == *--markdown ]]; then
    # Markdown doubles the escapes' backslashes, so they show as written,
    # and escapes brackets, so they make no link.
    grep -qF 'x\\x1b\]0;owned\\x07\\x1b\[2J&lt;img src=x onerror=alert(1)&gt;' "$work/out" ||
      fail "$command did not print the name escaped"
    if grep -qF '<img' "$work/out"; then fail "$command passed HTML through"; fi
  else
    grep -qF 'x\x1b]0;owned\x07\x1b[2J' "$work/out" || fail "$command did not print the name escaped"
  fi
done
echo "hostile input through the tools: all refused or escaped"
