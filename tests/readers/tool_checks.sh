# Sourced by the tools' input tests (hostile_tools.sh, untrusted_tools.sh):
# a scratch folder, and the checks both make.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

# expect STATUS MESSAGE COMMAND...: the exit status, a part of stderr (none
# when MESSAGE is empty), and no raw ESC, BEL or U+202E on either stream.
expect() {
  local want=$1 message=$2 status=0
  shift 2
  timeout 60 "$@" >"$work/out" 2>"$work/err" || status=$?
  [ "$status" = "$want" ] || fail "$* exited $status, not $want: $(cat "$work/err")"
  [ -z "$message" ] || grep -qF -- "$message" "$work/err" || fail "$*: no \"$message\" in: $(cat "$work/err")"
  if grep -q $'\x1b\|\x07\|\xe2\x80\xae' "$work/out" "$work/err"; then
    fail "$* printed a raw control character: $(cat -v "$work/err")"
  fi
}

# edit SOURCE NAME 'python statement on d': SOURCE's JSON, edited, as $work/NAME.
edit() {
  python3 - "$1" "$work/$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
