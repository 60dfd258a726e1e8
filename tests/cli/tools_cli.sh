#!/usr/bin/env bash
# The command lines of gpuprof-compare, gpuprof-merge and gpuprof-report: every
# case checks the exit status, parses the JSON it checks (python3's json), and
# checks what is left on disk. Arguments: the three tools and quickstart
# (which makes the reports), and a report with hardware counters.
#   tools_cli.sh COMPARE MERGE REPORT QUICKSTART COUNTERS.json
set -uo pipefail
compare=$1 merge=$2 report=$3 quickstart=$4 counters=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }

# expect STATUS REGEX command...: the command's exit status is STATUS and its
# stderr matches REGEX (extended); stdout goes to $work/out, stderr to $work/err.
expect() {
  local want=$1 pattern=$2
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  [ "$got" -eq "$want" ] || { fail "$*: exit status $got, expected $want: $(head -3 "$work/err")"; return; }
  [ -z "$pattern" ] || grep -Eq -- "$pattern" "$work/err" || fail "$*: stderr does not match '$pattern': $(head -3 "$work/err")"
}
# json_check FILE PYTHON-EXPRESSION: FILE parses as JSON and the expression
# (over `d`, the document) is true.
json_check() {
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" || fail "$1: not JSON or not ($2)"
}

cd "$work" || exit 1
"$quickstart" --quick --json a.json >/dev/null 2>&1 || fail "quickstart --json a.json"
"$quickstart" --quick --json b.json >/dev/null 2>&1 || fail "quickstart --json b.json"
cp a.json a.orig

# --- gpuprof-report: exit statuses, the confirmation line, what it refuses ---
expect 0 '^gpuprof-report: wrote page\.html \([0-9]+ scopes from a\.json\)$' "$report" a.json -o page.html --title "run é"
grep -q '<title>run é</title>' page.html || fail "gpuprof-report: the title is not on the page"
expect 0 'wrote standard output' "$report" a.json -o -
grep -q '^<!DOCTYPE html>' "$work/out" || fail "gpuprof-report -o -: no page on standard output"
expect 0 '' "$report" --help
grep -q -- '--title TEXT' "$work/out" && grep -q 'exit status' "$work/out" || fail "gpuprof-report --help is incomplete"
expect 2 'needs REPORT.json and -o report.html or --roofline' "$report" a.json
# The roofline picture, alone or beside the page; refused for a report without counters.
expect 0 '^gpuprof-report: wrote r\.svg ' "$report" "$counters" --roofline r.svg --title "step é"
grep -q '^<svg xmlns=' r.svg && grep -q '<title>step é</title>' r.svg && grep -q 'class="point scope"' r.svg \
  || fail "gpuprof-report --roofline: r.svg is not the titled picture"
expect 0 'wrote both\.svg' "$report" "$counters" -o both.html --roofline both.svg
grep -q 'wrote both\.html' "$work/err" && grep -q '<h2>Roofline</h2>' both.html && cmp -s both.svg <("$report" "$counters" --roofline - 2>/dev/null) \
  || fail "gpuprof-report -o --roofline: the page has no roofline or the picture differs from --roofline -"
expect 2 'holds no hardware counters' "$report" a.json -o plain.html --roofline plain.svg
[ ! -e plain.html ] && [ ! -e plain.svg ] || fail "gpuprof-report without counters left a file"
expect 2 'is also the output of -o' "$report" "$counters" -o same.svg --roofline same.svg
expect 2 'one report at a time' "$report" a.json b.json -o x.html
expect 2 'cannot (open|read)|No such file' "$report" missing.json -o x.html
echo '{"schema": "gpuprof.report", "version": 1' >broken.json
expect 2 '' "$report" broken.json -o x.html
[ ! -e x.html ] || fail "gpuprof-report left x.html after a failure"
expect 2 "-o 'a\.json': is the input a\.json" "$report" a.json -o a.json
ln a.json hard.json
expect 2 'is the input a\.json' "$report" a.json -o hard.json
expect 2 'is the input' "$report" a.json -o ./a.json
expect 2 "empty path" "$report" a.json -o ''
expect 2 '-o given twice' "$report" a.json -o x.html -o y.html
expect 2 'not valid UTF-8' "$report" a.json -o x.html --title $'bad \xff title'
expect 2 'is a directory' "$report" a.json -o "$work"
ln -s loop2 loop1 && ln -s loop1 loop2
expect 2 "loop1" "$report" a.json -o loop1
ln -s missing-dir/page.html dangling
expect 2 'no directory' "$report" a.json -o dangling
cmp -s a.json a.orig || fail "an input was modified"
[ ! -e x.html ] && [ ! -e y.html ] || fail "a refused command left a file"

# --- gpuprof-merge ---
expect 0 'carry no rank; numbered in the order given: rank 0 = a\.json, rank 1 = b\.json' \
  "$merge" a.json b.json -o merged.json
json_check merged.json 'd["schema"] == "gpuprof.merged" and len(d["ranks"]) == 2'
expect 0 '' "$merge" a.json b.json -o -
json_check "$work/out" 'd["schema"] == "gpuprof.merged"'
grep -q 'Scopes: mean ms per rank' "$work/err" || fail "gpuprof-merge -o -: the tables are not on stderr"
expect 0 '' "$merge" a.json b.json --trace -
json_check "$work/out" '"traceEvents" in d'
expect 2 "-o 'a\.json': is the input a\.json" "$merge" a.json b.json -o a.json
expect 2 'is also the output of -o' "$merge" a.json b.json -o m.json --trace m.json
expect 2 'is also the output of -o' "$merge" a.json b.json -o - --trace -
expect 2 'empty path' "$merge" a.json b.json -o ''
expect 2 'given twice' "$merge" a.json b.json --markdown --markdown
expect 2 'expected at least one report' "$merge"
[ ! -e m.json ] || fail "gpuprof-merge left m.json after a refusal"
cmp -s a.json a.orig || fail "gpuprof-merge modified its input"

# --- gpuprof-compare: --threshold is a ratio or a percentage, nothing else ---
expect 0 '' "$compare" a.json a.json --threshold 5%
expect 0 '' "$compare" a.json a.json --threshold 0.05
expect 0 '' "$compare" a.json a.json --threshold 100%
for bad in 5 0x10 1e26 1e-2 -5% -0.05 nan inf 101% '' 5%% .; do
  expect 2 "--threshold" "$compare" a.json a.json --threshold "$bad"
done
expect 2 'write 5% for a percentage' "$compare" a.json a.json --threshold 5
expect 2 '--threshold given twice' "$compare" a.json a.json --threshold 5% --threshold 10%
expect 2 '--alpha' "$compare" a.json a.json --alpha 0
expect 0 '' "$compare" --help
grep -q 'exit status' "$work/out" || fail "gpuprof-compare --help lacks the exit statuses"

# --- standard output that cannot be written is an error, not exit 0 ---
if [ -c /dev/full ]; then
  "$compare" a.json b.json >/dev/full 2>"$work/err"; status=$?
  [ "$status" -ne 0 ] || fail "gpuprof-compare >/dev/full: exit 0"
  grep -q 'cannot write standard output' "$work/err" || fail "gpuprof-compare >/dev/full: no message"
  "$merge" a.json b.json >/dev/full 2>"$work/err"; status=$?
  [ "$status" -eq 1 ] || fail "gpuprof-merge >/dev/full: exit $status, expected 1"
  "$report" a.json -o - >/dev/full 2>"$work/err"; status=$?
  [ "$status" -ne 0 ] || fail "gpuprof-report -o - >/dev/full: exit 0"
  "$quickstart" --quick >/dev/full 2>"$work/err"; status=$?
  [ "$status" -eq 1 ] || fail "quickstart >/dev/full: exit $status, expected 1"
fi
"$merge" a.json b.json >&- 2>"$work/err"; status=$?
[ "$status" -eq 1 ] || fail "gpuprof-merge >&-: exit $status, expected 1"
"$quickstart" --quick --json closed.json >&- 2>"$work/err"; status=$?
[ "$status" -eq 1 ] || fail "quickstart >&-: exit $status, expected 1"
json_check closed.json 'd["schema"] == "gpuprof.report"'  # the file itself is intact, not mixed with the table

# --- quickstart's own outputs ---
expect 2 'empty path' "$quickstart" --quick --json ''
expect 2 'is a directory' "$quickstart" --quick --json "$work"
expect 0 '' "$quickstart" --help
grep -q -- '--quick' "$work/out" && grep -q 'exit status' "$work/out" || fail "quickstart --help is incomplete"

if [ "$failures" -ne 0 ]; then
  echo "$failures case(s) failed" >&2
  exit 1
fi
echo "tools command lines: all cases passed"
