#!/bin/sh
# A program a command-line test must tell apart from a working one
# (tests/CMakeLists.txt, cli_check_*): the table on stderr, then on stdout
#   valid-exit0      one whole JSON document, exit 0 (the control: passes)
#   valid-exit1      the same document, exit 1 (a failure that printed everything)
#   truncated-exit0  the document cut short, exit 0 (a crash mid-write)
echo "name    median_ms" >&2
echo "step    1.234" >&2
document='{"schema": "gpuprof.bench", "version": 1, "benchmarks": [{"name": "step"}]}'
case "$1" in
  valid-exit0) echo "$document"; exit 0 ;;
  valid-exit1) echo "$document"; exit 1 ;;
  truncated-exit0) printf '%s' "$document" | cut -c1-40; exit 0 ;;
  *) echo "usage: mock_program.sh valid-exit0|valid-exit1|truncated-exit0" >&2; exit 2 ;;
esac
