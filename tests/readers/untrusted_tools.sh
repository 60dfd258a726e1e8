#!/usr/bin/env bash
# Untrusted text and sizes through the tools: gpuprof-compare, gpuprof-merge
# and gpuprof-report (arguments 1-3) on edits of the seed corpus (argument 4,
# fuzz/corpus). Diagnostics never carry raw control or bidi characters;
# readers refuse wrong types, unknown values, negative figures and rows
# named twice; long output names are judged before the work; a deep chain
# merges in output proportional to its input.
set -euo pipefail
compare=$1 merge=$2 report=$3 corpus=$4
scripts=$(dirname "$0")/../../scripts
# shellcheck source=tool_checks.sh
source "$(dirname "$0")/tool_checks.sh"

quickstart=$corpus/report/quickstart.json
kernels=$corpus/report/kernels_and_memory.json
bench=$corpus/bench/bench.json
# A second rank of quickstart: the same scopes, other times.
edit "$quickstart" rank1.json 'd["instances"][0]["host_end_ns"] += 1'

# Diagnostics: text from files and flags is escaped.
edit "$quickstart" schema.json 'd["schema"] = "\x1b]0;PWNED\x07"'
expect 2 'unknown file schema "\x1b]0;PWNED\x07"' "$compare" "$work/schema.json" "$quickstart"
expect 2 "not a gpuprof report" "$merge" "$work/schema.json"
printf '{"a\\u001b[2J": 1, "a\\u001b[2J": 2}' >"$work/duplicate.json"
expect 2 'duplicate key "a\x1b[2J"' "$merge" "$work/duplicate.json"
edit "$quickstart" parent.json 'd["nodes"][1]["path"] = "p\u202e\x1b[2J"; d["nodes"][1]["parent"] = 7'
expect 2 'node p\u202e\x1b[2J names parent 7' "$report" "$work/parent.json" -o "$work/out.html"
edit "$kernels" kernel.json 'k = d["kernels"][0]; k["name"] = "k\x1b]0;x\x07"; k["end_ns"] = k["start_ns"] - 1'
expect 2 'kernel k\x1b]0;x\x07 ends' "$merge" "$work/kernel.json"
expect 2 'step scope "\x1b[2J" is in none' "$merge" "$quickstart" --step-scope $'\e[2J'
cp "$quickstart" "$work/"$'rank\e[2J.json'
expect 0 'rank 0 = '"$work"'/rank\x1b[2J.json' "$merge" "$work/"$'rank\e[2J.json' "$work/rank1.json"
expect 2 'unknown option --\x1b[31m' "$compare" $'--\e[31m'

# Markdown and bidi in names: no live link or image, U+202E shown escaped.
edit "$quickstart" links.json 'd["nodes"][0]["path"] = d["nodes"][0]["name"] = "![t](https://e.x/p.png) [c](https://e.x) \u202eexe.txt"'
expect 0 "" "$compare" "$work/links.json" "$quickstart" --markdown
grep -qF '!\[t\](https:\//e.x/p.png) \[c\](https:\//e.x) \\u202eexe.txt' "$work/out" ||
  fail "compare --markdown: the name is not escaped: $(grep -F 'e.x' "$work/out")"
expect 0 "" "$compare" "$work/links.json" "$quickstart"
grep -qF '\u202eexe.txt' "$work/out" || fail "compare: U+202E is not shown escaped"

# Bench files: version, types, enumerations, signs, names given twice.
for version in 999 0 '"1"' 'None'; do
  edit "$bench" version.json "d['version'] = $version"
  expect 2 "version" "$compare" "$work/version.json" "$bench"
done
edit "$bench" noversion.json 'del d["version"]'
expect 2 'no key "version"' "$compare" "$work/noversion.json" "$bench"
edit "$bench" source.json 'd["benchmarks"][0]["timing_source"] = "sundial"'
expect 2 'timing_source "sundial" is neither' "$compare" "$work/source.json" "$bench"
edit "$bench" negative.json 'd["benchmarks"][0]["host_ms"]["samples_ms"][0] = -1'
expect 2 'host_ms: sample -1 ms is negative' "$compare" "$work/negative.json" "$bench"
edit "$bench" twice.json 'd["benchmarks"][1]["name"] = d["benchmarks"][0]["name"]'
expect 2 'two benchmarks are named matmul/256' "$compare" "$bench" "$work/twice.json"
edit "$bench" environment.json 'd["environment"]["host_name"] = 5'
expect 2 'environment host_name: JSON value is a number, not a string' "$compare" "$work/environment.json" "$bench"

# Reports: wrong types of optional members, enumerations, signs, ranks, paths.
edit "$kernels" scope_node.json 'd["kernels"][0]["scope_node"] = "x"'
expect 2 'scope_node: JSON value is a string, not a number' "$merge" "$work/scope_node.json"
edit "$quickstart" gpu_ms.json 'd["instances"][0]["gpu_ms"] = True'
expect 2 'gpu_ms: JSON value is a boolean, not a number' "$merge" "$work/gpu_ms.json"
edit "$quickstart" rank_array.json 'd["rank"] = [0, 1]'
expect 2 'rank: JSON value is a array, not a object' "$merge" "$work/rank_array.json"
edit "$quickstart" timing.json 'd["timing_source"] = "sundial"'
expect 2 'timing_source "sundial" is neither' "$compare" "$work/timing.json" "$quickstart"
edit "$kernels" kind.json 'd["kernels"][0]["kind"] = "teleport"'
expect 2 'kind "teleport" is none of' "$merge" "$work/kind.json"
edit "$quickstart" samples.json 'd["nodes"][0]["host_ms"]["samples_ms"][0] = -3'
expect 2 'host_ms: sample -3 ms is negative' "$compare" "$work/samples.json" "$quickstart"
edit "$quickstart" work.json 'd["nodes"][0]["work"]["flops"] = -1'
expect 2 'work flops -1 is negative' "$merge" "$work/work.json"
edit "$quickstart" local_rank.json 'd["rank"] = {"rank": 0, "world_size": 2, "local_rank": 2}'
expect 2 'local_rank 2 is outside a world of 2' "$merge" "$work/local_rank.json"
edit "$quickstart" paths.json 'd["nodes"][2]["path"] = d["nodes"][1]["path"]'
expect 2 'two scope nodes have the path' "$compare" "$quickstart" "$work/paths.json"

# Numbers on the command line and in the environment: plain digits only.
for count in ' 5' '+5' '5 ' '0x5'; do
  expect 2 "--min-samples: not a positive integer" "$compare" "$quickstart" "$quickstart" --min-samples "$count"
done
for megabytes in ' 5' '+5' '5 '; do
  GPUPROF_MAX_INPUT_MB=$megabytes expect 2 "GPUPROF_MAX_INPUT_MB" "$compare" "$quickstart" "$quickstart"
done

# Long output names: one that fits NAME_MAX works (its temporary is cut to
# fit), one that does not is refused before the work.
name250=$(printf 'n%.0s' $(seq 245)).html
expect 0 "wrote" "$report" "$quickstart" -o "$work/$name250"
[ -s "$work/$name250" ] || fail "the 250-character output was not written"
name256=$(printf 'n%.0s' $(seq 251)).json
expect 2 "NAME_MAX" "$merge" "$quickstart" "$work/rank1.json" -o "$work/$name256"
expect 2 "PATH_MAX" "$merge" "$quickstart" "$work/rank1.json" \
  -o "$work/$(printf 'd/../%.0s' $(seq 820))out.json"

# A deep chain (every scope inside the one before) merges in time and output
# proportional to its size, not to size x depth.
python3 "$scripts/deep_chain_report.py" 20000 "$work/deep.json"
edit "$work/deep.json" deep1.json 'd["instances"][0]["host_end_ns"] += 1'
expect 0 "" "$merge" "$work/deep.json" "$work/deep1.json" -o "$work/deep_merged.json" --trace "$work/deep_trace.json"
input=$(($(stat -c %s "$work/deep.json") + $(stat -c %s "$work/deep1.json")))
for output in "$work/out" "$work/deep_merged.json" "$work/deep_trace.json"; do
  size=$(stat -c %s "$output")
  [ "$size" -le $((4 * input)) ] || fail "$output: $size bytes from $input bytes of input"
done
expect 0 "wrote" "$report" "$work/deep.json" -o "$work/deep.html"
size=$(stat -c %s "$work/deep.html")
[ "$size" -le $((4 * $(stat -c %s "$work/deep.json"))) ] || fail "deep.html: $size bytes"
echo "untrusted text and sizes through the tools: all escaped, refused or bounded"
