#!/usr/bin/env bash
# Checks the C++ and CUDA sources against .clang-format without changing them:
# exit 0 when every file is formatted, 1 listing the files that are not (run
# `clang-format -i FILE` on them), 2 when clang-format is missing. Checks the
# files git tracks under include/ tests/ tools/ examples/ bench/ fuzz/
# python/ (*.hpp *.cpp *.cu *.cuh). CLANG_FORMAT names another binary
# (default: clang-format, Debian's package of that name).
set -uo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" >/dev/null; then
  echo "check_format: $CLANG_FORMAT not found (apt-get install clang-format)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files -- include tests tools examples bench fuzz python |
                     grep -E '\.(hpp|cpp|cu|cuh)$')
unformatted=()
for file in "${files[@]}"; do
  "$CLANG_FORMAT" --style=file --dry-run -Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "check_format: ${#unformatted[@]} of ${#files[@]} files differ from .clang-format:" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
