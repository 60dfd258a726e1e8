#!/usr/bin/env python3
"""Every header's opening comment stays short.

The opening comment of a header (its first lines that start with //) says
what the header is for; longer explanations belong in docs/ with a link
(docs/headers.md, "Opening comments"). Counts the comment's lines outside
its ```cpp usage example (which tests/headers compiles) in every header of
include/gpuprof/ and cli/include/gpuprof_cli/, and fails on one with more
than LIMIT. Prints each as FILE:1: N lines of prose (at most LIMIT); exit 1
if any.

usage: check_opening_comments.py [REPOSITORY_ROOT]   (default: the parent of scripts/)
"""
import sys
from pathlib import Path

LIMIT = 15
FOLDERS = ("include/gpuprof", "cli/include/gpuprof_cli")


def prose_lines(text):
    count, in_example = 0, False
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        if line[2:].strip().startswith("```"):
            in_example = not in_example
        elif not in_example:
            count += 1
    return count


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    headers = [path for folder in FOLDERS for path in sorted((root / folder).rglob("*.hpp"))]
    long = []
    for path in headers:
        count = prose_lines(path.read_text(encoding="utf-8", errors="replace"))
        if count > LIMIT:
            long.append(path)
            print(f"{path.relative_to(root)}:1: {count} lines of prose (at most {LIMIT}): move the rest to docs/")
    print(f"{len(headers)} headers, {len(long)} with a long opening comment")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
